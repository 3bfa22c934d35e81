//===- OneFOneB.cpp - 1F1B and its zero-bubble variant ZB-H1 --------------===//
//
// Both keep 1F1B's order of F and B. The rank holding virtual stage q warms
// up with P - q - 1 forwards, alternates one forward and one backward, and
// drains the remaining backwards. They differ in where W goes:
//   1f1b   W right after its B (or fused into it);
//   zb-h1  W deferred by q micro-batches: the rank then holds at most
//          (P - q) + q = P micro-batches, 1F1B's peak on its first stage,
//          and the deferred W's run in the cool-down, where 1F1B idles.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Generators.h"
#include "GeneratorSupport.h"

#include <algorithm>
#include <sstream>

using namespace pipecc::scheduling;

namespace {
/// 1F1B's order of F and B for one rank; `weightLag` < 0 fuses or attaches W
/// to its B, otherwise W(m) runs after B(m + weightLag) (and all remaining
/// W's at the end).
std::vector<ComputeAction> oneFOneBRank(const ScheduleProblem &problem,
                                        int stage, int weightLag) {
  const int microbatches = problem.microbatches;
  const int q = problem.virtualStageOf(stage, 0);
  const int warmup = std::min(microbatches, problem.stages - q - 1);
  std::vector<ComputeAction> actions;
  int nextWeight = 0;
  auto backward = [&](int m) {
    if (weightLag < 0) {
      detail::appendBackward(problem, actions, stage, 0, m);
      return;
    }
    actions.push_back({ComputeKind::BackwardInput, stage, 0, m});
    if (m - weightLag >= 0)
      actions.push_back({ComputeKind::BackwardWeight, stage, 0, nextWeight++});
  };
  for (int m = 0; m < warmup; ++m)
    actions.push_back(detail::forward(stage, 0, m));
  for (int m = 0; m + warmup < microbatches; ++m) {
    actions.push_back(detail::forward(stage, 0, m + warmup));
    backward(m);
  }
  for (int m = std::max(0, microbatches - warmup); m < microbatches; ++m)
    backward(m);
  if (weightLag >= 0)
    while (nextWeight < microbatches)
      actions.push_back(
          {ComputeKind::BackwardWeight, stage, 0, nextWeight++});
  return actions;
}

/// 1F1B and ZB-H1 need one chunk per rank; any order of the virtual stages
/// on the ranks works, since a rank's warm-up follows its virtual stage.
class OneChunkGenerator : public ScheduleGenerator {
public:
  Result<PlacementKind> placementFor(int chunks) const override {
    if (chunks == 1)
      return PlacementKind::Linear;
    std::ostringstream error;
    error << name() << " needs one chunk per rank, got " << chunks
          << "; use interleaved-1f1b or zb-v";
    return Diagnostic{error.str()};
  }

  Status accepts(const ScheduleProblem &problem) const override {
    if (Status status = problem.check(); !status)
      return status;
    if (Result<PlacementKind> placement = placementFor(problem.chunks);
        !placement)
      return Status::failure(placement.message());
    if (needsSplitBackward() && !problem.splitBackward)
      return Status::failure(name() +
                             " needs the backward split into B and W");
    return Status::success();
  }
};

class OneFOneBGenerator : public OneChunkGenerator {
public:
  std::string name() const override { return "1f1b"; }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    Schedule schedule{name(), {}};
    for (int stage = 0; stage < problem.stages; ++stage)
      schedule.perRank.push_back(oneFOneBRank(problem, stage, -1));
    return schedule;
  }
};

class ZeroBubbleH1Generator : public OneChunkGenerator {
public:
  std::string name() const override { return "zb-h1"; }
  bool needsSplitBackward() const override { return true; }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    Schedule schedule{name(), {}};
    for (int stage = 0; stage < problem.stages; ++stage)
      schedule.perRank.push_back(
          oneFOneBRank(problem, stage, problem.virtualStageOf(stage, 0)));
    return schedule;
  }
};
} // namespace

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createOneFOneBGenerator() {
  return std::make_unique<OneFOneBGenerator>();
}

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createZeroBubbleH1Generator() {
  return std::make_unique<ZeroBubbleH1Generator>();
}
