//===- ActionIndex.h - Dense numbering of compute actions -------*- C++ -*-===//
//
// Library-private: maps each possible (kind, virtual stage, micro-batch) to a
// slot in a flat vector, so verification and simulation keep per-action state
// without hashing.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_LIB_SCHEDULING_ACTIONINDEX_H
#define PIPECC_LIB_SCHEDULING_ACTIONINDEX_H

#include "pipecc/Scheduling/Problem.h"

#include <vector>

namespace pipecc::scheduling::detail {

class ActionIndex {
public:
  explicit ActionIndex(const ScheduleProblem &problem)
      : problem(problem), virtualStageTable(problem.virtualStages(), -1) {
    for (int q = 0; q < problem.virtualStages(); ++q) {
      auto [stage, chunk] = problem.placement[q];
      virtualStageTable[size_t(stage) * problem.chunks + chunk] = q;
    }
  }

  /// Number of slots: four kinds x virtual stages x micro-batches.
  size_t size() const {
    return size_t(4) * problem.virtualStages() * problem.microbatches;
  }

  /// Whether the action names an existing stage, chunk and micro-batch.
  bool inRange(const ComputeAction &action) const {
    return action.stage >= 0 && action.stage < problem.stages &&
           action.chunk >= 0 && action.chunk < problem.chunks &&
           action.microbatch >= 0 && action.microbatch < problem.microbatches;
  }

  int virtualStage(const ComputeAction &action) const {
    return virtualStageTable[size_t(action.stage) * problem.chunks +
                             action.chunk];
  }

  /// Slot of an in-range action.
  size_t operator()(const ComputeAction &action) const {
    return (size_t(action.kind) * problem.virtualStages() +
            virtualStage(action)) *
               problem.microbatches +
           action.microbatch;
  }

private:
  const ScheduleProblem &problem;
  std::vector<int> virtualStageTable;
};

} // namespace pipecc::scheduling::detail

#endif // PIPECC_LIB_SCHEDULING_ACTIONINDEX_H
