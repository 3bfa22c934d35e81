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

TEST(ScheduleProblem, PlacementKindsBuildAndRecogniseTheirPlacements) {
  EXPECT_EQ(ScheduleProblem::withPlacement(PlacementKind::Linear, 3, 1, 4)
                .placement,
            ScheduleProblem::linear(3, 4).placement);
  EXPECT_EQ(ScheduleProblem::withPlacement(PlacementKind::Interleaved, 2, 3, 4)
                .placement,
            ScheduleProblem::interleaved(2, 3, 4).placement);
  ScheduleProblem v =
      ScheduleProblem::withPlacement(PlacementKind::VShape, 3, 2, 4, true);
  EXPECT_EQ(v.placement, ScheduleProblem::vShape(3, 4).placement);
  EXPECT_TRUE(v.splitBackward);
  EXPECT_TRUE(v.hasPlacement(PlacementKind::VShape));
  EXPECT_FALSE(v.hasPlacement(PlacementKind::Interleaved));
  // v = 1: the linear placement is also the interleaved one.
  ScheduleProblem linear = ScheduleProblem::linear(3, 4);
  EXPECT_TRUE(linear.hasPlacement(PlacementKind::Linear));
  EXPECT_TRUE(linear.hasPlacement(PlacementKind::Interleaved));
  EXPECT_FALSE(linear.hasPlacement(PlacementKind::VShape));
  // A kind that cannot have this many chunks gives a problem check() refuses.
  EXPECT_FALSE(ScheduleProblem::withPlacement(PlacementKind::Linear, 3, 2, 4)
                   .check()
                   .ok());
  EXPECT_FALSE(ScheduleProblem::withPlacement(PlacementKind::VShape, 3, 3, 4)
                   .check()
                   .ok());
  EXPECT_STREQ(placementName(PlacementKind::Linear), "linear");
  EXPECT_STREQ(placementName(PlacementKind::Interleaved), "interleaved");
  EXPECT_STREQ(placementName(PlacementKind::VShape), "v");
}
} // namespace
