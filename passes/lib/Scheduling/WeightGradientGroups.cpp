//===- WeightGradientGroups.cpp - W of consecutive micro-batches together -===//
#include "pipecc/Scheduling/WeightGradientGroups.h"

#include <algorithm>

using namespace pipecc::scheduling;

Result<Schedule>
pipecc::scheduling::groupWeightGradients(const ScheduleProblem &problem,
                                         const Schedule &schedule, int size) {
  if (size < 1)
    return Diagnostic{"a weight-gradient group needs at least one "
                      "micro-batch, got " +
                      std::to_string(size)};
  Schedule grouped = schedule;
  for (std::vector<ComputeAction> &rank : grouped.perRank) {
    for (const ComputeAction &action : rank)
      if (action.kind == ComputeKind::Backward)
        return Diagnostic{"cannot group the weight gradients of " +
                          describe(action) +
                          ": the schedule runs B and W as one action"};
    if (size == 1)
      continue;
    for (int chunk = 0; chunk < problem.chunks; ++chunk) {
      // This chunk's W in the order the rank runs them.
      std::vector<ComputeAction> weights;
      for (const ComputeAction &action : rank)
        if (action.kind == ComputeKind::BackwardWeight &&
            action.chunk == chunk)
          weights.push_back(action);
      for (size_t first = 0; first + size <= weights.size();) {
        // Groups start at multiples of size: a grouped call then reads
        // copies that a plan with a multiple of size slots keeps side by
        // side.
        bool consecutive = weights[first].microbatch % size == 0;
        for (int i = 1; i < size; ++i)
          consecutive = consecutive && weights[first + i].microbatch ==
                                           weights[first].microbatch + i;
        if (!consecutive) {
          ++first;
          continue;
        }
        // Move members first .. first + size - 2 to right before the last.
        for (int i = 0; i + 1 < size; ++i) {
          auto member = std::find(rank.begin(), rank.end(), weights[first + i]);
          rank.erase(member);
        }
        auto last = std::find(rank.begin(), rank.end(),
                              weights[first + size - 1]);
        rank.insert(last, weights.begin() + first,
                    weights.begin() + first + size - 1);
        first += size;
      }
    }
  }
  if (Status status = grouped.verify(problem); !status)
    return Diagnostic{"grouping the weight gradients broke the schedule: " +
                      status.message()};
  return grouped;
}
