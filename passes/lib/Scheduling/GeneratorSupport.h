//===- GeneratorSupport.h - Shared pieces of the generators -----*- C++ -*-===//

#ifndef PIPECC_LIB_SCHEDULING_GENERATORSUPPORT_H
#define PIPECC_LIB_SCHEDULING_GENERATORSUPPORT_H

#include "pipecc/Scheduling/Problem.h"

#include <vector>

namespace pipecc::scheduling::detail {

inline ComputeAction forward(int stage, int chunk, int microbatch) {
  return ComputeAction{ComputeKind::Forward, stage, chunk, microbatch};
}

/// The backward of one micro-batch: fused, or B immediately followed by W.
inline void appendBackward(const ScheduleProblem &problem,
                           std::vector<ComputeAction> &actions, int stage,
                           int chunk, int microbatch) {
  if (!problem.splitBackward) {
    actions.push_back({ComputeKind::Backward, stage, chunk, microbatch});
    return;
  }
  actions.push_back({ComputeKind::BackwardInput, stage, chunk, microbatch});
  actions.push_back({ComputeKind::BackwardWeight, stage, chunk, microbatch});
}

} // namespace pipecc::scheduling::detail

#endif // PIPECC_LIB_SCHEDULING_GENERATORSUPPORT_H
