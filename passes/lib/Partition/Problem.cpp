//===- Problem.cpp - Partitioning problem checks and pricing --------------===//

#include "pipecc/Partition/Problem.h"
#include "Pricing.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace pipecc::partition;

namespace {
bool isNonNegativeFinite(double value) {
  return std::isfinite(value) && value >= 0;
}

bool nearlyEqual(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)});
}
} // namespace

Status Problem::check() const {
  std::ostringstream error;
  if (stages < 1) {
    error << "the number of stages must be at least 1, got " << stages;
    return Status::failure(error.str());
  }
  if (!placement.empty()) {
    if (int(placement.size()) != stages) {
      error << "the placement gives ranks for " << placement.size()
            << " virtual stages, expected " << stages;
      return Status::failure(error.str());
    }
    std::vector<bool> used(stages, false);
    for (int rank : placement) {
      if (rank < 0 || rank >= stages) {
        error << "the placement puts a virtual stage on rank " << rank
              << ", outside [0, " << stages - 1 << "]";
        return Status::failure(error.str());
      }
      used[rank] = true;
    }
    if (std::find(used.begin(), used.begin() + numRanks(), false) !=
        used.begin() + numRanks()) {
      error << "the placement leaves a rank below " << numRanks() - 1
            << " without a virtual stage";
      return Status::failure(error.str());
    }
  }
  if (numOps() < stages) {
    error << "cannot cut " << numOps() << " ops into " << stages
          << " non-empty stages";
    return Status::failure(error.str());
  }
  for (int i = 0; i < numOps(); ++i) {
    const OpCost &op = ops[i];
    if (!isNonNegativeFinite(op.forwardSeconds) ||
        !isNonNegativeFinite(op.backwardInputSeconds) ||
        !isNonNegativeFinite(op.backwardWeightSeconds) ||
        op.activationBytes < 0 || op.parameterBytes < 0) {
      error << "op " << i << " ('" << op.name
            << "') has a negative or non-finite time or byte count";
      return Status::failure(error.str());
    }
  }
  for (size_t t = 0; t < tensors.size(); ++t) {
    const Tensor &tensor = tensors[t];
    if (tensor.producer < 0 || tensor.producer >= numOps()) {
      error << "tensor " << t << " has producer " << tensor.producer
            << " outside [0, " << numOps() - 1 << "]";
      return Status::failure(error.str());
    }
    if (tensor.consumers.empty()) {
      error << "tensor " << t << " (produced by op " << tensor.producer
            << ") has no consumer";
      return Status::failure(error.str());
    }
    for (int consumer : tensor.consumers) {
      if (consumer <= tensor.producer || consumer >= numOps()) {
        error << "tensor " << t << " goes from op " << tensor.producer
              << " to op " << consumer
              << "; consumers must come later in the topological order and "
                 "lie in [0, "
              << numOps() - 1 << "]";
        return Status::failure(error.str());
      }
    }
    if (tensor.bytes < 0) {
      error << "tensor " << t << " has negative size " << tensor.bytes;
      return Status::failure(error.str());
    }
  }
  if (!(std::isfinite(link.bandwidthBytesPerSecond) &&
        link.bandwidthBytesPerSecond > 0) ||
      !isNonNegativeFinite(link.latencySeconds)) {
    error << "link '" << link.name
          << "' needs a positive bandwidth and a non-negative latency";
    return Status::failure(error.str());
  }
  if (microbatches < 1) {
    error << "the number of micro-batches must be at least 1, got "
          << microbatches;
    return Status::failure(error.str());
  }
  for (size_t p = 0; p < sharedParameters.size(); ++p) {
    const SharedParameter &shared = sharedParameters[p];
    if (shared.bytes < 0 || shared.readers.empty() ||
        std::any_of(shared.readers.begin(), shared.readers.end(),
                    [&](int op) { return op < 0 || op >= numOps(); })) {
      error << "shared parameter " << p
            << " needs readers in [0, " << numOps() - 1
            << "] and a non-negative size";
      return Status::failure(error.str());
    }
  }
  if (memory) {
    if (memory->limitBytes < 0 ||
        !isNonNegativeFinite(memory->parameterStateMultiplier)) {
      error << "the memory limit and parameter-state multiplier must be "
               "non-negative";
      return Status::failure(error.str());
    }
    if (int(memory->inFlightMicrobatches.size()) != numRanks()) {
      error << "the memory constraint gives in-flight micro-batch counts for "
            << memory->inFlightMicrobatches.size() << " ranks, expected "
            << numRanks();
      return Status::failure(error.str());
    }
    for (int count : memory->inFlightMicrobatches) {
      if (count < 0) {
        error << "in-flight micro-batch counts must be non-negative, got "
              << count;
        return Status::failure(error.str());
      }
    }
  }
  return Status::success();
}

int Problem::numRanks() const {
  if (placement.empty())
    return stages;
  return *std::max_element(placement.begin(), placement.end()) + 1;
}

std::pair<int64_t, double>
Problem::sharedParameterCost(int first, int last,
                             const std::vector<int> *rankOfOp) const {
  int64_t bytes = 0;
  double seconds = 0;
  for (const SharedParameter &shared : sharedParameters) {
    bool inside = false, outside = false;
    for (int op : shared.readers)
      if (op >= first && op <= last)
        inside = true;
      else if (!rankOfOp || (*rankOfOp)[op] != (*rankOfOp)[first])
        outside = true;
    if (!inside)
      continue;
    bytes += shared.bytes;
    if (outside)
      seconds += 2 * link.transferSeconds(shared.bytes) / microbatches;
  }
  return {bytes, seconds};
}

std::vector<int64_t>
pipecc::partition::bytesCrossingEachCut(const Problem &problem) {
  int numCuts = std::max(problem.numOps() - 1, 0);
  // Difference array: a tensor crosses cuts producer .. lastConsumer - 1.
  std::vector<int64_t> delta(numCuts + 1, 0);
  for (const Tensor &tensor : problem.tensors) {
    int lastConsumer =
        *std::max_element(tensor.consumers.begin(), tensor.consumers.end());
    delta[tensor.producer] += tensor.bytes;
    delta[lastConsumer] -= tensor.bytes;
  }
  std::vector<int64_t> crossing(numCuts, 0);
  int64_t running = 0;
  for (int cut = 0; cut < numCuts; ++cut) {
    running += delta[cut];
    crossing[cut] = running;
  }
  return crossing;
}

int64_t detail::stageMemoryBytes(const Problem &problem, int rank,
                                 int64_t activationBytes,
                                 int64_t parameterBytes) {
  if (!problem.memory)
    return 0;
  const MemoryConstraint &memory = *problem.memory;
  return activationBytes * memory.inFlightMicrobatches[rank] +
         int64_t(std::llround(double(parameterBytes) *
                              memory.parameterStateMultiplier));
}

bool detail::fitsMemory(const Problem &problem, int64_t memoryBytes) {
  return !problem.memory || memoryBytes <= problem.memory->limitBytes;
}

double detail::boundarySeconds(const Problem &problem,
                               const std::vector<int64_t> &crossing,
                               int stageIndex, int first, int last) {
  double seconds = 0;
  int rank = problem.rankOf(stageIndex);
  if (first > 0 && problem.rankOf(stageIndex - 1) != rank)
    seconds += 2 * problem.link.transferSeconds(crossing[first - 1]);
  if (last < problem.numOps() - 1 && problem.rankOf(stageIndex + 1) != rank)
    seconds += 2 * problem.link.transferSeconds(crossing[last]);
  return seconds;
}

StageCost detail::priceStage(const Problem &problem,
                             const std::vector<int64_t> &crossing,
                             int stageIndex, int first, int last,
                             const std::vector<int> *rankOfOp) {
  StageCost stage;
  stage.rank = problem.rankOf(stageIndex);
  stage.firstOp = first;
  stage.lastOp = last;
  for (int i = first; i <= last; ++i) {
    const OpCost &op = problem.ops[i];
    stage.forwardSeconds += op.forwardSeconds;
    stage.backwardInputSeconds += op.backwardInputSeconds;
    stage.backwardWeightSeconds += op.backwardWeightSeconds;
    for (const BackwardWork &work : op.backward)
      (isBackwardInput(work.reachesOp, first) ? stage.backwardInputSeconds
                                              : stage.backwardWeightSeconds) +=
          work.seconds;
    stage.activationBytes += op.activationBytes;
    stage.parameterBytes += op.parameterBytes;
  }
  auto [sharedBytes, allReduceSeconds] =
      problem.sharedParameterCost(first, last, rankOfOp);
  stage.parameterBytes += sharedBytes;
  stage.bytesIn = first > 0 ? crossing[first - 1] : 0;
  stage.bytesOut = last < problem.numOps() - 1 ? crossing[last] : 0;
  stage.communicationSeconds =
      boundarySeconds(problem, crossing, stageIndex, first, last) +
      allReduceSeconds;
  stage.totalSeconds = stage.forwardSeconds + stage.backwardInputSeconds +
                       stage.backwardWeightSeconds + stage.communicationSeconds;
  stage.memoryBytes = stageMemoryBytes(problem, stage.rank,
                                       stage.activationBytes,
                                       stage.parameterBytes);
  return stage;
}

Partition detail::priceAll(const Problem &problem,
                           const std::vector<int64_t> &crossing,
                           const std::vector<int> &cutsAfter) {
  Partition partition;
  partition.cutsAfter = cutsAfter;
  std::vector<int> rankOfOp(problem.numOps());
  for (int stage = 0, first = 0; stage < problem.stages; ++stage) {
    int last = stage + 1 < problem.stages ? cutsAfter[stage]
                                          : problem.numOps() - 1;
    for (int op = first; op <= last; ++op)
      rankOfOp[op] = problem.rankOf(stage);
    first = last + 1;
  }
  partition.ranks.resize(problem.numRanks());
  int first = 0;
  for (int stage = 0; stage < problem.stages; ++stage) {
    int last = stage + 1 < problem.stages ? cutsAfter[stage]
                                          : problem.numOps() - 1;
    StageCost cost = priceStage(problem, crossing, stage, first, last,
                                problem.placement.empty() ? nullptr
                                                          : &rankOfOp);
    RankCost &rank = partition.ranks[cost.rank];
    rank.computeSeconds += cost.forwardSeconds + cost.backwardInputSeconds +
                           cost.backwardWeightSeconds;
    rank.communicationSeconds += cost.communicationSeconds;
    rank.totalSeconds += cost.totalSeconds;
    rank.memoryBytes += cost.memoryBytes;
    partition.stages.push_back(cost);
    first = last + 1;
  }
  for (const RankCost &rank : partition.ranks)
    partition.bottleneck = std::max(partition.bottleneck, rank.totalSeconds);
  return partition;
}

bool detail::fitsMemory(const Problem &problem, const Partition &partition) {
  for (const RankCost &rank : partition.ranks)
    if (!fitsMemory(problem, rank.memoryBytes))
      return false;
  return true;
}

std::string detail::formatCuts(const std::vector<int> &cutsAfter) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < cutsAfter.size(); ++i)
    out << (i ? ", " : "") << cutsAfter[i];
  out << "]";
  return out.str();
}

Result<Partition> pipecc::partition::evaluate(const Problem &problem,
                                              const std::vector<int> &cutsAfter) {
  std::ostringstream error;
  if (int(cutsAfter.size()) != problem.stages - 1) {
    error << "expected " << problem.stages - 1 << " cuts for "
          << problem.stages << " stages, got " << cutsAfter.size() << " "
          << detail::formatCuts(cutsAfter);
    return Diagnostic{error.str()};
  }
  for (size_t i = 0; i < cutsAfter.size(); ++i) {
    if (cutsAfter[i] < 0 || cutsAfter[i] > problem.numOps() - 2) {
      error << "cut " << i << " after op " << cutsAfter[i]
            << " is out of range [0, " << problem.numOps() - 2 << "]";
      return Diagnostic{error.str()};
    }
    if (i > 0 && cutsAfter[i] <= cutsAfter[i - 1]) {
      error << "cuts must be strictly increasing (every stage non-empty), got "
            << detail::formatCuts(cutsAfter);
      return Diagnostic{error.str()};
    }
  }
  Partition partition =
      detail::priceAll(problem, bytesCrossingEachCut(problem), cutsAfter);
  for (size_t r = 0; r < partition.ranks.size(); ++r) {
    const RankCost &rank = partition.ranks[r];
    if (detail::fitsMemory(problem, rank.memoryBytes))
      continue;
    if (problem.placement.empty()) {
      const StageCost &stage = partition.stages[r];
      error << "stage " << r << " (ops " << stage.firstOp << ".."
            << stage.lastOp << ") needs " << stage.memoryBytes
            << " bytes, over the limit of " << problem.memory->limitBytes;
    } else {
      error << "rank " << r << " needs " << rank.memoryBytes
            << " bytes for its virtual stages, over the limit of "
            << problem.memory->limitBytes;
    }
    return Diagnostic{error.str()};
  }
  return partition;
}

Status pipecc::partition::verify(const Problem &problem,
                                 const Partition &partition) {
  Result<Partition> expected = evaluate(problem, partition.cutsAfter);
  if (!expected)
    return Status::failure(expected.message());
  if (partition.stages.size() != expected->stages.size())
    return Status::failure("the partition records " +
                           std::to_string(partition.stages.size()) +
                           " stages, expected " +
                           std::to_string(expected->stages.size()));
  for (size_t s = 0; s < partition.stages.size(); ++s) {
    const StageCost &have = partition.stages[s];
    const StageCost &want = expected->stages[s];
    if (have.firstOp != want.firstOp || have.lastOp != want.lastOp ||
        have.bytesIn != want.bytesIn || have.bytesOut != want.bytesOut ||
        !nearlyEqual(have.totalSeconds, want.totalSeconds))
      return Status::failure("stage " + std::to_string(s) +
                             " does not match its recomputed cost");
  }
  if (!nearlyEqual(partition.bottleneck, expected->bottleneck))
    return Status::failure("bottleneck " + std::to_string(partition.bottleneck) +
                           " does not match the recomputed " +
                           std::to_string(expected->bottleneck));
  return Status::success();
}
