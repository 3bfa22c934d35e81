//===- Program.h - Per-rank programs with communication ---------*- C++ -*-===//
//
// A Program is what one rank executes: its compute actions with the sends and
// receives between them, ending with the optimizer step. By default sends and
// receives are blocking rendezvous: each completes only when the peer reaches
// the matching action (what the MPI runtime's blocking send does); with
// TimingModel::overlapSends a send is posted and returns at once.
//
// Tensor names follow the boundary between virtual stages q and q+1:
// "act.q<q>" is F(q)'s output travelling to F(q+1), "grad.q<q>" its gradient
// travelling back from B(q+1) to B(q).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_PROGRAM_H
#define PIPECC_SCHEDULING_PROGRAM_H

#include "pipecc/Scheduling/Problem.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace pipecc::scheduling {

enum class ProgramActionKind { Compute, Send, Recv, AllReduce, OptimizerStep };

struct ProgramAction {
  ProgramActionKind kind = ProgramActionKind::Compute;
  ComputeAction compute; // Compute only
  int peer = -1;         // Send and Recv
  std::string tensor;    // Send, Recv and AllReduce
  int microbatch = -1;   // Send and Recv
  int64_t bytes = 0;

  static ProgramAction computeOf(const ComputeAction &action) {
    ProgramAction result;
    result.compute = action;
    return result;
  }
  static ProgramAction message(ProgramActionKind kind, int peer,
                               std::string tensor, int microbatch,
                               int64_t bytes) {
    ProgramAction result;
    result.kind = kind;
    result.peer = peer;
    result.tensor = std::move(tensor);
    result.microbatch = microbatch;
    result.bytes = bytes;
    return result;
  }
  static ProgramAction optimizerStep() {
    ProgramAction result;
    result.kind = ProgramActionKind::OptimizerStep;
    return result;
  }
};

using Program = std::vector<ProgramAction>;

/// "send act.q2 m3 to rank 3", "F(s2 c0 m3)", "optimizer step".
std::string describe(const ProgramAction &action);

/// "act.q<boundary>" / "grad.q<boundary>".
std::string activationName(int boundary);
std::string gradientName(int boundary);
/// The boundary q of a tensor named "act.q<q>" or "grad.q<q>"; -1 for any
/// other name.
int boundaryOf(const std::string &tensor);

/// Sizes of what crosses each boundary between virtual stages q and q+1,
/// indexed by q (V - 1 entries); empty vectors mean zero bytes.
struct TensorSizes {
  std::vector<int64_t> activationBytes;
  std::vector<int64_t> gradientBytes;

  int64_t activation(int boundary) const {
    return activationBytes.empty() ? 0 : activationBytes[boundary];
  }
  int64_t gradient(int boundary) const {
    return gradientBytes.empty() ? 0 : gradientBytes[boundary];
  }
};

/// A per-message cost by the message's size: measured at a few sizes,
/// linear between them, the smallest's below them and the last segment's
/// slope beyond them. Empty: free.
struct MessageCostTable {
  /// Increasing sizes, with the seconds measured at each.
  std::vector<int64_t> bytes;
  std::vector<double> seconds;

  double at(int64_t size) const {
    if (bytes.empty() || bytes.size() != seconds.size())
      return 0;
    if (size <= bytes.front())
      return seconds.front();
    if (bytes.size() == 1)
      return seconds.front() * double(size) / double(bytes.front());
    size_t upper = 1;
    while (upper + 1 < bytes.size() && bytes[upper] < size)
      ++upper;
    double span = double(bytes[upper] - bytes[upper - 1]);
    double slope = (seconds[upper] - seconds[upper - 1]) / span;
    double value =
        seconds[upper - 1] + slope * double(size - bytes[upper - 1]);
    return value > 0 ? value : 0;
  }
};

/// How long non-compute actions take, and whether sends overlap compute.
/// Compute durations come from the ScheduleProblem.
struct TimingModel {
  double bandwidthBytesPerSecond = std::numeric_limits<double>::infinity();
  double latencySeconds = 0;
  double optimizerStepSeconds = 0;
  /// When non-empty, the optimizer step of each rank (by rank), overriding
  /// optimizerStepSeconds: ranks update different parameters.
  std::vector<double> optimizerStepSecondsByRank;
  /// Seconds of the step's loss reduction, which every rank runs before its
  /// optimizer step (simulate() adds it to each rank's optimizer action).
  double lossReductionSeconds = 0;
  /// Cores the ranks share; 0 (default) or at least as many as ranks: each
  /// rank computes on its own core. With fewer cores than ranks, simulate()
  /// shares them: k ranks computing at once on c < k cores each run at c / k
  /// of their speed (processor sharing); messages take no core.
  int cores = 0;
  /// With fewer cores than ranks: the core (0 .. cores - 1) each rank is
  /// pinned to, by rank, and then k ranks computing at once on one core
  /// each run at 1 / k of their speed while another core may idle. Empty:
  /// the ranks share all `cores` as one pool (the kernel moves them).
  std::vector<int> coreOfRank;
  /// With fewer cores than ranks: the latency of a message posted while
  /// every core is computing for other ranks (0: as latencySeconds). The
  /// receiver sleeps in its wait; the scheduler wakes it on a busy core
  /// only when a time slice there ends, or when a rank computing there
  /// blocks or ends first (measured by `pipecc profile` as
  /// `links[].busy_latency_s`).
  double busyLatencySeconds = 0;
  /// Seconds of one message crossing boundary q (between virtual stages q and
  /// q + 1), by q; when non-empty it overrides latency + bytes / bandwidth
  /// for the boundaries it lists.
  std::vector<double> boundarySeconds;
  /// false: a send is a blocking rendezvous with its receive (the CPU
  /// runtime's MPI path). true: a send is posted and returns at once, so the
  /// sender computes on while the transfer runs; the receive completes at
  /// max(the receiver reaching it, post + transfer).
  bool overlapSends = false;
  /// With overlapSends: the core time a rank spends posting a send (the
  /// socket runtime writes what the socket takes before it returns), and
  /// posting a receive whose message already came (copied out of the
  /// transport's queue); one posted before its message comes costs
  /// nothing here (the transport's own thread fills it).
  MessageCostTable sendPostSeconds;
  MessageCostTable lateReceiveSeconds;

  /// The optimizer step of `rank`, with the loss reduction before it.
  double optimizerSeconds(int rank) const {
    double update = size_t(rank) < optimizerStepSecondsByRank.size()
                        ? optimizerStepSecondsByRank[rank]
                        : optimizerStepSeconds;
    return lossReductionSeconds + update;
  }
  /// Whether `ranks` ranks share fewer cores.
  bool sharesCores(int ranks) const { return cores > 0 && cores < ranks; }

  /// A point-to-point transfer; an all-reduce is priced the same for now.
  double transferSeconds(int64_t bytes) const {
    return latencySeconds + double(bytes) / bandwidthBytesPerSecond;
  }
  /// A message of `bytes` across `boundary` (-1: unknown boundary).
  double messageSeconds(int boundary, int64_t bytes) const {
    if (boundary >= 0 && size_t(boundary) < boundarySeconds.size())
      return boundarySeconds[boundary];
    return transferSeconds(bytes);
  }
};

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_PROGRAM_H
