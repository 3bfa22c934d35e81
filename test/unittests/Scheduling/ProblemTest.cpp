//===- ProblemTest.cpp - ScheduleProblem checks and placements ------------===//

#include "pipecc/Scheduling/Problem.h"

#include "gtest/gtest.h"

using namespace pipecc::scheduling;

namespace {
using Placement = std::vector<std::pair<int, int>>;

TEST(ScheduleProblem, Placements) {
  EXPECT_EQ(ScheduleProblem::linear(3, 4).placement,
            (Placement{{0, 0}, {1, 0}, {2, 0}}));
  EXPECT_EQ(ScheduleProblem::interleaved(2, 3, 4).placement,
            (Placement{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(ScheduleProblem::vShape(3, 4).placement,
            (Placement{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {1, 1}, {0, 1}}));
  for (const ScheduleProblem &problem :
       {ScheduleProblem::linear(3, 4), ScheduleProblem::interleaved(2, 3, 4),
        ScheduleProblem::vShape(3, 4)})
    EXPECT_TRUE(problem.check().ok()) << problem.check().message();
}

TEST(ScheduleProblem, VirtualStageLookup) {
  ScheduleProblem problem = ScheduleProblem::vShape(3, 1);
  EXPECT_EQ(problem.virtualStageOf(2, 1), 3);
  EXPECT_EQ(problem.virtualStageOf(0, 1), 5);
  EXPECT_EQ(problem.virtualStageOf(0, 2), -1);
}

TEST(ScheduleProblem, RejectsPlacementsThatAreNotBijections) {
  ScheduleProblem problem = ScheduleProblem::interleaved(2, 2, 4);
  problem.placement[3] = {0, 0};
  Status status = problem.check();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("virtual stages 0 and 3"), std::string::npos)
      << status.message();

  problem = ScheduleProblem::interleaved(2, 2, 4);
  problem.placement.pop_back();
  EXPECT_FALSE(problem.check().ok());

  problem = ScheduleProblem::interleaved(2, 2, 4);
  problem.placement[1] = {2, 0};
  EXPECT_FALSE(problem.check().ok());
}

TEST(ScheduleProblem, RejectsBadSizesAndDurations) {
  EXPECT_FALSE(ScheduleProblem::linear(0, 4).check().ok());
  EXPECT_FALSE(ScheduleProblem::linear(2, 0).check().ok());
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  problem.durations = {ChunkDurations{}};
  EXPECT_FALSE(problem.check().ok());
  problem.durations = {ChunkDurations{}, ChunkDurations{1, -1, 1}};
  EXPECT_FALSE(problem.check().ok());
}

TEST(ScheduleProblem, DurationsOfFusedBackwardAddBAndW) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  problem.durations = {ChunkDurations{1, 2, 3}, ChunkDurations{4, 5, 6}};
  EXPECT_EQ(problem.duration({ComputeKind::Forward, 1, 0, 0}), 4);
  EXPECT_EQ(problem.duration({ComputeKind::BackwardInput, 1, 0, 0}), 5);
  EXPECT_EQ(problem.duration({ComputeKind::BackwardWeight, 0, 0, 0}), 3);
  EXPECT_EQ(problem.duration({ComputeKind::Backward, 0, 0, 0}), 5);
}

TEST(ScheduleProblem, DependenciesFollowTheVirtualStages) {
  ScheduleProblem problem = ScheduleProblem::vShape(2, 1, true);
  ComputeAction dependency;
  // Virtual stage 2 is (1, 1): its forward needs virtual stage 1 = (1, 0).
  ASSERT_TRUE(dependencyOf(problem, {ComputeKind::Forward, 1, 1, 0}, dependency));
  EXPECT_EQ(dependency, (ComputeAction{ComputeKind::Forward, 1, 0, 0}));
  // The last virtual stage (0, 1) starts the backward from its own forward.
  ASSERT_TRUE(
      dependencyOf(problem, {ComputeKind::BackwardInput, 0, 1, 0}, dependency));
  EXPECT_EQ(dependency, (ComputeAction{ComputeKind::Forward, 0, 1, 0}));
  ASSERT_TRUE(
      dependencyOf(problem, {ComputeKind::BackwardInput, 0, 0, 0}, dependency));
  EXPECT_EQ(dependency, (ComputeAction{ComputeKind::BackwardInput, 1, 0, 0}));
  ASSERT_TRUE(
      dependencyOf(problem, {ComputeKind::BackwardWeight, 1, 0, 0}, dependency));
  EXPECT_EQ(dependency, (ComputeAction{ComputeKind::BackwardInput, 1, 0, 0}));
  EXPECT_FALSE(dependencyOf(problem, {ComputeKind::Forward, 0, 0, 0}, dependency));
}
} // namespace
