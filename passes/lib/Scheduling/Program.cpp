//===- Program.cpp - Program actions and the tensors they move ------------===//

#include "pipecc/Scheduling/Program.h"
#include "Dataflow.h"

#include <sstream>
#include <string_view>

using namespace pipecc::scheduling;

std::string pipecc::scheduling::activationName(int boundary) {
  return "act.q" + std::to_string(boundary);
}

std::string pipecc::scheduling::gradientName(int boundary) {
  return "grad.q" + std::to_string(boundary);
}

int pipecc::scheduling::boundaryOf(const std::string &tensor) {
  for (const char *prefix : {"act.q", "grad.q"}) {
    std::string_view name(tensor), head(prefix);
    if (name.substr(0, head.size()) != head)
      continue;
    std::string_view digits = name.substr(head.size());
    if (digits.empty() || digits.size() > 9)
      return -1;
    int boundary = 0;
    for (char c : digits) {
      if (c < '0' || c > '9')
        return -1;
      boundary = boundary * 10 + (c - '0');
    }
    return boundary;
  }
  return -1;
}

std::string pipecc::scheduling::describe(const ProgramAction &action) {
  std::ostringstream out;
  switch (action.kind) {
  case ProgramActionKind::Compute:
    return describe(action.compute);
  case ProgramActionKind::Send:
    out << "send " << action.tensor << " m" << action.microbatch
        << " to rank " << action.peer;
    break;
  case ProgramActionKind::Recv:
    out << "recv " << action.tensor << " m" << action.microbatch
        << " from rank " << action.peer;
    break;
  case ProgramActionKind::AllReduce:
    out << "all-reduce " << action.tensor;
    break;
  case ProgramActionKind::OptimizerStep:
    out << "optimizer step";
    break;
  }
  return out.str();
}

std::optional<detail::Message>
detail::incomingMessage(const ScheduleProblem &problem,
                        const ComputeAction &consumer) {
  ComputeAction producer;
  if (!dependencyOf(problem, consumer, producer) ||
      producer.stage == consumer.stage)
    return std::nullopt;
  Message message;
  message.microbatch = consumer.microbatch;
  message.fromRank = producer.stage;
  message.toRank = consumer.stage;
  message.producer = producer;
  message.consumer = consumer;
  int q = problem.virtualStageOf(consumer.stage, consumer.chunk);
  if (consumer.kind == ComputeKind::Forward) {
    message.boundary = q - 1;
    message.tensor = activationName(q - 1);
  } else {
    // Only B of a non-last virtual stage has a producer elsewhere.
    message.boundary = q;
    message.tensor = gradientName(q);
  }
  return message;
}

std::vector<ComputeAction>
detail::consumersOf(const ScheduleProblem &problem,
                    const ComputeAction &producer) {
  int q = problem.virtualStageOf(producer.stage, producer.chunk);
  int last = problem.virtualStages() - 1;
  ComputeKind backward = problem.splitBackward ? ComputeKind::BackwardInput
                                               : ComputeKind::Backward;
  auto at = [&](ComputeKind kind, int virtualStage) {
    auto [stage, chunk] = problem.placement[virtualStage];
    return ComputeAction{kind, stage, chunk, producer.microbatch};
  };
  std::vector<ComputeAction> consumers;
  switch (producer.kind) {
  case ComputeKind::Forward:
    consumers.push_back(q < last ? at(ComputeKind::Forward, q + 1)
                                 : at(backward, q));
    break;
  case ComputeKind::BackwardInput:
    consumers.push_back(at(ComputeKind::BackwardWeight, q));
    [[fallthrough]];
  case ComputeKind::Backward:
    if (q > 0)
      consumers.push_back(at(backward, q - 1));
    break;
  case ComputeKind::BackwardWeight:
    break;
  }
  return consumers;
}
