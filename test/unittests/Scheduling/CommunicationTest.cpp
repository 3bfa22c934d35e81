//===- CommunicationTest.cpp - Send/receive placement ---------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

using namespace pipecc::scheduling;

namespace {
std::vector<Program> materialize(const std::string &name,
                                 const ScheduleProblem &problem,
                                 const TensorSizes &sizes = {},
                                 RecvPlacement placement = RecvPlacement::Eager) {
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << schedule.message();
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, sizes, {}, placement);
  EXPECT_TRUE(programs.ok()) << programs.message();
  return programs.ok() ? *programs : std::vector<Program>{};
}

std::vector<std::string> describeAll(const Program &program) {
  std::vector<std::string> lines;
  for (const ProgramAction &action : program)
    lines.push_back(describe(action));
  return lines;
}

TEST(Communication, TwoStage1F1BPairsEverySendWithItsReceive) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  TensorSizes sizes{{64}, {32}};
  std::vector<Program> programs = materialize("1f1b", problem, sizes);
  ASSERT_EQ(programs.size(), 2u);
  EXPECT_EQ(describeAll(programs[0]),
            (std::vector<std::string>{
                "F(s0 c0 m0)", "send act.q0 m0 to rank 1", "F(s0 c0 m1)",
                "send act.q0 m1 to rank 1", "recv grad.q0 m0 from rank 1",
                "BW(s0 c0 m0)", "recv grad.q0 m1 from rank 1", "BW(s0 c0 m1)",
                "optimizer step"}));
  EXPECT_EQ(describeAll(programs[1]),
            (std::vector<std::string>{
                "recv act.q0 m0 from rank 0", "F(s1 c0 m0)",
                // Taken as soon as rank 1 is free: rank 0 sends at t = 2.
                "recv act.q0 m1 from rank 0", "BW(s1 c0 m0)",
                "send grad.q0 m0 to rank 0",
                "F(s1 c0 m1)", "BW(s1 c0 m1)", "send grad.q0 m1 to rank 0",
                "optimizer step"}));
  EXPECT_EQ(programs[0][1].bytes, 64);
  EXPECT_EQ(programs[1][4].bytes, 32);
}

TEST(Communication, NoMessagesWithinARank) {
  // The turn of a V: virtual stages P-1 and P both live on rank P-1.
  ScheduleProblem problem = ScheduleProblem::vShape(3, 2);
  std::vector<Program> programs = materialize("gpipe", problem);
  int messages = 0;
  for (int rank = 0; rank < 3; ++rank)
    for (const ProgramAction &action : programs[rank]) {
      if (action.kind == ProgramActionKind::Send) {
        ++messages;
        EXPECT_NE(action.tensor, "act.q2");
        EXPECT_NE(action.tensor, "grad.q2");
      }
    }
  // Boundaries 0, 1, 3, 4 cross ranks: an activation and a gradient each,
  // per micro-batch.
  EXPECT_EQ(messages, 4 * 2 * 2);
  EXPECT_TRUE(simulate(problem, programs).ok());
}

TEST(Communication, EveryProgramEndsWithTheOptimizerStep) {
  std::vector<Program> programs =
      materialize("1f1b", ScheduleProblem::linear(4, 6, true));
  for (const Program &program : programs) {
    ASSERT_FALSE(program.empty());
    EXPECT_EQ(program.back().kind, ProgramActionKind::OptimizerStep);
  }
}

TEST(Communication, RejectsInvalidSchedulesAndSizes) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  Result<Schedule> schedule = generateSchedule("gpipe", problem);
  ASSERT_TRUE(schedule.ok());
  Schedule broken = *schedule;
  broken.perRank[0].pop_back();
  EXPECT_FALSE(materializeCommunication(problem, broken, {}).ok());
  Result<std::vector<Program>> wrongSizes =
      materializeCommunication(problem, *schedule, TensorSizes{{1, 2}, {}});
  ASSERT_FALSE(wrongSizes.ok());
  EXPECT_NE(wrongSizes.message().find("one entry per boundary"),
            std::string::npos);
}

TEST(Communication, LateReceivesStayDeadlockFree) {
  // Moving receives towards their consumers must never produce programs the
  // simulator rejects; under blocking rendezvous it cannot shorten the step
  // either, because the sender then waits longer.
  for (const std::string name : {"gpipe", "1f1b", "zb-h1"}) {
    for (int stages = 2; stages <= 4; ++stages) {
      for (int microbatches : {1, 3, 8}) {
        ScheduleProblem problem =
            ScheduleProblem::linear(stages, microbatches, true);
        std::vector<Program> eager = materialize(name, problem);
        std::vector<Program> late =
            materialize(name, problem, {}, RecvPlacement::LateWhenSafe);
        Result<SimulationResult> eagerRun = simulate(problem, eager);
        Result<SimulationResult> lateRun = simulate(problem, late);
        ASSERT_TRUE(eagerRun.ok() && lateRun.ok()) << lateRun.message();
        EXPECT_GE(lateRun->makespan, eagerRun->makespan - 1e-9) << name;
      }
    }
  }
}
} // namespace
