//===- Pricing.h - Stage pricing shared by the algorithms -------*- C++ -*-===//
//
// Library-private helpers: price a stage, and say whether it fits in memory,
// without treating an overflowing stage as an error (the searches skip those).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_LIB_PARTITION_PRICING_H
#define PIPECC_LIB_PARTITION_PRICING_H

#include "pipecc/Partition/Problem.h"

#include <string>
#include <vector>

namespace pipecc::partition::detail {

/// Prices virtual stage `stageIndex` holding ops [first, last]; `crossing`
/// comes from bytesCrossingEachCut, `rankOfOp` (optional) places every op
/// for the shared parameters' all-reduces.
StageCost priceStage(const Problem &problem,
                     const std::vector<int64_t> &crossing, int stageIndex,
                     int first, int last,
                     const std::vector<int> *rankOfOp = nullptr);

/// Seconds of the messages at virtual stage `stageIndex`'s two cuts: only
/// cuts to a virtual stage on another rank send anything.
double boundarySeconds(const Problem &problem,
                       const std::vector<int64_t> &crossing, int stageIndex,
                       int first, int last);

/// Memory a virtual stage holding these totals needs on rank `rank` under
/// the problem's constraint.
int64_t stageMemoryBytes(const Problem &problem, int rank,
                         int64_t activationBytes, int64_t parameterBytes);

bool fitsMemory(const Problem &problem, int64_t memoryBytes);
/// Whether every rank of a priced partition fits.
bool fitsMemory(const Problem &problem, const Partition &partition);

/// Prices all stages of valid cuts; no memory check.
Partition priceAll(const Problem &problem,
                   const std::vector<int64_t> &crossing,
                   const std::vector<int> &cutsAfter);

/// "[3, 7]": cuts in messages.
std::string formatCuts(const std::vector<int> &cutsAfter);

} // namespace pipecc::partition::detail

#endif // PIPECC_LIB_PARTITION_PRICING_H
