//===- MessageWaitsTest.cpp - Where the step posts and waits for messages -===//
//
// The rule pipecc-lower-rank-program and the memory plan share
// (pipecc/Conversion/MessageWaits.h), on rank 1 of a two-rank 1F1B step
// written by hand: receives of `a` posted as soon as their copy is free,
// sends of `g` waited for before the next write of their copy.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/MessageWaits.h"

#include "gtest/gtest.h"

using namespace pipecc;

namespace {

MessageWaitAction recv(const char *tensor, int64_t mb) {
  MessageWaitAction action;
  action.kind = MessageWaitAction::Recv;
  action.microbatch = mb;
  action.writes.push_back(tensor);
  return action;
}

MessageWaitAction send(const char *tensor, int64_t mb) {
  MessageWaitAction action;
  action.kind = MessageWaitAction::Send;
  action.microbatch = mb;
  action.reads.push_back(tensor);
  return action;
}

MessageWaitAction compute(int64_t mb, std::vector<std::string> reads,
                          std::vector<std::string> writes) {
  MessageWaitAction action;
  action.microbatch = mb;
  action.reads.assign(reads.begin(), reads.end());
  action.writes.assign(writes.begin(), writes.end());
  return action;
}

/// recv a0, F0, recv a1, B0 (sends g0), F1, B1 (sends g1), recv a2, F2, B2.
std::vector<MessageWaitAction> program() {
  return {recv("a", 0),                  // 0
          compute(0, {"a"}, {"h"}),      // 1: F0
          recv("a", 1),                  // 2
          compute(0, {"a", "h"}, {"g"}), // 3: B0
          send("g", 0),                  // 4
          compute(1, {"a"}, {"h"}),      // 5: F1
          compute(1, {"a", "h"}, {"g"}), // 6: B1
          send("g", 1),                  // 7
          recv("a", 2),                  // 8
          compute(2, {"a"}, {"h"}),      // 9: F2
          compute(2, {"a", "h"}, {"g"}), // 10: B2
          send("g", 2)};                 // 11
}

TEST(MessageWaits, PostsReceivesWhenTheirCopyIsFreeAndWaitsWhereUsed) {
  std::vector<MessageWaitAction> actions = program();
  // Two copies of a, one of g.
  MessagePlan plan = planMessages(
      actions, [](llvm::StringRef t) { return t == "a" ? 2 : 1; }, 3,
      /*postReceivesEarly=*/true);
  ASSERT_EQ(plan.postsBefore.size(), actions.size() + 1);
  // a0 and a1 at the start (their copies were never used), a2 once B0,
  // the last user of copy 0, is done.
  EXPECT_EQ(plan.postsBefore[0], (llvm::SmallVector<size_t, 2>{0, 2}));
  EXPECT_EQ(plan.postsBefore[4], (llvm::SmallVector<size_t, 2>{8}));
  // Each receive is waited for right before its first reader.
  EXPECT_EQ(plan.waitsBefore[1], (llvm::SmallVector<size_t, 2>{0}));
  EXPECT_EQ(plan.waitsBefore[5], (llvm::SmallVector<size_t, 2>{2}));
  // g has one copy: g0's send must finish before B1 writes g again; the
  // last send is waited for at the end of the step.
  EXPECT_EQ(plan.waitsBefore[6], (llvm::SmallVector<size_t, 2>{4}));
  EXPECT_EQ(plan.waitsBefore[9], (llvm::SmallVector<size_t, 2>{8}));
  EXPECT_EQ(plan.waitsBefore[10], (llvm::SmallVector<size_t, 2>{7}));
  EXPECT_EQ(plan.waitsBefore[actions.size()],
            (llvm::SmallVector<size_t, 2>{11}));
}

TEST(MessageWaits, OneCopyPerMicrobatchWaitsSendsAtTheEnd) {
  std::vector<MessageWaitAction> actions = program();
  // No plan (0): every micro-batch its own copy, so every receive is
  // posted at the start, in program order, and no send is waited for
  // before the end.
  MessagePlan plan = planMessages(
      actions, [](llvm::StringRef) { return 0; }, 3, /*postReceivesEarly=*/true);
  EXPECT_EQ(plan.postsBefore[0], (llvm::SmallVector<size_t, 2>{0, 2, 8}));
  EXPECT_EQ(plan.waitsBefore[actions.size()],
            (llvm::SmallVector<size_t, 2>{4, 7, 11}));
}

TEST(MessageWaits, WithoutEarlyPostsReceivesStayInProgramOrder) {
  // The CUDA target: NCCL matches by the order messages start on one
  // stream, so receives are posted where they stand; waits are unchanged.
  std::vector<MessageWaitAction> actions = program();
  MessagePlan plan = planMessages(
      actions, [](llvm::StringRef t) { return t == "a" ? 2 : 1; }, 3,
      /*postReceivesEarly=*/false);
  EXPECT_EQ(plan.postsBefore[0], (llvm::SmallVector<size_t, 2>{0}));
  EXPECT_EQ(plan.postsBefore[2], (llvm::SmallVector<size_t, 2>{2}));
  EXPECT_EQ(plan.postsBefore[8], (llvm::SmallVector<size_t, 2>{8}));
  EXPECT_EQ(plan.waitsBefore[6], (llvm::SmallVector<size_t, 2>{4}));
}

TEST(MessageWaits, AGroupedWeightGradientWaitsForEveryMicrobatchItReads) {
  // Rank 0 of a two-rank step with W of micro-batches 0 and 1 in one call:
  // recv g0, B0, recv g1, B1, W0+1 (reads g of both). Each receive must be
  // waited for before B of its micro-batch, and g's second copy (two
  // copies) is free for g2 only after the grouped W read g0.
  std::vector<MessageWaitAction> actions = {
      recv("g", 0),             // 0
      compute(0, {"g"}, {"d"}), // 1: B0
      recv("g", 1),             // 2
      compute(1, {"g"}, {"d"}), // 3: B1
      compute(0, {"g", "d"}, {}), // 4: W0+1
      recv("g", 2),             // 5
      compute(2, {"g"}, {"d"})};  // 6: B2
  actions[4].microbatchCount = 2;
  MessagePlan plan = planMessages(
      actions, [](llvm::StringRef) { return 2; }, 3,
      /*postReceivesEarly=*/true);
  EXPECT_EQ(plan.waitsBefore[1], (llvm::SmallVector<size_t, 2>{0}));
  EXPECT_EQ(plan.waitsBefore[3], (llvm::SmallVector<size_t, 2>{2}));
  // g2 shares g0's copy: posted after the grouped W, its last reader.
  EXPECT_EQ(plan.postsBefore[5], (llvm::SmallVector<size_t, 2>{5}));
  // Seen as micro-batch 1 alone, the W would not hold micro-batch 0's
  // copy, and g2 would be posted over g0 right after B0, before the W
  // reads g0.
  actions[4].microbatchCount = 1;
  actions[4].microbatch = 1;
  MessagePlan single = planMessages(
      actions, [](llvm::StringRef) { return 2; }, 3,
      /*postReceivesEarly=*/true);
  EXPECT_EQ(single.postsBefore[2], (llvm::SmallVector<size_t, 2>{5}));
}

} // namespace
