//===- Timeline.cpp - Timed events from a simulation ----------------------===//

#include "pipecc/Timeline/Timeline.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

using namespace pipecc;
using namespace pipecc::timeline;
namespace sched = pipecc::scheduling;

llvm::StringRef pipecc::timeline::categoryName(EventKind kind) {
  switch (kind) {
  case EventKind::Forward:
    return "F";
  case EventKind::BackwardInput:
    return "B";
  case EventKind::BackwardWeight:
    return "W";
  case EventKind::Backward:
    return "BW";
  case EventKind::Send:
    return "send";
  case EventKind::Recv:
    return "recv";
  case EventKind::Wait:
    return "wait";
  case EventKind::AllReduce:
    return "allreduce";
  case EventKind::Optimizer:
    return "optimizer";
  }
  return "?";
}

std::optional<EventKind>
pipecc::timeline::parseCategory(llvm::StringRef category) {
  return llvm::StringSwitch<std::optional<EventKind>>(category)
      .Case("F", EventKind::Forward)
      .Case("B", EventKind::BackwardInput)
      .Case("W", EventKind::BackwardWeight)
      .Case("BW", EventKind::Backward)
      .Case("send", EventKind::Send)
      .Case("recv", EventKind::Recv)
      .Case("wait", EventKind::Wait)
      .Case("allreduce", EventKind::AllReduce)
      .Case("optimizer", EventKind::Optimizer)
      .Default(std::nullopt);
}

bool pipecc::timeline::isCompute(EventKind kind) {
  return kind == EventKind::Forward || kind == EventKind::BackwardInput ||
         kind == EventKind::BackwardWeight || kind == EventKind::Backward;
}

static EventKind computeKindOf(sched::ComputeKind kind) {
  switch (kind) {
  case sched::ComputeKind::Forward:
    return EventKind::Forward;
  case sched::ComputeKind::BackwardInput:
    return EventKind::BackwardInput;
  case sched::ComputeKind::BackwardWeight:
    return EventKind::BackwardWeight;
  case sched::ComputeKind::Backward:
    return EventKind::Backward;
  }
  return EventKind::Forward;
}

/// "act.q1 m3": what a message carries.
static std::string messageText(const sched::ProgramAction &action) {
  return action.tensor + " m" + std::to_string(action.microbatch);
}

Timeline pipecc::timeline::buildTimeline(
    const sched::ScheduleProblem &problem,
    const std::vector<sched::Program> &programs,
    const sched::SimulationResult &simulation, llvm::StringRef schedule) {
  Timeline timeline;
  timeline.source = "predicted";
  timeline.schedule = schedule.str();
  timeline.ranks = problem.stages;
  timeline.chunks = problem.chunks;
  timeline.microbatches = problem.microbatches;
  timeline.makespan = simulation.makespan;
  timeline.bubble = simulation.bubbleFraction;
  timeline.peakActivationMicrobatches = peakActivationMicrobatches(simulation);
  for (size_t rank = 0; rank < programs.size(); ++rank) {
    double previousEnd = 0;
    for (size_t at = 0; at < programs[rank].size(); ++at) {
      const sched::ProgramAction &action = programs[rank][at];
      const sched::TimedAction &timed = simulation.timelines[rank][at];
      Event event;
      event.rank = static_cast<int>(rank);
      event.start = timed.start;
      event.end = timed.end;
      switch (action.kind) {
      case sched::ProgramActionKind::Compute:
        event.kind = computeKindOf(action.compute.kind);
        event.microbatch = action.compute.microbatch;
        event.chunk = action.compute.chunk;
        event.virtualStage =
            problem.virtualStageOf(action.compute.stage, action.compute.chunk);
        event.label = categoryName(event.kind).str() +
                      std::to_string(event.microbatch);
        break;
      case sched::ProgramActionKind::Send:
      case sched::ProgramActionKind::Recv: {
        bool send = action.kind == sched::ProgramActionKind::Send;
        // A rendezvous starts when the later of the two ranks arrives; the
        // earlier one waits from its previous action's end.
        if (timed.start > previousEnd) {
          Event wait;
          wait.rank = event.rank;
          wait.kind = EventKind::Wait;
          wait.microbatch = action.microbatch;
          wait.start = previousEnd;
          wait.end = timed.start;
          wait.label = std::string("wait ") + (send ? "send " : "recv ") +
                       messageText(action);
          timeline.events.push_back(std::move(wait));
        }
        event.kind = send ? EventKind::Send : EventKind::Recv;
        event.microbatch = action.microbatch;
        event.label = std::string(send ? "send " : "recv ") +
                      messageText(action);
        break;
      }
      case sched::ProgramActionKind::AllReduce:
        event.kind = EventKind::AllReduce;
        event.label = "allreduce " + action.tensor;
        break;
      case sched::ProgramActionKind::OptimizerStep:
        event.kind = EventKind::Optimizer;
        event.label = "optimizer";
        break;
      }
      previousEnd = std::max(previousEnd, timed.end);
      // Free messages and a free optimizer step are instants: nothing to
      // draw, and noise in a trace.
      if (event.end <= event.start && !isCompute(event.kind))
        continue;
      timeline.events.push_back(std::move(event));
    }
  }
  return timeline;
}

std::vector<double> pipecc::timeline::peakActivationMicrobatches(
    const sched::SimulationResult &simulation) {
  std::vector<double> peaks;
  for (const sched::RankMemory &memory : simulation.memory)
    peaks.push_back(memory.peakActivationMicrobatches);
  return peaks;
}
