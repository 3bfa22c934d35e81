//===- Generators.cpp - Generator registry --------------------------------===//

#include "pipecc/Scheduling/Generators.h"

#include <sstream>

using namespace pipecc::scheduling;

namespace {
std::vector<std::unique_ptr<ScheduleGenerator>> &registry() {
  // Built on first use, so no static-initialisation order to worry about.
  static std::vector<std::unique_ptr<ScheduleGenerator>> generators = [] {
    std::vector<std::unique_ptr<ScheduleGenerator>> builtIn;
    builtIn.push_back(createGPipeGenerator());
    builtIn.push_back(createOneFOneBGenerator());
    builtIn.push_back(createInterleavedOneFOneBGenerator());
    builtIn.push_back(createZeroBubbleH1Generator());
    return builtIn;
  }();
  return generators;
}
} // namespace

Result<PlacementKind>
ScheduleGenerator::placementFor(int chunks) const {
  if (chunks == 1)
    return PlacementKind::Linear;
  return Diagnostic{name() + " needs one chunk per rank, got " +
                    std::to_string(chunks)};
}

const ScheduleGenerator *
pipecc::scheduling::lookupGenerator(std::string_view name) {
  for (const std::unique_ptr<ScheduleGenerator> &generator : registry())
    if (generator->name() == name)
      return generator.get();
  return nullptr;
}

std::vector<std::string> pipecc::scheduling::generatorNames() {
  std::vector<std::string> names;
  for (const std::unique_ptr<ScheduleGenerator> &generator : registry())
    names.push_back(generator->name());
  return names;
}

void pipecc::scheduling::registerGenerator(
    std::unique_ptr<ScheduleGenerator> generator) {
  for (std::unique_ptr<ScheduleGenerator> &existing : registry()) {
    if (existing->name() == generator->name()) {
      existing = std::move(generator);
      return;
    }
  }
  registry().push_back(std::move(generator));
}

Result<Schedule> pipecc::scheduling::generateSchedule(
    std::string_view name, const ScheduleProblem &problem) {
  const ScheduleGenerator *generator = lookupGenerator(name);
  if (!generator) {
    std::ostringstream error;
    error << "unknown schedule '" << name << "'; known schedules:";
    for (const std::string &known : generatorNames())
      error << " " << known;
    return Diagnostic{error.str()};
  }
  if (Status status = problem.check(); !status)
    return status;
  Result<Schedule> schedule = generator->generate(problem);
  if (!schedule)
    return schedule;
  if (Status status = schedule->verify(problem); !status)
    return Diagnostic{"generator '" + generator->name() +
                      "' produced an invalid schedule: " + status.message()};
  return schedule;
}
