//===- SimulatorTest.cpp - Simulator diagnostics on broken programs -------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

using namespace pipecc::scheduling;

namespace {
std::vector<Program> oneFOneBPrograms(const ScheduleProblem &problem) {
  Result<Schedule> schedule = generateSchedule("1f1b", problem);
  EXPECT_TRUE(schedule.ok());
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, {});
  EXPECT_TRUE(programs.ok());
  return *programs;
}

size_t find(const Program &program, ProgramActionKind kind, int peer,
            size_t from = 0) {
  for (size_t i = from; i < program.size(); ++i)
    if (program[i].kind == kind && program[i].peer == peer)
      return i;
  return program.size();
}

void expectMentions(const std::string &message,
                    const std::vector<std::string> &parts) {
  for (const std::string &part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "'" << part << "' not in: " << message;
}

TEST(Simulator, ComputesTimelinesOfAHandWrittenProgram) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  problem.durations = {ChunkDurations{1, 2, 3}, ChunkDurations{4, 5, 6}};
  ComputeAction f0{ComputeKind::Forward, 0, 0, 0};
  ComputeAction b0{ComputeKind::Backward, 0, 0, 0};
  ComputeAction f1{ComputeKind::Forward, 1, 0, 0};
  ComputeAction b1{ComputeKind::Backward, 1, 0, 0};
  auto send = [](int peer, const std::string &tensor) {
    return ProgramAction::message(ProgramActionKind::Send, peer, tensor, 0, 10);
  };
  auto recv = [](int peer, const std::string &tensor) {
    return ProgramAction::message(ProgramActionKind::Recv, peer, tensor, 0, 10);
  };
  std::vector<Program> programs = {
      {ProgramAction::computeOf(f0), send(1, "act.q0"), recv(1, "grad.q0"),
       ProgramAction::computeOf(b0), ProgramAction::optimizerStep()},
      {recv(0, "act.q0"), ProgramAction::computeOf(f1),
       ProgramAction::computeOf(b1), send(0, "grad.q0"),
       ProgramAction::optimizerStep()}};
  TimingModel timing{10, 0.5, 0.25}; // 10 bytes: 0.5 + 1 s per message
  Result<SimulationResult> result = simulate(problem, programs, timing);
  ASSERT_TRUE(result.ok()) << result.message();
  // F0 [0,1], act [1,2.5], F1 [2.5,6.5], B1 [6.5,17.5], grad [17.5,19],
  // B0 [19,24], optimizer [24,24.25].
  EXPECT_DOUBLE_EQ(result->timelines[1][2].end, 17.5);
  EXPECT_DOUBLE_EQ(result->timelines[0][3].start, 19);
  EXPECT_DOUBLE_EQ(result->makespan, 24.25);
  EXPECT_DOUBLE_EQ(result->busySeconds[0], 1 + 5 + 0.25);
  EXPECT_DOUBLE_EQ(result->busySeconds[1], 4 + 11 + 0.25);
  EXPECT_EQ(result->peakLiveMicrobatches, (std::vector<int>{1, 1}));
}

TEST(Simulator, ReportsNeighboursThatBothSend) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = {
      {ProgramAction::message(ProgramActionKind::Send, 1, "x", 0, 0),
       ProgramAction::message(ProgramActionKind::Recv, 1, "y", 0, 0)},
      {ProgramAction::message(ProgramActionKind::Send, 0, "y", 0, 0),
       ProgramAction::message(ProgramActionKind::Recv, 0, "x", 0, 0)}};
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"deadlock", "rank 0 is blocked at action 0 (send x m0 to "
                              "rank 1) while rank 1 is at action 0 (send y m0 "
                              "to rank 0)",
                  "rank 1 is blocked at action 0"});
}

TEST(Simulator, RejectsASwappedSendAndReceive) {
  ScheduleProblem problem = ScheduleProblem::linear(3, 4);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  ASSERT_TRUE(simulate(problem, programs).ok());
  // On rank 1, a send of a gradient to rank 0 followed by the next receive
  // of an activation from rank 0: swapped, both ranks wait to receive.
  Program &rank1 = programs[1];
  size_t send = find(rank1, ProgramActionKind::Send, 0);
  size_t recv = find(rank1, ProgramActionKind::Recv, 0, send);
  ASSERT_LT(recv, rank1.size());
  std::swap(rank1[send], rank1[recv]);
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"deadlock", "rank 0 is blocked", "recv grad.q0",
                  "rank 1 is blocked", "recv act.q0"});
}

TEST(Simulator, RejectsADroppedReceive) {
  ScheduleProblem problem = ScheduleProblem::linear(3, 4);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  Program &rank2 = programs[2];
  rank2.erase(rank2.begin() + find(rank2, ProgramActionKind::Recv, 1));
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"rank 1 sends 'act.q1' m0 to rank 2",
                  "rank 2 has no matching receive from rank 1"});
}

TEST(Simulator, RejectsADroppedSend) {
  ScheduleProblem problem = ScheduleProblem::linear(3, 4);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  Program &rank2 = programs[2];
  rank2.erase(rank2.begin() + find(rank2, ProgramActionKind::Send, 1));
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(), {"rank 1 receives 'grad.q1' m0 from rank 2",
                                    "rank 2 never sends it to rank 1"});
}

TEST(Simulator, RejectsMessagesReceivedOutOfOrder) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 3);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  Program &rank1 = programs[1];
  size_t first = find(rank1, ProgramActionKind::Recv, 0);
  size_t second = find(rank1, ProgramActionKind::Recv, 0, first + 1);
  std::swap(rank1[first], rank1[second]);
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"messages from rank 0 to rank 1 are received out of order",
                  "'act.q0' m0", "'act.q0' m1"});
}

TEST(Simulator, RejectsComputeBeforeItsInputArrives) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  Program &rank1 = programs[1];
  // Move the first receive after the forward that needs it.
  ASSERT_EQ(rank1[0].kind, ProgramActionKind::Recv);
  std::swap(rank1[0], rank1[1]);
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"rank 1 runs F(s1 c0 m0) (action 0) before receiving "
                  "'act.q0' m0 from rank 0"});
}

TEST(Simulator, RejectsMismatchedSizes) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  programs[1][0].bytes = 99;
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"mismatched messages between rank", "rank 0", "rank 1"});
}
} // namespace
