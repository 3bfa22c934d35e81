//===- BlasReport.cpp - The target's BLAS as the core runtime sees it -----===//
#include "pipecc/Runtime/BlasReport.h"

#include <cstdio>

// Weak: defined by pipecc_runtime_cpu when the executable links it, null
// otherwise.
#pragma weak pipecc_rt_blas_stats
#pragma weak pipecc_rt_blas_description
#pragma weak pipecc_rt_blas_threads
#pragma weak pipecc_rt_weights_changed
#pragma weak pipecc_rt_packed_weight_stats
#pragma weak pipecc_rt_pack_stale_weights

namespace pipecc::rt {

std::optional<BlasReport> queryBlas() {
  if (!pipecc_rt_blas_stats || !pipecc_rt_blas_description ||
      !pipecc_rt_blas_threads)
    return std::nullopt;
  BlasReport report;
  report.description = pipecc_rt_blas_description();
  report.threads = pipecc_rt_blas_threads();
  pipecc_rt_blas_stats(&report.counters);
  return report;
}

void notifyWeightsChanged() {
  if (pipecc_rt_weights_changed)
    pipecc_rt_weights_changed();
}

void packStaleWeights() {
  if (pipecc_rt_pack_stale_weights)
    pipecc_rt_pack_stale_weights();
}

int64_t packedWeightBytes() {
  if (!pipecc_rt_packed_weight_stats)
    return 0;
  pipecc_rt_packed_weight_counters counters{0, 0};
  pipecc_rt_packed_weight_stats(&counters);
  return counters.bytes;
}

std::string blasReportLine(int rank) {
  std::optional<BlasReport> report = queryBlas();
  char line[512];
  if (!report) {
    std::snprintf(line, sizeof line, "blas rank %d: none linked\n", rank);
    return line;
  }
  const pipecc_rt_blas_counters &counters = report->counters;
  double gflop = static_cast<double>(counters.flops) * 1e-9;
  std::snprintf(line, sizeof line,
                "blas rank %d: %s, %d thread%s; sgemm %lld calls, %.3f GFLOP "
                "in %.3f s, %.1f GFLOP/s\n",
                rank, report->description.c_str(), report->threads,
                report->threads == 1 ? "" : "s",
                static_cast<long long>(counters.calls), gflop,
                counters.seconds,
                counters.seconds > 0 ? gflop / counters.seconds : 0.0);
  return line;
}

} // namespace pipecc::rt
