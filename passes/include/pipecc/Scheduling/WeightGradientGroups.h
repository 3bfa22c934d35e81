//===- WeightGradientGroups.h - W of consecutive micro-batches together ----===//
//
// A weight gradient dW += dY^T X has as many rows to reduce over (K) as a
// micro-batch, and reads and writes its accumulator once per call: with a
// micro-batch of 32 to 64 rows that pass over the accumulator, not the
// arithmetic, bounds it (docs/design.md, "What the weight gradients have
// left"). Running the W of consecutive micro-batches as one call with
// their rows side by side halves those passes. This transform only orders:
// each virtual stage's W come in groups of `size` consecutive
// micro-batches, back to back, where the schedule put the group's last one.
// The lowering (pipecc-group-weight-gradients) turns each run into one call.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_SCHEDULING_WEIGHTGRADIENTGROUPS_H
#define PIPECC_SCHEDULING_WEIGHTGRADIENTGROUPS_H

#include "pipecc/Scheduling/Problem.h"
#include "pipecc/Scheduling/Program.h"

namespace pipecc::scheduling {

/// `schedule` with each virtual stage's W (the schedule must split the
/// backward) gathered into groups of `size`: taken in the order the rank
/// runs them, `size` at a time, a group of consecutive micro-batches m,
/// m + 1, ..., m + size - 1 with m a multiple of `size` moves its earlier
/// members to just before its last. A W only
/// ever moves later, after its own B, so the result is as complete and
/// deadlock-free as `schedule` (verify() checks it again); a virtual
/// stage's activations for W stay live longer, by up to size - 1
/// micro-batches. Members that are not consecutive, and a last partial
/// group, stay where they are. Fails on a schedule with a fused backward.
Result<Schedule> groupWeightGradients(const ScheduleProblem &problem,
                                      const Schedule &schedule, int size);

/// What groupWeightGradientsInSlack did.
struct SlackGroupingReport {
  /// Groups groupWeightGradients would form, and those kept.
  int candidates = 0;
  int kept = 0;
  /// Step simulations run (the schedule's own included), and the groups
  /// each of the first trials took together.
  int simulations = 0;
  int groupsPerTrial = 1;
};

/// Program actions groupWeightGradientsInSlack's trials simulate by
/// default (about 1.5 s here; the schedule's own step is simulated once
/// more), and the trials it allows whatever the budget.
inline constexpr int64_t kDefaultSlackActionBudget = 4'000'000;
inline constexpr int kMinSlackTrials = 16;

/// groupWeightGradients' groups, each kept only where the simulated step
/// (materializeCommunication and simulate with `sizes` and `timing`) is no
/// longer than the schedule's own, and no rank holds more micro-batches'
/// activations for W than the schedule's fullest rank or the group's
/// `size`, whichever is more: delaying W takes it
/// out of the slot it filled (1F1B and ZB-H1 place W where a rank would
/// otherwise wait), a group the step waits for costs more than its faster
/// product saves, and the schedule's memory is part of its promise. The
/// simulator prices a group as its members.
///
/// Each trial simulates the whole step, so a trial per group costs
/// groups x actions: O((P M)^2), minutes at thousands of micro-batches.
/// `actionBudget` bounds the program actions the trials simulate (it
/// allows kMinSlackTrials trials at least). Where a trial per group fits,
/// the groups are tried one by one in the order above. Otherwise half the
/// trials take the groups in runs, kept or dropped together, those that
/// look free on their own rank's timeline first, and the other half split
/// each dropped run in two, then in two again, while trials last.
Result<Schedule> groupWeightGradientsInSlack(
    const ScheduleProblem &problem, const Schedule &schedule, int size,
    const TensorSizes &sizes, const TimingModel &timing,
    int64_t actionBudget = kDefaultSlackActionBudget,
    SlackGroupingReport *report = nullptr);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_WEIGHTGRADIENTGROUPS_H
