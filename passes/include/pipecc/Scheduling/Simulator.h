//===- Simulator.h - Executing per-rank programs ----------------*- C++ -*-===//
//
// Runs per-rank programs with blocking rendezvous point-to-point semantics:
// a send and its receive start together when both ranks reach them and end
// after the transfer. Messages between two ranks match in FIFO order and
// must agree on tensor, micro-batch and size. The simulator also checks that
// each compute has its input: a cross-rank input received earlier on its
// rank, a local one computed earlier.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_SIMULATOR_H
#define PIPECC_SCHEDULING_SIMULATOR_H

#include "pipecc/Scheduling/Program.h"

namespace pipecc::scheduling {

struct TimedAction {
  double start = 0;
  double end = 0;
};

struct SimulationResult {
  /// Per rank, the start and end of each program action, by index.
  std::vector<std::vector<TimedAction>> timelines;
  /// Per rank, seconds spent in compute and optimizer steps.
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
};

/// An action of a program: programs[rank][index].
struct ActionRef {
  int rank = -1;
  int index = -1;
};

/// Why simulate() failed, with the actions to blame, each with a short
/// note ("waits here", "sent here"), so callers can point at their own
/// representation of the actions.
struct SimulationFailure {
  std::string message;
  std::vector<std::pair<ActionRef, std::string>> blamed;
};

/// The timeline of `programs`, or a diagnostic naming the ranks involved: a
/// deadlock (each blocked rank, its action and what it waits for), a send or
/// receive without a counterpart, messages between two ranks matched out of
/// order, or a compute that runs before its input arrives. On failure,
/// `failure` (when given) receives the message and the blamed actions.
Result<SimulationResult> simulate(const ScheduleProblem &problem,
                                  const std::vector<Program> &programs,
                                  const TimingModel &timing = {},
                                  SimulationFailure *failure = nullptr);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_SIMULATOR_H
