//===- CorePlacement.h - Which CPU a rank of one node runs on --*- C++ -*-===//
//
// With more ranks than CPUs (4 stages on a 2-core machine) the kernel moves
// ranks between cores as they block and wake, and a rank that moves finds
// another core's L2 holding other ranks' data: the GPT at P = 4 on 2 cores
// took 68-74 ms a step unpinned, 62-66 ms with consecutive ranks pinned to
// one CPU (docs/design.md, "Ranks beyond the cores are pinned"). With no
// more ranks than CPUs each keeps a core of its own unpinned (P = 2: the
// same 60 ms either way), and the kernel stays free to route around other
// load. Plain C++ without exceptions, so that the compiler can share the
// rule.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_COREPLACEMENT_H
#define PIPECC_RUNTIME_COREPLACEMENT_H

#include <string>
#include <vector>

namespace pipecc::rt {

/// The index into a node's `cpus` usable CPUs that rank `rank` of `ranks`
/// ranks of that node is pinned to, or -1 to leave it to the kernel (no
/// more ranks than CPUs, or no CPUs). Consecutive ranks share a CPU (rank *
/// cpus / ranks): the stages that hand each other activations run where
/// the message was written, and each CPU gets ranks / cpus of them, give or
/// take one. Inline: the compiler's simulator (passes/lib/Transforms/
/// ScheduleSupport.cpp) places the ranks it predicts by the same rule.
inline int cpuSlotOfRank(int rank, int ranks, int cpus) {
  if (cpus <= 0 || ranks <= cpus || rank < 0 || rank >= ranks)
    return -1;
  return static_cast<int>(static_cast<long long>(rank) * cpus / ranks);
}

/// The CPUs this process may run on (sched_getaffinity), in increasing
/// order; empty where that cannot be read.
std::vector<int> usableCpus();

/// Pins every thread of this process, and the threads it starts
/// afterwards, to `cpu`; false with `error` set where the kernel refuses.
bool pinToCpu(int cpu, std::string &error);

/// Where this rank was placed, for --blas: the CPU (-1: not pinned) and the
/// counts that decided it.
struct CorePlacement {
  int cpu = -1;
  int ranks = 0;
  int cpus = 0;
  /// Why a rank that should have been pinned was not.
  std::string error;
};
const CorePlacement &corePlacement();
void recordCorePlacement(const CorePlacement &placement);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_COREPLACEMENT_H
