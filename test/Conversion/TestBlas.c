/* The runtime's sgemm entry points (runtime/include/pipecc/Runtime/Runtime.h)
 * over OpenBLAS, as a shared library that mlir-cpu-runner loads in the
 * numeric lowering tests. Same signatures; no argument checking. */
#include <stdint.h>

/* CBLAS enums (the values the CBLAS standard fixes), declared here to avoid
 * depending on which cblas.h the include path finds. */
enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k,
                 float alpha, const float *a, int lda, const float *b, int ldb,
                 float beta, float *c, int ldc);

void pipecc_rt_sgemm(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  cblas_sgemm(kRowMajor, trans_a ? kTrans : kNoTrans,
              trans_b ? kTrans : kNoTrans, (int)m, (int)n, (int)k, alpha, a,
              (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void pipecc_rt_sgemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                             int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, int64_t stride_a,
                             const float *b, int64_t ldb, int64_t stride_b,
                             float beta, float *c, int64_t ldc,
                             int64_t stride_c, int64_t batch) {
  for (int64_t i = 0; i < batch; ++i)
    pipecc_rt_sgemm(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda,
                    b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
}

/* For tests lowered with bare-pointer memrefs, where printMemrefF32's
 * unranked descriptor is not available: prints n floats on one line. */
#include <stdio.h>
void pipecc_test_print_f32(const float *data, int64_t n) {
  printf("[");
  for (int64_t i = 0; i < n; ++i)
    printf(i ? ", %g" : "%g", data[i]);
  printf("]\n");
  fflush(stdout);
}
