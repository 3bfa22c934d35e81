//===- MessageWaits.h - Where the step posts and waits for messages ----===//
//
// The step posts every send (pipecc_rt_isend) where the rank's
// pipeline.program has it, every receive (pipecc_rt_irecv) on the CPU
// target as soon as the copy of the buffer it fills is free (right after
// the last earlier action touching that copy for another micro-batch, else
// at the start of the step; never before an earlier receive of the same
// tensor, since messages of one tag match in posting order; on CUDA where
// it stands), and waits for each as late as its buffer allows:
//   - a send of tensor T, micro-batch m: right before the next action that
//     writes T's copy of m (a micro-batch m' with m' % slots == m % slots),
//     else at the end of the step;
//   - a receive: right before the first later action that reads T in m (or
//     writes T's copy of m), else at the end of the step.
// The host program (pipecc-lower-rank-program) emits the waits there and the
// memory plan keeps each buffer alive until its wait, so both call this one
// rule. Plain data in, plain data out: callers describe their actions.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_CONVERSION_MESSAGEWAITS_H
#define PIPECC_CONVERSION_MESSAGEWAITS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipecc {

/// One action of a rank's program as the wait rule sees it.
struct MessageWaitAction {
  enum Kind { Send, Recv, Other } kind = Other;
  /// -1 for actions of no micro-batch.
  int64_t microbatch = -1;
  /// Micro-batches microbatch, microbatch + 1, ... it runs (a grouped
  /// weight gradient runs several).
  int64_t microbatchCount = 1;
  /// Tensor names the action reads and writes for each of its micro-batches
  /// (a send reads its tensor, a receive writes it; a compute reads its
  /// arguments, writes its results).
  llvm::SmallVector<std::string, 4> reads, writes;

  bool runs(int64_t mb) const {
    return microbatch >= 0 && mb >= microbatch &&
           mb < microbatch + microbatchCount;
  }
};

/// Where the step posts and waits for each message action (indices into
/// the actions): before[i] lists what happens right before action i,
/// before[actions.size()] what happens at the end of the step.
struct MessagePlan {
  /// Every receive, where it is posted (at or before its own action), in
  /// program order; sends are posted where they stand.
  std::vector<llvm::SmallVector<size_t, 2>> postsBefore;
  /// Messages waited for, in posting order.
  std::vector<llvm::SmallVector<size_t, 2>> waitsBefore;
};

/// `slots(T)`: copies of tensor T's buffer (0 or more than `microbatches`:
/// one per micro-batch). Without `postReceivesEarly` every receive is
/// posted where it stands: a transport that matches messages by the order
/// in which it starts them on one queue (NCCL on the CUDA target) needs the
/// schedule's one global order of messages.
MessagePlan planMessages(llvm::ArrayRef<MessageWaitAction> actions,
                         llvm::function_ref<int64_t(llvm::StringRef)> slots,
                         int64_t microbatches, bool postReceivesEarly);

} // namespace pipecc

#endif // PIPECC_CONVERSION_MESSAGEWAITS_H
