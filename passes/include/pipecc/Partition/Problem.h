//===- Problem.h - Pipeline partitioning problem ----------------*- C++ -*-===//
//
// The input to every partitioner: a model's ops in one topological order with
// their costs, the tensors flowing between them, the link that carries
// tensors across stage boundaries and an optional memory constraint. A
// solution is a set of cut positions; `evaluate` prices it, so every
// algorithm reports its stages from the same arithmetic.
//
// Cost of a stage holding ops [first, last]:
//   compute  = sum of F + B + W of its ops
//   comm     = 2 * transfer(bytes crossing the cut before it)
//            + 2 * transfer(bytes crossing the cut after it)
// (activations travel forward and gradients of the same size travel back
// across each boundary), where transfer(0) = 0 and
// transfer(b) = latency + b / bandwidth otherwise; plus, for each shared
// parameter read inside and outside the stage, 2 * transfer(bytes) /
// microbatches (its gradient's all-reduce). A shared parameter's bytes count
// on every stage that reads it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PARTITION_PROBLEM_H
#define PIPECC_PARTITION_PROBLEM_H

#include "pipecc/Partition/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pipecc::partition {

/// Backward work of an op whose role depends on the cuts: it computes a
/// gradient that must reach op `reachesOp` (its smallest consumer in model
/// order). On a stage whose first op comes after `reachesOp` the gradient
/// leaves the stage, so the work is on the B path; otherwise only weight
/// gradients need it and it is W. pipecc::BackwardSplit (the IR analysis
/// split-stages uses too) computes `reachesOp`.
struct BackwardWork {
  int reachesOp = 0;
  double seconds = 0;
};

/// Whether backward work reaching op `reachesOp` is B on a stage starting at
/// op `stageFirstOp`: the one rule the pricing and split-stages share.
inline bool isBackwardInput(int reachesOp, int stageFirstOp) {
  return reachesOp < stageFirstOp;
}

/// Costs of one op in the topological order. Times are seconds per
/// micro-batch.
struct OpCost {
  std::string name;
  double forwardSeconds = 0;
  double backwardInputSeconds = 0;
  double backwardWeightSeconds = 0;
  /// Bytes of activations this op keeps alive from its forward until its
  /// backward, per micro-batch.
  int64_t activationBytes = 0;
  int64_t parameterBytes = 0;
  /// Backward work priced as B or W by the stage's first op (on top of the
  /// unconditional seconds above).
  std::vector<BackwardWork> backward;
};

/// A tensor produced by one op and read by one or more later ops. A tensor
/// crosses each cut between its producer and its last consumer exactly once,
/// however many consumers lie beyond the cut.
struct Tensor {
  int producer = 0;
  std::vector<int> consumers;
  int64_t bytes = 0;
};

/// The point-to-point link between neighbouring stages. Plain data: the cost
/// model fills it from a device profile.
struct LinkProfile {
  std::string name;
  double bandwidthBytesPerSecond = 1;
  double latencySeconds = 0;

  /// Seconds to move `bytes` in one direction; no message costs nothing.
  double transferSeconds(int64_t bytes) const {
    return bytes == 0 ? 0.0
                      : latencySeconds + double(bytes) / bandwidthBytesPerSecond;
  }
};

/// Per-rank memory: the sum over the rank's virtual stages of
/// activationBytes * inFlightMicrobatches[rank] + parameterBytes *
/// parameterStateMultiplier must not exceed limitBytes. The schedule decides
/// the in-flight counts, in micro-batches of activations through all of the
/// rank's virtual stages (1F1B keeps P - r on rank r), the optimizer the
/// multiplier (weights + gradients + AdamW's two moments = 4).
struct MemoryConstraint {
  int64_t limitBytes = 0;
  std::vector<int> inFlightMicrobatches;
  double parameterStateMultiplier = 1;
};

/// A parameter several ops read (tied weights). Every stage holding one of
/// its readers keeps a copy; when its readers span several stages, each of
/// them all-reduces the gradient once per step (a reduce and a broadcast:
/// twice its bytes over the link), which costs a micro-batch 1 /
/// microbatches of that.
struct SharedParameter {
  std::vector<int> readers;
  int64_t bytes = 0;
};

struct Problem {
  std::vector<OpCost> ops;
  std::vector<Tensor> tensors;
  std::vector<SharedParameter> sharedParameters;
  /// Micro-batches per step, over which the all-reduces are spread.
  int microbatches = 1;
  /// Virtual stages V = ranks * chunks to cut the ops into.
  int stages = 1;
  /// The rank of each virtual stage (V entries, every rank in 0..R-1 used);
  /// empty means linear: virtual stage q on rank q.
  std::vector<int> placement;
  LinkProfile link;
  std::optional<MemoryConstraint> memory;

  int numOps() const { return int(ops.size()); }
  int numRanks() const;
  int rankOf(int stage) const {
    return placement.empty() ? stage : placement[stage];
  }

  /// Convenience for tensors with a single consumer.
  void addTensor(int producer, int consumer, int64_t bytes) {
    tensors.push_back(Tensor{producer, {consumer}, bytes});
  }

  /// Checks that the inputs make sense: at least as many ops as stages,
  /// tensors forward-pointing and in range, no negative or non-finite costs,
  /// a placement onto ranks 0..R-1.
  Status check() const;

  /// The shared parameters' bytes a virtual stage holding ops [first, last]
  /// keeps, and the seconds per micro-batch of their all-reduces (those read
  /// on another rank too; `rankOfOp` gives each op's rank, null = all on
  /// other ranks).
  std::pair<int64_t, double>
  sharedParameterCost(int first, int last,
                      const std::vector<int> *rankOfOp = nullptr) const;
};

/// What one virtual stage costs under a given partition.
struct StageCost {
  int rank = 0;
  int firstOp = 0;
  int lastOp = 0;
  double forwardSeconds = 0;
  double backwardInputSeconds = 0;
  double backwardWeightSeconds = 0;
  double communicationSeconds = 0;
  /// compute + communication; the partitioners minimise the largest one.
  double totalSeconds = 0;
  int64_t activationBytes = 0;
  int64_t parameterBytes = 0;
  /// Bytes crossing the cut before / after this stage (each crosses twice:
  /// activations forward, gradients backward).
  int64_t bytesIn = 0;
  int64_t bytesOut = 0;
  /// Peak memory under the problem's MemoryConstraint (0 without one).
  int64_t memoryBytes = 0;
};

/// What one rank costs: the sums over its virtual stages.
struct RankCost {
  double computeSeconds = 0;
  double communicationSeconds = 0;
  double totalSeconds = 0;
  int64_t memoryBytes = 0;
};

struct Partition {
  /// Stage k ends after op cutsAfter[k]; V - 1 strictly increasing entries.
  std::vector<int> cutsAfter;
  std::vector<StageCost> stages;
  std::vector<RankCost> ranks;
  /// The largest rank's totalSeconds.
  double bottleneck = 0;
};

/// Bytes crossing the cut after each position: element i is the total size of
/// tensors produced at or before i and last consumed after i. Size N - 1.
std::vector<int64_t> bytesCrossingEachCut(const Problem &problem);

/// Prices the stages that `cutsAfter` defines, checking that the cuts are V-1
/// strictly increasing positions in [0, N-2] and that every rank fits the
/// memory constraint. The problem must pass check().
Result<Partition> evaluate(const Problem &problem,
                           const std::vector<int> &cutsAfter);

/// Checks a partition some algorithm produced against the problem: its cuts
/// are valid, it fits in memory and its recorded costs match `evaluate`.
Status verify(const Problem &problem, const Partition &partition);

} // namespace pipecc::partition

#endif // PIPECC_PARTITION_PROBLEM_H
