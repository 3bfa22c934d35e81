//===- BlasReport.cpp - The target's BLAS as the core runtime sees it -----===//
#include "pipecc/Runtime/BlasReport.h"
#include "pipecc/Runtime/CorePlacement.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

// Weak: defined by pipecc_runtime_cpu when the executable links it, null
// otherwise.
#pragma weak pipecc_rt_blas_stats
#pragma weak pipecc_rt_blas_description
#pragma weak pipecc_rt_blas_threads
#pragma weak pipecc_rt_weights_changed
#pragma weak pipecc_rt_packed_weight_stats
#pragma weak pipecc_rt_pack_stale_weight
#pragma weak pipecc_rt_weight_repack_grain
#pragma weak pipecc_rt_weight_written
#pragma weak pipecc_rt_blas_record_products
#pragma weak pipecc_rt_blas_products

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

bool packStaleWeight() {
  return pipecc_rt_pack_stale_weight && pipecc_rt_pack_stale_weight() != 0;
}

int64_t weightRepackGrain(const float *param) {
  return pipecc_rt_weight_repack_grain ? pipecc_rt_weight_repack_grain(param)
                                       : 0;
}

void weightFloatsWritten(const float *param, int64_t begin, int64_t end) {
  if (pipecc_rt_weight_written)
    pipecc_rt_weight_written(param, begin, end);
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
  const CorePlacement &placement = corePlacement();
  std::string where;
  if (placement.cpu >= 0)
    where = " on CPU " + std::to_string(placement.cpu) + " (" +
            std::to_string(placement.ranks) + " ranks on " +
            std::to_string(placement.cpus) +
            (placement.cpus == 1 ? " CPU)" : " CPUs)");
  else if (!placement.error.empty())
    where = " unpinned (" + placement.error + ")";
  std::snprintf(line, sizeof line,
                "blas rank %d: %s, %d thread%s%s; sgemm %lld calls, %.3f "
                "GFLOP in %.3f s, %.1f GFLOP/s\n",
                rank, report->description.c_str(), report->threads,
                report->threads == 1 ? "" : "s", where.c_str(),
                static_cast<long long>(counters.calls), gflop,
                counters.seconds,
                counters.seconds > 0 ? gflop / counters.seconds : 0.0);
  return line;
}

void recordGemmProducts(bool enabled) {
  if (pipecc_rt_blas_record_products)
    pipecc_rt_blas_record_products(enabled ? 1 : 0);
}

namespace {
const char *gemmPathName(int32_t path) {
  switch (path) {
  case PIPECC_RT_GEMM_BLAS:
    return "blas";
  case PIPECC_RT_GEMM_ENGINE:
    return "engine";
  case PIPECC_RT_GEMM_PACKED_WEIGHT:
    return "packed-weight";
  case PIPECC_RT_GEMM_ENGINE_BATCHED:
    return "engine-batched";
  default:
    return "unknown";
  }
}
} // namespace

std::string gemmProductLines(int rank) {
  char line[256];
  if (!pipecc_rt_blas_products) {
    std::snprintf(line, sizeof line, "gemm rank %d: none linked\n", rank);
    return line;
  }
  std::vector<pipecc_rt_gemm_product> products(
      static_cast<size_t>(pipecc_rt_blas_products(nullptr, 0)));
  products.resize(static_cast<size_t>(pipecc_rt_blas_products(
      products.data(), static_cast<int64_t>(products.size()))));
  // Where the time went first; equal times keep the runtime's order (a
  // total order through the position: std::stable_sort's buffer is
  // std::get_temporary_buffer, which libstdc++ 12 marks deprecated and
  // clang warns about in the fuzz build).
  std::vector<std::pair<pipecc_rt_gemm_product, size_t>> ranked;
  for (size_t i = 0; i < products.size(); ++i)
    ranked.emplace_back(products[i], i);
  std::sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) {
    if (a.first.seconds != b.first.seconds)
      return a.first.seconds > b.first.seconds;
    return a.second < b.second;
  });
  for (size_t i = 0; i < ranked.size(); ++i)
    products[i] = ranked[i].first;
  double total = 0;
  for (const pipecc_rt_gemm_product &product : products)
    total += product.seconds;
  std::string text;
  for (const pipecc_rt_gemm_product &product : products) {
    double flops = 2.0 * double(product.m) * double(product.n) *
                   double(product.k) * double(product.batch) *
                   double(product.calls);
    char batch[32] = "";
    if (product.batch != 1)
      std::snprintf(batch, sizeof batch, "%lld x ",
                    static_cast<long long>(product.batch));
    std::snprintf(
        line, sizeof line,
        "gemm rank %d: %s%lldx%lldx%lld %c%c beta %d %s, %lld calls, %.3f ms, "
        "%.1f GFLOP/s, %.1f%% of sgemm time\n",
        rank, batch, static_cast<long long>(product.m),
        static_cast<long long>(product.n), static_cast<long long>(product.k),
        product.trans_a ? 't' : 'n', product.trans_b ? 't' : 'n',
        product.accumulate ? 1 : 0, gemmPathName(product.path),
        static_cast<long long>(product.calls), product.seconds * 1e3,
        product.seconds > 0 ? flops / product.seconds * 1e-9 : 0.0,
        total > 0 ? 100.0 * product.seconds / total : 0.0);
    text += line;
  }
  if (products.empty()) {
    std::snprintf(line, sizeof line, "gemm rank %d: no products\n", rank);
    text = line;
  }
  return text;
}

} // namespace pipecc::rt
