//===- InterleavedOneFOneB.cpp - Megatron-LM's interleaved 1F1B -----------===//
//
// Each rank holds v chunks (virtual stage q on rank q % P, chunk q / P) and
// walks M * v forward and M * v backward steps through one table: the
// micro-batches in groups of P (the last group may be smaller), each group
// through chunk 0, then chunk 1, ... (backwards through the chunks in
// reverse). Rank r warms up with 2 (P - r - 1) + (v - 1) P forwards, then
// alternates one forward and one backward, then drains; with M = P
// everything is warm-up. This is Megatron-LM's get_schedule_table with
// microbatch_group_size_per_vp_stage = P, which also needs M >= P: with
// fewer micro-batches than ranks a group cannot keep the pipeline full while
// the warm-up assumes it does.
//
//===----------------------------------------------------------------------===//

#include "GeneratorSupport.h"
#include "pipecc/Scheduling/Generators.h"

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

  Status accepts(const ScheduleProblem &problem) const override {
    if (Status status = ScheduleGenerator::accepts(problem); !status)
      return status;
    if (problem.microbatches < problem.stages) {
      std::ostringstream error;
      error << name() << " needs micro-batches >= ranks, got "
            << problem.microbatches << " < " << problem.stages;
      return Status::failure(error.str());
    }
    return Status::success();
  }

  Result<Schedule> generate(const ScheduleProblem &problem) const override {
    const int stages = problem.stages, chunks = problem.chunks;
    const int microbatches = problem.microbatches;
    const int steps = microbatches * chunks;

    // (micro-batch, chunk of the forward) of each step.
    std::vector<std::pair<int, int>> table;
    for (int group = 0; group < microbatches; group += stages)
      for (int chunk = 0; chunk < chunks; ++chunk)
        for (int m = group; m < std::min(group + stages, microbatches); ++m)
          table.push_back({m, chunk});

    // Megatron's warm-up; when the last group is partial it can be too
    // short to reach the first backward (the ranks would wait on each
    // other), so it grows by one step on every rank until the order runs.
    // With everything warm-up the order is GPipe's over the table, which
    // always runs.
    for (int extra = 0;; ++extra) {
      Schedule schedule = build(problem, table, extra);
      if (extra >= steps || schedule.verify(problem))
        return schedule;
    }
  }

private:
  Schedule build(const ScheduleProblem &problem,
                 const std::vector<std::pair<int, int>> &table,
                 int extra) const {
    const int stages = problem.stages, chunks = problem.chunks;
    const int microbatches = problem.microbatches;
    const int steps = int(table.size());
    Schedule schedule{name(), {}};
    for (int rank = 0; rank < stages; ++rank) {
      int warmup = microbatches == stages
                       ? steps
                       : std::min(steps, 2 * (stages - rank - 1) +
                                             (chunks - 1) * stages + extra);
      std::vector<ComputeAction> actions;
      auto forwardStep = [&](int step) {
        actions.push_back(
            detail::forward(rank, table[step].second, table[step].first));
      };
      auto backwardStep = [&](int step) {
        detail::appendBackward(problem, actions, rank,
                               chunks - 1 - table[step].second,
                               table[step].first);
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
