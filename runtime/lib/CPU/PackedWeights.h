//===- PackedWeights.h - Weights packed once per step, by address -*- C++ -*-===//
//
// pipecc_rt_sgemm_weight's memory: the packed op(B) of every parameter a
// rank multiplies by, keyed by the parameter's address and how it is read
// (transposed or not, its shape and row stride: the forward and the input
// gradient read one weight both ways). Entries turn stale when parameters
// may have been written (pipecc_rt_weights_changed: the optimizer step,
// the start of every step) and are repacked into their own storage during
// their next product (gemmPackingB) or by a wait (packOneStale), so a rank
// holds one packed copy per (weight, reading). A copy that one product per
// step read, packed during that product, is instead repacked by the
// optimizer as it writes the weight (rowsWritten), from the rows still in
// cache, and so is a copy that a product packed before the rank's first
// wait of the step, which no wait could have packed (docs/design.md,
// "Packed weights").
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPU_PACKEDWEIGHTS_H
#define PIPECC_RUNTIME_CPU_PACKEDWEIGHTS_H

#include "Gemm/PackedGemm.h"

#include <memory>
#include <vector>

namespace pipecc::rt {

class PackedWeightCache {
public:
  /// C = alpha * op(A) * op(B) + beta * C (gemmPackedB) through the packed
  /// copy of this reading of `b`, packing it during the product
  /// (gemmPackingB) where it is stale or new.
  void multiply(const gemm::Kernel &kernel, bool transA, bool transB,
                int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                int64_t lda, const float *b, int64_t ldb, float beta,
                float *c, int64_t ldc, const gemm::Epilogue &epilogue);
  /// Every held copy is stale (its storage is kept for the repack).
  void invalidate();
  /// Repacks the first stale copy now (the weights a rank multiplied by in
  /// an earlier step, in the order of their first products then, which
  /// this step will read again); false when none is stale.
  bool packOneStale(const gemm::Kernel &kernel);
  /// Floats of `param` the optimizer should update at a time and then
  /// report to rowsWritten: whole panels of its copies to repack there
  /// (a copy packed in a wait is left to the waits); 0 when none is.
  int64_t repackGrain(const gemm::Kernel &kernel, const float *param) const;
  /// Floats [begin, end) of `param` were just written (after invalidate,
  /// in order from 0): repacks what the copies repackGrain counted hold
  /// of them; a copy is current again once all its rows are.
  void rowsWritten(const gemm::Kernel &kernel, const float *param,
                   int64_t begin, int64_t end);
  /// Frees every copy (the packing count stays).
  void release() { entries.clear(); }
  /// Bytes of packed copies held.
  int64_t bytes() const;
  /// Packings done since the process started.
  int64_t packs() const { return packCount; }

private:
  struct Entry {
    const float *b;
    bool transB;
    int64_t k, n, ldb;
    bool current;
    gemm::PackedMatrix packed;
    /// Whether its last packing was a wait's (packOneStale), and whether
    /// it was a product's that ran before its step's first wait (no wait
    /// could have packed it). Both hold while the optimizer repacks it.
    bool packedInWait = false;
    bool packedBeforeWaits = false;
    /// Products through it since the last invalidate, and in the interval
    /// before (a step's).
    int64_t products = 0, productsBefore = 0;
    /// Rows of B repacked by rowsWritten since invalidate (-1: a gap).
    int64_t rowsRepacked = 0;
    int64_t storedRows() const { return transB ? n : k; }
    /// Whether the optimizer repacks it (repackGrain, rowsWritten).
    bool repackedByOptimizer(const float *param) const;
  };
  /// The entry of this reading of `b`, a new stale one if none is held.
  Entry &find(bool transB, int64_t k, int64_t n, const float *b, int64_t ldb);
  std::vector<std::unique_ptr<Entry>> entries;
  int64_t packCount = 0;
  /// Whether a wait has packed (or found nothing stale to pack) since the
  /// last invalidate: the rank has waited in this step.
  bool waited = false;
};

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_CPU_PACKEDWEIGHTS_H
