//===- PackedWeights.cpp - Weights packed once per step, by address -------===//
#include "PackedWeights.h"

using namespace pipecc::rt;

PackedWeightCache::Entry &PackedWeightCache::find(bool transB, int64_t k,
                                                  int64_t n, const float *b,
                                                  int64_t ldb) {
  // A linear scan: a rank multiplies by tens to hundreds of weights, each
  // call a GEMM of microseconds to milliseconds.
  for (const std::unique_ptr<Entry> &held : entries)
    if (held->b == b && held->transB == transB && held->k == k &&
        held->n == n && held->ldb == ldb)
      return *held;
  entries.push_back(std::make_unique<Entry>(
      Entry{b, transB, k, n, ldb, /*current=*/false, {}}));
  return *entries.back();
}

void PackedWeightCache::multiply(const gemm::Kernel &kernel, bool transA,
                                 bool transB, int64_t m, int64_t n, int64_t k,
                                 float alpha, const float *a, int64_t lda,
                                 const float *b, int64_t ldb, float beta,
                                 float *c, int64_t ldc,
                                 const gemm::Epilogue &epilogue) {
  Entry &entry = find(transB, k, n, b, ldb);
  ++entry.products;
  if (entry.current)
    return gemm::gemmPackedB(kernel, transA, m, alpha, a, lda, entry.packed,
                             beta, c, ldc, epilogue);
  gemm::gemmPackingB(kernel, transA, m, alpha, a, lda, transB, k, n, b, ldb,
                     entry.packed, beta, c, ldc, epilogue);
  entry.current = true;
  entry.packedInWait = false;
  entry.packedBeforeWaits = !waited;
  ++packCount;
}

bool PackedWeightCache::packOneStale(const gemm::Kernel &kernel) {
  waited = true;
  for (const std::unique_ptr<Entry> &held : entries)
    if (!held->current) {
      gemm::packB(kernel, held->transB, held->k, held->n, held->b, held->ldb,
                  held->packed);
      held->current = true;
      held->packedInWait = true;
      held->packedBeforeWaits = false;
      ++packCount;
      return true;
    }
  return false;
}

void PackedWeightCache::invalidate() {
  for (const std::unique_ptr<Entry> &held : entries) {
    held->current = false;
    held->rowsRepacked = 0;
    held->productsBefore = held->products;
    held->products = 0;
  }
  waited = false;
}

bool PackedWeightCache::Entry::repackedByOptimizer(const float *param) const {
  // Packed before (its storage holds this shape) during a product of the
  // last step, which paid the whole packing from memory; the optimizer
  // does it from cache for about half (docs/design.md, "Packed weights").
  // So moves a copy one product read, and one several products read (M >
  // 1) where its product came before the rank's first wait: no wait could
  // have packed it (every copy at P = 1, which never waits; a first
  // stage's forward copies). One packed after a wait began shares its
  // packing among its products and may fall in the rank's slack, and one a
  // wait packed costs the step nothing: both stay.
  return b == param && !packedInWait &&
         (productsBefore == 1 || (productsBefore > 1 && packedBeforeWaits)) &&
         k > 0 && n > 0 && packed.rows() == k && packed.columns() == n;
}

int64_t PackedWeightCache::repackGrain(const gemm::Kernel &kernel,
                                       const float *param) const {
  for (const std::unique_ptr<Entry> &held : entries)
    if (held->repackedByOptimizer(param))
      return gemm::repackRowGrain(kernel) * held->ldb;
  return 0;
}

void PackedWeightCache::rowsWritten(const gemm::Kernel &kernel,
                                    const float *param, int64_t begin,
                                    int64_t end) {
  for (const std::unique_ptr<Entry> &held : entries) {
    Entry &entry = *held;
    if (!entry.repackedByOptimizer(param) || entry.rowsRepacked < 0 ||
        entry.current)
      continue;
    int64_t rows = entry.storedRows(), grain = gemm::repackRowGrain(kernel);
    int64_t first = begin / entry.ldb;
    int64_t last = std::min(rows, (end + entry.ldb - 1) / entry.ldb);
    if (first >= rows)
      continue;
    // Whole rows, in order; whole panels where B is transposed. Anything
    // else leaves the copy stale (packed at its next product).
    bool rowAligned = begin % entry.ldb == 0 &&
                      (end % entry.ldb == 0 || last == rows);
    bool panelAligned = !entry.transB ||
                        (first % grain == 0 && (last % grain == 0 ||
                                                last == rows));
    if (!rowAligned || !panelAligned || first != entry.rowsRepacked) {
      entry.rowsRepacked = -1;
      continue;
    }
    gemm::repackBRows(kernel, entry.transB, entry.b, entry.ldb, first, last,
                      entry.packed);
    entry.rowsRepacked = last;
    if (last == rows) {
      entry.current = true;
      ++packCount;
    }
  }
}

int64_t PackedWeightCache::bytes() const {
  int64_t total = 0;
  for (const std::unique_ptr<Entry> &held : entries)
    total += held->packed.bytes();
  return total;
}
