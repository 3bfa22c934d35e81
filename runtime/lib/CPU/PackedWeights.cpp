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
  if (entry.current)
    return gemm::gemmPackedB(kernel, transA, m, alpha, a, lda, entry.packed,
                             beta, c, ldc, epilogue);
  gemm::gemmPackingB(kernel, transA, m, alpha, a, lda, transB, k, n, b, ldb,
                     entry.packed, beta, c, ldc, epilogue);
  entry.current = true;
  ++packCount;
}

bool PackedWeightCache::packOneStale(const gemm::Kernel &kernel) {
  for (const std::unique_ptr<Entry> &held : entries)
    if (!held->current) {
      gemm::packB(kernel, held->transB, held->k, held->n, held->b, held->ldb,
                  held->packed);
      held->current = true;
      ++packCount;
      return true;
    }
  return false;
}

void PackedWeightCache::invalidate() {
  for (const std::unique_ptr<Entry> &held : entries)
    held->current = false;
}

int64_t PackedWeightCache::bytes() const {
  int64_t total = 0;
  for (const std::unique_ptr<Entry> &held : entries)
    total += held->packed.bytes();
  return total;
}
