//===- WeightGradientGroups.cpp - W of consecutive micro-batches together -===//
#include "pipecc/Scheduling/WeightGradientGroups.h"

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Simulator.h"

#include <algorithm>

using namespace pipecc::scheduling;

namespace {
/// The groups the schedule's W can form: per rank and chunk, taken in the
/// order the rank runs them, `size` at a time, consecutive micro-batches
/// m, ..., m + size - 1 with m a multiple of `size` (a grouped call then
/// reads copies that a plan with a multiple of `size` slots keeps side by
/// side). Each group lists its members in micro-batch order.
std::vector<std::pair<int, std::vector<ComputeAction>>>
candidateGroups(const ScheduleProblem &problem, const Schedule &schedule,
                int size) {
  std::vector<std::pair<int, std::vector<ComputeAction>>> groups;
  for (int rank = 0; rank < static_cast<int>(schedule.perRank.size());
       ++rank) {
    for (int chunk = 0; chunk < problem.chunks; ++chunk) {
      std::vector<ComputeAction> weights;
      for (const ComputeAction &action : schedule.perRank[rank])
        if (action.kind == ComputeKind::BackwardWeight &&
            action.chunk == chunk)
          weights.push_back(action);
      for (size_t first = 0; first + size <= weights.size();) {
        bool consecutive = weights[first].microbatch % size == 0;
        for (int i = 1; i < size; ++i)
          consecutive = consecutive && weights[first + i].microbatch ==
                                           weights[first].microbatch + i;
        if (!consecutive) {
          ++first;
          continue;
        }
        groups.push_back({rank, std::vector<ComputeAction>(
                                    weights.begin() + first,
                                    weights.begin() + first + size)});
        first += size;
      }
    }
  }
  return groups;
}

/// Moves a group's earlier members to just before its last.
void applyGroup(std::vector<ComputeAction> &rank,
                const std::vector<ComputeAction> &group) {
  for (size_t i = 0; i + 1 < group.size(); ++i)
    rank.erase(std::find(rank.begin(), rank.end(), group[i]));
  auto last = std::find(rank.begin(), rank.end(), group.back());
  rank.insert(last, group.begin(), group.end() - 1);
}

Status refuseFused(const Schedule &schedule, int size) {
  if (size < 1)
    return Status::failure("a weight-gradient group needs at least one "
                           "micro-batch, got " +
                           std::to_string(size));
  for (const std::vector<ComputeAction> &rank : schedule.perRank)
    for (const ComputeAction &action : rank)
      if (action.kind == ComputeKind::Backward)
        return Status::failure("cannot group the weight gradients of " +
                               describe(action) +
                               ": the schedule runs B and W as one action");
  return Status::success();
}
} // namespace

Result<Schedule>
pipecc::scheduling::groupWeightGradients(const ScheduleProblem &problem,
                                         const Schedule &schedule, int size) {
  if (Status status = refuseFused(schedule, size); !status)
    return status;
  Schedule grouped = schedule;
  if (size > 1)
    for (const auto &[rank, group] : candidateGroups(problem, schedule, size))
      applyGroup(grouped.perRank[rank], group);
  if (Status status = grouped.verify(problem); !status)
    return Diagnostic{"grouping the weight gradients broke the schedule: " +
                      status.message()};
  return grouped;
}

Result<Schedule> pipecc::scheduling::groupWeightGradientsInSlack(
    const ScheduleProblem &problem, const Schedule &schedule, int size,
    const TensorSizes &sizes, const TimingModel &timing) {
  if (Status status = refuseFused(schedule, size); !status)
    return status;
  // The step's length and the most micro-batches any rank holds for W.
  auto measure =
      [&](const Schedule &candidate) -> Result<std::pair<double, int>> {
    Result<std::vector<Program>> programs =
        materializeCommunication(problem, candidate, sizes, timing);
    if (!programs)
      return Diagnostic{programs.message()};
    Result<SimulationResult> simulation =
        simulate(problem, *programs, timing);
    if (!simulation)
      return Diagnostic{simulation.message()};
    int peak = 0;
    for (int live : simulation->peakLiveUntilWeightGradient)
      peak = std::max(peak, live);
    return std::pair{simulation->makespan, peak};
  };
  Result<std::pair<double, int>> base = measure(schedule);
  if (!base)
    return Diagnostic{base.message()};
  Schedule grouped = schedule;
  if (size > 1)
    for (const auto &[rank, group] :
         candidateGroups(problem, schedule, size)) {
      Schedule trial = grouped;
      applyGroup(trial.perRank[rank], group);
      // Delaying W only ever moves work later: keep the group where the
      // step is no longer for it (the simulator prices it as its members)
      // and no rank holds more micro-batches than the schedule's fullest
      // rank did (ZB-H1 promises 1F1B's memory), or than the group itself
      // needs.
      Result<std::pair<double, int>> after = measure(trial);
      if (after && after->first <= base->first * (1 + 1e-9) &&
          after->second <= std::max(base->second, size))
        grouped = std::move(trial);
    }
  if (Status status = grouped.verify(problem); !status)
    return Diagnostic{"grouping the weight gradients broke the schedule: " +
                      status.message()};
  return grouped;
}
