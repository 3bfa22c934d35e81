//===- Verify.cpp - Schedule completeness and executability ---------------===//
//
// Executability is checked by running the per-rank lists with pure data
// dependencies (communication is free and unbounded here; the simulator
// checks the blocking programs separately). A rank blocks on its head action
// until that action's producer has run; when nothing can run, each blocked
// rank points at the rank holding what it waits for, and following those
// pointers from any blocked rank must end in a cycle, which is reported.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Problem.h"
#include "ActionIndex.h"

#include <sstream>

using namespace pipecc::scheduling;

namespace {
struct Position {
  int rank = -1;
  int index = -1;
};

std::vector<ComputeKind> requiredKinds(const ScheduleProblem &problem) {
  if (problem.splitBackward)
    return {ComputeKind::Forward, ComputeKind::BackwardInput,
            ComputeKind::BackwardWeight};
  return {ComputeKind::Forward, ComputeKind::Backward};
}

Status checkCompleteness(const ScheduleProblem &problem,
                         const Schedule &schedule,
                         const detail::ActionIndex &index,
                         std::vector<Position> &positions) {
  std::ostringstream error;
  if (int(schedule.perRank.size()) != problem.stages) {
    error << "schedule '" << schedule.name << "' has " << schedule.perRank.size()
          << " ranks, the problem has " << problem.stages << " stages";
    return Status::failure(error.str());
  }
  for (int rank = 0; rank < problem.stages; ++rank) {
    const std::vector<ComputeAction> &actions = schedule.perRank[rank];
    for (int i = 0; i < int(actions.size()); ++i) {
      const ComputeAction &action = actions[i];
      if (!index.inRange(action)) {
        error << "rank " << rank << " position " << i << ": "
              << describe(action) << " is outside " << problem.stages
              << " stages x " << problem.chunks << " chunks x "
              << problem.microbatches << " micro-batches";
        return Status::failure(error.str());
      }
      if (action.stage != rank) {
        error << "rank " << rank << " position " << i << ": "
              << describe(action) << " belongs on rank " << action.stage;
        return Status::failure(error.str());
      }
      bool fused = action.kind == ComputeKind::Backward;
      bool split = action.kind == ComputeKind::BackwardInput ||
                   action.kind == ComputeKind::BackwardWeight;
      if ((problem.splitBackward && fused) || (!problem.splitBackward && split)) {
        error << "rank " << rank << " position " << i << ": "
              << describe(action) << " but the problem "
              << (problem.splitBackward ? "splits" : "fuses")
              << " the backward";
        return Status::failure(error.str());
      }
      Position &seen = positions[index(action)];
      if (seen.rank >= 0) {
        error << describe(action) << " appears twice on rank " << rank
              << ", at positions " << seen.index << " and " << i;
        return Status::failure(error.str());
      }
      seen = Position{rank, i};
    }
  }
  for (int q = 0; q < problem.virtualStages(); ++q) {
    auto [stage, chunk] = problem.placement[q];
    for (int m = 0; m < problem.microbatches; ++m) {
      for (ComputeKind kind : requiredKinds(problem)) {
        ComputeAction action{kind, stage, chunk, m};
        if (positions[index(action)].rank < 0) {
          error << describe(action) << " (virtual stage " << q
                << ") is missing from rank " << stage;
          return Status::failure(error.str());
        }
      }
    }
  }
  return Status::success();
}

Status checkLocalOrder(const ScheduleProblem &problem,
                       const detail::ActionIndex &index,
                       const std::vector<Position> &positions) {
  std::vector<ComputeKind> kinds = requiredKinds(problem);
  for (int q = 0; q < problem.virtualStages(); ++q) {
    auto [stage, chunk] = problem.placement[q];
    for (int m = 0; m < problem.microbatches; ++m) {
      for (size_t k = 1; k < kinds.size(); ++k) {
        ComputeAction before{kinds[k - 1], stage, chunk, m};
        ComputeAction after{kinds[k], stage, chunk, m};
        int beforeAt = positions[index(before)].index;
        int afterAt = positions[index(after)].index;
        if (afterAt < beforeAt) {
          std::ostringstream error;
          error << "rank " << stage << " runs " << describe(after)
                << " at position " << afterAt << " before "
                << describe(before) << " at position " << beforeAt;
          return Status::failure(error.str());
        }
      }
    }
  }
  return Status::success();
}

Status checkExecutable(const ScheduleProblem &problem, const Schedule &schedule,
                       const detail::ActionIndex &index,
                       const std::vector<Position> &positions) {
  std::vector<char> done(index.size(), 0);
  std::vector<size_t> next(problem.stages, 0);
  // Ranks parked on an action's slot, woken when it completes.
  std::vector<std::vector<int>> waiters(index.size());
  std::vector<int> runnable;
  for (int rank = problem.stages - 1; rank >= 0; --rank)
    runnable.push_back(rank);
  while (!runnable.empty()) {
    int rank = runnable.back();
    runnable.pop_back();
    const std::vector<ComputeAction> &actions = schedule.perRank[rank];
    while (next[rank] < actions.size()) {
      const ComputeAction &action = actions[next[rank]];
      ComputeAction dependency;
      if (dependencyOf(problem, action, dependency) && !done[index(dependency)]) {
        waiters[index(dependency)].push_back(rank);
        break;
      }
      size_t slot = index(action);
      done[slot] = 1;
      for (int waiter : waiters[slot])
        runnable.push_back(waiter);
      waiters[slot].clear();
      ++next[rank];
    }
  }

  int blocked = -1;
  for (int rank = 0; rank < problem.stages && blocked < 0; ++rank)
    if (next[rank] < schedule.perRank[rank].size())
      blocked = rank;
  if (blocked < 0)
    return Status::success();

  // Every blocked rank waits on an action of a blocked rank; walk until a
  // rank repeats and report the loop from there.
  std::vector<int> visitOrder(problem.stages, -1);
  std::vector<int> path;
  int rank = blocked;
  while (visitOrder[rank] < 0) {
    visitOrder[rank] = int(path.size());
    path.push_back(rank);
    const ComputeAction &action = schedule.perRank[rank][next[rank]];
    ComputeAction dependency;
    dependencyOf(problem, action, dependency);
    rank = positions[index(dependency)].rank;
  }
  std::ostringstream error;
  error << "schedule '" << schedule.name
        << "' cannot run: ranks wait on each other in a cycle:";
  for (size_t i = visitOrder[rank]; i < path.size(); ++i) {
    int waiting = path[i];
    const ComputeAction &action = schedule.perRank[waiting][next[waiting]];
    ComputeAction dependency;
    dependencyOf(problem, action, dependency);
    const Position &producer = positions[index(dependency)];
    error << (i > size_t(visitOrder[rank]) ? ";" : "") << " rank " << waiting
          << " is blocked at position " << next[waiting] << " on "
          << describe(action) << ", which needs " << describe(dependency)
          << " at position " << producer.index << " on "
          << (producer.rank == waiting ? "the same rank"
                                       : "rank " + std::to_string(producer.rank));
  }
  return Status::failure(error.str());
}
} // namespace

Status Schedule::verify(const ScheduleProblem &problem) const {
  if (Status status = problem.check(); !status)
    return status;
  detail::ActionIndex index(problem);
  std::vector<Position> positions(index.size());
  if (Status status = checkCompleteness(problem, *this, index, positions);
      !status)
    return status;
  if (Status status = checkLocalOrder(problem, index, positions); !status)
    return status;
  return checkExecutable(problem, *this, index, positions);
}
