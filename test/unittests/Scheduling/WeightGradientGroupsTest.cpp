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
    if (name == "1f1b") {
      EXPECT_GT(makespan(*every), makespan(plain));
    }
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

TEST(WeightGradientGroups, InSlackTriesEachGroupAloneWithinItsBudget) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 8, /*split=*/true);
  SlackGroupingReport report;
  Result<Schedule> slack = groupWeightGradientsInSlack(
      problem, generated("zb-h1", problem), 2, {}, {},
      kDefaultSlackActionBudget, &report);
  ASSERT_TRUE(slack.ok()) << slack.message();
  EXPECT_EQ(report.candidates, 8);
  EXPECT_EQ(report.groupsPerTrial, 1);
  // The schedule's own step, then one trial per group.
  EXPECT_EQ(report.simulations, report.candidates + 1);
}

TEST(WeightGradientGroups, InSlackBoundsItsSimulationsOnALongStep) {
  // 8 ranks, 256 micro-batches: 1024 candidate groups, each alone a
  // simulation of the whole step's program actions. The budget takes them
  // several per trial (a budget of one action still runs
  // kMinSlackTrials); the step stays as long and as full as the
  // schedule's.
  for (int64_t budget : {kDefaultSlackActionBudget, int64_t(1)}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    ScheduleProblem problem = ScheduleProblem::linear(8, 256, /*split=*/true);
    Schedule plain = generated("zb-h1", problem);
    SlackGroupingReport report;
    Result<Schedule> slack = groupWeightGradientsInSlack(
        problem, plain, 2, {}, {}, budget, &report);
    ASSERT_TRUE(slack.ok()) << slack.message();
    EXPECT_EQ(report.candidates, 8 * 128);
    EXPECT_GT(report.groupsPerTrial, 1);
    Result<std::vector<Program>> programs =
        materializeCommunication(problem, plain, {}, {});
    ASSERT_TRUE(programs.ok()) << programs.message();
    int64_t actions = 0;
    for (const Program &program : *programs)
      actions += static_cast<int64_t>(program.size());
    EXPECT_LE(report.simulations,
              std::max<int64_t>(kMinSlackTrials, budget / actions) + 1);
    if (budget == kDefaultSlackActionBudget) {
      EXPECT_GT(report.kept, 0);
    }
    SimulationResult before = simulated(problem, plain),
                     after = simulated(problem, *slack);
    EXPECT_LE(after.makespan, before.makespan * (1 + 1e-9));
    int beforePeak = 0, afterPeak = 0;
    for (size_t i = 0; i < before.peakLiveUntilWeightGradient.size(); ++i) {
      beforePeak = std::max(beforePeak, before.peakLiveUntilWeightGradient[i]);
      afterPeak = std::max(afterPeak, after.peakLiveUntilWeightGradient[i]);
    }
    EXPECT_LE(afterPeak, std::max(beforePeak, 2));
  }
}

TEST(WeightGradientGroups, InSlackWithinABudgetKeepsNearlyWhatEachAloneKeeps) {
  // The runs that a small budget forces (16 trials here, 16 or 32 groups
  // in each first run) against one trial per group: at least 90 % of the
  // groups kept, the step no longer and no rank fuller.
  for (const std::string name : {"1f1b", "zb-h1"}) {
    for (int stages : {4, 8}) {
      SCOPED_TRACE(name + " P=" + std::to_string(stages));
      ScheduleProblem problem =
          ScheduleProblem::linear(stages, 64, /*split=*/true);
      Schedule plain = generated(name, problem);
      SlackGroupingReport alone, runs;
      Result<Schedule> exact = groupWeightGradientsInSlack(
          problem, plain, 2, {}, {}, int64_t(1) << 40, &alone);
      Result<Schedule> bounded =
          groupWeightGradientsInSlack(problem, plain, 2, {}, {}, 1, &runs);
      ASSERT_TRUE(exact.ok()) << exact.message();
      ASSERT_TRUE(bounded.ok()) << bounded.message();
      EXPECT_EQ(alone.groupsPerTrial, 1);
      EXPECT_GT(runs.groupsPerTrial, 1);
      EXPECT_LE(runs.simulations, kMinSlackTrials + 1);
      EXPECT_GE(10 * runs.kept, 9 * alone.kept)
          << runs.kept << " of " << alone.kept;
      SimulationResult before = simulated(problem, plain),
                       after = simulated(problem, *bounded);
      EXPECT_LE(after.makespan, before.makespan * (1 + 1e-9));
      int beforePeak = 0, afterPeak = 0;
      for (size_t i = 0; i < before.peakLiveUntilWeightGradient.size(); ++i) {
        beforePeak =
            std::max(beforePeak, before.peakLiveUntilWeightGradient[i]);
        afterPeak = std::max(afterPeak, after.peakLiveUntilWeightGradient[i]);
      }
      EXPECT_LE(afterPeak, std::max(beforePeak, 2));
    }
  }
}
