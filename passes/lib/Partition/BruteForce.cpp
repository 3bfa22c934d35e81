//===- BruteForce.cpp - Exhaustive search for tests -----------------------===//
//
// Enumerates cut combinations in lexicographic order and keeps the first one
// with the strictly smallest bottleneck. Only for small problems; it exists
// to check the faster algorithms.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Partition/Algorithms.h"
#include "Pricing.h"

#include <sstream>

using namespace pipecc::partition;

Result<Partition> pipecc::partition::bruteForce(const Problem &problem) {
  if (Status status = problem.check(); !status)
    return status;
  const int numOps = problem.numOps();
  const int numCuts = problem.stages - 1;
  const std::vector<int64_t> crossing = bytesCrossingEachCut(problem);

  std::vector<int> cuts(numCuts);
  for (int i = 0; i < numCuts; ++i)
    cuts[i] = i;
  bool found = false;
  Partition best;
  while (true) {
    Partition candidate = detail::priceAll(problem, crossing, cuts);
    bool fits = detail::fitsMemory(problem, candidate);
    if (fits && (!found || candidate.bottleneck < best.bottleneck)) {
      best = candidate;
      found = true;
    }
    // Next combination: bump the rightmost cut that still has room.
    int i = numCuts - 1;
    while (i >= 0 && cuts[i] == numOps - 1 - (numCuts - i))
      --i;
    if (i < 0)
      break;
    ++cuts[i];
    for (int j = i + 1; j < numCuts; ++j)
      cuts[j] = cuts[j - 1] + 1;
  }
  if (!found) {
    std::ostringstream error;
    error << "no partition of " << numOps << " ops into " << problem.stages
          << " stages fits the per-rank memory limit of "
          << problem.memory->limitBytes << " bytes";
    return Diagnostic{error.str()};
  }
  return best;
}
