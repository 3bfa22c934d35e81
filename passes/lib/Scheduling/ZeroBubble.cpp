//===- ZeroBubble.cpp - ZB-H2 and ZB-V
//-------------------------------------===//
//
// Both orders come from one rule, played out with F = B = W = 1 and free
// communication (the setting the papers draw them in), so they are fixed
// orders that do not depend on the problem's durations:
//   each time a rank is free it runs a ready B, else the next ready F (the
//   later virtual stage first) if the rank's memory cap leaves room for it,
//   else a W.
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
//   comes right after the first micro-batch's way down and back. The rule
//   alone ends one unit late for some P (5, 6, 7), so zb-v also plays 31
//   variants of it (F before B, earlier stage first, W right after its B,
//   reserving room for later chunks, half a micro-batch less) and keeps the
//   shortest: it then reaches the least makespan 6M + P - 1 (in units of
//   one chunk's F) for every P in 2..8 once M >= 2P. Unlike zb-h2 it still
//   idles a few units inside the ranks' spans.
//
//===----------------------------------------------------------------------===//

#include "ListScheduling.h"
#include "pipecc/Scheduling/Generators.h"

#include <sstream>

using namespace pipecc::scheduling;

namespace {
/// Idle seconds inside the ranks' spans, summed.
double spanIdle(const detail::Evaluation &evaluation) {
  double idle = 0;
  for (size_t rank = 0; rank < evaluation.busySeconds.size(); ++rank)
    idle += evaluation.lastEnd[rank] - evaluation.firstStart[rank] -
            evaluation.busySeconds[rank];
  return idle;
}

/// The list-scheduler order of `problem` under unit durations and free
/// communication, with `cap` micro-batches of activations on every rank.
/// With `variants`, also the rule's variants (F before B, earlier stage
/// first, W right after B, no reserve, half a unit less cap), keeping the
/// first shortest order, then the one with the least idle inside spans.
Result<Schedule> unitCostOrder(const ScheduleProblem &problem, double cap,
                               bool variants, const std::string &name) {
  ScheduleProblem unit = problem;
  unit.durations.assign(problem.virtualStages(), ChunkDurations{1, 1, 1});
  detail::ActionGraph graph(unit, TimingModel{}, TensorSizes{});
  std::optional<Schedule> best;
  detail::Evaluation bestEvaluation;
  for (int variant = 0; variant < (variants ? 32 : 2); ++variant) {
    detail::ListPolicy policy;
    policy.reserveLaterStages = variant & 1;
    policy.backwardFirst = !(variant & 2);
    policy.laterStageFirst = !(variant & 4);
    policy.weightAfterBackward = variant & 8;
    policy.microbatchCap.assign(problem.stages, variant & 16 ? cap - 0.5 : cap);
    std::optional<Schedule> schedule =
        detail::listSchedule(graph, policy, name);
    if (!schedule)
      continue;
    detail::Evaluation evaluation = detail::evaluate(graph, *schedule);
    bool better = !best ||
                  evaluation.makespan < bestEvaluation.makespan - 1e-9 ||
                  (evaluation.makespan < bestEvaluation.makespan + 1e-9 &&
                   spanIdle(evaluation) < spanIdle(bestEvaluation) - 1e-9);
    if (better) {
      best = std::move(schedule);
      bestEvaluation = evaluation;
    }
    if (!variants && best)
      break;
  }
  if (!best)
    return Diagnostic{name + " found no order within " + std::to_string(cap) +
                      " micro-batches of activations per rank"};
  return *best;
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
    return unitCostOrder(problem, 2.0 * problem.stages - 1, false, name());
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
    return unitCostOrder(problem, problem.stages, true, name());
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
