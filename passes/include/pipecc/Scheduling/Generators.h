//===- Generators.h - Schedule generators and their registry ----*- C++ -*-===//
//
// Each generator turns a ScheduleProblem into a per-rank compute order. They
// are looked up by the names the driver accepts for --schedule. Each states
// up front what it needs: the placement it schedules for v chunks per rank
// (placementFor), whether the backward must be split into B and W
// (needsSplitBackward), and the problems it takes (accepts: M >= P, the
// right placement, ...), refusing anything else with that need as the
// reason. generateSchedule asks accepts() before generating, so a failure
// after acceptance is a generator bug, reported as such.
//
// The fixed schedules (closed forms with F = B = W = 1 and free
// communication, checked by GeneratorsTest / ExactnessTest):
//   gpipe             any placement; bubble (P-1)/(M+P-1) fused, peak M.
//   1f1b              linear; bubble (P-1)/(M+P-1) fused, peak P - r.
//   interleaved-1f1b  interleaved, M >= P; bubble (P-1)/(vM+P-1) fused for
//                     M a multiple of P (with posted sends).
//   zb-h1             linear, split; 1F1B's peak, makespan 3M + P - 1 for
//                     M >= P.
//   zb-h2             linear, split; peak <= 2P - 1, no idle inside any
//                     rank's span once M >= 2P - 1 (see ZeroBubble.cpp).
//   zb-v              V-shape, split; peak <= 1F1B's P, the least makespan
//                     6M + P - 1 (chunk units) once M >= 2P (ZeroBubble.cpp).
//   auto              a search under a memory limit (Search.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_GENERATORS_H
#define PIPECC_SCHEDULING_GENERATORS_H

#include "pipecc/Scheduling/Problem.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pipecc::scheduling {

class ScheduleGenerator {
public:
  virtual ~ScheduleGenerator() = default;
  /// The name `lookupGenerator` finds it by, e.g. "1f1b".
  virtual std::string name() const = 0;
  /// The placement this generator schedules for `chunks` v per rank, or a
  /// failure saying why it cannot use v (e.g. "1f1b needs one chunk per
  /// rank"). The default: linear for v = 1, nothing else.
  virtual Result<PlacementKind> placementFor(int chunks) const;
  /// Up-front check of a problem against what the generator needs (M >= P,
  /// M a multiple of P, a split backward, ...); the message states the
  /// need. The default checks the problem, its placement against
  /// placementFor(chunks) and the split against needsSplitBackward().
  virtual Status accepts(const ScheduleProblem &problem) const;
  /// Whether the generator needs the backward split into B and W.
  virtual bool needsSplitBackward() const { return false; }
  /// The split to use when the user leaves it to the schedule: the needed
  /// one, or a split the generator can exploit though it does not need it
  /// (`auto` may place W's apart from their B's, or right after them).
  virtual bool splitsBackwardByDefault() const { return needsSplitBackward(); }
  /// A schedule for an accepted problem, or why this generator cannot make
  /// one (generateSchedule checks accepts() first).
  virtual Result<Schedule> generate(const ScheduleProblem &problem) const = 0;
};

/// All of F, then all of B (B then W for each micro-batch when split). Any
/// placement; placementFor(1) is linear, placementFor(v > 1) interleaved.
std::unique_ptr<ScheduleGenerator> createGPipeGenerator();
/// Warm-up of P - q - 1 forwards on the rank holding virtual stage q, then one
/// forward one backward, then cool-down. One chunk per stage; when the
/// backward is split, W follows its B at once.
std::unique_ptr<ScheduleGenerator> createOneFOneBGenerator();
/// Megatron-LM's interleaved 1F1B over v chunks: micro-batches go through
/// the chunks in groups of P (the last group may be smaller, so any M >= P
/// works); needs the interleaved placement and M >= P.
std::unique_ptr<ScheduleGenerator> createInterleavedOneFOneBGenerator();
/// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism"): 1F1B's F and B
/// order with each rank deferring its W's so that every rank holds at most P
/// micro-batches' activations, the peak of 1F1B's first stage, and the
/// deferred W's fill the cool-down bubbles. Needs a split backward.
std::unique_ptr<ScheduleGenerator> createZeroBubbleH1Generator();
/// ZB-H2 (same paper): up to 2P - 1 warm-up forwards on rank 0 (2(P-r) - 1
/// on rank r), B before F before W afterwards, W's filling what would be
/// idle: with F = B = W no rank idles between its first and last action
/// once M is large enough, at up to 2P - 1 micro-batches of activations.
/// Needs a split backward and the linear placement.
std::unique_ptr<ScheduleGenerator> createZeroBubbleH2Generator();
/// ZB-V (Qi et al., "Pipeline Parallelism with Controllable Memory"): two
/// chunks per rank in the V placement, so rank 0 holds the first and the
/// last virtual stage; B before F (the later chunk first) before W, with at
/// most 2P chunk activations (= P micro-batches, 1F1B's peak) per rank; the
/// shortest of that rule's variants under unit costs. Needs a split
/// backward, the V placement and 2 chunks per rank.
std::unique_ptr<ScheduleGenerator> createZeroBubbleVGenerator();

/// The registered generator called `name`, or null.
const ScheduleGenerator *lookupGenerator(std::string_view name);
/// Names of all registered generators, in registration order.
std::vector<std::string> generatorNames();
/// Adds a generator; a later one with the same name replaces the earlier.
void registerGenerator(std::unique_ptr<ScheduleGenerator> generator);

/// Looks up `name`, asks accepts(), generates and verifies: an unknown name
/// lists the known ones, a refusal is the generator's stated reason, and a
/// generator bug surfaces as a verification failure.
Result<Schedule> generateSchedule(std::string_view name,
                                  const ScheduleProblem &problem);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_GENERATORS_H
