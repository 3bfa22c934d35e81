//===- Algorithms.h - Partitioning algorithms -------------------*- C++ -*-===//
//
// Several ways to cut a Problem into stages, all returning a Partition priced
// by `evaluate`, or a diagnostic when the problem is invalid or no partition
// fits in memory.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PARTITION_ALGORITHMS_H
#define PIPECC_PARTITION_ALGORITHMS_H

#include "pipecc/Partition/Problem.h"

namespace pipecc::partition {

/// Exact minimum of the bottleneck stage time by dynamic programming over
/// prefix sums, O(P * N^2). Among optimal partitions it returns the one with
/// the lexicographically smallest cuts.
Result<Partition> dynamicProgramming(const Problem &problem);

/// Equal op counts per stage; the first N % P stages get one op more.
Result<Partition> uniform(const Problem &problem);

/// The user's cuts, validated: exactly P-1, strictly increasing, in range.
Result<Partition> manual(const Problem &problem,
                         const std::vector<int> &cutsAfter);

/// Tries every combination of cuts, C(N-1, P-1) of them; a reference for
/// tests. Ties go to the lexicographically smallest cuts.
Result<Partition> bruteForce(const Problem &problem);

} // namespace pipecc::partition

#endif // PIPECC_PARTITION_ALGORITHMS_H
