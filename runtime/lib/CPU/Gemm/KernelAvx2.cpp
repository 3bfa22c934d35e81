//===- KernelAvx2.cpp - The AVX2+FMA micro-kernel of the packed GEMM ------===//
//
// Compiled with -mavx2 -mfma (runtime/CMakeLists.txt) while the rest of the
// runtime stays baseline x86-64: nothing here may run before
// selectPackedGemmKernel() has checked the CPU.
//
// A 4 x 24 register tile: 12 ymm accumulators, 3 for a row of the B panel
// and 1 broadcast of A, of the 16 ymm registers. Per step it loads 24
// floats of B and 4 of A for 12 FMAs; the B panel (kc x 24) is the stream,
// read from memory once per A block and then from L2 by every row tile.
// Its packers are Packers.h's for 4-row micro-panels and 24-column panels.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#if defined(__x86_64__)
#include "Packers.h"

#include <immintrin.h>

#include <algorithm>

namespace pipecc::rt::gemm {
namespace {
constexpr int64_t kMr = 4, kNr = 24;
// Blocking for Zen 3's 32 KiB L1d and 512 KiB L2 per core (measured with
// pipecc-gemm-bench --kc/--mc; 256, 512 and 1024 deep and 32 to 256 rows
// were within the noise of each other, 512 x 128 never behind):
/// K-block depth: a B panel is 48 KiB, read from L2 by each row tile.
constexpr int64_t kKc = 512;
/// Rows per A block: 128 x 512 floats, 256 KiB of L2; up to 128 rows
/// (micro-batches of 32 to 128) stream the packed B once per call.
constexpr int64_t kMc = 128;

/// Stores the first 8 * NV columns of one row of the tile: c = alpha * x +
/// beta * c (beta = 0: c is not read), then + bias (8 * NV values, when not
/// null) and the relu select (Kernel.h's epilogue).
template <int NV = 3>
inline void storeRow(float *c, __m256 x0, __m256 x1, __m256 x2, __m256 alpha,
                     float beta, const float *bias = nullptr,
                     bool relu = false) {
  __m256 x[3] = {x0, x1, x2};
  for (int v = 0; v < NV; ++v) {
    x[v] = _mm256_mul_ps(alpha, x[v]);
    if (beta == 1.0f)
      x[v] = _mm256_add_ps(x[v], _mm256_loadu_ps(c + 8 * v));
    else if (beta != 0.0f)
      x[v] = _mm256_add_ps(
          x[v], _mm256_mul_ps(_mm256_set1_ps(beta), _mm256_loadu_ps(c + 8 * v)));
    if (bias)
      x[v] = _mm256_add_ps(x[v], _mm256_loadu_ps(bias + 8 * v));
    if (relu) {
      // x > 0 or unordered (NaN stays NaN); 0 otherwise (-0.0 becomes +0.0).
      __m256 zero = _mm256_setzero_ps();
      x[v] = _mm256_blendv_ps(zero, x[v], _mm256_cmp_ps(x[v], zero, _CMP_NLE_UQ));
    }
    _mm256_storeu_ps(c + 8 * v, x[v]);
  }
}

/// The micro-kernel on the first 8 * NV columns of the panel (NV = 3: the
/// whole tile; 2 and 1: a last panel of at most 16 or 8 valid columns,
/// whose padding columns would otherwise take a third or two thirds of its
/// FMAs: 11 % of a 64-wide product). The valid columns' sums are the same
/// in every variant.
template <int NV>
void microKernelColumns(int64_t kc, const float *a, const float *b, float *c,
                        int64_t ldc, float alpha, float beta, int64_t rows,
                        int64_t cols, const char *prefetch,
                        int64_t prefetchLines, const float *bias, bool relu) {
  // C's tile is read (beta != 0) and written only after the kc steps:
  // fetching its lines now hides their miss behind the FMAs (an
  // accumulator of a weight gradient is cold, and its K is short).
  for (int64_t i = 0; i < rows; ++i) {
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc + 16),
                 _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc + cols - 1),
                 _MM_HINT_T0);
  }
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00;
  __m256 c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00;
  __m256 c30 = c00, c31 = c00, c32 = c00;
  // The prefetches are spread evenly over the groups of 4 steps: a group
  // issues one each time its share (prefetchLines per group, counted in
  // groups) passes a whole line.
  int64_t groups = kc / 4;
  int64_t credit = 0;
#define PIPECC_GEMM_STEP(q)                                                    \
  {                                                                            \
    __m256 b0 = _mm256_loadu_ps(b + (q) * kNr);                                \
    __m256 b1, b2;                                                             \
    if constexpr (NV > 1)                                                      \
      b1 = _mm256_loadu_ps(b + (q) * kNr + 8);                                 \
    if constexpr (NV > 2)                                                      \
      b2 = _mm256_loadu_ps(b + (q) * kNr + 16);                                \
    __m256 x = _mm256_broadcast_ss(a + (q) * kMr);                             \
    c00 = _mm256_fmadd_ps(x, b0, c00);                                         \
    if constexpr (NV > 1)                                                      \
      c01 = _mm256_fmadd_ps(x, b1, c01);                                       \
    if constexpr (NV > 2)                                                      \
      c02 = _mm256_fmadd_ps(x, b2, c02);                                       \
    x = _mm256_broadcast_ss(a + (q) * kMr + 1);                                \
    c10 = _mm256_fmadd_ps(x, b0, c10);                                         \
    if constexpr (NV > 1)                                                      \
      c11 = _mm256_fmadd_ps(x, b1, c11);                                       \
    if constexpr (NV > 2)                                                      \
      c12 = _mm256_fmadd_ps(x, b2, c12);                                       \
    x = _mm256_broadcast_ss(a + (q) * kMr + 2);                                \
    c20 = _mm256_fmadd_ps(x, b0, c20);                                         \
    if constexpr (NV > 1)                                                      \
      c21 = _mm256_fmadd_ps(x, b1, c21);                                       \
    if constexpr (NV > 2)                                                      \
      c22 = _mm256_fmadd_ps(x, b2, c22);                                       \
    x = _mm256_broadcast_ss(a + (q) * kMr + 3);                                \
    c30 = _mm256_fmadd_ps(x, b0, c30);                                         \
    if constexpr (NV > 1)                                                      \
      c31 = _mm256_fmadd_ps(x, b1, c31);                                       \
    if constexpr (NV > 2)                                                      \
      c32 = _mm256_fmadd_ps(x, b2, c32);                                       \
  }
  for (int64_t g = 0; g < groups; ++g) {
    PIPECC_GEMM_STEP(0)
    PIPECC_GEMM_STEP(1)
    PIPECC_GEMM_STEP(2)
    PIPECC_GEMM_STEP(3)
    a += 4 * kMr;
    b += 4 * kNr;
    for (credit += prefetchLines; credit >= groups; credit -= groups) {
      _mm_prefetch(prefetch, _MM_HINT_T0);
      prefetch += 64;
    }
  }
  for (int64_t p = groups * 4; p < kc; ++p) {
    PIPECC_GEMM_STEP(0)
    a += kMr;
    b += kNr;
  }
#undef PIPECC_GEMM_STEP

  __m256 va = _mm256_set1_ps(alpha);
  if (rows == kMr && cols == 8 * NV) {
    storeRow<NV>(c, c00, c01, c02, va, beta, bias, relu);
    storeRow<NV>(c + ldc, c10, c11, c12, va, beta, bias, relu);
    storeRow<NV>(c + 2 * ldc, c20, c21, c22, va, beta, bias, relu);
    storeRow<NV>(c + 3 * ldc, c30, c31, c32, va, beta, bias, relu);
    return;
  }
  // A partial tile: the same arithmetic on a copy, then only its valid
  // part goes back to C (and only `cols` values of the bias are read).
  alignas(32) float tile[kMr * kNr] = {};
  alignas(32) float tileBias[kNr] = {};
  if (bias)
    std::copy(bias, bias + cols, tileBias);
  const float *biasRow = bias ? tileBias : nullptr;
  if (beta != 0.0f)
    for (int64_t i = 0; i < rows; ++i)
      std::copy(c + i * ldc, c + i * ldc + cols, tile + i * kNr);
  storeRow(tile, c00, c01, c02, va, beta, biasRow, relu);
  storeRow(tile + kNr, c10, c11, c12, va, beta, biasRow, relu);
  storeRow(tile + 2 * kNr, c20, c21, c22, va, beta, biasRow, relu);
  storeRow(tile + 3 * kNr, c30, c31, c32, va, beta, biasRow, relu);
  for (int64_t i = 0; i < rows; ++i)
    std::copy(tile + i * kNr, tile + i * kNr + cols, c + i * ldc);
}

} // namespace

const Kernel &avx2FmaKernel() {
  static const Kernel kernel = {"avx2-fma 4x24",   256, kMr, kNr, kKc, kMc,
                                microKernelByColumns<8, microKernelColumns<1>,
                                                     microKernelColumns<2>,
                                                     microKernelColumns<3>>,
                                packBPanels<kNr>,
                                packBPanels<kNr, true>,
                                packAPanels<kMr>};
  return kernel;
}

} // namespace pipecc::rt::gemm

#endif // defined(__x86_64__)
