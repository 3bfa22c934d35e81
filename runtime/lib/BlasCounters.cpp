//===- BlasCounters.cpp - The target BLAS's counters, when linked ---------===//
//
// Deliberately does not include Runtime.h: the entry points are declared
// here as weak references with the layout the CPU target exports
// (pipecc_rt_blas_counters: calls, flops, seconds, cpu_seconds), so the
// core runtime links with targets that have no BLAS and reports nothing
// for them.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/StepTimers.h"

namespace {
struct BlasCountersLayout {
  int64_t calls;
  int64_t flops;
  double seconds;
  double cpuSeconds;
};
} // namespace

extern "C" {
__attribute__((weak)) void pipecc_rt_blas_stats(BlasCountersLayout *out);
__attribute__((weak)) const char *pipecc_rt_blas_description(void);
__attribute__((weak)) void pipecc_rt_blas_count_cpu_time(int32_t enabled);
}

namespace pipecc::rt {

std::optional<SgemmCounters> readSgemmCounters() {
  if (!pipecc_rt_blas_stats)
    return std::nullopt;
  BlasCountersLayout raw{0, 0, 0, 0};
  pipecc_rt_blas_stats(&raw);
  SgemmCounters counters;
  counters.calls = raw.calls;
  counters.flops = raw.flops;
  counters.seconds = raw.seconds;
  counters.cpuSeconds = raw.cpuSeconds;
  return counters;
}

bool countSgemmCpuTime() {
  if (!pipecc_rt_blas_count_cpu_time)
    return false;
  pipecc_rt_blas_count_cpu_time(1);
  return true;
}

std::string blasDescription() {
  if (!pipecc_rt_blas_description)
    return "";
  const char *text = pipecc_rt_blas_description();
  return text ? text : "";
}

} // namespace pipecc::rt
