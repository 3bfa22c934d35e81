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
/// What the rank-level search minimises, compared lexicographically: the
/// bytes by which ranks overflow the memory limit, then the rank times from
/// the largest down.
std::vector<double> rankObjective(const Problem &problem,
                                  const Partition &partition) {
  double overflow = 0;
  std::vector<double> times;
  for (const RankCost &rank : partition.ranks) {
    if (problem.memory)
      overflow += double(
          std::max<int64_t>(0, rank.memoryBytes - problem.memory->limitBytes));
    times.push_back(rank.totalSeconds);
  }
  std::sort(times.rbegin(), times.rend());
  times.insert(times.begin(), overflow);
  return times;
}

/// With several virtual stages per rank the bottleneck is a rank's sum of
/// stages, which the segment DP does not see. Local search from `cuts`:
/// moves the one cut (anywhere between its neighbours) that lowers
/// rankObjective most, until no move does; every step strictly improves a
/// finite order, so it ends.
std::vector<int> improveRankBalance(const Problem &problem,
                                    const std::vector<int64_t> &crossing,
                                    std::vector<int> cuts,
                                    std::vector<double> &objective) {
  objective = rankObjective(problem, detail::priceAll(problem, crossing, cuts));
  while (true) {
    std::vector<int> bestCuts;
    std::vector<double> best = objective;
    for (size_t i = 0; i < cuts.size(); ++i) {
      int low = i == 0 ? 0 : cuts[i - 1] + 1;
      int high =
          i + 1 == cuts.size() ? problem.numOps() - 2 : cuts[i + 1] - 1;
      for (int moved = low; moved <= high; ++moved) {
        if (moved == cuts[i])
          continue;
        std::vector<int> candidate = cuts;
        candidate[i] = moved;
        std::vector<double> value = rankObjective(
            problem, detail::priceAll(problem, crossing, candidate));
        if (value < best) {
          best = std::move(value);
          bestCuts = std::move(candidate);
        }
      }
    }
    if (bestCuts.empty())
      return cuts;
    cuts = std::move(bestCuts);
    objective = std::move(best);
  }
}

/// The better of the local searches from the DP's cuts (balanced virtual
/// stages) and from equal op counts, so never worse than `uniform`.
std::vector<int> balanceRanks(const Problem &problem,
                              const std::vector<int64_t> &crossing,
                              std::vector<int> dpCuts) {
  std::vector<int> evenCuts;
  int base = problem.numOps() / problem.stages;
  int remainder = problem.numOps() % problem.stages;
  for (int stage = 0, end = 0; stage + 1 < problem.stages; ++stage) {
    end += base + (stage < remainder ? 1 : 0);
    evenCuts.push_back(end - 1);
  }
  std::vector<double> fromDp, fromEven;
  dpCuts = improveRankBalance(problem, crossing, std::move(dpCuts), fromDp);
  evenCuts =
      improveRankBalance(problem, crossing, std::move(evenCuts), fromEven);
  return fromEven < fromDp ? evenCuts : dpCuts;
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
    double backward = 0;
    for (const BackwardWork &work : op.backward)
      backward += work.seconds;
    computePrefix[i + 1] = computePrefix[i] + op.forwardSeconds +
                           op.backwardInputSeconds + op.backwardWeightSeconds +
                           backward;
    activationPrefix[i + 1] = activationPrefix[i] + op.activationBytes;
    parameterPrefix[i + 1] = parameterPrefix[i] + op.parameterBytes;
  }
  auto memoryOf = [&](int stage, int first, int last) {
    return detail::stageMemoryBytes(
        problem, problem.rankOf(stage), activationPrefix[last + 1] - activationPrefix[first],
        parameterPrefix[last + 1] - parameterPrefix[first] +
            problem.sharedParameterCost(first, last).first);
  };
  StageCostFn timeOf = [&](int stage, int first, int last) -> double {
    if (!detail::fitsMemory(problem, memoryOf(stage, first, last)))
      return kInfinity;
    return (computePrefix[last + 1] - computePrefix[first]) +
           detail::boundarySeconds(problem, crossing, stage, first, last) +
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
  std::vector<int> cuts =
      smallestOptimalCuts(table, numOps, problem.stages, timeOf);
  if (problem.numRanks() < problem.stages)
    cuts = balanceRanks(problem, crossing, std::move(cuts));
  return evaluate(problem, cuts);
}
