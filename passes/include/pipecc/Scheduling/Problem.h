//===- Problem.h - Pipeline schedule problem and schedules ------*- C++ -*-===//
//
// A ScheduleProblem says what must run where: P ranks, v model chunks per
// rank, M micro-batches, and which (rank, chunk) holds each virtual stage of
// the model. A Schedule is the per-rank order of compute actions; verify()
// proves it complete and executable (no rank waits on a cycle).
//
// Data dependencies, for virtual stage q and micro-batch m:
//   F(q, m) needs F(q-1, m)
//   B(q, m) needs B(q+1, m); the last virtual stage's B needs its own F
//   W(q, m) needs B(q, m)
// where B is BackwardInput, or the fused Backward when splitBackward is off.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_SCHEDULING_PROBLEM_H
#define PIPECC_SCHEDULING_PROBLEM_H

#include "pipecc/Scheduling/Diagnostic.h"

#include <string>
#include <utility>
#include <vector>

namespace pipecc::scheduling {

enum class ComputeKind {
  Forward,
  BackwardInput,  // B: gradient with respect to the stage's input
  BackwardWeight, // W: gradients with respect to the stage's parameters
  Backward,       // B and W fused
};

struct ComputeAction {
  ComputeKind kind = ComputeKind::Forward;
  int stage = 0; // the rank that runs it
  int chunk = 0;
  int microbatch = 0;

  bool operator==(const ComputeAction &other) const {
    return kind == other.kind && stage == other.stage &&
           chunk == other.chunk && microbatch == other.microbatch;
  }
  bool operator!=(const ComputeAction &other) const { return !(*this == other); }
};

/// "F", "B", "W" or "BW".
const char *kindName(ComputeKind kind);
/// "F(s1 c0 m3)": for diagnostics and traces.
std::string describe(const ComputeAction &action);

enum class PlacementKind { Linear, Interleaved, VShape };
/// "linear", "interleaved", "v".
const char *placementName(PlacementKind kind);

/// Seconds of each kind of work for one (stage, chunk), per micro-batch.
struct ChunkDurations {
  double forward = 1;
  double backwardInput = 1;
  double backwardWeight = 1;
};

struct ScheduleProblem {
  int stages = 1; // P ranks; rank r runs stage r
  int chunks = 1; // v model chunks per stage
  int microbatches = 1;
  /// For each virtual stage in model order, the (stage, chunk) holding it.
  std::vector<std::pair<int, int>> placement;
  /// Indexed by stage * chunks + chunk; empty means unit durations.
  std::vector<ChunkDurations> durations;
  /// Whether the backward is scheduled as separate B and W actions.
  bool splitBackward = false;

  int virtualStages() const { return stages * chunks; }
  /// The virtual stage held by (stage, chunk); -1 if none (check() first).
  int virtualStageOf(int stage, int chunk) const;
  const ChunkDurations &durationsOf(int stage, int chunk) const;
  /// Duration of one action; a fused Backward costs B + W.
  double duration(const ComputeAction &action) const;

  /// Positive sizes, a placement that is a bijection onto stages x chunks,
  /// durations of the right count, non-negative and finite.
  Status check() const;

  /// One chunk per stage, virtual stage q on rank q.
  static ScheduleProblem linear(int stages, int microbatches,
                                bool splitBackward = false);
  /// Virtual stage q on (q % P, q / P): Megatron's interleaving.
  static ScheduleProblem interleaved(int stages, int chunks, int microbatches,
                                     bool splitBackward = false);
  /// Two chunks: chunk 0 runs ranks 0..P-1, chunk 1 comes back P-1..0.
  static ScheduleProblem vShape(int stages, int microbatches,
                                bool splitBackward = false);
  /// linear / interleaved / vShape by kind (v must be 1 for Linear, 2 for
  /// VShape).
  static ScheduleProblem withPlacement(PlacementKind kind, int ranks,
                                       int chunks, int microbatches,
                                       bool splitBackward);
};

/// The per-rank order of compute actions.
struct Schedule {
  std::string name;
  std::vector<std::vector<ComputeAction>> perRank;

  /// Every (virtual stage, micro-batch) has exactly one F and one Backward
  /// (or one B and one W) on the right rank; on each rank F precedes B
  /// precedes W for the same (chunk, micro-batch); and the ranks can run
  /// their lists in order without waiting on each other in a cycle. On a
  /// cycle the message names the ranks, their blocked actions and what each
  /// waits for.
  Status verify(const ScheduleProblem &problem) const;
};

/// The action whose result `action` consumes; each kind has exactly one
/// producer (see the file comment) except F of the first virtual stage, for
/// which this returns false.
bool dependencyOf(const ScheduleProblem &problem, const ComputeAction &action,
                  ComputeAction &dependency);

} // namespace pipecc::scheduling

#endif // PIPECC_SCHEDULING_PROBLEM_H
