//===- WeightGradientGroupsTest.cpp - W of consecutive micro-batches ------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"
#include "pipecc/Scheduling/WeightGradientGroups.h"

#include "gtest/gtest.h"

using namespace pipecc::scheduling;

namespace {
std::string order(const std::vector<ComputeAction> &rank) {
  std::string text;
  for (const ComputeAction &action : rank)
    text += (text.empty() ? "" : " ") + std::string(kindName(action.kind)) +
            std::to_string(action.microbatch);
  return text;
}

/// The schedule's programs (communication placed) as the simulator runs
/// them.
SimulationResult simulated(const ScheduleProblem &problem,
                           const Schedule &schedule) {
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, schedule, {}, {});
  EXPECT_TRUE(programs.ok()) << programs.message();
  if (!programs.ok())
    return {};
  Result<SimulationResult> result = simulate(problem, *programs, {});
  EXPECT_TRUE(result.ok()) << result.message();
  return result.ok() ? *result : SimulationResult{};
}

Schedule generated(const std::string &name, const ScheduleProblem &problem) {
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << schedule.message();
  return schedule.ok() ? *schedule : Schedule{};
}
} // namespace

TEST(WeightGradientGroups, PairsMoveTheFirstWeightGradientToTheSecond) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 4, /*split=*/true);
  Schedule plain = generated("1f1b", problem);
  ASSERT_EQ(order(plain.perRank[1]),
            "F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3");
  Result<Schedule> pairs = groupWeightGradients(problem, plain, 2);
  ASSERT_TRUE(pairs.ok()) << pairs.message();
  EXPECT_EQ(order(pairs->perRank[1]),
            "F0 B0 F1 B1 W0 W1 F2 B2 F3 B3 W2 W3");
  EXPECT_EQ(order(pairs->perRank[0]),
            "F0 F1 B0 F2 B1 W0 W1 F3 B2 B3 W2 W3");
}

TEST(WeightGradientGroups, LeavesALastPartialGroupAndSizeOneAlone) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 3, /*split=*/true);
  Schedule plain = generated("1f1b", problem);
  Result<Schedule> same = groupWeightGradients(problem, plain, 1);
  ASSERT_TRUE(same.ok()) << same.message();
  for (size_t rank = 0; rank < plain.perRank.size(); ++rank)
    EXPECT_EQ(order(same->perRank[rank]), order(plain.perRank[rank]));
  Result<Schedule> pairs = groupWeightGradients(problem, plain, 2);
  ASSERT_TRUE(pairs.ok()) << pairs.message();
  // W2 has no partner and keeps its place, right after its B.
  EXPECT_EQ(order(pairs->perRank[1]), "F0 B0 F1 B1 W0 W1 F2 B2 W2");
}

TEST(WeightGradientGroups, KeepsEverySchedulesProgramsRunnable) {
  // Grouping only delays W: every split schedule still verifies, simulates
  // with the same work, and holds W's activations at most one more
  // micro-batch per stage.
  for (const std::string name : {"1f1b", "zb-h1", "zb-h2", "gpipe"}) {
    for (int stages : {1, 2, 4}) {
      for (int microbatches : {1, 2, 5, 8}) {
        SCOPED_TRACE(name + " P=" + std::to_string(stages) +
                     " M=" + std::to_string(microbatches));
        ScheduleProblem problem =
            ScheduleProblem::linear(stages, microbatches, /*split=*/true);
        Result<Schedule> plain = generateSchedule(name, problem);
        if (!plain.ok())
          continue; // a shape the generator refuses
        Result<Schedule> pairs = groupWeightGradients(problem, *plain, 2);
        ASSERT_TRUE(pairs.ok()) << pairs.message();
        SimulationResult before = simulated(problem, *plain),
                         after = simulated(problem, *pairs);
        for (size_t rank = 0; rank < before.busySeconds.size(); ++rank) {
          EXPECT_DOUBLE_EQ(after.busySeconds[rank], before.busySeconds[rank]);
          EXPECT_LE(after.peakLiveUntilWeightGradient[rank],
                    before.peakLiveUntilWeightGradient[rank] + 1);
        }
      }
    }
  }
}

TEST(WeightGradientGroups, InSlackKeepsOnlyGroupsTheStepDoesNotWaitFor) {
  // The MLP of the CPU benchmark cut in two: the first stage has no input
  // gradient, so its backward is all W. Grouping every pair lengthens
  // 1F1B's step (a delayed W no longer fills the wait for the other rank);
  // the slack policy keeps the step as long as the schedule's, or shorter,
  // and still groups.
  for (const std::string name : {"1f1b", "zb-h1"}) {
    SCOPED_TRACE(name);
    ScheduleProblem problem = ScheduleProblem::linear(2, 8, /*split=*/true);
    problem.durations = {{7.0, 0.0, 12.0}, {7.0, 7.0, 7.0}};
    Schedule plain = generated(name, problem);
    auto makespan = [&](const Schedule &schedule) {
      return simulated(problem, schedule).makespan;
    };
    Result<Schedule> every = groupWeightGradients(problem, plain, 2);
    Result<Schedule> slack =
        groupWeightGradientsInSlack(problem, plain, 2, {}, {});
    ASSERT_TRUE(every.ok() && slack.ok()) << slack.message();
    if (name == "1f1b")
      EXPECT_GT(makespan(*every), makespan(plain));
    EXPECT_LE(makespan(*slack), makespan(plain));
    size_t grouped = 0;
    for (const std::vector<ComputeAction> &rank : slack->perRank)
      for (size_t i = 0; i + 1 < rank.size(); ++i)
        grouped += rank[i].kind == ComputeKind::BackwardWeight &&
                   rank[i + 1].kind == ComputeKind::BackwardWeight &&
                   rank[i].microbatch % 2 == 0 &&
                   rank[i + 1].microbatch == rank[i].microbatch + 1;
    EXPECT_GT(grouped, 0u);
  }
}

TEST(WeightGradientGroups, RefusesAFusedBackward) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 4);
  Result<Schedule> pairs =
      groupWeightGradients(problem, generated("1f1b", problem), 2);
  ASSERT_FALSE(pairs.ok());
  EXPECT_NE(pairs.message().find("runs B and W as one action"),
            std::string::npos)
      << pairs.message();
}
