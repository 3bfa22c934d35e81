//===- Simulator.cpp - Blocking rendezvous execution of programs ----------===//
//
// Before running anything, the sends from each rank to each peer are
// compared with the peer's receives from that rank, in order: a message with
// no counterpart, or the same messages in another order, is reported without
// needing a timeline. Then every rank runs as far as it can; a send and a
// receive that face each other complete together. When no rank can move and
// some have not finished, the programs deadlock.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Simulator.h"
#include "ActionIndex.h"
#include "Dataflow.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

using namespace pipecc::scheduling;

namespace {
using Blame = std::vector<std::pair<ActionRef, std::string>>;
using MessageKey = std::pair<std::string, int>; // tensor, micro-batch

std::string describeKey(const MessageKey &key) {
  return "'" + key.first + "' m" + std::to_string(key.second);
}

bool isMessage(const ProgramAction &action) {
  return action.kind == ProgramActionKind::Send ||
         action.kind == ProgramActionKind::Recv;
}

Status checkActions(const ScheduleProblem &problem,
                    const std::vector<Program> &programs,
                    const detail::ActionIndex &index, Blame &blame) {
  std::ostringstream error;
  if (int(programs.size()) != problem.stages) {
    error << "expected " << problem.stages << " programs, got "
          << programs.size();
    return Status::failure(error.str());
  }
  for (int rank = 0; rank < problem.stages; ++rank) {
    for (size_t i = 0; i < programs[rank].size(); ++i) {
      const ProgramAction &action = programs[rank][i];
      if (action.kind == ProgramActionKind::Compute &&
          (!index.inRange(action.compute) || action.compute.stage != rank)) {
        error << "rank " << rank << " action " << i << ": "
              << describe(action.compute) << " does not belong on this rank";
        blame.push_back({{rank, int(i)}, "here"});
        return Status::failure(error.str());
      }
      if (isMessage(action) &&
          (action.peer < 0 || action.peer >= problem.stages ||
           action.peer == rank)) {
        error << "rank " << rank << " action " << i << ": " << describe(action)
              << " names an invalid peer";
        blame.push_back({{rank, int(i)}, "here"});
        return Status::failure(error.str());
      }
    }
  }
  return Status::success();
}

/// Sends from `from` to `to` against `to`'s receives from `from`, in order.
Status checkPairing(const std::vector<Program> &programs, int from, int to,
                    Blame &blame) {
  std::vector<std::pair<MessageKey, size_t>> sends, recvs;
  for (size_t i = 0; i < programs[from].size(); ++i) {
    const ProgramAction &action = programs[from][i];
    if (action.kind == ProgramActionKind::Send && action.peer == to)
      sends.push_back({{action.tensor, action.microbatch}, i});
  }
  for (size_t i = 0; i < programs[to].size(); ++i) {
    const ProgramAction &action = programs[to][i];
    if (action.kind == ProgramActionKind::Recv && action.peer == from)
      recvs.push_back({{action.tensor, action.microbatch}, i});
  }
  std::multiset<MessageKey> sent, received;
  for (auto &send : sends)
    sent.insert(send.first);
  for (auto &recv : recvs)
    received.insert(recv.first);
  std::ostringstream error;
  for (auto &[key, at] : sends) {
    auto match = received.find(key);
    if (match == received.end()) {
      error << "rank " << from << " sends " << describeKey(key) << " to rank "
            << to << " (action " << at << ") but rank " << to
            << " has no matching receive from rank " << from;
      blame.push_back({{from, int(at)}, "unmatched send"});
      return Status::failure(error.str());
    }
    received.erase(match);
  }
  for (auto &[key, at] : recvs) {
    auto match = sent.find(key);
    if (match == sent.end()) {
      error << "rank " << to << " receives " << describeKey(key)
            << " from rank " << from << " (action " << at << ") but rank "
            << from << " never sends it to rank " << to;
      blame.push_back({{to, int(at)}, "unmatched receive"});
      return Status::failure(error.str());
    }
    sent.erase(match);
  }
  for (size_t k = 0; k < sends.size(); ++k) {
    if (sends[k].first != recvs[k].first) {
      error << "messages from rank " << from << " to rank " << to
            << " are received out of order: message " << k << " sent is "
            << describeKey(sends[k].first) << " (rank " << from << " action "
            << sends[k].second << ") but rank " << to << " expects "
            << describeKey(recvs[k].first) << " (action " << recvs[k].second
            << ")";
      blame.push_back({{to, int(recvs[k].second)}, "received here"});
      blame.push_back({{from, int(sends[k].second)}, "sent here"});
      return Status::failure(error.str());
    }
  }
  return Status::success();
}

class Simulation {
public:
  Simulation(const ScheduleProblem &problem, const std::vector<Program> &programs,
             const TimingModel &timing, Blame &blame)
      : problem(problem), programs(programs), timing(timing), blame(blame),
        index(problem),
        computed(index.size(), 0), next(problem.stages, 0),
        clock(problem.stages, 0), received(problem.stages) {
    result.busySeconds.assign(problem.stages, 0);
    for (const Program &program : programs)
      result.timelines.emplace_back(program.size());
  }

  Result<SimulationResult> run() {
    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (int rank = 0; rank < problem.stages; ++rank) {
        Result<bool> moved = advance(rank);
        if (!moved)
          return Diagnostic{moved.message()};
        progressed = progressed || *moved;
      }
    }
    if (Status status = reportDeadlock(); !status)
      return status;
    finish();
    return result;
  }

private:
  bool done(int rank) const { return next[rank] >= programs[rank].size(); }

  /// Runs `rank` until it blocks or ends; whether anything ran.
  Result<bool> advance(int rank) {
    bool moved = false;
    while (!done(rank)) {
      size_t at = next[rank];
      const ProgramAction &action = programs[rank][at];
      if (isMessage(action)) {
        int peer = action.peer;
        if (done(peer))
          return false || moved;
        const ProgramAction &facing = programs[peer][next[peer]];
        bool matches = isMessage(facing) && facing.peer == rank &&
                       facing.kind != action.kind;
        if (!matches)
          return moved;
        if (facing.tensor != action.tensor ||
            facing.microbatch != action.microbatch ||
            facing.bytes != action.bytes) {
          std::ostringstream error;
          error << "mismatched messages between rank " << rank << " and rank "
                << peer << ": rank " << rank << " action " << at << " is '"
                << describe(action) << "' but rank " << peer << " action "
                << next[peer] << " is '" << describe(facing) << "'";
          blame.push_back({{rank, int(at)}, "here"});
          blame.push_back({{peer, int(next[peer])}, "facing this"});
          return Diagnostic{error.str()};
        }
        const ProgramAction &recv =
            action.kind == ProgramActionKind::Recv ? action : facing;
        int receiver = action.kind == ProgramActionKind::Recv ? rank : peer;
        received[receiver].insert({recv.tensor, recv.microbatch});
        double start = std::max(clock[rank], clock[peer]);
        double end = start + timing.transferSeconds(action.bytes);
        result.timelines[rank][at] = {start, end};
        result.timelines[peer][next[peer]] = {start, end};
        clock[rank] = clock[peer] = end;
        ++next[rank];
        ++next[peer];
        moved = true;
        continue;
      }
      double duration = 0;
      if (action.kind == ProgramActionKind::Compute) {
        if (Status status = checkInput(rank, at); !status) {
          blame.push_back({{rank, int(at)}, "here"});
          return Diagnostic{status.message()};
        }
        computed[index(action.compute)] = 1;
        duration = problem.duration(action.compute);
      } else if (action.kind == ProgramActionKind::OptimizerStep) {
        duration = timing.optimizerStepSeconds;
      } else {
        duration = timing.transferSeconds(action.bytes);
      }
      if (action.kind != ProgramActionKind::AllReduce)
        result.busySeconds[rank] += duration;
      result.timelines[rank][at] = {clock[rank], clock[rank] + duration};
      clock[rank] += duration;
      ++next[rank];
      moved = true;
    }
    return moved;
  }

  Status checkInput(int rank, size_t at) {
    const ComputeAction &action = programs[rank][at].compute;
    ComputeAction producer;
    if (!dependencyOf(problem, action, producer))
      return Status::success();
    std::ostringstream error;
    if (std::optional<detail::Message> message =
            detail::incomingMessage(problem, action)) {
      if (received[rank].count({message->tensor, message->microbatch}))
        return Status::success();
      error << "rank " << rank << " runs " << describe(action) << " (action "
            << at << ") before receiving '" << message->tensor << "' m"
            << message->microbatch << " from rank " << message->fromRank;
      return Status::failure(error.str());
    }
    if (computed[index(producer)])
      return Status::success();
    error << "rank " << rank << " runs " << describe(action) << " (action "
          << at << ") before " << describe(producer) << " that it needs";
    return Status::failure(error.str());
  }

  Status reportDeadlock() {
    std::ostringstream error;
    bool any = false;
    for (int rank = 0; rank < problem.stages; ++rank) {
      if (done(rank))
        continue;
      const ProgramAction &action = programs[rank][next[rank]];
      blame.push_back({{rank, int(next[rank])}, "rank " +
                                                    std::to_string(rank) +
                                                    " waits here"});
      error << (any ? "; " : "deadlock: ") << "rank " << rank
            << " is blocked at action " << next[rank] << " ("
            << describe(action) << ")";
      int peer = action.peer;
      if (done(peer))
        error << ", but rank " << peer << " has finished its program";
      else
        error << " while rank " << peer << " is at action " << next[peer]
              << " (" << describe(programs[peer][next[peer]]) << ")";
      any = true;
    }
    return any ? Status::failure(error.str()) : Status::success();
  }

  void finish() {
    for (int rank = 0; rank < problem.stages; ++rank)
      result.makespan = std::max(result.makespan, clock[rank]);
    double idle = 0;
    for (int rank = 0; rank < problem.stages; ++rank)
      idle += result.makespan > 0
                  ? 1 - result.busySeconds[rank] / result.makespan
                  : 0;
    result.bubbleFraction = idle / problem.stages;

    // Activations of (stage, chunk) live on rank `stage` only, so program
    // order on that rank is enough to count them.
    int slots = problem.virtualStages();
    result.peakLiveMicrobatches.assign(slots, 0);
    result.peakLiveUntilWeightGradient.assign(slots, 0);
    std::vector<int> untilB(slots, 0), untilW(slots, 0);
    for (const Program &program : programs) {
      for (const ProgramAction &action : program) {
        if (action.kind != ProgramActionKind::Compute)
          continue;
        size_t slot = size_t(action.compute.stage) * problem.chunks +
                      action.compute.chunk;
        switch (action.compute.kind) {
        case ComputeKind::Forward:
          ++untilB[slot];
          ++untilW[slot];
          break;
        case ComputeKind::BackwardInput:
          --untilB[slot];
          break;
        case ComputeKind::BackwardWeight:
          --untilW[slot];
          break;
        case ComputeKind::Backward:
          --untilB[slot];
          --untilW[slot];
          break;
        }
        result.peakLiveMicrobatches[slot] =
            std::max(result.peakLiveMicrobatches[slot], untilB[slot]);
        result.peakLiveUntilWeightGradient[slot] =
            std::max(result.peakLiveUntilWeightGradient[slot], untilW[slot]);
      }
    }
  }

  const ScheduleProblem &problem;
  const std::vector<Program> &programs;
  const TimingModel &timing;
  Blame &blame;
  detail::ActionIndex index;
  std::vector<char> computed;
  std::vector<size_t> next;
  std::vector<double> clock;
  std::vector<std::set<MessageKey>> received;
  SimulationResult result;
};
} // namespace

Result<SimulationResult>
pipecc::scheduling::simulate(const ScheduleProblem &problem,
                             const std::vector<Program> &programs,
                             const TimingModel &timing,
                             SimulationFailure *failure) {
  Blame blame;
  auto fail = [&](const std::string &message) -> Result<SimulationResult> {
    if (failure)
      *failure = SimulationFailure{message, std::move(blame)};
    return Diagnostic{message};
  };
  if (Status status = problem.check(); !status)
    return fail(status.message());
  detail::ActionIndex index(problem);
  if (Status status = checkActions(problem, programs, index, blame); !status)
    return fail(status.message());
  for (int from = 0; from < problem.stages; ++from)
    for (int to = 0; to < problem.stages; ++to)
      if (from != to)
        if (Status status = checkPairing(programs, from, to, blame); !status)
          return fail(status.message());
  Result<SimulationResult> result =
      Simulation(problem, programs, timing, blame).run();
  if (!result)
    return fail(result.message());
  return result;
}
