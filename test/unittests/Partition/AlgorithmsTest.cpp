//===- AlgorithmsTest.cpp - Uniform, manual and memory limits -------------===//

#include "pipecc/Partition/Algorithms.h"

#include "gtest/gtest.h"

using namespace pipecc::partition;

namespace {
Problem unitChain(int numOps, int stages) {
  Problem problem;
  problem.stages = stages;
  for (int i = 0; i < numOps; ++i)
    problem.ops.push_back(OpCost{"op" + std::to_string(i), 1, 1, 1, 10, 100});
  for (int i = 0; i + 1 < numOps; ++i)
    problem.addTensor(i, i + 1, 0);
  problem.link = LinkProfile{"free", 1, 0};
  return problem;
}

std::vector<int> stageSizes(const Partition &partition) {
  std::vector<int> sizes;
  for (const StageCost &stage : partition.stages)
    sizes.push_back(stage.lastOp - stage.firstOp + 1);
  return sizes;
}

TEST(UniformPartition, SplitsAsEvenlyAsPossibleFrontLoaded) {
  Result<Partition> partition = uniform(unitChain(10, 4));
  ASSERT_TRUE(partition.ok()) << partition.message();
  EXPECT_EQ(partition->cutsAfter, (std::vector<int>{2, 5, 7}));
  EXPECT_EQ(stageSizes(*partition), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_DOUBLE_EQ(partition->bottleneck, 9);
}

TEST(UniformPartition, OneOpPerStageAndOneStage) {
  Result<Partition> perOp = uniform(unitChain(5, 5));
  ASSERT_TRUE(perOp.ok());
  EXPECT_EQ(perOp->cutsAfter, (std::vector<int>{0, 1, 2, 3}));
  Result<Partition> single = uniform(unitChain(5, 1));
  ASSERT_TRUE(single.ok());
  EXPECT_TRUE(single->cutsAfter.empty());
  EXPECT_DOUBLE_EQ(single->bottleneck, 15);
}

TEST(UniformPartition, ReportsInvalidProblems) {
  Result<Partition> partition = uniform(unitChain(3, 4));
  ASSERT_FALSE(partition.ok());
  EXPECT_NE(partition.message().find("cannot cut 3 ops into 4"),
            std::string::npos);
}

TEST(ManualPartition, UsesTheGivenCuts) {
  Result<Partition> partition = manual(unitChain(6, 3), {0, 4});
  ASSERT_TRUE(partition.ok()) << partition.message();
  EXPECT_EQ(stageSizes(*partition), (std::vector<int>{1, 4, 1}));
  EXPECT_DOUBLE_EQ(partition->bottleneck, 12);
}

TEST(ManualPartition, ValidatesTheCuts) {
  Problem problem = unitChain(6, 3);
  EXPECT_FALSE(manual(problem, {}).ok());
  EXPECT_FALSE(manual(problem, {1, 2, 3}).ok());
  EXPECT_FALSE(manual(problem, {3, 1}).ok());
  EXPECT_FALSE(manual(problem, {-1, 2}).ok());
  Result<Partition> lastOpCut = manual(problem, {1, 5});
  ASSERT_FALSE(lastOpCut.ok());
  EXPECT_NE(lastOpCut.message().find("cut 1 after op 5 is out of range"),
            std::string::npos)
      << lastOpCut.message();
}

// 1F1B keeps P - s micro-batches in flight on stage s, so early stages pay
// more for activations; parameters are counted 4x (AdamW state).
Problem memoryBoundChain(int64_t limitBytes) {
  Problem problem = unitChain(6, 3);
  problem.memory = MemoryConstraint{limitBytes, {3, 2, 1}, 4};
  return problem;
}

TEST(MemoryLimit, StageMemoryFollowsInFlightCounts) {
  Result<Partition> partition = manual(memoryBoundChain(1 << 20), {1, 3});
  ASSERT_TRUE(partition.ok()) << partition.message();
  // Two ops per stage: 20 activation bytes * in-flight + 200 * 4.
  EXPECT_EQ(partition->stages[0].memoryBytes, 20 * 3 + 800);
  EXPECT_EQ(partition->stages[1].memoryBytes, 20 * 2 + 800);
  EXPECT_EQ(partition->stages[2].memoryBytes, 20 * 1 + 800);
}

TEST(MemoryLimit, ExcludesStagesThatDoNotFit) {
  // 2 ops cost 840..860 bytes; 3 ops cost 1230..1290. A limit of 1250 allows
  // three ops only on the last stage, so the balanced 2/2/2 split is the only
  // optimum left, and the DP must not put three ops on stage 0.
  Problem problem = memoryBoundChain(1250);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok()) << best.message();
  EXPECT_EQ(best->cutsAfter, (std::vector<int>{1, 3}));
  for (const StageCost &stage : best->stages)
    EXPECT_LE(stage.memoryBytes, 1250);

  // With 7 ops one stage must hold 3 ops: only the last stage may.
  problem.ops.push_back(problem.ops.back());
  problem.addTensor(5, 6, 0);
  best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok()) << best.message();
  EXPECT_EQ(best->cutsAfter, (std::vector<int>{1, 3}));
  Result<Partition> reference = bruteForce(problem);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->cutsAfter, best->cutsAfter);
  // Manual and uniform refuse partitions that overflow.
  Result<Partition> tooBig = manual(problem, {2, 4});
  ASSERT_FALSE(tooBig.ok());
  EXPECT_NE(tooBig.message().find("stage 0 (ops 0..2) needs 1290 bytes"),
            std::string::npos)
      << tooBig.message();
  EXPECT_FALSE(uniform(problem).ok());
}

TEST(MemoryLimit, ReportsWhenNothingFits) {
  Problem problem = memoryBoundChain(800);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_FALSE(best.ok());
  EXPECT_NE(best.message().find("fits the per-stage memory limit of 800"),
            std::string::npos)
      << best.message();
  // The lightest partition's fullest stage: 2 ops on stage 0, 20*3 + 800.
  EXPECT_NE(best.message().find("needs 860 bytes"), std::string::npos)
      << best.message();
  EXPECT_FALSE(bruteForce(problem).ok());
}
} // namespace
