//===- Simulator.h - Executing per-rank programs ----------------*- C++ -*-===//
//
// Runs per-rank programs against the cost model: each compute takes its
// virtual stage's duration (ScheduleProblem::durations), each message its
// boundary's time (TimingModel::messageSeconds). Sends are blocking
// rendezvous by default: a send and its receive start together when both
// ranks reach them and end after the transfer. With TimingModel::overlapSends
// a send is posted and returns at once, and its receive ends at max(the
// receiver reaching it, post + transfer). Messages between two ranks match in
// FIFO order and must agree on tensor, micro-batch and size. The simulator
// also checks that each compute has its input: a cross-rank input received
// earlier on its rank, a local one (including the turn of a V, which needs no
// message) computed earlier.
//
// Besides the timeline it accounts memory per rank from ScheduleProblem::
// memory: parameters and gradient accumulators for the whole step,
// activations from F to B, stashes from B to W.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_SIMULATOR_H
#define PIPECC_SCHEDULING_SIMULATOR_H

#include "pipecc/Scheduling/Program.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pipecc::scheduling {

struct TimedAction {
  double start = 0;
  double end = 0;
};

/// Memory of one rank over a step, in bytes unless said otherwise. Peaks are
/// taken between actions (an action's own workspace is not modelled).
struct RankMemory {
  /// Parameters + gradients + the peak of live activations and stashes
  /// together.
  int64_t peakBytes = 0;
  int64_t peakActivationBytes = 0;
  /// Of the rank's virtual stages, each counted once.
  int64_t parameterBytes = 0;
  int64_t gradientBytes = 0;
  int64_t peakStashBytes = 0;
  /// The most micro-batches whose backward is not complete (from F until W,
  /// which still reads the activations; until the fused backward otherwise),
  /// in units of one micro-batch's activations through all of the rank's
  /// virtual stages: 1F1B's rank 0 holds P, GPipe's M. The unit of memory
  /// limits (the schedule search's too).
  double peakActivationMicrobatches = 0;
};

struct SimulationResult {
  /// Per rank, the start and end of each program action, by index. In
  /// overlap mode a send or receive lasts its posting
  /// (TimingModel::sendPostSeconds, lateReceiveSeconds; none by default).
  std::vector<std::vector<TimedAction>> timelines;
  /// Per rank, seconds spent in compute, optimizer steps and posting
  /// messages.
  std::vector<double> busySeconds;
  double makespan = 0;
  /// Mean over ranks of 1 - busy / makespan.
  double bubbleFraction = 0;
  /// Indexed by stage * chunks + chunk: the most micro-batches whose
  /// forward has run and whose B (or fused backward) has not.
  std::vector<int> peakLiveMicrobatches;
  /// Same, counting until W: what a split backward keeps for the weight
  /// gradient. Equal to the above when the backward is fused.
  std::vector<int> peakLiveUntilWeightGradient;
  /// By rank.
  std::vector<RankMemory> memory;
};

/// An action of the programs: programs[rank][index].
struct ActionRef {
  int rank = -1;
  int index = -1;

  bool operator==(const ActionRef &other) const {
    return rank == other.rank && index == other.index;
  }
};

/// Why simulate() failed, with the actions to blame and, for each, why.
struct SimulationFailure {
  std::string message;
  std::vector<std::pair<ActionRef, std::string>> blamed;
};

/// The timeline of `programs`, or a diagnostic naming the ranks involved: a
/// deadlock (each blocked rank, its action and what it waits for), a send or
/// receive without a counterpart, messages between two ranks matched out of
/// order, or a compute that runs before its input arrives. When `failure`
/// is non-null it receives the same message and the blamed actions.
Result<SimulationResult> simulate(const ScheduleProblem &problem,
                                  const std::vector<Program> &programs,
                                  const TimingModel &timing = {},
                                  SimulationFailure *failure = nullptr);

/// Compute-only simulation of a Schedule, in O(actions): each compute
/// starts when its rank is free and its input is ready; an input from
/// another rank is ready its boundary's message time after its producer
/// ends (TimingModel::messageSeconds with zero bytes, so give
/// boundarySeconds or a latency), and the sender never waits for it. Each
/// rank ends with its optimizer step. What generators and the auto search
/// use to price an ordering; timelines are indexed like schedule.perRank.
Result<SimulationResult> simulateSchedule(const ScheduleProblem &problem,
                                          const Schedule &schedule,
                                          const TimingModel &timing = {});

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_SIMULATOR_H
