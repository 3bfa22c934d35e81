//===- KernelAvx2.cpp - The AVX2+FMA micro-kernel of the packed GEMM ------===//
//
// Compiled with -mavx2 -mfma (runtime/CMakeLists.txt) while the rest of the
// runtime stays baseline x86-64: nothing here may run before
// selectPackedGemmKernel() has checked the CPU.
//
// A 4 x 24 register tile: 12 ymm accumulators, 3 for a row of the B panel
// and 1 broadcast of A, of the 16 ymm registers. Per step it loads 24
// floats of B and 4 of A for 12 FMAs; the B panel (kc x 24) is the stream,
// read once from memory per call and then from L2 by every row tile.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>

namespace pipecc::rt::gemm {
namespace {
constexpr int64_t kMr = 4, kNr = 24;
/// K-block depth: the whole K of the model's 1024-wide layers (one pass
/// over C); the B panel (96 KiB) and the A block then share L2.
constexpr int64_t kKc = 1024;
/// Rows per A block: 64 x 1024 floats, 256 KiB of the 512 KiB L2.
constexpr int64_t kMc = 64;

/// Stores one row of the tile: c = alpha * x + beta * c (beta = 0: c is
/// not read).
inline void storeRow(float *c, __m256 x0, __m256 x1, __m256 x2, __m256 alpha,
                     float beta) {
  x0 = _mm256_mul_ps(alpha, x0);
  x1 = _mm256_mul_ps(alpha, x1);
  x2 = _mm256_mul_ps(alpha, x2);
  if (beta == 1.0f) {
    x0 = _mm256_add_ps(x0, _mm256_loadu_ps(c));
    x1 = _mm256_add_ps(x1, _mm256_loadu_ps(c + 8));
    x2 = _mm256_add_ps(x2, _mm256_loadu_ps(c + 16));
  } else if (beta != 0.0f) {
    __m256 b = _mm256_set1_ps(beta);
    x0 = _mm256_add_ps(x0, _mm256_mul_ps(b, _mm256_loadu_ps(c)));
    x1 = _mm256_add_ps(x1, _mm256_mul_ps(b, _mm256_loadu_ps(c + 8)));
    x2 = _mm256_add_ps(x2, _mm256_mul_ps(b, _mm256_loadu_ps(c + 16)));
  }
  _mm256_storeu_ps(c, x0);
  _mm256_storeu_ps(c + 8, x1);
  _mm256_storeu_ps(c + 16, x2);
}

void microKernel4x24(int64_t kc, const float *a, const float *b, float *c,
                     int64_t ldc, float alpha, float beta, int64_t rows,
                     int64_t cols, const char *prefetch,
                     int64_t prefetchLines) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00;
  __m256 c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00;
  __m256 c30 = c00, c31 = c00, c32 = c00;
  // Prefetches are issued once per group of 4 steps, spread evenly over
  // the groups (at most 2 per group).
  int64_t groups = kc / 4;
  int64_t perGroup = groups > 0 && prefetchLines > groups ? 2 : 1;
  int64_t every =
      groups > 0 && prefetchLines > 0
          ? std::max<int64_t>(1, groups * perGroup / prefetchLines)
          : groups + 1;
  const char *prefetchEnd = prefetch + 64 * prefetchLines;
  int64_t countdown = every;
#define PIPECC_GEMM_STEP(q)                                                    \
  {                                                                            \
    __m256 b0 = _mm256_loadu_ps(b + (q) * kNr);                                \
    __m256 b1 = _mm256_loadu_ps(b + (q) * kNr + 8);                            \
    __m256 b2 = _mm256_loadu_ps(b + (q) * kNr + 16);                           \
    __m256 x = _mm256_broadcast_ss(a + (q) * kMr);                             \
    c00 = _mm256_fmadd_ps(x, b0, c00);                                         \
    c01 = _mm256_fmadd_ps(x, b1, c01);                                         \
    c02 = _mm256_fmadd_ps(x, b2, c02);                                         \
    x = _mm256_broadcast_ss(a + (q) * kMr + 1);                                \
    c10 = _mm256_fmadd_ps(x, b0, c10);                                         \
    c11 = _mm256_fmadd_ps(x, b1, c11);                                         \
    c12 = _mm256_fmadd_ps(x, b2, c12);                                         \
    x = _mm256_broadcast_ss(a + (q) * kMr + 2);                                \
    c20 = _mm256_fmadd_ps(x, b0, c20);                                         \
    c21 = _mm256_fmadd_ps(x, b1, c21);                                         \
    c22 = _mm256_fmadd_ps(x, b2, c22);                                         \
    x = _mm256_broadcast_ss(a + (q) * kMr + 3);                                \
    c30 = _mm256_fmadd_ps(x, b0, c30);                                         \
    c31 = _mm256_fmadd_ps(x, b1, c31);                                         \
    c32 = _mm256_fmadd_ps(x, b2, c32);                                         \
  }
  for (int64_t g = 0; g < groups; ++g) {
    PIPECC_GEMM_STEP(0)
    PIPECC_GEMM_STEP(1)
    PIPECC_GEMM_STEP(2)
    PIPECC_GEMM_STEP(3)
    a += 4 * kMr;
    b += 4 * kNr;
    if (--countdown == 0) {
      countdown = every;
      for (int64_t i = 0; i < perGroup && prefetch < prefetchEnd; ++i) {
        _mm_prefetch(prefetch, _MM_HINT_T0);
        prefetch += 64;
      }
    }
  }
  for (int64_t p = groups * 4; p < kc; ++p) {
    PIPECC_GEMM_STEP(0)
    a += kMr;
    b += kNr;
  }
#undef PIPECC_GEMM_STEP

  __m256 va = _mm256_set1_ps(alpha);
  if (rows == kMr && cols == kNr) {
    storeRow(c, c00, c01, c02, va, beta);
    storeRow(c + ldc, c10, c11, c12, va, beta);
    storeRow(c + 2 * ldc, c20, c21, c22, va, beta);
    storeRow(c + 3 * ldc, c30, c31, c32, va, beta);
    return;
  }
  // A partial tile: the same arithmetic on a copy, then only its valid
  // part goes back to C.
  alignas(32) float tile[kMr * kNr] = {};
  if (beta != 0.0f)
    for (int64_t i = 0; i < rows; ++i)
      std::copy(c + i * ldc, c + i * ldc + cols, tile + i * kNr);
  storeRow(tile, c00, c01, c02, va, beta);
  storeRow(tile + kNr, c10, c11, c12, va, beta);
  storeRow(tile + 2 * kNr, c20, c21, c22, va, beta);
  storeRow(tile + 3 * kNr, c30, c31, c32, va, beta);
  for (int64_t i = 0; i < rows; ++i)
    std::copy(tile + i * kNr, tile + i * kNr + cols, c + i * ldc);
}
} // namespace

const Kernel &avx2FmaKernel() {
  static const Kernel kernel = {"avx2-fma 4x24", kMr, kNr, kKc, kMc,
                                microKernel4x24};
  return kernel;
}

} // namespace pipecc::rt::gemm

#endif // defined(__x86_64__)
