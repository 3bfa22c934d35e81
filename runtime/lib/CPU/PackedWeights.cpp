//===- PackedWeights.cpp - Weights packed once per step, by address -------===//
#include "PackedWeights.h"

using namespace pipecc::rt;

const gemm::PackedMatrix &PackedWeightCache::get(const gemm::Kernel &kernel,
                                                 bool transB, int64_t k,
                                                 int64_t n, const float *b,
                                                 int64_t ldb) {
  // A linear scan: a rank multiplies by tens to hundreds of weights, each
  // call a GEMM of microseconds to milliseconds.
  Entry *entry = nullptr;
  for (const std::unique_ptr<Entry> &held : entries)
    if (held->b == b && held->transB == transB && held->k == k &&
        held->n == n && held->ldb == ldb) {
      entry = held.get();
      break;
    }
  if (!entry) {
    entries.push_back(std::make_unique<Entry>(
        Entry{b, transB, k, n, ldb, /*current=*/false, {}}));
    entry = entries.back().get();
  }
  if (!entry->current) {
    gemm::packB(kernel, transB, k, n, b, ldb, entry->packed);
    entry->current = true;
    ++packCount;
  }
  return entry->packed;
}

int64_t PackedWeightCache::packStale(const gemm::Kernel &kernel) {
  int64_t packed = 0;
  for (const std::unique_ptr<Entry> &held : entries)
    if (!held->current) {
      gemm::packB(kernel, held->transB, held->k, held->n, held->b, held->ldb,
                  held->packed);
      held->current = true;
      ++packCount;
      ++packed;
    }
  return packed;
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
