//===- VerifyTest.cpp - Schedule::verify diagnostics ----------------------===//

#include "pipecc/Scheduling/Generators.h"

#include "gtest/gtest.h"

using namespace pipecc::scheduling;

namespace {
ComputeAction F(int stage, int m) { return {ComputeKind::Forward, stage, 0, m}; }
ComputeAction BW(int stage, int m) {
  return {ComputeKind::Backward, stage, 0, m};
}

Schedule twoStageGPipe() {
  // Two stages, two micro-batches, fused backward.
  return Schedule{"hand", {{F(0, 0), F(0, 1), BW(0, 0), BW(0, 1)},
                           {F(1, 0), F(1, 1), BW(1, 0), BW(1, 1)}}};
}

void expectFailure(const Schedule &schedule, const ScheduleProblem &problem,
                   const std::string &expected) {
  Status status = schedule.verify(problem);
  ASSERT_FALSE(status.ok()) << "expected: " << expected;
  EXPECT_NE(status.message().find(expected), std::string::npos)
      << status.message();
}

TEST(ScheduleVerify, AcceptsAHandWrittenSchedule) {
  Status status = twoStageGPipe().verify(ScheduleProblem::linear(2, 2));
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(ScheduleVerify, RejectsMissingDuplicateAndMisplacedActions) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  Schedule schedule = twoStageGPipe();
  schedule.perRank[1].pop_back();
  expectFailure(schedule, problem, "BW(s1 c0 m1) (virtual stage 1) is missing");

  schedule = twoStageGPipe();
  schedule.perRank[0][1] = F(0, 0);
  expectFailure(schedule, problem, "F(s0 c0 m0) appears twice on rank 0");

  schedule = twoStageGPipe();
  schedule.perRank[0][1] = F(1, 1);
  expectFailure(schedule, problem, "F(s1 c0 m1) belongs on rank 1");

  schedule = twoStageGPipe();
  schedule.perRank[0][1].microbatch = 7;
  expectFailure(schedule, problem, "outside");

  schedule = twoStageGPipe();
  schedule.perRank.pop_back();
  expectFailure(schedule, problem, "has 1 ranks");
}

TEST(ScheduleVerify, RejectsTheWrongKindOfBackward) {
  ScheduleProblem split = ScheduleProblem::linear(2, 2, true);
  expectFailure(twoStageGPipe(), split, "splits the backward");
}

TEST(ScheduleVerify, RejectsBackwardBeforeForwardOnARank) {
  Schedule schedule = twoStageGPipe();
  std::swap(schedule.perRank[1][0], schedule.perRank[1][2]);
  expectFailure(schedule, ScheduleProblem::linear(2, 2),
                "rank 1 runs BW(s1 c0 m0) at position 0 before F(s1 c0 m0)");

  ScheduleProblem split = ScheduleProblem::linear(1, 1, true);
  Schedule weightFirst{"hand",
                       {{F(0, 0),
                         {ComputeKind::BackwardWeight, 0, 0, 0},
                         {ComputeKind::BackwardInput, 0, 0, 0}}}};
  expectFailure(weightFirst, split, "runs W(s0 c0 m0) at position 1 before B");
}

TEST(ScheduleVerify, ReportsACyclicWaitWithRanksAndActions) {
  // Rank 0 runs m0's backward before m1's forward; rank 1 runs m1's forward
  // before m0's backward: each waits for the other.
  Schedule schedule{"cyclic", {{F(0, 0), BW(0, 0), F(0, 1), BW(0, 1)},
                               {F(1, 0), F(1, 1), BW(1, 0), BW(1, 1)}}};
  Status status = schedule.verify(ScheduleProblem::linear(2, 2));
  ASSERT_FALSE(status.ok());
  const std::string &message = status.message();
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0 is blocked at position 1 on BW(s0 c0 m0), "
                         "which needs BW(s1 c0 m0) at position 2 on rank 1"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 1 is blocked at position 1 on F(s1 c0 m1), "
                         "which needs F(s0 c0 m1) at position 2 on rank 0"),
            std::string::npos)
      << message;
}
} // namespace
