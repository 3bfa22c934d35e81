//===- Packers.h - The packers of Kernel.h's layouts, for any tile -*- C++ -*-//
//
// Included by each kernel's file (compiled for that kernel's instruction
// set, at least AVX2) and by nothing else: everything here has internal
// linkage, so that each kernel gets its own copy built with its flags.
// op(B) is cut into panels of NR columns (a multiple of 8) through 8 x 8
// transposes where B is stored transposed, row-order copies otherwise;
// op(A) into micro-panels of MR rows (4 or 8) through 4 x 8 or 8 x 8
// transposes, or contiguous copies where A is stored transposed. Also the
// kernels' dispatch on a panel's valid columns (microKernelByColumns).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPU_GEMM_PACKERS_H
#define PIPECC_RUNTIME_CPU_GEMM_PACKERS_H

#if !defined(__x86_64__) || !defined(__AVX2__)
#error "Packers.h is for the x86-64 kernels' files, built with AVX2"
#endif

#include "Kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace pipecc::rt::gemm {
namespace {

/// Transposes the 8 x 8 block of rows r[0..7] in place (r[i][j] becomes
/// r[j][i]).
inline void transpose8x8(__m256 r[8]) {
  __m256 t[8], s[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
  }
}

/// The mask of _mm256_maskload_ps for the first `count` (0..8) lanes.
inline __m256i firstLanes(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(count)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Stores v at p: with Stream, non-temporal (p 32-byte aligned), for a
/// packed copy not read again soon (Kernel::packBStreaming).
template <bool Stream>
inline void storePacked(float *p, __m256 v) {
  if constexpr (Stream)
    _mm256_stream_ps(p, v);
  else
    _mm256_storeu_ps(p, v);
}

/// Kernel.h's PackBBlock for panels of NR columns; with Stream, its
/// whole vectors stored non-temporally (`out` 32-byte aligned).
template <int64_t NR, bool Stream = false>
void packBPanels(bool transB, int64_t kc, int64_t n, const float *b,
                 int64_t ldb, int64_t p0, float *out) {
  static_assert(NR % 8 == 0, "panels are whole ymm vectors");
  constexpr int kVectors = NR / 8;
  if (!transB) {
    // B is K x N: row p of the block is a row of B, cut into the panels'
    // rows. Reading B row by row keeps its reads sequential.
    int64_t full = n / NR;
    int64_t rest = n - full * NR;
    __m256i mask[kVectors];
    for (int i = 0; i < kVectors; ++i)
      mask[i] = firstLanes(std::clamp<int64_t>(rest - 8 * i, 0, 8));
    for (int64_t p = 0; p < kc; ++p) {
      const float *src = b + (p0 + p) * ldb;
      float *dst = out + p * NR;
      for (int64_t j = 0; j < full; ++j, src += NR, dst += kc * NR)
        for (int i = 0; i < kVectors; ++i)
          storePacked<Stream>(dst + 8 * i, _mm256_loadu_ps(src + 8 * i));
      if (rest)
        for (int i = 0; i < kVectors; ++i)
          _mm256_storeu_ps(dst + 8 * i,
                           _mm256_maskload_ps(src + 8 * i, mask[i]));
    }
    return;
  }
  // B is N x K: a panel's NR columns are NR rows of B, transposed 8 x 8.
  for (int64_t j0 = 0; j0 < n; j0 += NR, out += kc * NR) {
    int64_t valid = std::min(NR, n - j0);
    const float *rows[NR];
    for (int64_t j = 0; j < NR; ++j)
      rows[j] = j < valid ? b + (j0 + j) * ldb + p0 : nullptr;
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      for (int g = 0; g < kVectors; ++g) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i)
          r[i] = rows[8 * g + i] ? _mm256_loadu_ps(rows[8 * g + i] + p)
                                 : _mm256_setzero_ps();
        transpose8x8(r);
        for (int i = 0; i < 8; ++i)
          storePacked<Stream>(out + (p + i) * NR + 8 * g, r[i]);
      }
    }
    for (; p < kc; ++p)
      for (int64_t j = 0; j < NR; ++j)
        out[p * NR + j] = rows[j] ? rows[j][p] : 0.0f;
  }
}

/// Kernel.h's PackABlock for micro-panels of MR (4 or 8) rows.
template <int64_t MR>
void packAPanels(bool transA, const float *a, int64_t lda, int64_t row0,
                 int64_t rows, int64_t p0, int64_t kc, float *out) {
  static_assert(MR == 4 || MR == 8, "micro-panels of 4 or 8 rows");
  // Where A is stored transposed, the micro-panels that share a cache line
  // of each of A's rows are copied in one pass over the rows: one at a
  // time read half of every line (a quarter with MR = 4) and came back for
  // the rest after kc rows, by which A's row stride (often a multiple of
  // 1 KiB) had mapped them onto the same few L1 sets and evicted them (the
  // weight gradients' packing of dY^T stalled on those loads).
  constexpr int64_t kPanelsPerLine = 16 / MR;
  int64_t i0 = 0;
  if (transA)
    for (; i0 + kPanelsPerLine * MR <= rows;
         i0 += kPanelsPerLine * MR, out += kPanelsPerLine * kc * MR) {
      const float *src = a + p0 * lda + row0 + i0;
      for (int64_t p = 0; p < kc; ++p, src += lda)
        for (int64_t g = 0; g < kPanelsPerLine; ++g) {
          if constexpr (MR == 4)
            _mm_storeu_ps(out + g * kc * MR + p * MR,
                          _mm_loadu_ps(src + g * MR));
          else
            _mm256_storeu_ps(out + g * kc * MR + p * MR,
                             _mm256_loadu_ps(src + g * MR));
        }
    }
  for (; i0 < rows; i0 += MR, out += kc * MR) {
    int64_t valid = std::min(MR, rows - i0);
    if (transA) {
      // A is K x M: a micro-panel's column p is MR floats of A's row p.
      const float *src = a + p0 * lda + row0 + i0;
      if constexpr (MR == 4) {
        if (valid == MR) {
          for (int64_t p = 0; p < kc; ++p, src += lda)
            _mm_storeu_ps(out + p * MR, _mm_loadu_ps(src));
          continue;
        }
        __m128i mask = _mm256_castsi256_si128(firstLanes(valid));
        for (int64_t p = 0; p < kc; ++p, src += lda)
          _mm_storeu_ps(out + p * MR, _mm_maskload_ps(src, mask));
      } else {
        if (valid == MR) {
          for (int64_t p = 0; p < kc; ++p, src += lda)
            _mm256_storeu_ps(out + p * MR, _mm256_loadu_ps(src));
          continue;
        }
        __m256i mask = firstLanes(valid);
        for (int64_t p = 0; p < kc; ++p, src += lda)
          _mm256_storeu_ps(out + p * MR, _mm256_maskload_ps(src, mask));
      }
      continue;
    }
    // A is M x K: MR rows of A, transposed MR x 8 at a time.
    const float *r[MR];
    for (int64_t i = 0; i < MR; ++i)
      r[i] = i < valid ? a + (row0 + i0 + i) * lda + p0 : nullptr;
    auto load = [&](int i, int64_t p) {
      return r[i] ? _mm256_loadu_ps(r[i] + p) : _mm256_setzero_ps();
    };
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      float *dst = out + p * MR;
      if constexpr (MR == 8) {
        __m256 block[8];
        for (int i = 0; i < 8; ++i)
          block[i] = load(i, p);
        transpose8x8(block);
        for (int i = 0; i < 8; ++i)
          _mm256_storeu_ps(dst + 8 * i, block[i]);
      } else {
        __m256 r0 = load(0, p), r1 = load(1, p), r2 = load(2, p),
               r3 = load(3, p);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1),
               t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3),
               t3 = _mm256_unpackhi_ps(r2, r3);
        // Columns (0|4), (1|5), (2|6), (3|7) of the 4 x 8 block.
        __m256 c04 = _mm256_shuffle_ps(t0, t2, 0x44);
        __m256 c15 = _mm256_shuffle_ps(t0, t2, 0xee);
        __m256 c26 = _mm256_shuffle_ps(t1, t3, 0x44);
        __m256 c37 = _mm256_shuffle_ps(t1, t3, 0xee);
        _mm256_storeu_ps(dst, _mm256_permute2f128_ps(c04, c15, 0x20));
        _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(c26, c37, 0x20));
        _mm256_storeu_ps(dst + 16, _mm256_permute2f128_ps(c04, c15, 0x31));
        _mm256_storeu_ps(dst + 24, _mm256_permute2f128_ps(c26, c37, 0x31));
      }
    }
    for (; p < kc; ++p)
      for (int64_t i = 0; i < MR; ++i)
        out[p * MR + i] = r[i] ? r[i][p] : 0.0f;
  }
}

/// Kernel.h's MicroKernel for a tile of three vectors of `Lanes` floats
/// per row: runs the variant with the fewest vectors that covers the
/// panel's valid columns (One, Two or Three), so that a narrow last panel
/// does not spend FMAs on its padding.
template <int64_t Lanes, MicroKernel One, MicroKernel Two, MicroKernel Three>
void microKernelByColumns(int64_t kc, const float *a, const float *b,
                          float *c, int64_t ldc, float alpha, float beta,
                          int64_t rows, int64_t cols, const char *prefetch,
                          int64_t prefetchLines, const float *bias,
                          bool relu) {
  MicroKernel variant = cols > 2 * Lanes ? Three : cols > Lanes ? Two : One;
  variant(kc, a, b, c, ldc, alpha, beta, rows, cols, prefetch, prefetchLines,
          bias, relu);
}

} // namespace
} // namespace pipecc::rt::gemm

#endif // PIPECC_RUNTIME_CPU_GEMM_PACKERS_H
