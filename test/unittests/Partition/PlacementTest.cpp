//===- PlacementTest.cpp - Virtual stages on ranks, B/W by stage start ----===//

#include "pipecc/Partition/Algorithms.h"

#include "gtest/gtest.h"

#include <random>

using namespace pipecc::partition;

namespace {
/// A chain of `numOps` ops with unit forward time, each handing 1000 bytes
/// to the next over a 1000 B/s link without latency (1 s per message).
Problem chain(int numOps, int virtualStages, std::vector<int> placement) {
  Problem problem;
  problem.stages = virtualStages;
  problem.placement = std::move(placement);
  problem.link = LinkProfile{"test", 1000, 0};
  for (int i = 0; i < numOps; ++i)
    problem.ops.push_back(OpCost{"op" + std::to_string(i), 1, 0, 0, 0, 0});
  for (int i = 0; i + 1 < numOps; ++i)
    problem.addTensor(i, i + 1, 1000);
  return problem;
}

TEST(PlacementTest, CutsBetweenStagesOfOneRankSendNothing) {
  // V shape on 2 ranks: virtual stages 1 and 2 are both on rank 1.
  Problem problem = chain(4, 4, {0, 1, 1, 0});
  Result<Partition> partition = evaluate(problem, {0, 1, 2});
  ASSERT_TRUE(partition.ok()) << partition.message();
  // Stage 1 pays for its cut to stage 0 (2 s: forward and back), not for the
  // one to stage 2 on its own rank.
  EXPECT_DOUBLE_EQ(partition->stages[1].communicationSeconds, 2);
  EXPECT_DOUBLE_EQ(partition->stages[2].communicationSeconds, 2);
  EXPECT_DOUBLE_EQ(partition->stages[0].communicationSeconds, 2);
  ASSERT_EQ(partition->ranks.size(), 2u);
  // Each rank: two ops of compute, two messages.
  EXPECT_DOUBLE_EQ(partition->ranks[0].computeSeconds, 2);
  EXPECT_DOUBLE_EQ(partition->ranks[1].totalSeconds, 2 + 4);
  EXPECT_DOUBLE_EQ(partition->bottleneck, 6);
  EXPECT_EQ(partition->stages[3].rank, 0);
}

TEST(PlacementTest, MemoryLimitSumsTheRanksStages) {
  Problem problem = chain(4, 4, {0, 1, 0, 1});
  for (OpCost &op : problem.ops)
    op.activationBytes = 10;
  problem.memory = MemoryConstraint{15, {1, 1}, 1};
  // Every virtual stage alone fits, but each rank holds two of them.
  Result<Partition> partition = evaluate(problem, {0, 1, 2});
  ASSERT_FALSE(partition.ok());
  EXPECT_NE(partition.message().find("rank 0 needs 20 bytes"),
            std::string::npos)
      << partition.message();
}

TEST(PlacementTest, PlacementIsChecked) {
  EXPECT_FALSE(chain(4, 4, {0, 1, 1}).check().ok());
  EXPECT_FALSE(chain(4, 4, {0, 2, 2, 0}).check().ok()); // rank 1 empty
  EXPECT_TRUE(chain(4, 4, {0, 1, 1, 0}).check().ok());
}

TEST(PlacementTest, BackwardWorkIsBOnlyWhenItLeavesTheStage) {
  // Op 1's backward computes a gradient for op 0: B when op 0 is on an
  // earlier stage, W (the first stage sends nothing back) otherwise.
  Problem problem = chain(3, 2, {});
  problem.ops[1].backward = {{0, 5.0}};
  Result<Partition> split = evaluate(problem, {0});
  ASSERT_TRUE(split.ok());
  EXPECT_DOUBLE_EQ(split->stages[1].backwardInputSeconds, 5);
  EXPECT_DOUBLE_EQ(split->stages[1].backwardWeightSeconds, 0);
  Result<Partition> together = evaluate(problem, {1});
  ASSERT_TRUE(together.ok());
  EXPECT_DOUBLE_EQ(together->stages[0].backwardInputSeconds, 0);
  EXPECT_DOUBLE_EQ(together->stages[0].backwardWeightSeconds, 5);
}

TEST(PlacementTest, DynamicProgrammingBalancesRanks) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> seconds(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    for (std::vector<int> placement :
         {std::vector<int>{0, 1, 0, 1}, std::vector<int>{0, 1, 1, 0}}) {
      Problem problem = chain(9, 4, placement);
      problem.link.latencySeconds = 0;
      problem.link.bandwidthBytesPerSecond = 1e4;
      for (OpCost &op : problem.ops) {
        op.forwardSeconds = seconds(rng);
        op.backward = {{0, seconds(rng)}};
      }
      Result<Partition> dp = dynamicProgramming(problem);
      Result<Partition> even = uniform(problem);
      Result<Partition> best = bruteForce(problem);
      ASSERT_TRUE(dp.ok() && even.ok() && best.ok()) << dp.message();
      EXPECT_TRUE(verify(problem, *dp).ok());
      EXPECT_LE(dp->bottleneck, even->bottleneck + 1e-12);
      EXPECT_GE(dp->bottleneck, best->bottleneck - 1e-12);
    }
  }
}
} // namespace
