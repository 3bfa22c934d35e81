//===- BlasReport.h - The target's BLAS as the core runtime sees it -*- C++ -*-===//
//
// The core runtime links no BLAS; the CPU target's pipecc_runtime_cpu
// defines pipecc_rt_blas_stats and friends (Runtime.h). The core reaches
// them through weak references: in an executable without them (the CUDA
// target's) these say so instead of failing to link.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_BLASREPORT_H
#define PIPECC_RUNTIME_BLASREPORT_H

#include "pipecc/Runtime/Runtime.h"

#include <optional>
#include <string>

namespace pipecc::rt {

struct BlasReport {
  /// pipecc_rt_blas_description().
  std::string description;
  int threads = 0;
  pipecc_rt_blas_counters counters = {};
};

/// The BLAS's description, threads and sgemm counters; nullopt when the
/// executable has no BLAS.
std::optional<BlasReport> queryBlas();

/// Parameters may have been written: the target's packed copies of them
/// (pipecc_rt_sgemm_weight) are stale. Nothing without a BLAS.
void notifyWeightsChanged();

/// Packs one of the target's stale weight copies now; false when none is
/// stale (always without a BLAS).
bool packStaleWeight();

/// Floats of the parameter at `param` to update at a time, each run then
/// reported to weightFloatsWritten (pipecc_rt_weight_repack_grain); 0
/// when the target repacks none of its copies (always without a BLAS).
int64_t weightRepackGrain(const float *param);

/// The optimizer wrote floats [begin, end) of `param`: the target repacks
/// its copies of them (pipecc_rt_weight_written; nothing without a BLAS).
void weightFloatsWritten(const float *param, int64_t begin, int64_t end);

/// Bytes of the target's packed weight copies (0 without a BLAS).
int64_t packedWeightBytes();

/// "blas rank <r>: <description>, <t> thread(s); sgemm <n> calls, <g> GFLOP
/// in <s> s, <x> GFLOP/s\n" (or "blas rank <r>: none linked\n"), the line
/// --blas prints per rank.
std::string blasReportLine(int rank);

/// Starts (from empty) or stops the BLAS's per-product counters (nothing
/// without a BLAS).
void recordGemmProducts(bool enabled);

/// The lines --gemms prints for a rank, one per product recorded, most
/// time first: "gemm rank <r>: [<batch> x ]<M>x<N>x<K> <op(A)><op(B)> beta
/// <0|1> <path>, <calls> calls, <t> ms, <x> GFLOP/s, <p>% of sgemm time\n"
/// (ops n or t; path blas, engine, packed-weight or engine-batched), or
/// "gemm rank <r>: no products\n" / "... none linked\n".
std::string gemmProductLines(int rank);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_BLASREPORT_H
