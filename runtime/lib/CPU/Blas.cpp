//===- Blas.cpp - Matmuls of the CPU target (OpenBLAS) --------------------===//
//
// In pipecc_runtime_cpu: the core runtime links no BLAS.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Runtime.h"

#include <cblas.h>
#include <climits>
#include <cstring>

using namespace pipecc::rt;

namespace {
void checkGemmArguments(bool transA, bool transB, int64_t m, int64_t n,
                        int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  if (m < 0 || n < 0 || k < 0)
    fail("sgemm: negative dimension (M=", m, ", N=", n, ", K=", k, ")");
  for (int64_t value : {m, n, k, lda, ldb, ldc})
    if (value > INT_MAX)
      fail("sgemm: dimension or leading dimension ", value,
           " exceeds the BLAS integer range");
  // Row-major: a stored matrix with R rows and C columns needs ld >= C.
  int64_t aColumns = transA ? m : k;
  int64_t bColumns = transB ? k : n;
  if (lda < (aColumns > 1 ? aColumns : 1) ||
      ldb < (bColumns > 1 ? bColumns : 1) || ldc < (n > 1 ? n : 1))
    fail("sgemm: leading dimension too small (lda=", lda, " needs >= ",
         aColumns, ", ldb=", ldb, " needs >= ", bColumns, ", ldc=", ldc,
         " needs >= ", n, ")");
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}
} // namespace

extern "C" {

void pipecc_rt_sgemm(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

void pipecc_rt_sgemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                             int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, int64_t stride_a,
                             const float *b, int64_t ldb, int64_t stride_b,
                             float beta, float *c, int64_t ldc,
                             int64_t stride_c, int64_t batch) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    if (batch < 0 || stride_a < 0 || stride_b < 0 || stride_c < 0)
      fail("sgemm_batched: negative batch or stride");
    if (batch > 1 && stride_c == 0 && m > 0 && n > 0)
      fail("sgemm_batched: stride_c of 0 would make every batch write the "
           "same C");
    for (int64_t i = 0; i < batch; ++i)
      gemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
           b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  });
}

} // extern "C"
