//===- SimplePartitioners.cpp - Uniform and manual cuts -------------------===//
//
// Baselines the DP is compared against, and the user's own choice.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Partition/Algorithms.h"

using namespace pipecc::partition;

Result<Partition> pipecc::partition::uniform(const Problem &problem) {
  if (Status status = problem.check(); !status)
    return status;
  int numOps = problem.numOps();
  int base = numOps / problem.stages;
  int remainder = numOps % problem.stages;
  std::vector<int> cuts;
  int end = 0;
  for (int stage = 0; stage + 1 < problem.stages; ++stage) {
    end += base + (stage < remainder ? 1 : 0);
    cuts.push_back(end - 1);
  }
  return evaluate(problem, cuts);
}

Result<Partition> pipecc::partition::manual(const Problem &problem,
                                            const std::vector<int> &cutsAfter) {
  if (Status status = problem.check(); !status)
    return status;
  return evaluate(problem, cutsAfter);
}
