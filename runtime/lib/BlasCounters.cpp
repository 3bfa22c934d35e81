//===- BlasCounters.cpp - The target BLAS's counters, when linked ---------===//
//
// Deliberately does not include Runtime.h: the entry points are declared
// here as weak references with the layout the CPU target exports
// (pipecc_rt_blas_counters: calls, flops, seconds), so the core runtime
// links with targets that have no BLAS and reports nothing for them.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/StepTimers.h"

namespace {
struct BlasCountersLayout {
  int64_t calls;
  int64_t flops;
  double seconds;
};
} // namespace

extern "C" {
__attribute__((weak)) void pipecc_rt_blas_stats(BlasCountersLayout *out);
__attribute__((weak)) const char *pipecc_rt_blas_description(void);
}

namespace pipecc::rt {

std::optional<SgemmCounters> readSgemmCounters() {
  if (!pipecc_rt_blas_stats)
    return std::nullopt;
  BlasCountersLayout raw{0, 0, 0};
  pipecc_rt_blas_stats(&raw);
  SgemmCounters counters;
  counters.calls = raw.calls;
  counters.flops = raw.flops;
  counters.seconds = raw.seconds;
  return counters;
}

std::string blasDescription() {
  if (!pipecc_rt_blas_description)
    return "";
  const char *text = pipecc_rt_blas_description();
  return text ? text : "";
}

} // namespace pipecc::rt
