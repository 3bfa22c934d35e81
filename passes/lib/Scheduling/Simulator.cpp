//===- Simulator.cpp - Timing and memory of programs and schedules --------===//
//
// simulate(): before running anything, the sends from each rank to each peer
// are compared with the peer's receives from that rank, in order: a message
// with no counterpart, or the same messages in another order, is reported
// without needing a timeline. Then every rank runs as far as it can; under
// rendezvous a send and a receive that face each other complete together,
// under overlap a send is posted into its link's queue and a receive takes
// the queue's head. When no rank can move and some have not finished, the
// programs deadlock.
//
// simulateSchedule(): the same cost model over compute actions only, driven
// by a worklist (a rank blocked on an input is woken when it is produced), so
// each action is visited once.
//
// Memory is a walk over each rank's computes in order: activations and
// stashes of a virtual stage live on its rank only, so program order is the
// time order that matters.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Simulator.h"
#include "ActionIndex.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <sstream>

using namespace pipecc::scheduling;

namespace {
using MessageKey = std::pair<std::string, int>; // tensor, micro-batch
using Blamed = std::vector<std::pair<ActionRef, std::string>>;

std::string describeKey(const MessageKey &key) {
  return "'" + key.first + "' m" + std::to_string(key.second);
}

bool isMessage(const ProgramAction &action) {
  return action.kind == ProgramActionKind::Send ||
         action.kind == ProgramActionKind::Recv;
}

/// Fills the caller's SimulationFailure (when given) as it fails.
struct Reporter {
  SimulationFailure *failure;

  Status fail(std::string message, Blamed blamed = {}) const {
    if (failure) {
      failure->message = message;
      failure->blamed = std::move(blamed);
    }
    return Status::failure(std::move(message));
  }
};

/// What a compute of (kind, virtual stage) consumes: dependencyOf, the one
/// rule, evaluated once per pair so that each lookup is O(1).
class Inputs {
public:
  struct Input {
    bool exists = false;
    ComputeKind kind = ComputeKind::Forward;
    int virtualStage = 0;
    bool crossesRanks = false;
    int boundary = 0;
    /// The tensor that crosses, when crossesRanks.
    std::string tensor;
  };

  explicit Inputs(const ScheduleProblem &problem)
      : problem(problem), virtualStages(problem.virtualStages()),
        table(size_t(4) * virtualStages) {
    std::vector<int> virtualStageOf(size_t(problem.stages) * problem.chunks);
    for (int q = 0; q < virtualStages; ++q)
      virtualStageOf[slot(problem.placement[q])] = q;
    for (int kind = 0; kind < 4; ++kind) {
      for (int q = 0; q < virtualStages; ++q) {
        auto [stage, chunk] = problem.placement[q];
        ComputeAction consumer{ComputeKind(kind), stage, chunk, 0}, producer;
        if (!dependencyOf(problem, consumer, producer))
          continue;
        Input &input = table[size_t(kind) * virtualStages + q];
        input.exists = true;
        input.kind = producer.kind;
        input.virtualStage =
            virtualStageOf[slot({producer.stage, producer.chunk})];
        input.crossesRanks = producer.stage != stage;
        input.boundary = std::min(q, input.virtualStage);
        input.tensor = producer.kind == ComputeKind::Forward
                           ? activationName(input.boundary)
                           : gradientName(input.boundary);
      }
    }
  }

  const Input &of(const ComputeAction &action, int virtualStage) const {
    return table[size_t(action.kind) * virtualStages + virtualStage];
  }

  ComputeAction producer(const Input &input, int microbatch) const {
    auto [stage, chunk] = problem.placement[input.virtualStage];
    return ComputeAction{input.kind, stage, chunk, microbatch};
  }

private:
  size_t slot(std::pair<int, int> placement) const {
    return size_t(placement.first) * problem.chunks + placement.second;
  }

  const ScheduleProblem &problem;
  int virtualStages;
  std::vector<Input> table;
};

/// Makespan, bubble, live micro-batches and memory from the timelines'
/// busy time and each rank's computes in order.
void summarise(const ScheduleProblem &problem,
               const std::vector<std::vector<ComputeAction>> &computes,
               const std::vector<double> &rankEnd, SimulationResult &result) {
  for (double end : rankEnd)
    result.makespan = std::max(result.makespan, end);
  double idle = 0;
  for (int rank = 0; rank < problem.stages; ++rank)
    idle += result.makespan > 0 ? 1 - result.busySeconds[rank] / result.makespan
                                : 0;
  result.bubbleFraction = idle / problem.stages;

  int slots = problem.virtualStages();
  std::vector<int> virtualStageOf(slots);
  for (int q = 0; q < slots; ++q)
    virtualStageOf[size_t(problem.placement[q].first) * problem.chunks +
                   problem.placement[q].second] = q;
  result.peakLiveMicrobatches.assign(slots, 0);
  result.peakLiveUntilWeightGradient.assign(slots, 0);
  result.memory.assign(problem.stages, RankMemory());
  std::vector<int> untilB(slots, 0), untilW(slots, 0);
  for (int rank = 0; rank < problem.stages; ++rank) {
    RankMemory &memory = result.memory[rank];
    int64_t unitBytes = 0; // one micro-batch through all the rank's stages
    for (int chunk = 0; chunk < problem.chunks; ++chunk) {
      const StageMemory &stage = problem.memoryOf(
          virtualStageOf[size_t(rank) * problem.chunks + chunk]);
      memory.parameterBytes += stage.parameterBytes;
      memory.gradientBytes += stage.gradientBytes;
      unitBytes += stage.activationBytes;
    }
    // `held`: activation bytes of micro-batches whose backward is not
    // complete (F until W): the unit of memory limits, as in the search.
    int64_t activations = 0, stashes = 0, peakLive = 0, held = 0,
            peakHeld = 0;
    for (const ComputeAction &action : computes[rank]) {
      size_t slot = size_t(action.stage) * problem.chunks + action.chunk;
      const StageMemory &stage = problem.memoryOf(virtualStageOf[slot]);
      switch (action.kind) {
      case ComputeKind::Forward:
        ++untilB[slot];
        ++untilW[slot];
        activations += stage.activationBytes;
        held += stage.activationBytes;
        break;
      case ComputeKind::BackwardInput:
        --untilB[slot];
        activations -= stage.activationBytes;
        stashes += stage.stashBytes;
        break;
      case ComputeKind::BackwardWeight:
        --untilW[slot];
        stashes -= stage.stashBytes;
        held -= stage.activationBytes;
        break;
      case ComputeKind::Backward:
        --untilB[slot];
        --untilW[slot];
        activations -= stage.activationBytes;
        held -= stage.activationBytes;
        break;
      }
      peakHeld = std::max(peakHeld, held);
      result.peakLiveMicrobatches[slot] =
          std::max(result.peakLiveMicrobatches[slot], untilB[slot]);
      result.peakLiveUntilWeightGradient[slot] =
          std::max(result.peakLiveUntilWeightGradient[slot], untilW[slot]);
      memory.peakActivationBytes =
          std::max(memory.peakActivationBytes, activations);
      memory.peakStashBytes = std::max(memory.peakStashBytes, stashes);
      peakLive = std::max(peakLive, activations + stashes);
    }
    memory.peakBytes = memory.parameterBytes + memory.gradientBytes + peakLive;
    memory.peakActivationMicrobatches =
        unitBytes > 0 ? double(peakHeld) / unitBytes : 0;
  }
}

Status checkActions(const ScheduleProblem &problem,
                    const std::vector<Program> &programs,
                    const detail::ActionIndex &index, const Reporter &report) {
  std::ostringstream error;
  if (int(programs.size()) != problem.stages) {
    error << "expected " << problem.stages << " programs, got "
          << programs.size();
    return report.fail(error.str());
  }
  for (int rank = 0; rank < problem.stages; ++rank) {
    for (size_t i = 0; i < programs[rank].size(); ++i) {
      const ProgramAction &action = programs[rank][i];
      ActionRef at{rank, int(i)};
      if (action.kind == ProgramActionKind::Compute &&
          (!index.inRange(action.compute) || action.compute.stage != rank)) {
        error << "rank " << rank << " action " << i << ": "
              << describe(action.compute) << " does not belong on this rank";
        return report.fail(error.str(), {{at, "does not belong on rank " +
                                                  std::to_string(rank)}});
      }
      if (isMessage(action) &&
          (action.peer < 0 || action.peer >= problem.stages ||
           action.peer == rank)) {
        error << "rank " << rank << " action " << i << ": " << describe(action)
              << " names an invalid peer";
        return report.fail(
            error.str(),
            {{at, "names an invalid peer " + std::to_string(action.peer)}});
      }
    }
  }
  return Status::success();
}

/// Sends from `from` to `to` against `to`'s receives from `from`, in order.
Status checkPairing(const std::vector<Program> &programs, int from, int to,
                    const Reporter &report) {
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
      return report.fail(error.str(), {{{from, int(at)},
                                        "rank " + std::to_string(to) +
                                            " has no matching receive"}});
    }
    received.erase(match);
  }
  for (auto &[key, at] : recvs) {
    auto match = sent.find(key);
    if (match == sent.end()) {
      error << "rank " << to << " receives " << describeKey(key)
            << " from rank " << from << " (action " << at << ") but rank "
            << from << " never sends it to rank " << to;
      return report.fail(
          error.str(), {{{to, int(at)},
                         "rank " + std::to_string(from) + " never sends it"}});
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
      return report.fail(
          error.str(),
          {{{from, int(sends[k].second)},
            "sent as message " + std::to_string(k) + " to rank " +
                std::to_string(to) + ", which expects " +
                describeKey(recvs[k].first) + " there"},
           {{to, int(recvs[k].second)},
            "received as message " + std::to_string(k) + " from rank " +
                std::to_string(from) + ", which sends " +
                describeKey(sends[k].first) + " there"}});
    }
  }
  return Status::success();
}

class ProgramSimulation {
public:
  ProgramSimulation(const ScheduleProblem &problem,
                    const std::vector<Program> &programs,
                    const TimingModel &timing, const Reporter &report)
      : problem(problem), programs(programs), timing(timing), report(report),
        index(problem), inputs(problem), computed(index.size(), 0),
        next(problem.stages, 0), clock(problem.stages, 0),
        received(problem.stages), arrival(problem.stages),
        posted(problem.stages), running(problem.stages) {
    result.busySeconds.assign(problem.stages, 0);
    for (const Program &program : programs)
      result.timelines.emplace_back(program.size());
    for (auto &links : posted)
      links.resize(problem.stages);
  }

  Result<SimulationResult> run() {
    do {
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
    } while (shareCores());
    if (Status status = reportDeadlock(); !status)
      return status;
    std::vector<std::vector<ComputeAction>> computes(problem.stages);
    for (int rank = 0; rank < problem.stages; ++rank)
      for (const ProgramAction &action : programs[rank])
        if (action.kind == ProgramActionKind::Compute)
          computes[rank].push_back(action.compute);
    summarise(problem, computes, clock, result);
    return result;
  }

private:
  /// A compute or optimizer step in progress on shared cores: `remaining`
  /// seconds of work at full speed, from `start`. A rank woken by a
  /// message is `ready` at its arrival and starts at most a time slice
  /// later (`start`), earlier where a core frees first (shareCores).
  struct Running {
    bool active = false;
    size_t at = 0;
    double start = 0;
    double remaining = 0;
    double ready = 0;
  };

  /// The cores a rank shares: its own (pinned, TimingModel::coreOfRank)
  /// or the one pool of all of them.
  int poolOf(int rank) const {
    return timing.coreOfRank.empty() ? 0 : timing.coreOfRank[rank];
  }
  int poolCores() const {
    return timing.coreOfRank.empty() ? timing.cores : 1;
  }

  /// Processor sharing: advances the global clock to the next start or end
  /// of a running action, each of the k ranks computing at once in a pool
  /// of c cores getting min(1, c / k) of a core, and ends what finished;
  /// whether any rank was running. Starts of ranks ahead of the clock
  /// (after a message) wait for it.
  bool shareCores() {
    if (!timing.sharesCores(problem.stages))
      return false;
    std::vector<int> computing, pending;
    std::vector<int> busy(timing.cores, 0); // ranks computing, by pool
    bool any = false;
    for (int rank = 0; rank < problem.stages; ++rank) {
      if (!running[rank].active)
        continue;
      any = true;
      bool started = running[rank].start <= now;
      (started ? computing : pending).push_back(rank);
      busy[poolOf(rank)] += started;
    }
    if (!any)
      return false;
    // A woken rank waits for a time slice only while the others hold every
    // core of its pool: when one of them blocks or ends, the scheduler
    // gives it that core at once.
    double nextStart = std::numeric_limits<double>::infinity();
    for (int rank : pending) {
      Running &action = running[rank];
      if (action.ready <= now && busy[poolOf(rank)] < poolCores()) {
        action.start = now;
        computing.push_back(rank);
        ++busy[poolOf(rank)];
        continue;
      }
      nextStart = std::min(nextStart,
                           action.ready > now ? action.ready : action.start);
    }
    if (computing.empty()) {
      now = nextStart;
      return true;
    }
    auto speed = [&](int rank) {
      return std::min(1.0, double(poolCores()) / double(busy[poolOf(rank)]));
    };
    double first = std::numeric_limits<double>::infinity();
    for (int rank : computing)
      first = std::min(first, running[rank].remaining / speed(rank));
    bool ending = now + first <= nextStart;
    double until = ending ? now + first : nextStart;
    for (int rank : computing) {
      Running &action = running[rank];
      // The first to end ends exactly, without rounding left over.
      if (ending && action.remaining / speed(rank) == first)
        action.remaining = 0;
      else
        action.remaining -= (until - now) * speed(rank);
    }
    now = until;
    for (int rank : computing) {
      Running &action = running[rank];
      if (action.remaining > 1e-12 * std::max(1.0, now))
        continue;
      result.timelines[rank][action.at] = {action.start, now};
      result.busySeconds[rank] += now - action.start;
      clock[rank] = now;
      ++next[rank];
      action.active = false;
    }
    return true;
  }

  /// A posted send waiting in its link's queue (overlap mode).
  struct Posted {
    size_t at;
    double arrival; // post + transfer
  };

  bool done(int rank) const { return next[rank] >= programs[rank].size(); }

  /// The longest extra wait of a rank asleep for a message: with fewer
  /// cores than ranks, while the other ranks compute on every core, it gets
  /// a core when a time slice ends (TimingModel::busyLatencySeconds beyond
  /// the idle latency), or when one of them blocks first (shareCores).
  double wakeDelaySeconds() const {
    if (!timing.sharesCores(problem.stages) ||
        timing.busyLatencySeconds <= timing.latencySeconds)
      return 0;
    return timing.busyLatencySeconds - timing.latencySeconds;
  }

  double messageSeconds(const ProgramAction &action) const {
    return timing.messageSeconds(boundaryOf(action.tensor), action.bytes);
  }

  Status mismatch(int rank, size_t at, int peer, size_t peerAt) const {
    const ProgramAction &action = programs[rank][at];
    const ProgramAction &facing = programs[peer][peerAt];
    std::ostringstream error;
    error << "mismatched messages between rank " << rank << " and rank " << peer
          << ": rank " << rank << " action " << at << " is '"
          << describe(action) << "' but rank " << peer << " action " << peerAt
          << " is '" << describe(facing) << "'";
    return report.fail(
        error.str(),
        {{{rank, int(at)}, "does not match '" + describe(facing) + "'"},
         {{peer, int(peerAt)}, "does not match '" + describe(action) + "'"}});
  }

  /// Completes the message at `rank`'s next action if its counterpart is
  /// there; whether it did.
  Result<bool> exchange(int rank) {
    size_t at = next[rank];
    const ProgramAction &action = programs[rank][at];
    int peer = action.peer;
    if (timing.overlapSends) {
      if (action.kind == ProgramActionKind::Send) {
        posted[rank][peer].push_back(
            {at, clock[rank] + messageSeconds(action)});
        post(rank, at, timing.sendPostSeconds.at(action.bytes));
        return true;
      }
      std::deque<Posted> &link = posted[peer][rank];
      if (link.empty())
        return false;
      Posted send = link.front();
      const ProgramAction &sent = programs[peer][send.at];
      if (sent.tensor != action.tensor ||
          sent.microbatch != action.microbatch || sent.bytes != action.bytes)
        return Diagnostic{mismatch(rank, at, peer, send.at).message()};
      link.pop_front();
      // The receive is posted here and waited for right before the first
      // compute that reads it (as the runtime's step does): that compute
      // starts no earlier than the message arrives.
      received[rank].insert({action.tensor, action.microbatch});
      arrival[rank][{action.tensor, action.microbatch}] = send.arrival;
      post(rank, at,
           send.arrival <= clock[rank]
               ? timing.lateReceiveSeconds.at(action.bytes)
               : 0.0);
      return true;
    }
    if (done(peer))
      return false;
    const ProgramAction &facing = programs[peer][next[peer]];
    if (!isMessage(facing) || facing.peer != rank || facing.kind == action.kind)
      return false;
    if (facing.tensor != action.tensor ||
        facing.microbatch != action.microbatch || facing.bytes != action.bytes)
      return Diagnostic{mismatch(rank, at, peer, next[peer]).message()};
    const ProgramAction &recv =
        action.kind == ProgramActionKind::Recv ? action : facing;
    int receiver = action.kind == ProgramActionKind::Recv ? rank : peer;
    received[receiver].insert({recv.tensor, recv.microbatch});
    double start = std::max(clock[rank], clock[peer]);
    double end = start + messageSeconds(action);
    result.timelines[rank][at] = {start, end};
    result.timelines[peer][next[peer]] = {start, end};
    clock[rank] = clock[peer] = end;
    ++next[rank];
    ++next[peer];
    return true;
  }

  /// Posts `rank`'s message action `at` (overlap mode), which takes
  /// `seconds` of its core: shared as compute is where ranks share cores.
  void post(int rank, size_t at, double seconds) {
    if (seconds > 0 && timing.sharesCores(problem.stages)) {
      double ready = std::max(clock[rank], now);
      running[rank] = {true, at, ready, seconds, ready};
      return;
    }
    result.timelines[rank][at] = {clock[rank], clock[rank] + seconds};
    result.busySeconds[rank] += seconds;
    clock[rank] += seconds;
    ++next[rank];
  }

  /// Runs `rank` until it blocks or ends; whether anything ran.
  Result<bool> advance(int rank) {
    bool moved = false;
    while (!done(rank) && !running[rank].active) {
      size_t at = next[rank];
      const ProgramAction &action = programs[rank][at];
      if (isMessage(action)) {
        Result<bool> exchanged = exchange(rank);
        if (!exchanged || !*exchanged)
          return exchanged ? Result<bool>(moved) : exchanged;
        moved = true;
        continue;
      }
      double duration = 0, wakeDelay = 0;
      if (action.kind == ProgramActionKind::Compute) {
        if (Status status = checkInput(rank, at); !status)
          return Diagnostic{status.message()};
        const Inputs::Input &input =
            inputs.of(action.compute, index.virtualStage(action.compute));
        if (input.exists && input.crossesRanks) {
          auto arrived =
              arrival[rank].find({input.tensor, action.compute.microbatch});
          if (arrived != arrival[rank].end() &&
              arrived->second > clock[rank]) {
            clock[rank] = arrived->second;
            wakeDelay = wakeDelaySeconds();
          }
        }
        computed[index(action.compute)] = 1;
        duration = problem.duration(action.compute);
      } else if (action.kind == ProgramActionKind::OptimizerStep) {
        duration = timing.optimizerSeconds(rank);
      } else {
        duration = timing.transferSeconds(action.bytes);
      }
      if (timing.sharesCores(problem.stages) &&
          action.kind != ProgramActionKind::AllReduce) {
        // Ends when shareCores() has given it `duration` of a core.
        double ready = std::max(clock[rank], now);
        running[rank] = {true, at, ready + wakeDelay, duration, ready};
        return true;
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
    const Inputs::Input &input = inputs.of(action, index.virtualStage(action));
    if (!input.exists)
      return Status::success();
    std::ostringstream error, reason;
    if (input.crossesRanks) {
      if (received[rank].count({input.tensor, action.microbatch}))
        return Status::success();
      int from = problem.placement[input.virtualStage].first;
      reason << "runs before receiving '" << input.tensor << "' m"
             << action.microbatch << " from rank " << from;
      error << "rank " << rank << " runs " << describe(action) << " (action "
            << at << ") before receiving '" << input.tensor << "' m"
            << action.microbatch << " from rank " << from;
      return report.fail(error.str(), {{{rank, int(at)}, reason.str()}});
    }
    ComputeAction producer = inputs.producer(input, action.microbatch);
    if (computed[index(producer)])
      return Status::success();
    reason << "runs before " << describe(producer) << " that it needs";
    error << "rank " << rank << " runs " << describe(action) << " (action "
          << at << ") before " << describe(producer) << " that it needs";
    return report.fail(error.str(), {{{rank, int(at)}, reason.str()}});
  }

  Status reportDeadlock() const {
    std::ostringstream error;
    Blamed blamed;
    for (int rank = 0; rank < problem.stages; ++rank) {
      if (done(rank))
        continue;
      const ProgramAction &action = programs[rank][next[rank]];
      std::ostringstream reason;
      error << (blamed.empty() ? "deadlock: " : "; ") << "rank " << rank
            << " is blocked at action " << next[rank] << " ("
            << describe(action) << ")";
      int peer = action.peer;
      MessageKey key{action.tensor, action.microbatch};
      if (action.kind == ProgramActionKind::Send)
        reason << "waits for rank " << peer << " to receive "
               << describeKey(key);
      else
        reason << "waits for " << describeKey(key) << " from rank " << peer;
      if (done(peer)) {
        error << ", but rank " << peer << " has finished its program";
        reason << ", but rank " << peer << " has finished its program";
      } else {
        error << " while rank " << peer << " is at action " << next[peer]
              << " (" << describe(programs[peer][next[peer]]) << ")";
        reason << ", but rank " << peer << " is at action " << next[peer]
               << " (" << describe(programs[peer][next[peer]]) << ")";
      }
      blamed.push_back({{rank, int(next[rank])}, reason.str()});
    }
    return blamed.empty() ? Status::success()
                          : report.fail(error.str(), std::move(blamed));
  }

  const ScheduleProblem &problem;
  const std::vector<Program> &programs;
  const TimingModel &timing;
  const Reporter &report;
  detail::ActionIndex index;
  Inputs inputs;
  std::vector<char> computed;
  std::vector<size_t> next;
  std::vector<double> clock;
  std::vector<std::set<MessageKey>> received;
  /// Overlap mode: when each received message arrives, by rank.
  std::vector<std::map<MessageKey, double>> arrival;
  /// posted[from][to]: sends posted and not yet received (overlap mode).
  std::vector<std::vector<std::deque<Posted>>> posted;
  /// Processor sharing: each rank's action in progress and the global clock.
  std::vector<Running> running;
  double now = 0;
  SimulationResult result;
};
} // namespace

Result<SimulationResult> pipecc::scheduling::simulate(
    const ScheduleProblem &problem, const std::vector<Program> &programs,
    const TimingModel &timing, SimulationFailure *failure) {
  Reporter report{failure};
  if (Status status = problem.check(); !status)
    return report.fail(status.message());
  if (!timing.coreOfRank.empty()) {
    bool placed = int(timing.coreOfRank.size()) == problem.stages &&
                  timing.sharesCores(problem.stages);
    for (int core : timing.coreOfRank)
      placed = placed && core >= 0 && core < timing.cores;
    if (!placed)
      return report.fail("the timing model pins " +
                         std::to_string(timing.coreOfRank.size()) +
                         " ranks to cores, expected each of the " +
                         std::to_string(problem.stages) +
                         " ranks on one of fewer cores (" +
                         std::to_string(timing.cores) + ")");
  }
  detail::ActionIndex index(problem);
  if (Status status = checkActions(problem, programs, index, report); !status)
    return status;
  for (int from = 0; from < problem.stages; ++from)
    for (int to = 0; to < problem.stages; ++to)
      if (from != to)
        if (Status status = checkPairing(programs, from, to, report); !status)
          return status;
  return ProgramSimulation(problem, programs, timing, report).run();
}

Result<SimulationResult>
pipecc::scheduling::simulateSchedule(const ScheduleProblem &problem,
                                     const Schedule &schedule,
                                     const TimingModel &timing) {
  if (Status status = problem.check(); !status)
    return status;
  std::ostringstream error;
  if (int(schedule.perRank.size()) != problem.stages) {
    error << "expected the compute order of " << problem.stages
          << " ranks, got " << schedule.perRank.size();
    return Diagnostic{error.str()};
  }
  detail::ActionIndex index(problem);
  Inputs inputs(problem);
  ComputeKind lastKind = problem.splitBackward ? ComputeKind::BackwardWeight
                                               : ComputeKind::Backward;
  // Each action once, on its rank, of the kinds the problem uses.
  std::vector<char> listed(index.size(), 0);
  size_t count = 0;
  for (int rank = 0; rank < problem.stages; ++rank) {
    for (const ComputeAction &action : schedule.perRank[rank]) {
      bool kindUsed = problem.splitBackward
                          ? action.kind != ComputeKind::Backward
                          : (action.kind == ComputeKind::Forward ||
                             action.kind == ComputeKind::Backward);
      if (!index.inRange(action) || action.stage != rank || !kindUsed ||
          listed[index(action)]) {
        error << "rank " << rank << " lists " << describe(action)
              << ", which is not one of its actions or is listed twice";
        return Diagnostic{error.str()};
      }
      listed[index(action)] = 1;
      ++count;
    }
  }
  size_t expected = size_t(problem.virtualStages()) * problem.microbatches *
                    (lastKind == ComputeKind::BackwardWeight ? 3 : 2);
  if (count != expected) {
    error << "the schedule lists " << count << " compute actions, expected "
          << expected;
    return Diagnostic{error.str()};
  }

  SimulationResult result;
  result.busySeconds.assign(problem.stages, 0);
  for (const auto &actions : schedule.perRank)
    result.timelines.emplace_back(actions.size());
  std::vector<double> endOf(index.size(), -1); // -1: not run yet
  // Ranks blocked on an action: a list through nextWaiter.
  std::vector<int> firstWaiter(index.size(), -1);
  std::vector<int> nextWaiter(problem.stages, -1);
  std::vector<size_t> next(problem.stages, 0);
  std::vector<double> clock(problem.stages, 0);
  std::vector<int> worklist;
  for (int rank = problem.stages - 1; rank >= 0; --rank)
    worklist.push_back(rank);
  while (!worklist.empty()) {
    int rank = worklist.back();
    worklist.pop_back();
    const std::vector<ComputeAction> &actions = schedule.perRank[rank];
    while (next[rank] < actions.size()) {
      const ComputeAction &action = actions[next[rank]];
      const Inputs::Input &input =
          inputs.of(action, index.virtualStage(action));
      double ready = 0;
      if (input.exists) {
        size_t producer = index(inputs.producer(input, action.microbatch));
        if (endOf[producer] < 0) {
          nextWaiter[rank] = firstWaiter[producer];
          firstWaiter[producer] = rank;
          break;
        }
        ready =
            endOf[producer] +
            (input.crossesRanks ? timing.messageSeconds(input.boundary, 0) : 0);
      }
      double duration = problem.duration(action);
      double start = std::max(clock[rank], ready);
      size_t self = index(action);
      endOf[self] = start + duration;
      result.timelines[rank][next[rank]] = {start, endOf[self]};
      result.busySeconds[rank] += duration;
      clock[rank] = endOf[self];
      ++next[rank];
      for (int waiter = firstWaiter[self]; waiter >= 0;
           waiter = nextWaiter[waiter])
        worklist.push_back(waiter);
      firstWaiter[self] = -1;
    }
  }

  bool blocked = false;
  for (int rank = 0; rank < problem.stages; ++rank) {
    if (next[rank] == schedule.perRank[rank].size())
      continue;
    const ComputeAction &action = schedule.perRank[rank][next[rank]];
    const Inputs::Input &input = inputs.of(action, index.virtualStage(action));
    error << (blocked ? "; " : "deadlock: ") << "rank " << rank
          << " is blocked at " << describe(action) << " (compute " << next[rank]
          << ") waiting for "
          << describe(inputs.producer(input, action.microbatch));
    blocked = true;
  }
  if (blocked)
    return Diagnostic{error.str()};

  for (int rank = 0; rank < problem.stages; ++rank) {
    clock[rank] += timing.optimizerSeconds(rank);
    result.busySeconds[rank] += timing.optimizerSeconds(rank);
  }
  summarise(problem, schedule.perRank, clock, result);
  return result;
}
