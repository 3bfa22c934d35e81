//===- Generators.h - Schedule generators and their registry ----*- C++ -*-===//
//
// Each generator turns a ScheduleProblem into a per-rank compute order. They
// are looked up by the names the driver accepts for --schedule. Generators
// refuse problems whose shape they do not handle (1F1B needs one chunk per
// stage, interleaved 1F1B the interleaved placement) with a diagnostic.
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
  /// A schedule for `problem`, or why this generator cannot make one.
  virtual Result<Schedule> generate(const ScheduleProblem &problem) const = 0;
  /// The placement this generator schedules for `chunks` v per rank, or a
  /// failure saying why it cannot use v (e.g. "1f1b needs one chunk per rank").
  virtual Result<PlacementKind> placementFor(int chunks) const;
};

/// All of F, then all of B (B then W for each micro-batch when split). Any
/// placement.
std::unique_ptr<ScheduleGenerator> createGPipeGenerator();
/// Warm-up of P - q - 1 forwards on the rank holding virtual stage q, then one
/// forward one backward, then cool-down. One chunk per stage; when the
/// backward is split, W follows its B at once.
std::unique_ptr<ScheduleGenerator> createOneFOneBGenerator();
/// Megatron-LM's interleaved 1F1B over v chunks; needs the interleaved
/// placement and micro-batches a multiple of P.
std::unique_ptr<ScheduleGenerator> createInterleavedOneFOneBGenerator();
/// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism"): 1F1B's F and B
/// order with each rank deferring its W's so that every rank holds at most P
/// micro-batches' activations, the peak of 1F1B's first stage, and the
/// deferred W's fill the cool-down bubbles. Needs a split backward.
std::unique_ptr<ScheduleGenerator> createZeroBubbleH1Generator();

/// The registered generator called `name`, or null.
const ScheduleGenerator *lookupGenerator(std::string_view name);
/// Names of all registered generators, in registration order.
std::vector<std::string> generatorNames();
/// Adds a generator; a later one with the same name replaces the earlier.
void registerGenerator(std::unique_ptr<ScheduleGenerator> generator);

/// Looks up `name`, generates and verifies: an unknown name lists the known
/// ones, and a generator bug surfaces as a verification failure.
Result<Schedule> generateSchedule(std::string_view name,
                                  const ScheduleProblem &problem);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_GENERATORS_H
