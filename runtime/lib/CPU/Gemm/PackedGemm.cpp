//===- PackedGemm.cpp - PLACEHOLDER until helper G's engine lands ----------===//
// Lead's plumbing stand-in: op(B) copied as K x N row-major, multiplied by
// the BLAS. Replaced by the real engine on merge.
#include "PackedGemm.h"

#include <cblas.h>
#include <vector>

#ifndef PIPECC_BLAS_SYMBOL_PREFIX
#define PIPECC_BLAS_SYMBOL_PREFIX
#endif
#define PIPECC_BLAS_CONCAT2(prefix, name) prefix##name
#define PIPECC_BLAS_CONCAT(prefix, name) PIPECC_BLAS_CONCAT2(prefix, name)
#define BLAS(name) PIPECC_BLAS_CONCAT(PIPECC_BLAS_SYMBOL_PREFIX, name)

namespace pipecc::rt::gemm {
struct Kernel {
  const char *name;
};
struct PackedMatrix::Storage {
  std::vector<float> data;
};
PackedMatrix::PackedMatrix() = default;
PackedMatrix::~PackedMatrix() = default;
PackedMatrix::PackedMatrix(PackedMatrix &&) noexcept = default;
PackedMatrix &PackedMatrix::operator=(PackedMatrix &&) noexcept = default;
int64_t PackedMatrix::bytes() const {
  return storage ? static_cast<int64_t>(storage->data.size() * 4) : 0;
}
static const Kernel placeholder{"placeholder"};
const Kernel *selectPackedGemmKernel() { return &placeholder; }
const char *kernelName(const Kernel &kernel) { return kernel.name; }
void packB(const Kernel &kernel, bool transB, int64_t k, int64_t n,
           const float *b, int64_t ldb, PackedMatrix &out) {
  if (!out.storage)
    out.storage = std::make_unique<PackedMatrix::Storage>();
  out.storage->data.resize(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j)
      out.storage->data[p * n + j] = transB ? b[j * ldb + p] : b[p * ldb + j];
  out.k = k;
  out.n = n;
  out.packedFor = &kernel;
}
void gemmPackedB(const Kernel &, bool transA, int64_t m, float alpha,
                 const float *a, int64_t lda, const PackedMatrix &b,
                 float beta, float *c, int64_t ldc) {
  BLAS(cblas_sgemm)(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                    CblasNoTrans, m, b.n, b.k, alpha, a, lda,
                    b.storage->data.data(), b.n, beta, c, ldc);
}
} // namespace pipecc::rt::gemm
