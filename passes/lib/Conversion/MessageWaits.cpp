//===- MessageWaits.cpp - Where a rank's step waits for its messages ------===//
#include "pipecc/Conversion/MessageWaits.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace pipecc;

MessagePlan
pipecc::planMessages(llvm::ArrayRef<MessageWaitAction> actions,
                     llvm::function_ref<int64_t(llvm::StringRef)> slots,
                     int64_t microbatches, bool postReceivesEarly) {
  MessagePlan plan;
  plan.postsBefore.resize(actions.size() + 1);
  plan.waitsBefore.resize(actions.size() + 1);
  auto copies = [&](llvm::StringRef tensor) {
    int64_t s = slots(tensor);
    return s <= 0 || s > microbatches ? microbatches : s;
  };
  auto sameCopy = [&](llvm::StringRef tensor, int64_t a, int64_t b) {
    int64_t s = copies(tensor);
    return a >= 0 && b >= 0 && s > 0 && a % s == b % s;
  };
  // Whether `action` touches, for a micro-batch other than `mb` (or any,
  // with `otherOnly` false), the copy of `tensor` that `mb` uses.
  auto touchesCopy = [&](const MessageWaitAction &action,
                         llvm::StringRef tensor, int64_t mb, bool otherOnly) {
    for (int64_t i = 0; i < action.microbatchCount; ++i) {
      int64_t m = action.microbatch < 0 ? -1 : action.microbatch + i;
      if ((!otherOnly || m != mb) && sameCopy(tensor, m, mb))
        return true;
    }
    return false;
  };
  llvm::StringMap<size_t> lastPost;
  for (auto [i, message] : llvm::enumerate(actions)) {
    if (message.kind == MessageWaitAction::Other)
      continue;
    bool isSend = message.kind == MessageWaitAction::Send;
    llvm::StringRef tensor =
        isSend ? message.reads.front() : message.writes.front();
    if (!isSend) {
      // The earliest point where the copy it fills is free.
      size_t post = postReceivesEarly ? 0 : i;
      for (size_t j = i; postReceivesEarly && j-- > 0;) {
        const MessageWaitAction &earlier = actions[j];
        if (touchesCopy(earlier, tensor, message.microbatch,
                        /*otherOnly=*/true) &&
            (llvm::is_contained(earlier.reads, tensor) ||
             llvm::is_contained(earlier.writes, tensor))) {
          post = j + 1;
          break;
        }
      }
      // Messages of one tensor match in posting order: never post before
      // an earlier receive of the same tensor.
      auto [last, inserted] = lastPost.try_emplace(tensor, post);
      post = std::max(post, last->second);
      last->second = post;
      // Every receive is posted from these lists, so receives posted at one
      // point keep their program order.
      plan.postsBefore[post].push_back(i);
    }
    size_t at = actions.size();
    for (size_t j = i + 1; j < actions.size() && at == actions.size(); ++j) {
      const MessageWaitAction &later = actions[j];
      bool writes = llvm::is_contained(later.writes, tensor) &&
                    touchesCopy(later, tensor, message.microbatch,
                                /*otherOnly=*/false);
      bool reads = llvm::is_contained(later.reads, tensor) &&
                   later.runs(message.microbatch);
      // A send's bytes are read by the transfer until its wait: only a
      // write of the same copy must wait for it. A receive's bytes are
      // written until its wait: every use of them must wait.
      if (writes || (!isSend && reads))
        at = j;
    }
    plan.waitsBefore[at].push_back(i);
  }
  return plan;
}
