//===- ProblemTest.cpp - Problem::check, crossing bytes, evaluate ---------===//

#include "pipecc/Partition/Problem.h"

#include "gtest/gtest.h"

using namespace pipecc::partition;

namespace {
Problem chainOfUnitOps(int numOps, int stages) {
  Problem problem;
  problem.stages = stages;
  for (int i = 0; i < numOps; ++i)
    problem.ops.push_back(OpCost{"op" + std::to_string(i), 1, 1, 1, 10, 100});
  for (int i = 0; i + 1 < numOps; ++i)
    problem.addTensor(i, i + 1, 1000);
  problem.link = LinkProfile{"test", 1000, 0.5};
  return problem;
}

TEST(PartitionProblem, AcceptsAValidChain) {
  Status status = chainOfUnitOps(4, 2).check();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(PartitionProblem, RejectsMoreStagesThanOps) {
  Status status = chainOfUnitOps(2, 3).check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot cut 2 ops into 3"), std::string::npos)
      << status.message();
}

TEST(PartitionProblem, RejectsBackwardAndOutOfRangeTensors) {
  Problem problem = chainOfUnitOps(4, 2);
  problem.addTensor(2, 1, 8);
  Status status = problem.check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("from op 2 to op 1"), std::string::npos)
      << status.message();

  problem = chainOfUnitOps(4, 2);
  problem.addTensor(1, 9, 8);
  EXPECT_FALSE(problem.check().ok());

  problem = chainOfUnitOps(4, 2);
  problem.tensors.push_back(Tensor{7, {8}, 1});
  EXPECT_FALSE(problem.check().ok());
}

TEST(PartitionProblem, RejectsNegativeNumbers) {
  Problem problem = chainOfUnitOps(4, 2);
  problem.ops[2].backwardWeightSeconds = -1;
  Status status = problem.check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("op 2"), std::string::npos);

  problem = chainOfUnitOps(4, 2);
  problem.tensors[0].bytes = -4;
  EXPECT_FALSE(problem.check().ok());

  problem = chainOfUnitOps(4, 2);
  problem.link.bandwidthBytesPerSecond = 0;
  EXPECT_FALSE(problem.check().ok());
}

TEST(PartitionProblem, RejectsMemoryConstraintOfWrongSize) {
  Problem problem = chainOfUnitOps(4, 2);
  problem.memory = MemoryConstraint{1000, {2}, 4};
  Status status = problem.check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("expected 2"), std::string::npos);
}

TEST(PartitionProblem, CountsATensorOncePerCutAndSkipsAcrossStages) {
  Problem problem = chainOfUnitOps(5, 2);
  problem.tensors.clear();
  // Op 0 feeds ops 1, 2 and 4: crosses cuts 0..3 once each.
  problem.tensors.push_back(Tensor{0, {1, 2, 4}, 7});
  problem.addTensor(1, 2, 100);  // cut 1
  problem.addTensor(2, 4, 1000); // cuts 2 and 3
  EXPECT_EQ(bytesCrossingEachCut(problem),
            (std::vector<int64_t>{7, 107, 1007, 1007}));
}

TEST(PartitionProblem, EvaluatePricesComputeAndBothDirectionsOfTraffic) {
  Problem problem = chainOfUnitOps(4, 2);
  Result<Partition> partition = evaluate(problem, {1});
  ASSERT_TRUE(partition.ok()) << partition.message();
  ASSERT_EQ(partition->stages.size(), 2u);
  const StageCost &first = partition->stages[0];
  EXPECT_EQ(first.firstOp, 0);
  EXPECT_EQ(first.lastOp, 1);
  EXPECT_DOUBLE_EQ(first.forwardSeconds, 2);
  EXPECT_DOUBLE_EQ(first.backwardInputSeconds, 2);
  EXPECT_DOUBLE_EQ(first.backwardWeightSeconds, 2);
  EXPECT_EQ(first.bytesIn, 0);
  EXPECT_EQ(first.bytesOut, 1000);
  // Activations out and gradients back: 2 * (0.5 s latency + 1 s transfer).
  EXPECT_DOUBLE_EQ(first.communicationSeconds, 3);
  EXPECT_DOUBLE_EQ(first.totalSeconds, 9);
  EXPECT_EQ(first.activationBytes, 20);
  EXPECT_EQ(first.parameterBytes, 200);
  EXPECT_EQ(partition->stages[1].bytesIn, 1000);
  EXPECT_DOUBLE_EQ(partition->bottleneck, 9);
  EXPECT_TRUE(verify(problem, *partition).ok());
}

TEST(PartitionProblem, SharedParametersCostEveryHolderAndTheirAllReduce) {
  // A tied weight of 1000 bytes read by ops 0 and 3 (an embedding and its
  // LM head), 2 micro-batches per step.
  Problem problem = chainOfUnitOps(4, 2);
  problem.microbatches = 2;
  problem.sharedParameters.push_back({{0, 3}, 1000});
  Result<Partition> apart = evaluate(problem, {1});
  ASSERT_TRUE(apart.ok()) << apart.message();
  // Each stage holds a copy and pays half of a reduce and a broadcast:
  // 2 * (0.5 s + 1 s) / 2 on top of the activations' 3 s.
  for (const StageCost &stage : apart->stages) {
    EXPECT_EQ(stage.parameterBytes, 200 + 1000);
    EXPECT_DOUBLE_EQ(stage.communicationSeconds, 3 + 1.5);
  }
  EXPECT_TRUE(verify(problem, *apart).ok());

  // Readers on one stage: one copy, no all-reduce.
  problem.sharedParameters = {{{0, 1}, 1000}};
  Result<Partition> together = evaluate(problem, {1});
  ASSERT_TRUE(together.ok()) << together.message();
  EXPECT_EQ(together->stages[0].parameterBytes, 200 + 1000);
  EXPECT_DOUBLE_EQ(together->stages[0].communicationSeconds, 3);
  EXPECT_EQ(together->stages[1].parameterBytes, 200);

  problem.sharedParameters = {{{0, 7}, 1000}};
  EXPECT_FALSE(problem.check().ok());
}

TEST(PartitionProblem, EvaluateRejectsBadCuts) {
  Problem problem = chainOfUnitOps(5, 3);
  Result<Partition> tooFew = evaluate(problem, {1});
  ASSERT_FALSE(tooFew.ok());
  EXPECT_NE(tooFew.message().find("expected 2 cuts"), std::string::npos);
  Result<Partition> notIncreasing = evaluate(problem, {2, 2});
  ASSERT_FALSE(notIncreasing.ok());
  EXPECT_NE(notIncreasing.message().find("strictly increasing"),
            std::string::npos);
  Result<Partition> outOfRange = evaluate(problem, {1, 4});
  ASSERT_FALSE(outOfRange.ok());
  EXPECT_NE(outOfRange.message().find("out of range"), std::string::npos);
}

TEST(PartitionProblem, VerifyCatchesTamperedCosts) {
  Problem problem = chainOfUnitOps(4, 2);
  Result<Partition> partition = evaluate(problem, {1});
  ASSERT_TRUE(partition.ok());
  Partition tampered = *partition;
  tampered.bottleneck = 1;
  EXPECT_FALSE(verify(problem, tampered).ok());
}
} // namespace
