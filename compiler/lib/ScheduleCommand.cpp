//===- ScheduleCommand.cpp - `pipecc schedule` and `pipecc timeline` ------===//
//
// `pipecc schedule` runs the scheduling library with no model: the problem
// comes from the command line (P ranks, v chunks, M micro-batches, costs per
// virtual stage), the library generates, verifies, places the messages and
// simulates, and the timeline library writes what happened. This is how
// schedules are compared (docs/schedules.md is a table of its output).
//
//===----------------------------------------------------------------------===//

#include "pipecc/Compiler/ScheduleCommand.h"

#include "pipecc/Compiler/FailureHandling.h"
#include "pipecc/Compiler/OutputDirectory.h"
#include "pipecc/Compiler/OutputFile.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Runtime/Numbers.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Search.h"
#include "pipecc/Scheduling/Simulator.h"
#include "pipecc/Support/Escape.h"
#include "pipecc/Timeline/Timeline.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace pipecc;
namespace sched = pipecc::scheduling;

namespace {

int fail(const llvm::Twine &message) {
  reportError(message);
  return 1;
}

//===----------------------------------------------------------------------===//
// Where the scheduling library's contracts meet this command. Each function
// below is the one place to switch when the library grows the piece named.
//===----------------------------------------------------------------------===//

struct PlacedProblem {
  sched::ScheduleProblem problem;
  std::string placement; // "linear", "interleaved", "v"
};

/// The placement the schedule uses for `chunks` per rank, as the generator
/// states it (placementFor), refused with the generator's reason.
sched::Result<PlacedProblem>
placedProblem(const sched::ScheduleGenerator &generator, int ranks, int chunks,
              int microbatches, bool split) {
  sched::Result<sched::PlacementKind> kind = generator.placementFor(chunks);
  if (!kind)
    return sched::Diagnostic{kind.message()};
  return PlacedProblem{sched::ScheduleProblem::withPlacement(
                           *kind, ranks, chunks, microbatches, split),
                       sched::placementName(*kind)};
}

/// The schedule, under the memory limit where the generator searches
/// (`auto`, priced with the same timing and sizes); fixed schedules ignore
/// the limit and are checked against it after the simulation.
sched::Result<sched::Schedule>
generateUnderLimit(llvm::StringRef name, const sched::ScheduleProblem &problem,
                   std::optional<double> memoryLimit,
                   const sched::TimingModel &timing,
                   const sched::TensorSizes &sizes) {
  if (name != "auto")
    return sched::generateSchedule(name.str(), problem);
  sched::ScheduleSearchOptions search;
  if (memoryLimit)
    search.memoryLimitMicrobatches = *memoryLimit;
  search.timing = timing;
  search.sizes = sizes;
  std::unique_ptr<sched::ScheduleGenerator> generator =
      sched::createAutoGenerator(search);
  if (sched::Status accepted = generator->accepts(problem); !accepted)
    return accepted;
  sched::Result<sched::Schedule> schedule = generator->generate(problem);
  if (!schedule)
    return schedule;
  if (sched::Status verified = schedule->verify(problem); !verified)
    return verified;
  return schedule;
}


//===----------------------------------------------------------------------===//

/// `values` for each of `count` items: one value repeated, or one per item.
std::optional<std::vector<double>> perItem(const std::vector<double> &values,
                                           size_t count, llvm::StringRef flag,
                                           llvm::StringRef items,
                                           std::string &error) {
  if (values.size() == 1)
    return std::vector<double>(count, values.front());
  if (values.size() == count)
    return values;
  error = (flag + " lists " + llvm::Twine(values.size()) +
           " values; give one for all " + items + " or one for each of the " +
           llvm::Twine(count))
              .str();
  return std::nullopt;
}

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.6g", value);
  return text;
}

/// "1 micro-batch", "2.5 micro-batches".
std::string microbatchCount(double count) {
  return formatNumber(count) + (count == 1 ? " micro-batch" : " micro-batches");
}

/// " (3/11)" when `value` is a fraction with a small denominator: the closed
/// forms of unit-cost bubbles are such fractions.
std::string fractionOf(double value) {
  if (value <= 0 || value >= 1)
    return "";
  for (int denominator = 2; denominator <= 100; ++denominator) {
    double numerator = std::round(value * denominator);
    if (std::abs(numerator / denominator - value) < 1e-9)
      return " (" + std::to_string(static_cast<int64_t>(numerator)) + "/" +
             std::to_string(denominator) + ")";
  }
  return "";
}

/// "F3", "B3", "W3", "BW3"; "F3.1" for chunk 1.
std::string shortName(const sched::ProgramAction &action) {
  switch (action.kind) {
  case sched::ProgramActionKind::Compute: {
    std::string text = sched::kindName(action.compute.kind) +
                       std::to_string(action.compute.microbatch);
    if (action.compute.chunk != 0)
      text += "." + std::to_string(action.compute.chunk);
    return text;
  }
  case sched::ProgramActionKind::Send:
    return ">" + std::to_string(action.peer) + ":" + action.tensor + "@" +
           std::to_string(action.microbatch);
  case sched::ProgramActionKind::Recv:
    return "<" + std::to_string(action.peer) + ":" + action.tensor + "@" +
           std::to_string(action.microbatch);
  case sched::ProgramActionKind::AllReduce:
    return "AR:" + action.tensor;
  case sched::ProgramActionKind::OptimizerStep:
    return "OPT";
  }
  return "?";
}

} // namespace

std::vector<std::string> pipecc::scheduleNames() {
  return sched::generatorNames();
}

std::optional<std::vector<double>>
pipecc::parseSecondsList(llvm::StringRef flag, llvm::StringRef text,
                         std::string &error) {
  llvm::SmallVector<llvm::StringRef> pieces;
  text.split(pieces, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  std::vector<double> values;
  for (llvm::StringRef piece : pieces) {
    std::optional<double> value =
        rt::parseNonNegativeRealOption(flag.str(), piece, error);
    if (!value) {
      if (pieces.size() > 1)
        error += " (in the list '" + support::escape(text) + "')";
      return std::nullopt;
    }
    values.push_back(*value);
  }
  return values;
}

int pipecc::runScheduleCommand(const ScheduleCommandOptions &options,
                               llvm::raw_ostream &out) {
  const sched::ScheduleGenerator *generator =
      sched::lookupGenerator(options.schedule);
  if (!generator) {
    std::string known;
    for (const std::string &name : sched::generatorNames())
      known += (known.empty() ? "" : ", ") + name;
    return fail("unknown schedule " + support::quote(options.schedule) +
                " for --schedule; known schedules: " + known);
  }
  int ranks = static_cast<int>(options.ranks);
  int chunks = static_cast<int>(options.chunks);
  int microbatches = static_cast<int>(options.microbatches);
  bool split = options.splitBackward || generator->splitsBackwardByDefault();
  sched::Result<PlacedProblem> placed =
      placedProblem(*generator, ranks, chunks, microbatches, split);
  if (!placed)
    return fail(options.schedule + ": " + placed.message());
  sched::ScheduleProblem &problem = placed->problem;

  // Costs are given by virtual stage; the problem holds them by the (rank,
  // chunk) the placement puts each virtual stage on.
  size_t virtualStages = static_cast<size_t>(problem.virtualStages());
  std::string error;
  std::optional<std::vector<double>> forward =
      perItem(options.forward, virtualStages, "--forward",
              "virtual stages", error);
  std::optional<std::vector<double>> backwardInput =
      forward ? perItem(options.backwardInput, virtualStages,
                        "--backward-input", "virtual stages", error)
              : std::nullopt;
  std::optional<std::vector<double>> backwardWeight =
      backwardInput ? perItem(options.backwardWeight, virtualStages,
                              "--backward-weight", "virtual stages", error)
                    : std::nullopt;
  std::optional<std::vector<double>> messages =
      backwardWeight
          ? perItem(options.messageSeconds,
                    std::max<size_t>(1, virtualStages - 1), "--comm",
                    "boundaries between virtual stages", error)
          : std::nullopt;
  if (!messages)
    return fail(error);
  problem.durations.assign(virtualStages, {});
  for (size_t q = 0; q < virtualStages; ++q) {
    auto [rank, chunk] = problem.placement[q];
    problem.durations[rank * chunks + chunk] = {
        (*forward)[q], (*backwardInput)[q], (*backwardWeight)[q]};
  }
  sched::TimingModel timing;
  // The runtime's message semantics (posted sends, receives waited for
  // where read), as the schedule phase predicts.
  timing.overlapSends = true;
  sched::TensorSizes sizes;
  if (virtualStages > 1)
    timing.boundarySeconds = *messages;
  if (!options.device.empty()) {
    const cost::DeviceProfile *profile =
        cost::loadDeviceProfile(options.device, error);
    if (!profile)
      return fail("--device: " + error);
    timing.cores = profile->cores;
  }

  sched::Result<sched::Schedule> schedule =
      generateUnderLimit(options.schedule, problem, options.memoryLimit,
                         timing, sizes);
  if (!schedule)
    return fail(options.schedule + " refuses P=" + llvm::Twine(ranks) +
                " v=" + llvm::Twine(chunks) + " M=" +
                llvm::Twine(microbatches) + ": " + schedule.message());
  sched::Result<std::vector<sched::Program>> programs =
      sched::materializeCommunication(problem, *schedule, sizes, timing);
  if (!programs)
    return fail("cannot place the messages of " + options.schedule + ": " +
                programs.message());
  sched::Result<sched::SimulationResult> simulation =
      sched::simulate(problem, *programs, timing);
  if (!simulation)
    return fail(options.schedule + " does not run: " + simulation.message());
  std::vector<double> peaks =
      timeline::peakActivationMicrobatches(*simulation);
  auto worst = std::max_element(peaks.begin(), peaks.end());
  if (options.memoryLimit && worst != peaks.end() &&
      *worst > *options.memoryLimit + 1e-9)
    return fail(options.schedule + " holds " + microbatchCount(*worst) +
                " of activations on rank " +
                llvm::Twine(worst - peaks.begin()) + ", over --memory-limit " +
                formatNumber(*options.memoryLimit));

  // Refuse before printing or writing anything.
  if (!options.tracePath.empty() && options.tracePath == options.svgPath)
    return fail("--trace and --svg name the same file " +
                support::quote(options.tracePath));
  for (const std::string *path : {&options.tracePath, &options.svgPath})
    if (!path->empty() && !checkOutputFile(*path, options.force, error))
      return fail(error);
  std::optional<OutputDirectory> folder;
  if (!options.outputDir.empty()) {
    OutputDirectory::Options folderOptions;
    folderOptions.force = options.force;
    std::optional<OutputDirectory> created =
        OutputDirectory::create(options.outputDir, folderOptions, error);
    if (!created)
      return fail(error);
    folder.emplace(std::move(*created));
  }

  // The report.
  std::string name = schedule->name.empty() ? options.schedule : schedule->name;
  out << "schedule " << name << ": " << ranks << " ranks x " << chunks
      << (chunks == 1 ? " chunk" : " chunks") << " (" << placed->placement
      << " placement), " << microbatches << " micro-batches, backward "
      << (split ? "split into B and W" : "fused (BW)") << "\n";
  for (int rank = 0; rank < ranks; ++rank) {
    out << "rank " << rank << ":";
    for (const sched::ProgramAction &action : (*programs)[rank])
      if (options.showMessages ||
          action.kind == sched::ProgramActionKind::Compute)
        out << " " << shortName(action);
    out << "\n";
  }
  size_t messageCount = 0;
  for (const sched::Program &program : *programs)
    for (const sched::ProgramAction &action : program)
      messageCount += action.kind == sched::ProgramActionKind::Send;
  out << "verified: each virtual stage runs "
      << (split ? "F, B and W" : "F and BW")
      << " once per micro-batch in dependency order, and the " << messageCount << " messages run without deadlock\n";
  out << "makespan " << formatNumber(simulation->makespan) << "\n";
  out << "bubble " << llvm::format("%.4f", simulation->bubbleFraction)
      << fractionOf(simulation->bubbleFraction) << "\n";
  for (int rank = 0; rank < ranks; ++rank)
    out << "rank " << rank << ": busy "
        << formatNumber(simulation->busySeconds[rank]) << ", idle "
        << formatNumber(simulation->makespan - simulation->busySeconds[rank])
        << ", peak activations " << microbatchCount(peaks[rank]) << "\n";
  if (worst != peaks.end()) {
    out << "peak activations " << microbatchCount(*worst) << " (rank " << (worst - peaks.begin()) << ")";
    if (options.memoryLimit)
      out << ", within --memory-limit " << formatNumber(*options.memoryLimit);
    out << "\n";
  }

  timeline::Timeline predicted = timeline::buildTimeline(
      problem, *programs, *simulation, name);
  auto writeJson = [&](llvm::raw_ostream &os) {
    timeline::writeTraceJson(predicted, os);
  };
  auto writeSvg = [&](llvm::raw_ostream &os) {
    const timeline::Timeline *one[] = {&predicted};
    timeline::writeSvg(one, os);
  };
  if (folder && (!folder->writeFile("timeline.json", writeJson, error) ||
                 !folder->writeFile("timeline.svg", writeSvg, error) ||
                 !folder->commit(error)))
    return fail(error);
  if (!options.tracePath.empty() &&
      !writeOutputFile(options.tracePath, options.force, writeJson, error))
    return fail(error);
  if (!options.svgPath.empty() &&
      !writeOutputFile(options.svgPath, options.force, writeSvg, error))
    return fail(error);
  return 0;
}

int pipecc::runTimelineCommand(const std::vector<std::string> &tracePaths,
                               llvm::StringRef outputPath, bool force,
                               llvm::raw_ostream &out) {
  if (tracePaths.empty() || tracePaths.size() > 2)
    return fail("pipecc timeline renders one or two traces; usage: pipecc "
                "timeline predicted.json [measured.json] -o out.svg");
  std::vector<timeline::Timeline> timelines;
  for (const std::string &path : tracePaths) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return fail("cannot read " + support::quote(path) + ": " +
                  buffer.getError().message());
    std::string error;
    std::optional<timeline::Timeline> read =
        timeline::readTraceJson((*buffer)->getBuffer(), error);
    if (!read)
      return fail(support::quote(path) + ": " + support::toOneLine(error));
    timelines.push_back(std::move(*read));
  }
  std::vector<const timeline::Timeline *> shown;
  for (const timeline::Timeline &one : timelines)
    shown.push_back(&one);
  auto write = [&](llvm::raw_ostream &os) { timeline::writeSvg(shown, os); };
  if (outputPath.empty()) {
    write(out);
    return 0;
  }
  std::string error;
  if (!writeOutputFile(outputPath, force, write, error))
    return fail(error);
  return 0;
}
