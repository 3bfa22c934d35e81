//===- Communication.cpp - Placing sends and receives ---------------------===//
//
// The global linearisation is built by a small list scheduler over simulated
// time. Each step takes the earliest of
//   - a rank with an unsent message: the send/receive pair, at the time both
//     ranks are free (a rank must finish its sends before computing on);
//   - a rank whose next compute has its input: the compute, when it is free.
// Ties go to messages, then to the lower rank. Appending a pair to both
// programs at once is what makes the result deadlock-free.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Simulator.h"
#include "ActionIndex.h"
#include "Dataflow.h"

#include <deque>
#include <limits>
#include <sstream>

using namespace pipecc::scheduling;

namespace {
struct RankState {
  size_t nextCompute = 0;
  double freeAt = 0;
  std::deque<detail::Message> unsent;
};

Result<std::vector<Program>>
linearise(const ScheduleProblem &problem, const Schedule &schedule,
          const TensorSizes &sizes, const TimingModel &timing) {
  detail::ActionIndex index(problem);
  // A compute's input is available: computed locally, or received.
  std::vector<char> inputReady(index.size(), 0);
  std::vector<RankState> ranks(problem.stages);
  std::vector<Program> programs(problem.stages);

  auto hasInput = [&](const ComputeAction &action) {
    ComputeAction producer;
    return !dependencyOf(problem, action, producer) ||
           inputReady[index(action)];
  };

  while (true) {
    enum class Step { None, Message, Compute } step = Step::None;
    int chosen = -1;
    double chosenTime = std::numeric_limits<double>::infinity();
    for (int rank = 0; rank < problem.stages; ++rank) {
      RankState &state = ranks[rank];
      if (!state.unsent.empty()) {
        double time = std::max(state.freeAt,
                               ranks[state.unsent.front().toRank].freeAt);
        if (time < chosenTime ||
            (time == chosenTime && step == Step::Compute)) {
          step = Step::Message, chosen = rank, chosenTime = time;
        }
        continue;
      }
      const std::vector<ComputeAction> &actions = schedule.perRank[rank];
      if (state.nextCompute < actions.size() &&
          hasInput(actions[state.nextCompute]) && state.freeAt < chosenTime) {
        step = Step::Compute, chosen = rank, chosenTime = state.freeAt;
      }
    }
    if (step == Step::None)
      break;

    RankState &state = ranks[chosen];
    if (step == Step::Message) {
      detail::Message message = state.unsent.front();
      state.unsent.pop_front();
      int64_t bytes = detail::messageBytes(message, sizes);
      programs[chosen].push_back(ProgramAction::message(
          ProgramActionKind::Send, message.toRank, message.tensor,
          message.microbatch, bytes));
      programs[message.toRank].push_back(ProgramAction::message(
          ProgramActionKind::Recv, chosen, message.tensor, message.microbatch,
          bytes));
      double end = chosenTime + timing.messageSeconds(message.boundary, bytes);
      state.freeAt = ranks[message.toRank].freeAt = end;
      inputReady[index(message.consumer)] = 1;
      continue;
    }

    const ComputeAction &action = schedule.perRank[chosen][state.nextCompute++];
    programs[chosen].push_back(ProgramAction::computeOf(action));
    state.freeAt += problem.duration(action);
    for (const ComputeAction &consumer : detail::consumersOf(problem, action)) {
      if (std::optional<detail::Message> message =
              detail::incomingMessage(problem, consumer))
        state.unsent.push_back(*message);
      else
        inputReady[index(consumer)] = 1;
    }
  }

  for (int rank = 0; rank < problem.stages; ++rank) {
    if (ranks[rank].nextCompute < schedule.perRank[rank].size()) {
      // verify() rules this out; keep the check so a bug cannot emit a
      // truncated program.
      std::ostringstream error;
      error << "internal error: rank " << rank << " stalled at "
            << describe(schedule.perRank[rank][ranks[rank].nextCompute])
            << " while placing communication";
      return Diagnostic{error.str()};
    }
    programs[rank].push_back(ProgramAction::optimizerStep());
  }
  return programs;
}

/// Index of the compute on `program` after `from` that consumes what the
/// receive at `from` brings.
size_t consumerIndex(const ScheduleProblem &problem, const Program &program,
                     size_t from) {
  const ProgramAction &recv = program[from];
  for (size_t i = from + 1; i < program.size(); ++i) {
    if (program[i].kind != ProgramActionKind::Compute)
      continue;
    std::optional<detail::Message> message =
        detail::incomingMessage(problem, program[i].compute);
    if (message && message->tensor == recv.tensor &&
        message->microbatch == recv.microbatch)
      return i;
  }
  return from;
}

void delayReceives(const ScheduleProblem &problem,
                   std::vector<Program> &programs, const TimingModel &timing) {
  for (Program &program : programs) {
    // Walk backwards so moving a receive never skips an unvisited one.
    for (size_t i = program.size(); i-- > 0;) {
      if (program[i].kind != ProgramActionKind::Recv)
        continue;
      size_t consumer = consumerIndex(problem, program, i);
      if (consumer <= i + 1)
        continue;
      Program original = program;
      ProgramAction recv = program[i];
      program.erase(program.begin() + i);
      program.insert(program.begin() + (consumer - 1), recv);
      if (!simulate(problem, programs, timing).ok())
        program = std::move(original);
    }
  }
}
} // namespace

Result<std::vector<Program>> pipecc::scheduling::materializeCommunication(
    const ScheduleProblem &problem, const Schedule &schedule,
    const TensorSizes &sizes, const TimingModel &timing,
    RecvPlacement placement) {
  if (Status status = schedule.verify(problem); !status)
    return status;
  int boundaries = problem.virtualStages() - 1;
  if ((!sizes.activationBytes.empty() &&
       int(sizes.activationBytes.size()) != boundaries) ||
      (!sizes.gradientBytes.empty() &&
       int(sizes.gradientBytes.size()) != boundaries))
    return Diagnostic{"tensor sizes must list one entry per boundary between "
                      "virtual stages (" +
                      std::to_string(boundaries) + ")"};
  Result<std::vector<Program>> programs =
      linearise(problem, schedule, sizes, timing);
  if (programs && placement == RecvPlacement::LateWhenSafe)
    delayReceives(problem, *programs, timing);
  return programs;
}
