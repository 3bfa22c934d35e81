//===- StepTimers.h - Where each step's time goes (--timers) ----*- C++ -*-===//
//
// `out/launch --timers`: every rank measures, per step, its compute (F/B/W
// actions), message posts and waits, optimizer (with the loss reduction and
// gradient all-reduces) and the rest, plus the target BLAS's sgemm counters
// when it reports them; rank 0 prints every rank's lines at exit in the
// format docs/cli.md ("Timers") describes.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_STEPTIMERS_H
#define PIPECC_RUNTIME_STEPTIMERS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::rt {

struct StepTimes;

/// The target BLAS's sgemm counters since the process started, when the
/// executable links a BLAS that exports pipecc_rt_blas_stats (weakly
/// referenced: a target without one links and reports nothing).
struct SgemmCounters {
  int64_t calls = 0, flops = 0;
  double seconds = 0;
  /// The thread's CPU time in them, once countSgemmCpuTime() turned it on.
  double cpuSeconds = 0;
};
std::optional<SgemmCounters> readSgemmCounters();
/// Counts the thread's CPU time in sgemm from now on (for a rank sharing
/// its CPU); false when the executable's BLAS has no such counter.
bool countSgemmCpuTime();
/// pipecc_rt_blas_description() when linked, else "".
std::string blasDescription();

/// This rank's --timers lines: one per step, then the mean and the median
/// over the steps after the first (over all steps when there is one).
std::string stepTimerLines(int rank, const std::vector<StepTimes> &steps);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_STEPTIMERS_H
