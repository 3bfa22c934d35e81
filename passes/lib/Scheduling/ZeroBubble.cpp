//===- ZeroBubble.cpp - ZB-H2 and ZB-V -------------------------------------===//
//
// Both orders come from one rule, played out with F = B = W = 1 and free
// communication (the setting the papers draw them in), so they are fixed
// orders that do not depend on the problem's durations:
//   each time a rank is free it runs a ready B, else the next ready F (the
//   later virtual stage first) if the rank's memory cap leaves room for it
//   and for one micro-batch through its later virtual stages, else a W.
// B's go first because every rank upstream waits on them; F's fill the
// warm-up, and the W's, which nothing waits on, fill what would be idle.
//
// zb-h2 (Qi et al., "Zero Bubble Pipeline Parallelism"): linear placement,
//   cap 2P - 1 micro-batches on every rank. Rank r warms up with 2(P-r) - 1
//   forwards (its first B arrives after them) and defers up to 2r W's to the
//   tail, which fill the time it would wait for B's: the schedule is a
//   parallelogram, each rank busy from its first action to its last.
// zb-v (Qi et al., "Pipeline Parallelism with Controllable Memory"): the V
//   placement, cap P micro-batches (2P chunks of half a stage each), 1F1B's
//   peak on rank 0; rank 0 holds both ends of the model, so its first B
//   comes right after the first micro-batch's way down and back.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Generators.h"
#include "ListScheduling.h"

#include <sstream>

using namespace pipecc::scheduling;

namespace {
/// The list-scheduler order of `problem` under unit durations and free
/// communication, with `cap` micro-batches of activations on every rank.
Result<Schedule> unitCostOrder(const ScheduleProblem &problem, double cap,
                               const std::string &name) {
  ScheduleProblem unit = problem;
  unit.durations.assign(problem.virtualStages(), ChunkDurations{1, 1, 1});
  detail::ActionGraph graph(unit, TimingModel{}, TensorSizes{});
  detail::ListPolicy policy;
  policy.microbatchCap.assign(problem.stages, cap);
  policy.reserveLaterStages = false;
  std::optional<Schedule> schedule = detail::listSchedule(graph, policy, name);
  if (!schedule) {
    policy.reserveLaterStages = true;
    schedule = detail::listSchedule(graph, policy, name);
  }
  if (!schedule)
    return Diagnostic{name + " found no order within " + std::to_string(cap) +
                      " micro-batches of activations per rank"};
  return *schedule;
}

class ZeroBubbleH2Generator : public ScheduleGenerator {
public:
  std::string name() const override { return "zb-h2"; }
  bool needsSplitBackward() const override { return true; }
  Result<PlacementKind> placementFor(int chunks) const override {
    if (chunks == 1)
      return PlacementKind::Linear;
    return Diagnostic{"zb-h2 needs one chunk per rank, got " +
                      std::to_string(chunks) + "; use zb-v"};
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    return unitCostOrder(problem, 2.0 * problem.stages - 1, name());
  }
};

class ZeroBubbleVGenerator : public ScheduleGenerator {
public:
  std::string name() const override { return "zb-v"; }
  bool needsSplitBackward() const override { return true; }
  Result<PlacementKind> placementFor(int chunks) const override {
    if (chunks == 2)
      return PlacementKind::VShape;
    return Diagnostic{"zb-v needs 2 chunks per rank, got " +
                      std::to_string(chunks)};
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    return unitCostOrder(problem, problem.stages, name());
  }
};
} // namespace

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createZeroBubbleH2Generator() {
  return std::make_unique<ZeroBubbleH2Generator>();
}

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createZeroBubbleVGenerator() {
  return std::make_unique<ZeroBubbleVGenerator>();
}
