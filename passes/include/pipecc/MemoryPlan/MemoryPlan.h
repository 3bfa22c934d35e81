//===- MemoryPlan.h - The static memory plan of one rank --------*- C++ -*-===//
//
// Every buffer of a rank lives in one arena the runtime allocates once (host
// memory on the CPU target, one cudaMalloc on CUDA). The plan says how many
// copies of each per-micro-batch buffer the schedule keeps in flight (its
// slots: micro-batch m uses copy m % slots), where each buffer starts in the
// arena, and how big the arena is. Plain C++ (no MLIR): the caller describes
// the rank as buffer records and its ordered actions as action records.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_MEMORYPLAN_MEMORYPLAN_H
#define PIPECC_MEMORYPLAN_MEMORYPLAN_H

#include "pipecc/Support/Result.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace pipecc::memory {

using support::Result;
using support::Status;

/// What a buffer holds; the plan's totals are per kind.
enum class BufferKind {
  /// A parameter's master copy (f32), alive for the whole run.
  Weight,
  /// A lower-precision copy of a parameter the stage functions read (bf16).
  WeightCopy,
  /// A parameter's gradient accumulator, alive for the whole run.
  Gradient,
  /// Optimizer state (momenta), alive for the whole run.
  OptimizerState,
  /// A micro-batch of a graph input, loaded by the runtime.
  DataInput,
  /// A tensor one stage function produces and a later action reads.
  Activation,
  /// A tensor sent to or received from another rank.
  Transfer,
  /// Scratch: a result only added into gradient accumulators, kernel
  /// workspace.
  Workspace,
  /// A graph output the runtime writes to disk after the step.
  Output,
};
constexpr int kNumBufferKinds = 9;

/// "weight", "weight-copy", "gradient", ...
const char *kindName(BufferKind kind);

struct BufferRecord {
  std::string name;
  BufferKind kind = BufferKind::Activation;
  /// Bytes of one copy.
  int64_t bytes = 0;
  /// One copy per micro-batch in flight (activations, data inputs,
  /// transfers, outputs); otherwise a single copy.
  bool perMicrobatch = false;
  /// The copy count must be a multiple of this (or M): a call reading the
  /// copies of this many consecutive micro-batches as one block (a grouped
  /// weight gradient) needs them side by side, with no wrap in between.
  int64_t slotMultiple = 1;
};

/// One action of the rank's program, in program order: the buffers it
/// writes and reads (indices into the buffer records). Per-micro-batch
/// buffers are touched in `microbatch`'s copy.
struct ActionRecord {
  /// -1 for actions of no micro-batch (all-reduce, optimizer step); they
  /// may touch only buffers that are not per micro-batch.
  int microbatch = -1;
  std::vector<int64_t> defines;
  std::vector<int64_t> uses;
  /// For diagnostics, e.g. "F(m3)".
  std::string label;
};

struct PlanOptions {
  /// Micro-batches per step (M): a per-micro-batch buffer never needs more
  /// than M copies.
  int microbatches = 1;
  /// Offsets and the stride between copies are multiples of this.
  int64_t alignment = 64;
  /// Let buffers whose lifetimes within a step are disjoint share bytes.
  bool reuse = true;
};

struct BufferPlacement {
  /// Copies allocated; 1 for buffers that are not per micro-batch.
  int64_t slots = 1;
  /// Byte offset of copy 0 in the arena (a multiple of the alignment); copy
  /// k starts at offset + k * stride.
  int64_t offset = 0;
  /// bytes rounded up to the alignment.
  int64_t stride = 0;
  /// The most copies live at once under the schedule (<= slots).
  int64_t peakLive = 0;
  /// First and last action (indices) touching the buffer; [0, last action]
  /// for buffers alive for the whole run, -1 for buffers no action touches.
  int64_t firstAction = -1, lastAction = -1;
};

struct MemoryPlan {
  std::vector<BufferPlacement> buffers;
  /// slots * bytes summed per kind (indexed by BufferKind).
  std::array<int64_t, kNumBufferKinds> bytesByKind{};
  /// Sum of slots * stride over all buffers: the arena without reuse.
  int64_t unsharedBytes = 0;
  /// Size of the one allocation holding every buffer.
  int64_t arenaBytes = 0;

  int64_t bytesOf(BufferKind kind) const {
    return bytesByKind[static_cast<int>(kind)];
  }
};

/// Plans one rank. Fails on inconsistent records (an action naming a buffer
/// that does not exist, a micro-batch out of range, a per-micro-batch
/// buffer touched by an action of no micro-batch).
///
/// Slots: the copies of micro-batches m1 != m2 with m1 % slots == m2 % slots
/// must have disjoint lifetimes (first to last action touching them). The
/// planner starts from the peak number of micro-batches live at once (what
/// an in-order schedule such as GPipe, 1F1B or ZB-H1 needs) and adds slots
/// until the modulo assignment is conflict-free (M slots always are).
/// Output buffers are read after the step, so they keep M copies.
Result<MemoryPlan> planMemory(const std::vector<BufferRecord> &buffers,
                              const std::vector<ActionRecord> &actions,
                              const PlanOptions &options);

} // namespace pipecc::memory

#endif // PIPECC_MEMORYPLAN_MEMORYPLAN_H
