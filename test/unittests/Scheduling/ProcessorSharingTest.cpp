//===- ProcessorSharingTest.cpp - Ranks sharing fewer cores ---------------===//
//
// TimingModel::cores below the number of ranks: the k ranks computing at a
// time share the cores, each at min(1, cores / k) of its speed; at or above
// the number of ranks nothing changes. With TimingModel::coreOfRank the
// ranks are pinned and share only their own core.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace pipecc::scheduling;

namespace {
std::vector<Program> programsOf(const std::string &name,
                                const ScheduleProblem &problem) {
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << schedule.message();
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, {});
  EXPECT_TRUE(programs.ok()) << programs.message();
  return *programs;
}

SimulationResult simulated(const ScheduleProblem &problem,
                           const std::vector<Program> &programs,
                           const TimingModel &timing) {
  Result<SimulationResult> result = simulate(problem, programs, timing);
  EXPECT_TRUE(result.ok()) << result.message();
  return result.ok() ? *result : SimulationResult{};
}

/// The time span of `action` in its rank's timeline.
TimedAction spanOf(const std::vector<Program> &programs,
                   const SimulationResult &result, ComputeAction action) {
  const Program &program = programs[action.stage];
  for (size_t i = 0; i < program.size(); ++i)
    if (program[i].kind == ProgramActionKind::Compute &&
        program[i].compute == action)
      return result.timelines[action.stage][i];
  ADD_FAILURE() << describe(action) << " is not in the programs";
  return {};
}

/// Two shared cores, messages posted and waited for at the first reader
/// (as the runtime does), free otherwise.
TimingModel postedOnTwoCores() {
  TimingModel timing;
  timing.overlapSends = true;
  timing.cores = 2;
  return timing;
}

/// Four ranks, 8 micro-batches, every F, B and W 1 s long.
ScheduleProblem fourRanksOfUnitActions() {
  ScheduleProblem problem = ScheduleProblem::linear(4, 8);
  problem.durations.assign(4, {1, 1, 1});
  return problem;
}

ComputeAction forward(int rank, int microbatch) {
  return {ComputeKind::Forward, rank, 0, microbatch};
}
ComputeAction backward(int rank, int microbatch) {
  return {ComputeKind::Backward, rank, 0, microbatch};
}

// GPipe, two ranks on one core, two micro-batches, F = B = 1, free messages.
// Rank 0's F(m1) and rank 1's F(m0) run together at half speed, [1, 3];
// rank 1's F(m1) and B(m0) then run alone; rank 0's B(m0) and rank 1's
// B(m1) share the core again, [5, 7]; rank 0's B(m1) ends alone at 8: the
// core never idles, so the step is the whole work, 8.
TEST(ProcessorSharing, RanksOnOneCoreRunAtHalfSpeedTogether) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  problem.durations = {{1, 0.5, 0.5}, {1, 0.5, 0.5}};
  std::vector<Program> programs = programsOf("gpipe", problem);
  TimingModel shared;
  shared.cores = 1;
  SimulationResult result = simulated(problem, programs, shared);
  EXPECT_DOUBLE_EQ(result.makespan, 8);
  auto expectSpan = [&](ComputeAction action, double start, double end) {
    TimedAction span = spanOf(programs, result, action);
    EXPECT_DOUBLE_EQ(span.start, start) << describe(action);
    EXPECT_DOUBLE_EQ(span.end, end) << describe(action);
  };
  expectSpan(forward(0, 0), 0, 1);
  expectSpan(forward(0, 1), 1, 3);
  expectSpan(forward(1, 0), 1, 3);
  expectSpan(forward(1, 1), 3, 4);
  expectSpan(backward(1, 0), 4, 5);
  expectSpan(backward(1, 1), 5, 7);
  expectSpan(backward(0, 0), 5, 7);
  expectSpan(backward(0, 1), 7, 8);
  // Busy time is time spent computing, slowed or not.
  EXPECT_DOUBLE_EQ(result.busySeconds[0], 1 + 2 + 2 + 1);
  EXPECT_DOUBLE_EQ(result.busySeconds[1], 2 + 1 + 1 + 2);

  // Unshared, the same programs take 6.
  EXPECT_DOUBLE_EQ(simulated(problem, programs, {}).makespan, 6);
}

// Enough cores for every rank: the timeline of the default model, exactly.
TEST(ProcessorSharing, EnoughCoresChangeNothing) {
  ScheduleProblem problem = ScheduleProblem::linear(4, 8);
  problem.durations = {{1, 1, 1}, {1.5, 1, 0.5}, {1, 2, 1}, {0.5, 1, 1}};
  std::vector<Program> programs = programsOf("1f1b", problem);
  TimingModel timing;
  timing.latencySeconds = 0.01;
  timing.optimizerStepSeconds = 0.5;
  SimulationResult alone = simulated(problem, programs, timing);
  for (int cores : {4, 5, 64}) {
    timing.cores = cores;
    SimulationResult result = simulated(problem, programs, timing);
    EXPECT_DOUBLE_EQ(result.makespan, alone.makespan) << cores;
    for (int rank = 0; rank < 4; ++rank)
      for (size_t i = 0; i < programs[rank].size(); ++i) {
        EXPECT_DOUBLE_EQ(result.timelines[rank][i].start,
                         alone.timelines[rank][i].start);
        EXPECT_DOUBLE_EQ(result.timelines[rank][i].end,
                         alone.timelines[rank][i].end);
      }
  }
}

// Four ranks of 1F1B on fewer cores, free messages: on one core the step is
// the whole work (some rank can always compute); on two it lies between the
// unshared step, the work over two cores, and the work.
TEST(ProcessorSharing, FourRanksOnFewerCores) {
  ScheduleProblem problem = fourRanksOfUnitActions();
  std::vector<Program> programs = programsOf("1f1b", problem);
  TimingModel timing;
  timing.optimizerStepSecondsByRank = {0.5, 0.5, 0.5, 0.5};
  timing.lossReductionSeconds = 0.25;
  double work = 4 * 8 * 3 + 4 * (0.5 + 0.25);
  double alone = simulated(problem, programs, timing).makespan;
  timing.cores = 1;
  EXPECT_NEAR(simulated(problem, programs, timing).makespan, work, 1e-9);
  timing.cores = 2;
  double two = simulated(problem, programs, timing).makespan;
  EXPECT_GE(two, alone);
  EXPECT_GE(two, work / 2 - 1e-9);
  EXPECT_LT(two, work);
}
// A message that wakes a rank while the other ranks compute on every core
// waits for a time slice (busyLatencySeconds): four ranks of 1F1B on two
// cores take longer with it, and by at most one busy wait per message
// received; on four cores, or with the busy latency at or below the idle
// one, nothing changes.
TEST(ProcessorSharing, BusyCoresDelayAWakingReceiver) {
  ScheduleProblem problem = fourRanksOfUnitActions();
  std::vector<Program> programs = programsOf("1f1b", problem);
  TimingModel timing = postedOnTwoCores();
  double shared = simulated(problem, programs, timing).makespan;
  timing.busyLatencySeconds = 0.25;
  double busy = simulated(problem, programs, timing).makespan;
  EXPECT_GT(busy, shared);
  // 2 * 8 messages into each of the middle ranks' computes at most.
  EXPECT_LE(busy, shared + 0.25 * 2 * 8 * 3 + 1e-9);
  timing.latencySeconds = 0.25;
  TimingModel idle = timing;
  idle.busyLatencySeconds = 0;
  EXPECT_NEAR(simulated(problem, programs, timing).makespan,
              simulated(problem, programs, idle).makespan, 1e-9);
  timing.latencySeconds = 0;
  timing.cores = 4;
  TimingModel own = timing;
  own.busyLatencySeconds = 0;
  EXPECT_NEAR(simulated(problem, programs, timing).makespan,
              simulated(problem, programs, own).makespan, 1e-9);
}

// A woken receiver waits for a time slice only while the other ranks hold
// every core: when one of them blocks or ends it takes that core at once.
// With a time slice far longer than the whole step (100 s against F = B = 1),
// four ranks of 1F1B on two cores still end within the work of the step,
// where a fixed wait per message would add 100 s for each; and the woken
// rank's compute starts exactly when the core it takes frees.
TEST(ProcessorSharing, AWokenReceiverTakesTheFirstCoreThatFrees) {
  ScheduleProblem problem = fourRanksOfUnitActions();
  std::vector<Program> programs = programsOf("1f1b", problem);
  TimingModel timing = postedOnTwoCores();
  double shared = simulated(problem, programs, timing).makespan;
  timing.busyLatencySeconds = 100;
  SimulationResult busy = simulated(problem, programs, timing);
  double work = 0; // the time every rank spent computing
  for (double seconds : busy.busySeconds)
    work += seconds;
  EXPECT_GE(busy.makespan, shared - 1e-9);
  EXPECT_LT(busy.makespan, work);
  // Every compute starts at 0, at a message's arrival or at another
  // compute's end (a core freeing): never in the middle of a slice.
  std::vector<double> events = {0};
  for (const auto &timeline : busy.timelines)
    for (const TimedAction &span : timeline)
      events.push_back(span.end);
  for (int rank = 0; rank < 4; ++rank)
    for (int m = 0; m < 8; ++m)
      for (ComputeAction action : {forward(rank, m), backward(rank, m)}) {
        double start = spanOf(programs, busy, action).start;
        bool atEvent = false;
        for (double event : events)
          atEvent = atEvent || std::abs(event - start) < 1e-9;
        EXPECT_TRUE(atEvent) << describe(action) << " starts at " << start;
      }
}

// Pinned ranks share only their own core. GPipe, four ranks of unit
// actions on two cores: at t = 1 ranks 0 (F m1) and 1 (F m0) start
// together. In one pool of two cores each gets a core, [1, 2]; pinned as
// out/launch pins them (ranks 0 and 1 on core 0) they share core 0 at half
// speed, [1, 3], while core 1 idles; pinned to different cores, [1, 2]
// again.
TEST(ProcessorSharing, PinnedRanksShareOnlyTheirCore) {
  ScheduleProblem problem = fourRanksOfUnitActions();
  std::vector<Program> programs = programsOf("gpipe", problem);
  TimingModel timing;
  timing.cores = 2;
  auto spansAtOne = [&](const TimingModel &model) {
    SimulationResult result = simulated(problem, programs, model);
    TimedAction first = spanOf(programs, result, forward(0, 0));
    EXPECT_DOUBLE_EQ(first.start, 0);
    EXPECT_DOUBLE_EQ(first.end, 1);
    TimedAction a = spanOf(programs, result, forward(0, 1));
    TimedAction b = spanOf(programs, result, forward(1, 0));
    EXPECT_DOUBLE_EQ(a.start, 1);
    EXPECT_DOUBLE_EQ(b.start, 1);
    EXPECT_DOUBLE_EQ(a.end, b.end);
    return std::pair{a.end, result.makespan};
  };
  auto [pooledEnd, pooled] = spansAtOne(timing);
  EXPECT_DOUBLE_EQ(pooledEnd, 2);
  timing.coreOfRank = {0, 0, 1, 1};
  auto [pinnedEnd, pinned] = spansAtOne(timing);
  EXPECT_DOUBLE_EQ(pinnedEnd, 3);
  EXPECT_GT(pinned, pooled);
  // Each core's ranks do half the step's work (4 ranks x 8 x 3 s), so
  // neither core can finish before 48 s.
  EXPECT_GE(pinned, 48 - 1e-9);
  timing.coreOfRank = {0, 1, 0, 1};
  EXPECT_DOUBLE_EQ(spansAtOne(timing).first, 2);
}

// A placement that does not fit the model is refused, with the counts.
TEST(ProcessorSharing, APlacementOfTheWrongRanksOrCoresIsRefused) {
  ScheduleProblem problem = fourRanksOfUnitActions();
  std::vector<Program> programs = programsOf("1f1b", problem);
  TimingModel timing;
  timing.cores = 2;
  for (std::vector<int> cores : {std::vector<int>{0, 0, 1},
                                 std::vector<int>{0, 0, 1, 2},
                                 std::vector<int>{0, -1, 1, 1}}) {
    timing.coreOfRank = cores;
    Result<SimulationResult> result = simulate(problem, programs, timing);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.message().find("pins " + std::to_string(cores.size()) +
                                    " ranks to cores"),
              std::string::npos)
        << result.message();
  }
  // Enough cores for every rank: nothing to pin.
  timing.cores = 4;
  timing.coreOfRank = {0, 1, 2, 3};
  EXPECT_FALSE(simulate(problem, programs, timing).ok());
}
} // namespace
