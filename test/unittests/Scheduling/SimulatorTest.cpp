//===- SimulatorTest.cpp - Simulator diagnostics on broken programs -------===//
//
// Each kind of broken program is reported with a message naming the ranks
// and, through SimulationFailure, the (rank, action) pairs to blame.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Simulator.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <ostream>

using namespace pipecc::scheduling;

namespace pipecc::scheduling {
/// Readable ActionRefs in gtest's messages.
void PrintTo(const ActionRef &action, std::ostream *os) {
  *os << "(rank " << action.rank << ", action " << action.index << ")";
}
} // namespace pipecc::scheduling

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

/// The blamed actions of a failure, without their reasons.
std::vector<ActionRef> blamedActions(const SimulationFailure &failure) {
  std::vector<ActionRef> actions;
  for (const auto &[action, reason] : failure.blamed)
    actions.push_back(action);
  return actions;
}

/// Simulates programs expected to fail; the failure's message must be the
/// diagnostic's.
SimulationFailure failureOf(const ScheduleProblem &problem,
                            const std::vector<Program> &programs,
                            const TimingModel &timing = {}) {
  SimulationFailure failure;
  Result<SimulationResult> result =
      simulate(problem, programs, timing, &failure);
  EXPECT_FALSE(result.ok());
  if (!result.ok()) {
    EXPECT_EQ(failure.message, result.message());
  }
  return failure;
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
                 {"deadlock",
                  "rank 0 is blocked at action 0 (send x m0 to "
                  "rank 1) while rank 1 is at action 0 (send y m0 "
                  "to rank 0)",
                  "rank 1 is blocked at action 0"});
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure), (std::vector<ActionRef>{{0, 0}, {1, 0}}));
  expectMentions(failure.blamed[0].second,
                 {"waits for rank 1 to receive 'x' m0, but rank 1 is at "
                  "action 0 (send y m0 to rank 0)"});
}

TEST(Simulator, OverlappingSendsDoNotWaitForTheReceiver) {
  // The programs above: with posted sends, both go out and both receives
  // find their message.
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = {
      {ProgramAction::message(ProgramActionKind::Send, 1, "x", 0, 0),
       ProgramAction::message(ProgramActionKind::Recv, 1, "y", 0, 0)},
      {ProgramAction::message(ProgramActionKind::Send, 0, "y", 0, 0),
       ProgramAction::message(ProgramActionKind::Recv, 0, "x", 0, 0)}};
  TimingModel overlap;
  overlap.overlapSends = true;
  EXPECT_TRUE(simulate(problem, programs, overlap).ok());
  // Both receiving first still deadlocks; each blocked receive is blamed.
  std::swap(programs[0][0], programs[0][1]);
  std::swap(programs[1][0], programs[1][1]);
  SimulationFailure failure = failureOf(problem, programs, overlap);
  EXPECT_EQ(blamedActions(failure), (std::vector<ActionRef>{{0, 0}, {1, 0}}));
  expectMentions(failure.message,
                 {"deadlock", "rank 0 is blocked at action 0 (recv y m0 from "
                              "rank 1) while rank 1 is at action 0 (recv x "
                              "m0 from rank 0)"});
}

TEST(Simulator, OverlappedReceivesAreWaitedForWhereTheirTensorIsRead) {
  // Rank 1 posts both receives before computing (as the runtime's step
  // posts them early); each forward waits only for its own message.
  ScheduleProblem problem = ScheduleProblem::linear(2, 2);
  problem.durations = {ChunkDurations{1, 2, 3}, ChunkDurations{4, 5, 6}};
  auto compute = [](ComputeKind kind, int stage, int mb) {
    return ProgramAction::computeOf(ComputeAction{kind, stage, 0, mb});
  };
  auto message = [](ProgramActionKind kind, int peer, const char *tensor,
                    int mb) {
    return ProgramAction::message(kind, peer, tensor, mb, 10);
  };
  using K = ProgramActionKind;
  std::vector<Program> programs = {
      {compute(ComputeKind::Forward, 0, 0), message(K::Send, 1, "act.q0", 0),
       compute(ComputeKind::Forward, 0, 1), message(K::Send, 1, "act.q0", 1),
       message(K::Recv, 1, "grad.q0", 0), compute(ComputeKind::Backward, 0, 0),
       message(K::Recv, 1, "grad.q0", 1), compute(ComputeKind::Backward, 0, 1)},
      {message(K::Recv, 0, "act.q0", 0), message(K::Recv, 0, "act.q0", 1),
       compute(ComputeKind::Forward, 1, 0),
       compute(ComputeKind::Backward, 1, 0), message(K::Send, 0, "grad.q0", 0),
       compute(ComputeKind::Forward, 1, 1),
       compute(ComputeKind::Backward, 1, 1),
       message(K::Send, 0, "grad.q0", 1)}};
  TimingModel timing{10, 0.5, 0}; // 1.5 s per message
  timing.overlapSends = true;
  Result<SimulationResult> result = simulate(problem, programs, timing);
  ASSERT_TRUE(result.ok()) << result.message();
  // Rank 0 posts act m0 at 1 (arrives 2.5) and m1 at 2 (arrives 3.5).
  // Rank 1's receives take no time where they stand; F(m0) starts when m0
  // arrives, not when m1 does.
  EXPECT_DOUBLE_EQ(result->timelines[1][1].start, 0);
  EXPECT_DOUBLE_EQ(result->timelines[1][1].end, 0);
  EXPECT_DOUBLE_EQ(result->timelines[1][2].start, 2.5);
  // B1(m0) [6.5, 11.5] + W 6 -> the fused backward ends at 17.5; grad m0
  // posted then arrives at 19, where rank 0's B(m0) starts.
  EXPECT_DOUBLE_EQ(result->timelines[1][3].end, 17.5);
  EXPECT_DOUBLE_EQ(result->timelines[0][5].start, 19);
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
  // Rank 1 is blocked at the moved receive; rank 2, with nothing more to
  // receive from rank 1 before it, waits for rank 1 too.
  SimulationFailure failure = failureOf(problem, programs);
  std::vector<ActionRef> blamed = blamedActions(failure);
  ASSERT_GE(blamed.size(), 2u);
  EXPECT_EQ(blamed[0].rank, 0);
  EXPECT_EQ(programs[0][blamed[0].index].kind, ProgramActionKind::Recv);
  EXPECT_EQ(blamed[1], (ActionRef{1, int(send)}));
  expectMentions(failure.blamed[0].second,
                 {"waits for 'grad.q0'", "from rank 1, but rank 1 is at"});
  expectMentions(failure.blamed[1].second,
                 {"waits for 'act.q0'", "from rank 0, but rank 0 is at"});
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
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure),
            (std::vector<ActionRef>{
                {1, int(find(programs[1], ProgramActionKind::Send, 2))}}));
  expectMentions(failure.blamed[0].second, {"no matching receive"});
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
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure),
            (std::vector<ActionRef>{
                {1, int(find(programs[1], ProgramActionKind::Recv, 2))}}));
  expectMentions(failure.blamed[0].second, {"never sends it"});
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
  // The first message out of place, at both ends.
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure),
            (std::vector<ActionRef>{
                {0, int(find(programs[0], ProgramActionKind::Send, 1))},
                {1, int(first)}}));
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
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure), (std::vector<ActionRef>{{1, 0}}));
  expectMentions(failure.blamed[0].second,
                 {"runs before receiving 'act.q0' m0 from rank 0"});
}

TEST(Simulator, RejectsComputeBeforeItsLocalInput) {
  // V-shape on two ranks: rank 1 holds virtual stages 1 and 2 and hands
  // F(1)'s output to F(2) without a message; running F(2) first fails.
  ScheduleProblem problem = ScheduleProblem::vShape(2, 1);
  Result<Schedule> schedule = generateSchedule("gpipe", problem);
  ASSERT_TRUE(schedule.ok()) << schedule.message();
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, {});
  ASSERT_TRUE(programs.ok()) << programs.message();
  ASSERT_TRUE(simulate(problem, *programs).ok());
  Program &rank1 = (*programs)[1];
  ComputeAction turnIn{ComputeKind::Forward, 1, 0, 0};
  ComputeAction turnOut{ComputeKind::Forward, 1, 1, 0};
  auto at = [&](const ComputeAction &action) {
    for (size_t i = 0; i < rank1.size(); ++i)
      if (rank1[i].kind == ProgramActionKind::Compute &&
          rank1[i].compute == action)
        return int(i);
    return -1;
  };
  int in = at(turnIn), out = at(turnOut);
  ASSERT_EQ(out, in + 1) << "no message between the two halves of the V";
  std::swap(rank1[in], rank1[out]);
  SimulationFailure failure = failureOf(problem, *programs);
  EXPECT_EQ(blamedActions(failure), (std::vector<ActionRef>{{1, in}}));
  expectMentions(failure.message,
                 {"rank 1 runs F(s1 c1 m0)", "before F(s1 c0 m0)"});
}

TEST(Simulator, RejectsMismatchedSizes) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  programs[1][0].bytes = 99;
  Result<SimulationResult> result = simulate(problem, programs);
  ASSERT_FALSE(result.ok());
  expectMentions(result.message(),
                 {"mismatched messages between rank", "rank 0", "rank 1"});
  SimulationFailure failure = failureOf(problem, programs);
  std::vector<ActionRef> blamed = blamedActions(failure);
  ASSERT_EQ(blamed.size(), 2u);
  EXPECT_NE(std::find(blamed.begin(), blamed.end(), ActionRef{1, 0}),
            blamed.end());
  EXPECT_NE(std::find(blamed.begin(), blamed.end(),
                      ActionRef{0, int(find(programs[0],
                                            ProgramActionKind::Send, 1))}),
            blamed.end());
  // With posted sends the receive finds the same mismatch.
  TimingModel overlap;
  overlap.overlapSends = true;
  SimulationFailure overlapFailure = failureOf(problem, programs, overlap);
  EXPECT_EQ(overlapFailure.blamed.size(), 2u);
}

TEST(Simulator, BlamesAComputeOnTheWrongRank) {
  ScheduleProblem problem = ScheduleProblem::linear(2, 1);
  std::vector<Program> programs = oneFOneBPrograms(problem);
  programs[0].insert(
      programs[0].begin() + 1,
      ProgramAction::computeOf(ComputeAction{ComputeKind::Forward, 1, 0, 0}));
  SimulationFailure failure = failureOf(problem, programs);
  EXPECT_EQ(blamedActions(failure), (std::vector<ActionRef>{{0, 1}}));
  expectMentions(failure.blamed[0].second, {"does not belong on rank 0"});
}
} // namespace
