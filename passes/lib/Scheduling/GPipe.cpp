//===- GPipe.cpp - All forwards, then all backwards -----------------------===//
//
// Forwards run in (micro-batch, virtual stage) order and backwards in
// (micro-batch, reverse virtual stage) order on every rank. Both orders are
// restrictions of one global order that respects every dependency, so the
// schedule is executable for any placement. Peak memory is all M micro-batches.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Generators.h"
#include "GeneratorSupport.h"

using namespace pipecc::scheduling;

namespace {
class GPipeGenerator : public ScheduleGenerator {
public:
  std::string name() const override { return "gpipe"; }
  // Any placement: interleaved when there are several chunks.
  Result<PlacementKind> placementFor(int chunks) const override {
    return chunks == 1 ? PlacementKind::Linear : PlacementKind::Interleaved;
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    if (Status status = problem.check(); !status)
      return status;
    Schedule schedule{name(), std::vector<std::vector<ComputeAction>>(
                                  problem.stages)};
    int virtualStages = problem.virtualStages();
    for (int m = 0; m < problem.microbatches; ++m)
      for (int q = 0; q < virtualStages; ++q) {
        auto [stage, chunk] = problem.placement[q];
        schedule.perRank[stage].push_back(detail::forward(stage, chunk, m));
      }
    for (int m = 0; m < problem.microbatches; ++m)
      for (int q = virtualStages - 1; q >= 0; --q) {
        auto [stage, chunk] = problem.placement[q];
        detail::appendBackward(problem, schedule.perRank[stage], stage, chunk,
                               m);
      }
    return schedule;
  }
};
} // namespace

std::unique_ptr<ScheduleGenerator> pipecc::scheduling::createGPipeGenerator() {
  return std::make_unique<GPipeGenerator>();
}
