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

/// Whether a group looks free on its rank's own timeline (`programs` as
/// simulated in `timelines`): the rank's other actions between its members
/// run first, each no earlier than it started where it had waited (for a
/// message or a core) and never ending a message earlier, then the members;
/// free if the last member still ends before the rank's next action began
/// (or, last on its rank, by the step's end). Other ranks are taken as
/// they were, so this is an estimate that only orders the trials:
/// groupWeightGradientsInSlack still simulates the step for each decision.
bool looksFree(const Program &program, const std::vector<TimedAction> &timeline,
               const std::vector<ComputeAction> &group, double makespan) {
  std::vector<size_t> members;
  for (size_t i = 0; i < program.size() && members.size() < group.size();
       ++i)
    if (program[i].kind == ProgramActionKind::Compute &&
        program[i].compute == group[members.size()])
      members.push_back(i);
  if (members.size() != group.size())
    return false;
  double clock = timeline[members.front()].start;
  double work = 0;
  for (size_t i = members.front(); i <= members.back(); ++i) {
    const TimedAction &timed = timeline[i];
    if (std::find(members.begin(), members.end(), i) != members.end()) {
      work += timed.end - timed.start;
      continue;
    }
    bool waited = i > 0 && timed.start > timeline[i - 1].end;
    double start = waited ? std::max(clock, timed.start) : clock;
    double end = start + (timed.end - timed.start);
    if (program[i].kind != ProgramActionKind::Compute)
      end = std::max(end, timed.end);
    clock = end;
  }
  double limit = members.back() + 1 < program.size()
                     ? timeline[members.back() + 1].start
                     : makespan;
  return clock + work <= limit * (1 + 1e-9);
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
    const TensorSizes &sizes, const TimingModel &timing, int64_t actionBudget,
    SlackGroupingReport *report) {
  if (Status status = refuseFused(schedule, size); !status)
    return status;
  SlackGroupingReport local;
  SlackGroupingReport &counts = report ? *report : local;
  counts = {};
  // The step's length, the most micro-batches any rank holds for W, and
  // the programs simulated with their timelines.
  struct Measure {
    double makespan;
    int peak;
    int64_t actions;
    std::vector<Program> programs;
    std::vector<std::vector<TimedAction>> timelines;
  };
  auto measure = [&](const Schedule &candidate) -> Result<Measure> {
    ++counts.simulations;
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
    int64_t actions = 0;
    for (const Program &program : *programs)
      actions += static_cast<int64_t>(program.size());
    return Measure{simulation->makespan, peak, actions, std::move(*programs),
                   std::move(simulation->timelines)};
  };
  Result<Measure> base = measure(schedule);
  if (!base)
    return Diagnostic{base.message()};
  Schedule grouped = schedule;
  std::vector<std::pair<int, std::vector<ComputeAction>>> groups;
  if (size > 1)
    groups = candidateGroups(problem, schedule, size);
  counts.candidates = static_cast<int>(groups.size());
  // Trials the budget allows: one per group where they fit, in order.
  // Otherwise half of them take the groups in runs, those that look free
  // on their rank's timeline (looksFree) first, and the rest split each
  // dropped run in two, then in two again, while trials are left. Groups
  // on different actions commute, so any order gives a valid schedule;
  // the order decides which groups are tried together and with which
  // groups already kept, and so which are kept.
  int64_t trials = std::max<int64_t>(
      kMinSlackTrials, actionBudget / std::max<int64_t>(1, base->actions));
  int64_t count = static_cast<int64_t>(groups.size());
  int64_t perTrial =
      count <= trials ? 1 : (count + trials / 2 - 1) / (trials / 2);
  counts.groupsPerTrial = static_cast<int>(perTrial);
  int64_t lookFree = count;
  if (perTrial > 1)
    lookFree = std::stable_partition(groups.begin(), groups.end(),
                                 [&](const auto &group) {
                                   return looksFree(
                                       base->programs[group.first],
                                       base->timelines[group.first],
                                       group.second, base->makespan);
                                 }) -
           groups.begin();
  std::vector<std::pair<size_t, size_t>> runs;
  for (auto [begin, end] : {std::pair{int64_t(0), lookFree}, {lookFree, count}})
    for (int64_t first = begin; first < end; first += perTrial)
      runs.push_back({static_cast<size_t>(first),
                      static_cast<size_t>(std::min(end, first + perTrial))});
  while (!runs.empty() && counts.simulations - 1 < trials) {
    std::vector<std::pair<size_t, size_t>> dropped;
    for (auto [first, last] : runs) {
      if (counts.simulations - 1 >= trials)
        break;
      Schedule trial = grouped;
      for (size_t i = first; i < last; ++i)
        applyGroup(trial.perRank[groups[i].first], groups[i].second);
      // Delaying W only ever moves work later: keep the groups where the
      // step is no longer for them (the simulator prices a group as its
      // members) and no rank holds more micro-batches than the schedule's
      // fullest rank did (ZB-H1 promises 1F1B's memory), or than a group
      // itself needs.
      Result<Measure> after = measure(trial);
      if (after && after->makespan <= base->makespan * (1 + 1e-9) &&
          after->peak <= std::max(base->peak, size)) {
        grouped = std::move(trial);
        counts.kept += static_cast<int>(last - first);
      } else if (last - first > 1) {
        size_t middle = first + (last - first) / 2;
        dropped.push_back({first, middle});
        dropped.push_back({middle, last});
      }
    }
    runs = std::move(dropped);
  }
  if (Status status = grouped.verify(problem); !status)
    return Diagnostic{"grouping the weight gradients broke the schedule: " +
                      status.message()};
  return grouped;
}
