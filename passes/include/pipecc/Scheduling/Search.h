//===- Search.h - The auto schedule: a search under a limit -----*- C++ -*-===//
//
// `auto` searches per-rank orderings of a problem for the shortest step
// under a per-rank memory limit, priced by the problem's per-virtual-stage
// F, B and W durations and the timing model's message times:
//   1. every fixed schedule that accepts the problem (gpipe, 1f1b, ...) and
//      fits the limit is a seed;
//   2. a greedy list scheduler runs with several policies (caps on live
//      micro-batches per rank, B or F first, W eager or filling idle time);
//   3. local search moves single actions by up to 3 places within a rank's
//      order, from the two best orders so far (first improvement, within
//      an evaluation budget);
//   4. for small problems (at most exactActions actions), branch and bound
//      over active schedules with each virtual stage's forwards in
//      micro-batch order (Giffler-Thompson branching: at each step the rank
//      that can finish something soonest, and each of its actions that
//      could start before then), bounded below by each rank's remaining
//      work and each action's longest remaining chain; within the node
//      budget it is exact under the fast pricing, which the result says;
//   5. the seeds, the four best searched orders and the improved ones are
//      priced by materialising their communication and simulating it (what
//      pipecc reports), and the best is kept, a fixed schedule unless a
//      searched order is strictly shorter: never worse than the best fixed
//      schedule that fits.
// Memory is counted in program order (it does not depend on timing): in
// micro-batches of activations (one unit is a micro-batch's activations
// through all of a rank's virtual stages, held from F until its W ends), and
// in bytes when per-virtual-stage sizes are given.
//
// searchSchedule also searches over chunks v and micro-batches M: the
// caller builds the problem of each (placement, v, M).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_SEARCH_H
#define PIPECC_SCHEDULING_SEARCH_H

#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Program.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace pipecc::scheduling {

struct ScheduleSearchOptions {
  /// Per-rank limit in micro-batches of activations; infinity: none.
  double memoryLimitMicrobatches = std::numeric_limits<double>::infinity();
  /// Per-rank limit in bytes (needs activationBytes / stashBytes); 0: none.
  int64_t memoryLimitBytes = 0;
  /// Per virtual stage: bytes kept from F to the end of B, and from B to the
  /// end of W. Empty: every stage one unit, no bytes.
  std::vector<int64_t> activationBytes, stashBytes;
  /// Message times: the timing model over the sizes crossing each boundary.
  TimingModel timing;
  TensorSizes sizes;
  /// Orders priced by local search (each a fast compute-only simulation).
  int localSearchEvaluations = 3000;
  /// Branch and bound runs on problems of at most this many actions ...
  int exactActions = 30;
  /// ... and stops after this many nodes (the result then says so).
  int64_t exactNodes = 200000;
};

/// The search's own pricing of an order: compute-only, each message costing
/// the timing model's time across its boundary with the sender not waiting
/// (posted sends); memory counted as above. Contract 4's simulateSchedule
/// prices the same way and replaces this once it lands.
struct OrderPricing {
  double makespan = 0;
  /// Mean over ranks of 1 - busy / makespan.
  double bubble = 0;
  /// Per rank: compute seconds, start of the first action, end of the last.
  std::vector<double> busySeconds, firstStart, lastEnd;
  std::vector<double> peakMicrobatches;
  std::vector<int64_t> peakBytes;
  /// Mean over ranks of the idle fraction between the rank's first start
  /// and last end: the bubble when consecutive steps overlap, the measure
  /// of the zero-bubble papers.
  double spanBubble() const;
};

/// Prices `schedule` (verified first) under `options`' timing and sizes.
Result<OrderPricing> priceOrder(const ScheduleProblem &problem,
                                const Schedule &schedule,
                                const ScheduleSearchOptions &options = {});

/// What the search found for one problem.
struct ScheduleSearchResult {
  Schedule schedule;
  /// Which candidate won: "search" or the fixed schedule's name, e.g. "zb-h1".
  std::string origin;
  /// Simulated with communication: makespan and bubble.
  double makespan = 0;
  double bubble = 0;
  /// Per rank, peak micro-batches of activations (and bytes when given).
  std::vector<double> peakMicrobatches;
  std::vector<int64_t> peakBytes;
  /// The best fixed schedule that fits the limit, if any: name, makespan.
  std::string bestFixed;
  double bestFixedMakespan = std::numeric_limits<double>::infinity();
  /// Whether branch and bound ran to completion (the order is optimal
  /// among active schedules under the compute-only pricing).
  bool proven = false;
};

/// Searches `problem` (any placement, split or fused backward). Fails when
/// nothing fits the memory limit, saying what the fixed schedules need.
Result<ScheduleSearchResult>
searchOrdering(const ScheduleProblem &problem,
               const ScheduleSearchOptions &options = {});

/// The problem of one (v, M) candidate, as the caller prices it.
struct ScheduleCandidateProblem {
  ScheduleProblem problem;
  /// Sizes crossing the boundaries and per-virtual-stage memory (override
  /// the options' when non-empty).
  TensorSizes sizes;
  std::vector<int64_t> activationBytes, stashBytes;
};

struct ScheduleSearchSpace {
  std::vector<int> chunks = {1};
  std::vector<int> microbatches;
  /// The problem for `placement` (auto's placementFor(v)), v and M, with
  /// durations per virtual stage; a failure skips the candidate.
  std::function<Result<ScheduleCandidateProblem>(PlacementKind placement,
                                                 int chunks, int microbatches)>
      build;
};

struct ScheduleSpaceResult {
  int chunks = 1, microbatches = 1;
  ScheduleProblem problem;
  ScheduleSearchResult best;
  /// Every candidate tried: v, M, and its makespan or why it was skipped.
  struct Tried {
    int chunks = 1, microbatches = 1;
    double makespan = std::numeric_limits<double>::infinity();
    std::string origin, skipped;
  };
  std::vector<Tried> tried;
};

/// searchOrdering over every (v, M) of `space`; the shortest step wins.
Result<ScheduleSpaceResult>
searchSchedule(const ScheduleSearchSpace &space,
               const ScheduleSearchOptions &options = {});

/// The `auto` generator with `options`; the registry's "auto" has the
/// defaults (no memory limit, free communication). placementFor: v = 1
/// linear, v = 2 V-shape, v >= 3 interleaved.
std::unique_ptr<ScheduleGenerator>
createAutoGenerator(ScheduleSearchOptions options = {});

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_SEARCH_H
