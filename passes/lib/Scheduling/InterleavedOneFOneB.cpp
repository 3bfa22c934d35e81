//===- InterleavedOneFOneB.cpp - Megatron-LM's interleaved 1F1B -----------===//
//
// Each rank holds v chunks (virtual stage q on rank q % P, chunk q / P) and
// walks M * v forward and backward steps. Step k touches chunk (k / P) % v
// (reversed for backwards) of micro-batch (k / (P v)) * P + k % P: groups of P
// micro-batches go through one chunk, then the next. Rank r warms up with
// 2 (P - r - 1) + (v - 1) P forwards; with M = P everything is warm-up.
// This is the order of Megatron-LM's forward_backward_pipelining_with_
// interleaving, which requires M to be a multiple of P.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Generators.h"
#include "GeneratorSupport.h"

#include <algorithm>
#include <sstream>

using namespace pipecc::scheduling;

namespace {
class InterleavedOneFOneBGenerator : public ScheduleGenerator {
public:
  std::string name() const override { return "interleaved-1f1b"; }

  Result<PlacementKind> placementFor(int) const override {
    return PlacementKind::Interleaved;
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    if (Status status = problem.check(); !status)
      return status;
    const int stages = problem.stages, chunks = problem.chunks;
    const int microbatches = problem.microbatches;
    for (int q = 0; q < problem.virtualStages(); ++q) {
      if (problem.placement[q] != std::make_pair(q % stages, q / stages))
        return Diagnostic{"interleaved-1f1b needs virtual stage q on (q % P, "
                          "q / P); virtual stage " +
                          std::to_string(q) + " is elsewhere"};
    }
    if (microbatches % stages != 0) {
      std::ostringstream error;
      error << "interleaved-1f1b needs the micro-batches (" << microbatches
            << ") to be a multiple of the stages (" << stages << ")";
      return Diagnostic{error.str()};
    }

    const int steps = microbatches * chunks;
    auto microbatchOf = [&](int step) {
      return (step / (stages * chunks)) * stages + step % stages;
    };
    auto chunkOf = [&](int step, bool forward) {
      int chunk = (step / stages) % chunks;
      return forward ? chunk : chunks - 1 - chunk;
    };

    Schedule schedule{name(), {}};
    for (int rank = 0; rank < stages; ++rank) {
      int warmup = microbatches == stages
                       ? steps
                       : std::min(steps, 2 * (stages - rank - 1) +
                                             (chunks - 1) * stages);
      std::vector<ComputeAction> actions;
      auto forwardStep = [&](int step) {
        actions.push_back(
            detail::forward(rank, chunkOf(step, true), microbatchOf(step)));
      };
      auto backwardStep = [&](int step) {
        detail::appendBackward(problem, actions, rank, chunkOf(step, false),
                               microbatchOf(step));
      };
      for (int step = 0; step < warmup; ++step)
        forwardStep(step);
      for (int step = 0; step + warmup < steps; ++step) {
        forwardStep(step + warmup);
        backwardStep(step);
      }
      for (int step = steps - warmup; step < steps; ++step)
        backwardStep(step);
      schedule.perRank.push_back(std::move(actions));
    }
    return schedule;
  }
};
} // namespace

std::unique_ptr<ScheduleGenerator>
pipecc::scheduling::createInterleavedOneFOneBGenerator() {
  return std::make_unique<InterleavedOneFOneBGenerator>();
}
