//===- SimulatorModelTest.cpp - The simulator's cost and memory model -----===//
//
// Timelines, makespans and memory peaks checked against numbers derived in
// each test from its inputs, step by step, by the rules the model states
// (docs/design.md, "The simulator's cost model"): per-stage compute times,
// message time from bytes or per boundary, blocking versus overlapping
// sends, and the bytes a rank holds.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace pipecc::scheduling;

namespace {
ComputeAction forward(int rank, int microbatch, int chunk = 0) {
  return {ComputeKind::Forward, rank, chunk, microbatch};
}
ComputeAction backward(int rank, int microbatch, int chunk = 0) {
  return {ComputeKind::Backward, rank, chunk, microbatch};
}

Schedule generate(const std::string &name, const ScheduleProblem &problem) {
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << name << ": " << schedule.message();
  return schedule.ok() ? *schedule : Schedule{};
}

std::vector<Program> materialize(const ScheduleProblem &problem,
                                 const Schedule &schedule,
                                 const TensorSizes &sizes = {},
                                 const TimingModel &timing = {}) {
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, schedule, sizes, timing);
  EXPECT_TRUE(programs.ok()) << programs.message();
  return programs.ok() ? *programs : std::vector<Program>{};
}

SimulationResult simulated(const ScheduleProblem &problem,
                           const std::vector<Program> &programs,
                           const TimingModel &timing = {}) {
  Result<SimulationResult> result = simulate(problem, programs, timing);
  EXPECT_TRUE(result.ok()) << result.message();
  return result.ok() ? *result : SimulationResult{};
}

SimulationResult simulatedSchedule(const ScheduleProblem &problem,
                                   const Schedule &schedule,
                                   const TimingModel &timing = {}) {
  Result<SimulationResult> result = simulateSchedule(problem, schedule, timing);
  EXPECT_TRUE(result.ok()) << result.message();
  return result.ok() ? *result : SimulationResult{};
}

// GPipe on two ranks, two micro-batches, fused backward, free messages, with
// different F and B + W times on each stage.
TEST(SimulatorModel, ComputesEachStageAtItsOwnDurations) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  const ChunkDurations stage0{1, 1.5, 0.5}, stage1{2, 3, 1};
  problem.durations = {stage0, stage1};
  const double f0 = stage0.forward, f1 = stage1.forward;
  const double b0 = stage0.backwardInput + stage0.backwardWeight;
  const double b1 = stage1.backwardInput + stage1.backwardWeight;

  // Rank 0: F0 F1 BW0 BW1; rank 1 likewise, each waiting for its input.
  double rank0F0 = f0, rank0F1 = rank0F0 + f0;
  double rank1F0 = rank0F0 + f1;
  double rank1F1 = std::max(rank1F0, rank0F1) + f1;
  double rank1B0 = rank1F1 + b1, rank1B1 = rank1B0 + b1;
  double rank0B0 = std::max(rank0F1, rank1B0) + b0;
  double rank0B1 = std::max(rank0B0, rank1B1) + b0;

  Schedule schedule = generate("gpipe", problem);
  ASSERT_EQ(schedule.perRank[0],
            (std::vector<ComputeAction>{forward(0, 0), forward(0, 1),
                                        backward(0, 0), backward(0, 1)}));
  for (const SimulationResult &result :
       {simulatedSchedule(problem, schedule),
        simulated(problem, materialize(problem, schedule))}) {
    EXPECT_DOUBLE_EQ(result.makespan, rank0B1);
    EXPECT_DOUBLE_EQ(result.busySeconds[0], 2 * (f0 + b0));
    EXPECT_DOUBLE_EQ(result.busySeconds[1], 2 * (f1 + b1));
    double busy = result.busySeconds[0] + result.busySeconds[1];
    EXPECT_DOUBLE_EQ(result.bubbleFraction, 1 - busy / (2 * rank0B1));
  }
  SimulationResult timed = simulatedSchedule(problem, schedule);
  EXPECT_DOUBLE_EQ(timed.timelines[1][1].end, rank1F1);
  EXPECT_DOUBLE_EQ(timed.timelines[1][3].end, rank1B1);
  EXPECT_DOUBLE_EQ(timed.timelines[0][2].end, rank0B0);
}

/// The programs of GPipe on two ranks and two micro-batches, messages
/// written out: rank 0 sends both activations before it needs a gradient.
std::vector<Program> gpipeByHand(int64_t bytes) {
  auto compute = [](ComputeAction action) {
    return ProgramAction::computeOf(action);
  };
  auto send = [&](int peer, std::string tensor, int microbatch) {
    return ProgramAction::message(ProgramActionKind::Send, peer, tensor,
                                  microbatch, bytes);
  };
  auto recv = [&](int peer, std::string tensor, int microbatch) {
    return ProgramAction::message(ProgramActionKind::Recv, peer, tensor,
                                  microbatch, bytes);
  };
  std::string act = activationName(0), grad = gradientName(0);
  return {{compute(forward(0, 0)), send(1, act, 0), compute(forward(0, 1)),
           send(1, act, 1), recv(1, grad, 0), compute(backward(0, 0)),
           recv(1, grad, 1), compute(backward(0, 1))},
          {recv(0, act, 0), compute(forward(1, 0)), recv(0, act, 1),
           compute(forward(1, 1)), compute(backward(1, 0)), send(0, grad, 0),
           compute(backward(1, 1)), send(0, grad, 1)}};
}

struct HandTimes {
  double makespan, rank0Backward0Start, rank1Forward1Start;
};

/// Blocking rendezvous: a message starts when both ranks reach it, and both
/// leave it `t` later.
HandTimes blockingByHand(double f, double b, double t) {
  double act0 = f + t; // rank 1 waits from 0
  double rank0F1 = act0 + f, rank1F0 = act0 + f;
  double act1 = std::max(rank0F1, rank1F0) + t;
  double rank1F1Start = act1;
  double rank1B0 = act1 + f + b;
  double grad0 = std::max(act1, rank1B0) + t; // rank 0 waits from act1
  double rank1B1 = grad0 + b, rank0B0 = grad0 + b;
  double grad1 = std::max(rank0B0, rank1B1) + t;
  return {grad1 + b, grad0, rank1F1Start};
}

/// Overlap: a send is posted and the sender goes on; the receive ends at
/// max(the receiver reaching it, post + t).
HandTimes overlappingByHand(double f, double b, double t) {
  double post0 = f, post1 = 2 * f; // rank 0 runs F0 and F1 back to back
  double rank1F0Start = std::max(0.0, post0 + t);
  double rank1F1Start = std::max(rank1F0Start + f, post1 + t);
  double postGrad0 = rank1F1Start + f + b;
  double postGrad1 = postGrad0 + b;
  double rank0B0Start = std::max(post1, postGrad0 + t);
  double rank0B1Start = std::max(rank0B0Start + b, postGrad1 + t);
  return {rank0B1Start + b, rank0B0Start, rank1F1Start};
}

TEST(SimulatorModel, TimesMessagesBlockingAndOverlapping) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  const double f = 1, w = 0.5, bInput = 1.5;
  problem.durations.assign(2, ChunkDurations{f, bInput, w});
  const double b = bInput + w;
  const int64_t bytes = 40;
  TimingModel timing;
  timing.latencySeconds = 0.1;
  timing.bandwidthBytesPerSecond = 100;
  const double t = timing.latencySeconds + bytes / 100.0;
  std::vector<Program> programs = gpipeByHand(bytes);

  HandTimes blocking = blockingByHand(f, b, t);
  SimulationResult result = simulated(problem, programs, timing);
  EXPECT_DOUBLE_EQ(result.makespan, blocking.makespan);
  EXPECT_DOUBLE_EQ(result.timelines[0][5].start, blocking.rank0Backward0Start);
  EXPECT_DOUBLE_EQ(result.timelines[1][3].start, blocking.rank1Forward1Start);
  // Both ends of a rendezvous span the same interval.
  EXPECT_DOUBLE_EQ(result.timelines[0][1].start, result.timelines[1][0].start);
  EXPECT_DOUBLE_EQ(result.timelines[0][1].end, result.timelines[1][0].end);

  timing.overlapSends = true;
  HandTimes overlapping = overlappingByHand(f, b, t);
  result = simulated(problem, programs, timing);
  EXPECT_DOUBLE_EQ(result.makespan, overlapping.makespan);
  EXPECT_DOUBLE_EQ(result.timelines[0][5].start,
                   overlapping.rank0Backward0Start);
  EXPECT_DOUBLE_EQ(result.timelines[1][3].start,
                   overlapping.rank1Forward1Start);
  // The send costs its rank nothing: F1 starts when F0 ends.
  EXPECT_DOUBLE_EQ(result.timelines[0][1].start, f);
  EXPECT_DOUBLE_EQ(result.timelines[0][1].end, f);
  EXPECT_DOUBLE_EQ(result.timelines[0][2].start, f);
  EXPECT_LT(overlapping.makespan, blocking.makespan);
  // Communication is not busy time in either mode.
  EXPECT_DOUBLE_EQ(result.busySeconds[0], 2 * (f + b));
}

TEST(SimulatorModel, MessageCostsInterpolateBetweenMeasuredSizes) {
  MessageCostTable table{{8, 1000, 3000}, {0.1, 0.3, 0.7}};
  EXPECT_DOUBLE_EQ(table.at(1), 0.1);
  EXPECT_DOUBLE_EQ(table.at(8), 0.1);
  EXPECT_DOUBLE_EQ(table.at(504), 0.1 + 0.2 * 496 / 992);
  EXPECT_DOUBLE_EQ(table.at(2000), 0.5);
  // Beyond the largest: the last segment's slope.
  EXPECT_DOUBLE_EQ(table.at(5000), 1.1);
  EXPECT_DOUBLE_EQ(MessageCostTable{}.at(1 << 20), 0);
  EXPECT_DOUBLE_EQ((MessageCostTable{{100}, {0.5}}.at(300)), 1.5);
}

// In overlap mode posting a send takes its rank the measured time, and a
// receive posted after its message came takes the copy out of the queue.
TEST(SimulatorModel, PostingMessagesTakesTheirRanksTime) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  const double f = 1, w = 0.5, bInput = 1.5, b = bInput + w, t = 0.25;
  problem.durations.assign(2, ChunkDurations{f, bInput, w});
  const int64_t bytes = 504;
  TimingModel timing;
  timing.overlapSends = true;
  timing.boundarySeconds = {t};
  std::vector<Program> programs = gpipeByHand(bytes);

  timing.sendPostSeconds = {{8, 1000}, {0.1, 0.3}};
  const double p = 0.2;
  SimulationResult result = simulated(problem, programs, timing);
  // Rank 0: F0, the post of act0, F1 after it.
  EXPECT_DOUBLE_EQ(result.timelines[0][1].start, f);
  EXPECT_DOUBLE_EQ(result.timelines[0][1].end, f + p);
  EXPECT_DOUBLE_EQ(result.timelines[0][2].start, f + p);
  // A message leaves when its post starts: act1, posted at 2f + p, reaches
  // rank 1 after its F0 ended at f + t + f.
  EXPECT_DOUBLE_EQ(result.timelines[1][3].start, 2 * f + p + t);
  EXPECT_DOUBLE_EQ(result.busySeconds[0], 2 * (f + b) + 2 * p);
  EXPECT_DOUBLE_EQ(result.busySeconds[1], 2 * (f + b) + 2 * p);

  // Free sends: act1 arrives at 2f + t, just as rank 1 posts its receive
  // after F0, which then copies it out of the queue.
  timing.sendPostSeconds = {};
  timing.lateReceiveSeconds = {{8, 1000}, {0.05, 0.15}};
  const double copy = 0.1;
  result = simulated(problem, programs, timing);
  EXPECT_DOUBLE_EQ(result.timelines[1][0].end, 0); // posted before act0
  EXPECT_DOUBLE_EQ(result.timelines[1][2].start, 2 * f + t);
  EXPECT_DOUBLE_EQ(result.timelines[1][2].end, 2 * f + t + copy);
  EXPECT_DOUBLE_EQ(result.timelines[1][3].start, 2 * f + t + copy);
}

TEST(SimulatorModel, BoundarySecondsOverrideBytesOverBandwidth) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  const double f = 1, b = 2;
  problem.durations.assign(2, ChunkDurations{f, b, 0});
  TimingModel timing;
  timing.latencySeconds = 5; // ignored for the listed boundary
  timing.bandwidthBytesPerSecond = 1;
  timing.boundarySeconds = {0.25};
  std::vector<Program> programs = gpipeByHand(1000);
  EXPECT_DOUBLE_EQ(simulated(problem, programs, timing).makespan,
                   blockingByHand(f, b, 0.25).makespan);
  timing.overlapSends = true;
  EXPECT_DOUBLE_EQ(simulated(problem, programs, timing).makespan,
                   overlappingByHand(f, b, 0.25).makespan);
}

// simulateSchedule charges a message the boundary's time after its producer
// ends, and the turn of a V (a same-rank hand-off) nothing.
TEST(SimulatorModel, ScheduleSimulationChargesOnlyCrossRankBoundaries) {
  ScheduleProblem problem = ScheduleProblem::vShape(2, 1);
  // Virtual stages 0..3 on ranks 0, 1, 1, 0; boundary 1 is the turn.
  Schedule schedule = generate("gpipe", problem);
  const double c0 = 0.5, turn = 100, c2 = 0.25;
  TimingModel timing;
  timing.boundarySeconds = {c0, turn, c2};
  SimulationResult result = simulatedSchedule(problem, schedule, timing);
  // Unit durations (a fused backward is B + W = 2): F0 F1 F2 F3 then the
  // four backwards in a chain, crossing boundaries 0 and 2 both ways.
  const ChunkDurations unit;
  double computeChain =
      4 * unit.forward + 4 * (unit.backwardInput + unit.backwardWeight);
  double chain = computeChain + 2 * (c0 + c2);
  EXPECT_DOUBLE_EQ(result.makespan, chain);
  // The same on the materialised programs, with bytes over bandwidth:
  // only two boundaries carry messages.
  TensorSizes sizes{{10, 999, 20}, {30, 999, 40}};
  TimingModel byBytes;
  byBytes.bandwidthBytesPerSecond = 100;
  std::vector<Program> programs =
      materialize(problem, schedule, sizes, byBytes);
  double messages = (10 + 20 + 30 + 40) / 100.0;
  EXPECT_DOUBLE_EQ(simulated(problem, programs, byBytes).makespan,
                   computeChain + messages);
  for (const Program &program : programs)
    for (const ProgramAction &action : program)
      if (action.kind == ProgramActionKind::Send) {
        EXPECT_NE(boundaryOf(action.tensor), 1) << describe(action);
      }
}

// With free messages the compute-only simulation equals the programs'.
TEST(SimulatorModel, ScheduleSimulationMatchesProgramsWhenMessagesAreFree) {
  for (const char *name : {"gpipe", "1f1b", "zb-h1"}) {
    for (int stages : {2, 3, 4}) {
      for (int microbatches : {1, 4, 7}) {
        ScheduleProblem problem = ScheduleProblem::linear(
            stages, microbatches, std::string(name) == "zb-h1");
        problem.durations.clear();
        for (int s = 0; s < stages; ++s)
          problem.durations.push_back(
              ChunkDurations{1.0 + s * 0.25, 0.75 + s * 0.5, 0.5});
        Result<Schedule> schedule = generateSchedule(name, problem);
        if (!schedule)
          continue; // the generator refuses this shape
        SimulationResult fromSchedule = simulatedSchedule(problem, *schedule);
        SimulationResult fromPrograms =
            simulated(problem, materialize(problem, *schedule));
        EXPECT_DOUBLE_EQ(fromSchedule.makespan, fromPrograms.makespan)
            << name << " P=" << stages << " M=" << microbatches;
        EXPECT_EQ(fromSchedule.busySeconds, fromPrograms.busySeconds);
        for (int rank = 0; rank < stages; ++rank)
          EXPECT_EQ(fromSchedule.memory[rank].peakBytes,
                    fromPrograms.memory[rank].peakBytes);
      }
    }
  }
}

// With costly messages: sends that overlap compute are never slower than
// rendezvous, and the compute-only simulation (whose senders never wait)
// bounds both from below.
TEST(SimulatorModel, OverlapNeverSlowerThanRendezvous) {
  for (const char *name : {"gpipe", "1f1b", "zb-h1"}) {
    ScheduleProblem problem =
        ScheduleProblem::linear(4, 8, std::string(name) == "zb-h1");
    problem.durations.assign(4, ChunkDurations{1, 0.976, 0.504});
    TimingModel timing;
    timing.boundarySeconds.assign(3, 0.05);
    Schedule schedule = generate(name, problem);
    std::vector<Program> programs = materialize(problem, schedule, {}, timing);
    double blocking = simulated(problem, programs, timing).makespan;
    timing.overlapSends = true;
    double overlapping = simulated(problem, programs, timing).makespan;
    double computeOnly = simulatedSchedule(problem, schedule, timing).makespan;
    EXPECT_LE(overlapping, blocking) << name;
    EXPECT_LE(computeOnly, overlapping + 1e-12) << name;
  }
}

/// Stage q keeps (q + 1) x 100 bytes of activations per micro-batch and
/// (q + 1) x 1000 bytes of parameters, with gradients of the same size.
void setGrowingMemory(ScheduleProblem &problem) {
  problem.memory.clear();
  for (int q = 0; q < problem.virtualStages(); ++q) {
    StageMemory memory;
    memory.activationBytes = (q + 1) * 100;
    memory.parameterBytes = (q + 1) * 1000;
    memory.gradientBytes = (q + 1) * 1000;
    problem.memory.push_back(memory);
  }
}

TEST(SimulatorModel, GPipeHoldsEveryMicrobatchAndOneFOneBAtMostP) {
  const int stages = 4, microbatches = 8;
  ScheduleProblem problem = ScheduleProblem::linear(stages, microbatches);
  setGrowingMemory(problem);
  Schedule gpipe = generate("gpipe", problem);
  Schedule oneFOneB = generate("1f1b", problem);
  SimulationResult gpipeRun = simulatedSchedule(problem, gpipe);
  SimulationResult oneFOneBRun = simulatedSchedule(problem, oneFOneB);
  for (int rank = 0; rank < stages; ++rank) {
    const StageMemory &stage = problem.memory[rank];
    // Parameters and gradients once, whatever the micro-batch count.
    for (const SimulationResult *run : {&gpipeRun, &oneFOneBRun}) {
      EXPECT_EQ(run->memory[rank].parameterBytes, stage.parameterBytes);
      EXPECT_EQ(run->memory[rank].gradientBytes, stage.gradientBytes);
      EXPECT_EQ(run->memory[rank].peakStashBytes, 0);
    }
    // GPipe runs all M forwards before any backward.
    const RankMemory &g = gpipeRun.memory[rank];
    EXPECT_EQ(g.peakActivationBytes, microbatches * stage.activationBytes);
    EXPECT_DOUBLE_EQ(g.peakActivationMicrobatches, microbatches);
    EXPECT_EQ(g.peakBytes, stage.parameterBytes + stage.gradientBytes +
                               microbatches * stage.activationBytes);
    // 1F1B's warm-up on rank r is P - r - 1 forwards, then one more before
    // the first backward: P - r live.
    const RankMemory &o = oneFOneBRun.memory[rank];
    EXPECT_EQ(o.peakActivationBytes, (stages - rank) * stage.activationBytes);
    EXPECT_DOUBLE_EQ(o.peakActivationMicrobatches, stages - rank);
    EXPECT_EQ(o.peakBytes, stage.parameterBytes + stage.gradientBytes +
                               (stages - rank) * stage.activationBytes);
  }
  EXPECT_DOUBLE_EQ(oneFOneBRun.memory[0].peakActivationMicrobatches, stages);
  EXPECT_DOUBLE_EQ(gpipeRun.memory[0].peakActivationMicrobatches, microbatches);
  // The same accounting on the materialised programs.
  SimulationResult programs =
      simulated(problem, materialize(problem, oneFOneB));
  for (int rank = 0; rank < stages; ++rank)
    EXPECT_EQ(programs.memory[rank].peakBytes,
              oneFOneBRun.memory[rank].peakBytes);
}

// A rank holding two virtual stages: its unit of activations is one
// micro-batch through both.
TEST(SimulatorModel, CountsActivationsOverAllOfARanksVirtualStages) {
  const int stages = 2, microbatches = 3;
  ScheduleProblem problem = ScheduleProblem::vShape(stages, microbatches);
  setGrowingMemory(problem);
  SimulationResult run = simulatedSchedule(problem, generate("gpipe", problem));
  // Rank 0 holds virtual stages 0 and 3, rank 1 stages 1 and 2.
  const int held[2][2] = {{0, 3}, {1, 2}};
  for (int rank = 0; rank < stages; ++rank) {
    const StageMemory &a = problem.memory[held[rank][0]];
    const StageMemory &b = problem.memory[held[rank][1]];
    const RankMemory &memory = run.memory[rank];
    EXPECT_EQ(memory.parameterBytes, a.parameterBytes + b.parameterBytes);
    EXPECT_EQ(memory.peakActivationBytes,
              microbatches * (a.activationBytes + b.activationBytes));
    EXPECT_DOUBLE_EQ(memory.peakActivationMicrobatches, microbatches);
  }
}

// One rank, two micro-batches, split backward: B frees the activations and
// keeps the stash until W.
TEST(SimulatorModel, KeepsTheStashFromBUntilW) {
  ScheduleProblem problem = ScheduleProblem::linear(1, 2, true);
  StageMemory stage;
  stage.activationBytes = 10;
  stage.stashBytes = 16;
  stage.parameterBytes = 7;
  stage.gradientBytes = 7;
  problem.memory = {stage};
  const int64_t a = stage.activationBytes, s = stage.stashBytes;
  auto at = [](ComputeKind kind, int microbatch) {
    return ComputeAction{kind, 0, 0, microbatch};
  };
  ComputeKind F = ComputeKind::Forward, B = ComputeKind::BackwardInput,
              W = ComputeKind::BackwardWeight;

  Schedule deferred{
      "deferred",
      {{at(F, 0), at(F, 1), at(B, 0), at(B, 1), at(W, 0), at(W, 1)}}};
  // Live after each action: a, 2a, a + s, 2s, s, 0.
  RankMemory memory = simulatedSchedule(problem, deferred).memory[0];
  EXPECT_EQ(memory.peakActivationBytes, 2 * a);
  EXPECT_EQ(memory.peakStashBytes, 2 * s);
  EXPECT_EQ(memory.peakBytes, 7 + 7 + std::max({2 * a, a + s, 2 * s}));
  EXPECT_DOUBLE_EQ(memory.peakActivationMicrobatches, 2);

  Schedule immediate{
      "immediate",
      {{at(F, 0), at(B, 0), at(W, 0), at(F, 1), at(B, 1), at(W, 1)}}};
  // Live after each action: a, s, 0, a, s, 0.
  memory = simulatedSchedule(problem, immediate).memory[0];
  EXPECT_EQ(memory.peakActivationBytes, a);
  EXPECT_EQ(memory.peakStashBytes, s);
  EXPECT_EQ(memory.peakBytes, 7 + 7 + std::max(a, s));
  EXPECT_DOUBLE_EQ(memory.peakActivationMicrobatches, 1);
}

// ZB-H1 defers W to fill bubbles: its stash peaks above 1F1B's (whose W
// follows its B at once), at the most B-without-W on the rank, while its
// peak of held micro-batches stays at 1F1B's P.
TEST(SimulatorModel, ZeroBubbleH1KeepsStashesForDeferredW) {
  const int stages = 4, microbatches = 8;
  ScheduleProblem problem = ScheduleProblem::linear(stages, microbatches, true);
  for (int q = 0; q < stages; ++q) {
    StageMemory stage;
    stage.activationBytes = 64;
    stage.stashBytes = 24;
    problem.memory.push_back(stage);
  }
  Schedule zb = generate("zb-h1", problem);
  Schedule oneFOneB = generate("1f1b", problem);
  SimulationResult zbRun = simulatedSchedule(problem, zb);
  SimulationResult oneFOneBRun = simulatedSchedule(problem, oneFOneB);
  bool anyDeferred = false;
  for (int rank = 0; rank < stages; ++rank) {
    int pending = 0, mostPending = 0;
    for (const ComputeAction &action : zb.perRank[rank]) {
      pending += action.kind == ComputeKind::BackwardInput;
      pending -= action.kind == ComputeKind::BackwardWeight;
      mostPending = std::max(mostPending, pending);
    }
    anyDeferred = anyDeferred || mostPending > 1;
    EXPECT_EQ(zbRun.memory[rank].peakStashBytes, mostPending * 24);
    EXPECT_EQ(oneFOneBRun.memory[rank].peakStashBytes, 24);
    EXPECT_DOUBLE_EQ(oneFOneBRun.memory[rank].peakActivationMicrobatches,
                     stages - rank);
    // A micro-batch is held until its W: rank r defers W's, but never
    // beyond the P micro-batches of 1F1B's rank 0.
    EXPECT_LE(zbRun.memory[rank].peakActivationMicrobatches, stages);
  }
  EXPECT_DOUBLE_EQ(zbRun.memory[0].peakActivationMicrobatches, stages);
  EXPECT_TRUE(anyDeferred);
}

TEST(SimulatorModel, ScheduleSimulationReportsWhatItCannotRun) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  // Rank 0 waits for B(s1) before its own F, which rank 1 needs first.
  Schedule cycle{
      "cycle",
      {{backward(0, 0), forward(0, 0)}, {forward(1, 0), backward(1, 0)}}};
  Result<SimulationResult> result = simulateSchedule(problem, cycle);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("deadlock: rank 0 is blocked at BW(s0 c0 "
                                  "m0) (compute 0) waiting for BW(s1 c0 m0)"),
            std::string::npos)
      << result.message();
  Schedule missing{"missing", {{forward(0, 0)}, {forward(1, 0)}}};
  result = simulateSchedule(problem, missing);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("lists 2 compute actions, expected 4"),
            std::string::npos)
      << result.message();
  Schedule twice{"twice", {{forward(0, 0), forward(0, 0)}, {forward(1, 0)}}};
  EXPECT_FALSE(simulateSchedule(problem, twice).ok());
}

TEST(SimulatorModel, RejectsMemorySizesOfTheWrongShape) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  problem.memory.assign(3, StageMemory{});
  EXPECT_NE(problem.check().message().find(
                "expected memory sizes for 2 virtual stages, got 3"),
            std::string::npos)
      << problem.check().message();
  problem.memory.assign(2, StageMemory{});
  problem.memory[1].stashBytes = -1;
  EXPECT_NE(problem.check().message().find(
                "memory sizes of virtual stage 1 must be non-negative"),
            std::string::npos)
      << problem.check().message();
  SimulationFailure failure;
  EXPECT_FALSE(simulate(problem, {{}, {}}, {}, &failure).ok());
  EXPECT_EQ(failure.message, problem.check().message());
}

TEST(SimulatorModel, ReadsTheBoundaryOfLibraryTensorNames) {
  EXPECT_EQ(boundaryOf(activationName(0)), 0);
  EXPECT_EQ(boundaryOf(gradientName(12)), 12);
  for (const char *other : {"act.q", "grad.qx", "act.q1b", "x", "weights"})
    EXPECT_EQ(boundaryOf(other), -1) << other;
  TimingModel timing;
  timing.latencySeconds = 1;
  timing.bandwidthBytesPerSecond = 4;
  timing.boundarySeconds = {0.5};
  EXPECT_DOUBLE_EQ(timing.messageSeconds(0, 8), 0.5);
  EXPECT_DOUBLE_EQ(timing.messageSeconds(1, 8), 1 + 8 / 4.0);
  EXPECT_DOUBLE_EQ(timing.messageSeconds(-1, 8), 1 + 8 / 4.0);
}

// Large enough that a quadratic simulation would show; checks it finishes
// and accounts every action.
TEST(SimulatorModel, SimulatesLargeSchedules) {
  ScheduleProblem problem = ScheduleProblem::linear(16, 512, true);
  Schedule schedule = generate("zb-h1", problem);
  SimulationResult result = simulatedSchedule(problem, schedule);
  // Unit durations: every rank is busy 3 x M.
  for (double busy : result.busySeconds)
    EXPECT_DOUBLE_EQ(busy, 3 * 512);
  EXPECT_GE(result.makespan, 3 * 512);
}
} // namespace
