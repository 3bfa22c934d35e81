//===- Dataflow.h - Which computes exchange which tensors -------*- C++ -*-===//
//
// Library-private: the tensors that travel between ranks, derived from the
// dependency chain in Problem.h, shared by the materializer (which inserts
// them) and the simulator (which checks them).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_LIB_SCHEDULING_DATAFLOW_H
#define PIPECC_LIB_SCHEDULING_DATAFLOW_H

#include "pipecc/Scheduling/Program.h"

#include <optional>
#include <vector>

namespace pipecc::scheduling::detail {

struct Message {
  std::string tensor;
  int microbatch = 0;
  int boundary = 0;
  int fromRank = 0;
  int toRank = 0;
  ComputeAction producer;
  ComputeAction consumer;
};

/// The message `consumer` must receive before it runs: set when its producer
/// runs on another rank. Bytes are looked up by the caller from `boundary`.
std::optional<Message> incomingMessage(const ScheduleProblem &problem,
                                       const ComputeAction &consumer);

/// The computes that read what `producer` computes, on any rank.
std::vector<ComputeAction> consumersOf(const ScheduleProblem &problem,
                                       const ComputeAction &producer);

inline int64_t messageBytes(const Message &message, const TensorSizes &sizes) {
  bool isActivation = message.producer.kind == ComputeKind::Forward;
  return isActivation ? sizes.activation(message.boundary)
                      : sizes.gradient(message.boundary);
}

} // namespace pipecc::scheduling::detail

#endif // PIPECC_LIB_SCHEDULING_DATAFLOW_H
