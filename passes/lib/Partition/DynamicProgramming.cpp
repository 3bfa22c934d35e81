//===- DynamicProgramming.cpp - Exact min-max partitioning ----------------===//
//
// best[s][i] = the smallest possible bottleneck when ops i..N-1 form stages
// s..P-1. Computing it from the back lets the reconstruction walk forward and
// take the smallest feasible cut at each step, which yields the
// lexicographically smallest optimal cuts. Max and min are exact on doubles,
// so the walk compares against the very numbers the recurrence produced.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Partition/Algorithms.h"
#include "Pricing.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <sstream>

using namespace pipecc::partition;

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// cost(stage, first, last) of one stage; +infinity when it is not allowed.
using StageCostFn = std::function<double(int, int, int)>;

struct MinMaxTable {
  // best[s * (N + 1) + i]
  std::vector<double> best;
  int numOps;
  double at(int stage, int first) const {
    return best[size_t(stage) * (numOps + 1) + first];
  }
};

MinMaxTable solveMinMax(int numOps, int numStages, const StageCostFn &cost) {
  MinMaxTable table{std::vector<double>(size_t(numStages + 1) * (numOps + 1),
                                        kInfinity),
                    numOps};
  auto cell = [&](int stage, int first) -> double & {
    return table.best[size_t(stage) * (numOps + 1) + first];
  };
  cell(numStages, numOps) = 0;
  for (int stage = numStages - 1; stage >= 0; --stage) {
    int stagesAfter = numStages - 1 - stage;
    // Stage `stage` starts at `first`, leaving room for one op per stage
    // before it and after it.
    for (int first = stage; first <= numOps - 1 - stagesAfter; ++first) {
      double best = kInfinity;
      for (int last = first; last <= numOps - 1 - stagesAfter; ++last) {
        double rest = table.at(stage + 1, last + 1);
        if (rest >= best)
          continue;
        best = std::min(best, std::max(cost(stage, first, last), rest));
      }
      cell(stage, first) = best;
    }
  }
  return table;
}

std::vector<int> smallestOptimalCuts(const MinMaxTable &table, int numOps,
                                     int numStages, const StageCostFn &cost) {
  double optimum = table.at(0, 0);
  std::vector<int> cuts;
  int first = 0;
  for (int stage = 0; stage + 1 < numStages; ++stage) {
    int stagesAfter = numStages - 1 - stage;
    for (int last = first; last <= numOps - 1 - stagesAfter; ++last) {
      if (std::max(cost(stage, first, last), table.at(stage + 1, last + 1)) <=
          optimum) {
        cuts.push_back(last);
        first = last + 1;
        break;
      }
    }
  }
  return cuts;
}
} // namespace

Result<Partition> pipecc::partition::dynamicProgramming(const Problem &problem) {
  if (Status status = problem.check(); !status)
    return status;
  const int numOps = problem.numOps();
  const std::vector<int64_t> crossing = bytesCrossingEachCut(problem);

  // Prefix sums make each stage's price O(1).
  std::vector<double> computePrefix(numOps + 1, 0);
  std::vector<int64_t> activationPrefix(numOps + 1, 0);
  std::vector<int64_t> parameterPrefix(numOps + 1, 0);
  for (int i = 0; i < numOps; ++i) {
    const OpCost &op = problem.ops[i];
    computePrefix[i + 1] = computePrefix[i] + op.forwardSeconds +
                           op.backwardInputSeconds + op.backwardWeightSeconds;
    activationPrefix[i + 1] = activationPrefix[i] + op.activationBytes;
    parameterPrefix[i + 1] = parameterPrefix[i] + op.parameterBytes;
  }
  auto memoryOf = [&](int stage, int first, int last) {
    return detail::stageMemoryBytes(
        problem, stage, activationPrefix[last + 1] - activationPrefix[first],
        parameterPrefix[last + 1] - parameterPrefix[first] +
            problem.sharedParameterCost(first, last).first);
  };
  StageCostFn timeOf = [&](int stage, int first, int last) -> double {
    if (!detail::fitsMemory(problem, memoryOf(stage, first, last)))
      return kInfinity;
    int64_t bytesIn = first > 0 ? crossing[first - 1] : 0;
    int64_t bytesOut = last < numOps - 1 ? crossing[last] : 0;
    return (computePrefix[last + 1] - computePrefix[first]) +
           2 * problem.link.transferSeconds(bytesIn) +
           2 * problem.link.transferSeconds(bytesOut) +
           problem.sharedParameterCost(first, last).second;
  };

  MinMaxTable table = solveMinMax(numOps, problem.stages, timeOf);
  if (table.at(0, 0) == kInfinity) {
    // Say how far off the limit is: the least memory any partition needs on
    // its fullest stage.
    StageCostFn memoryCost = [&](int stage, int first, int last) {
      return double(memoryOf(stage, first, last));
    };
    MinMaxTable memoryTable = solveMinMax(numOps, problem.stages, memoryCost);
    std::ostringstream error;
    error << "no partition of " << numOps << " ops into " << problem.stages
          << " stages fits the per-stage memory limit of "
          << problem.memory->limitBytes << " bytes; the best partition still "
          << "needs " << int64_t(memoryTable.at(0, 0))
          << " bytes on its fullest stage";
    return Diagnostic{error.str()};
  }
  return evaluate(problem,
                  smallestOptimalCuts(table, numOps, problem.stages, timeOf));
}
