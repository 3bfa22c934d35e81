//===- KernelAvx512.cpp - The AVX-512 micro-kernel of the packed GEMM -----===//
//
// Compiled with -mavx512f -mavx2 -mfma (runtime/CMakeLists.txt) while the
// rest of the runtime stays baseline x86-64: nothing here may run before
// selectPackedGemmKernel() has checked the CPU (AVX-512F and the OS's ZMM
// state).
//
// An 8 x 48 register tile: 24 zmm accumulators, 3 for a row of the B panel
// and 1 broadcast of A, of the 32 zmm registers. Per step it loads 48
// floats of B and 8 of A for 24 FMAs, which keeps two FMA pipes of 4
// cycles' latency busy (8 independent sums would be the least). Partial
// tiles store through lane masks: a masked-off lane is neither read nor
// written, so no temporary tile is needed. Its packers are Packers.h's for
// 8-row micro-panels and 48-column panels (AVX2 code), but for a B stored
// transposed (a forward's weight), which packBPanels512 packs through
// 16 x 16 transposes: at a micro-batch or two per step, packing a weight
// is a tenth of its products' time.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

#if defined(__x86_64__)
#include "Packers.h"

#include <immintrin.h>

#include <algorithm>

#include <type_traits>

namespace pipecc::rt::gemm {
namespace {
constexpr int64_t kMr = 8, kNr = 48;
/// The direct kernel's tile for B of 64 columns (attention's head width): 6
/// rows x 4 vectors, 24 accumulators, no 16-column remainder tile.
constexpr int kWideMr = 6;
constexpr int64_t kWideNr = 64;
// Blocking for a core with 48 KiB of L1d and 1 MiB of L2 (AMD Zen 5; Intel's
// AVX-512 cores have 48 KiB and 1 to 2 MiB), measured with
// pipecc-gemm-bench --kernel avx512 --kc/--mc (docs/design.md):
/// K-block depth: a B panel (kc x 48 floats) is 48 KiB, streamed from L2
/// by each row tile while the A micro-panel (8 KiB) stays in L1.
constexpr int64_t kKc = 256;
/// Rows per A block: 128 x 256 floats, 128 KiB of L2.
constexpr int64_t kMc = 128;

/// Calls f(std::integral_constant<int, I>) for I = 0 .. N-1, unrolled: the
/// accumulators are indexed by constants only, so they stay in registers.
template <int N, typename F>
__attribute__((always_inline)) inline void unroll(F &&f) {
  if constexpr (N > 0) {
    unroll<N - 1>(f);
    f(std::integral_constant<int, N - 1>{});
  }
}

/// The lanes of the 16-float vector v of a row with `cols` valid columns.
inline __mmask16 columnMask(int64_t cols, int v) {
  int64_t lanes = cols - 16 * v;
  return lanes >= 16  ? __mmask16(0xffff)
         : lanes <= 0 ? __mmask16(0)
                      : __mmask16((1u << lanes) - 1);
}

/// The micro-kernels' epilogue: C's first `rows` rows of the tile become
/// alpha * acc + beta * C (beta = 0: C is not read), then + bias and the
/// relu select (Kernel.h's epilogue), only in the lanes `mask` lets
/// through. `Lean`: every row, no bias and no relu (the caller checked),
/// which leaves those out of the code.
template <int MR, int NV, bool Lean>
__attribute__((always_inline)) inline void
storeTile(const __m512 (&acc)[MR][NV], float *c, int64_t ldc, int64_t rows,
          const __mmask16 (&mask)[NV], float alpha, float beta,
          const float *bias, bool relu) {
  if constexpr (Lean) {
    bias = nullptr;
    relu = false;
    rows = MR;
  }
  __m512 va = _mm512_set1_ps(alpha), vbeta = _mm512_set1_ps(beta);
  __m512 biasRow[NV] = {};
  if (bias)
    unroll<NV>([&](auto v) {
      biasRow[v] = _mm512_maskz_loadu_ps(mask[v], bias + 16 * v);
    });
  __m512 zero = _mm512_setzero_ps();
  unroll<MR>([&](auto i) {
    if (i >= rows)
      return;
    float *row = c + i * ldc;
    unroll<NV>([&](auto v) {
      __m512 x = _mm512_mul_ps(va, acc[i][v]);
      if (beta == 1.0f)
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], row + 16 * v));
      else if (beta != 0.0f)
        x = _mm512_fmadd_ps(vbeta,
                            _mm512_maskz_loadu_ps(mask[v], row + 16 * v), x);
      if (bias)
        x = _mm512_add_ps(x, biasRow[v]);
      if (relu) {
        // x > 0 or unordered (NaN stays NaN); 0 otherwise (-0.0 becomes
        // +0.0).
        __mmask16 keep = _mm512_cmp_ps_mask(x, zero, _CMP_NLE_UQ);
        x = _mm512_mask_blend_ps(keep, zero, x);
      }
      _mm512_mask_storeu_ps(row + 16 * v, mask[v], x);
    });
  });
}

/// Fetches the lines of C's tile (`rows` rows of 16 * NV floats, `cols`
/// valid) now: the tile is read (beta != 0) and written only after the kc
/// steps, so the FMAs hide their miss. Always inlined: GCC 12 deletes calls
/// to a function of prefetches alone.
template <int NV>
__attribute__((always_inline)) inline void
prefetchTileOfC(const float *c, int64_t ldc, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const char *row = reinterpret_cast<const char *>(c + i * ldc);
    for (int v = 0; v < NV; ++v)
      _mm_prefetch(row + 64 * v, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc + cols - 1),
                 _MM_HINT_T0);
  }
}

// A whole 8 x 48 tile, in assembly: the accumulators are zmm0-23 (row i's
// in 3i .. 3i + 2), B's row zmm24-26 and A's broadcast zmm27 in the k loop.
// Written out because GCC 12 compiled the same kernel in C++ with some
// accumulators on the stack and GPRs parked in vector registers, how many
// depending on the rest of the function and file (docs/design.md, "The
// whole tile in assembly"). The epilogue is storeTile's, one operation at
// a time over the 24 vectors (each skipped where the call does not need
// it): alpha * acc (not for alpha = 1, which changes no value), + C
// (beta = 1) or + beta * C (another nonzero beta), + bias, the relu
// select, the store. Each value goes through storeTile's operations in its
// order, so a tile rounds as the C++ kernels' partial tiles do.
#define PIPECC_ZMM(r) "%%zmm" #r
#define PIPECC_FMA_ROW(s, i, r0, r1, r2)                                       \
  "vbroadcastss (4*" #i "+32*" #s ")(%[a]), %%zmm27\n\t"                       \
  "vfmadd231ps %%zmm24, %%zmm27, " PIPECC_ZMM(r0) "\n\t"                       \
  "vfmadd231ps %%zmm25, %%zmm27, " PIPECC_ZMM(r1) "\n\t"                       \
  "vfmadd231ps %%zmm26, %%zmm27, " PIPECC_ZMM(r2) "\n\t"
#define PIPECC_STEP(s)                                                         \
  "vmovups (192*" #s ")(%[b]), %%zmm24\n\t"                                     \
  "vmovups (192*" #s "+64)(%[b]), %%zmm25\n\t"                                  \
  "vmovups (192*" #s "+128)(%[b]), %%zmm26\n\t"                                 \
  PIPECC_FMA_ROW(s, 0, 0, 1, 2) PIPECC_FMA_ROW(s, 1, 3, 4, 5)                  \
  PIPECC_FMA_ROW(s, 2, 6, 7, 8) PIPECC_FMA_ROW(s, 3, 9, 10, 11)                \
  PIPECC_FMA_ROW(s, 4, 12, 13, 14) PIPECC_FMA_ROW(s, 5, 15, 16, 17)            \
  PIPECC_FMA_ROW(s, 6, 18, 19, 20) PIPECC_FMA_ROW(s, 7, 21, 22, 23)
// One epilogue operation over the tile: op(register, C's address, the
// register of the bias vector of its columns) for the 24 vectors (rows
// 4 .. 7 of C from %[c4]).
#define PIPECC_ROW_VECTORS(op, r0, r1, r2, row)                                \
  op(r0, "0" row, 24) op(r1, "64" row, 25) op(r2, "128" row, 26)
#define PIPECC_TILE(op)                                                        \
  PIPECC_ROW_VECTORS(op, 0, 1, 2, "(%[c])")                                    \
  PIPECC_ROW_VECTORS(op, 3, 4, 5, "(%[c],%[ldc],1)")                           \
  PIPECC_ROW_VECTORS(op, 6, 7, 8, "(%[c],%[ldc],2)")                           \
  PIPECC_ROW_VECTORS(op, 9, 10, 11, "(%[c],%[ldc3],1)")                        \
  PIPECC_ROW_VECTORS(op, 12, 13, 14, "(%[c4])")                                \
  PIPECC_ROW_VECTORS(op, 15, 16, 17, "(%[c4],%[ldc],1)")                       \
  PIPECC_ROW_VECTORS(op, 18, 19, 20, "(%[c4],%[ldc],2)")                       \
  PIPECC_ROW_VECTORS(op, 21, 22, 23, "(%[c4],%[ldc3],1)")
#define PIPECC_SCALE(r, at, bv)                                                \
  "vmulps %%zmm28, " PIPECC_ZMM(r) ", " PIPECC_ZMM(r) "\n\t"
#define PIPECC_ADD_C(r, at, bv)                                                \
  "vaddps " at ", " PIPECC_ZMM(r) ", " PIPECC_ZMM(r) "\n\t"
#define PIPECC_ADD_BETA_C(r, at, bv)                                           \
  "vfmadd231ps " at ", %%zmm29, " PIPECC_ZMM(r) "\n\t"
#define PIPECC_ADD_BIAS(r, at, bv)                                             \
  "vaddps " PIPECC_ZMM(bv) ", " PIPECC_ZMM(r) ", " PIPECC_ZMM(r) "\n\t"
#define PIPECC_RELU(r, at, bv)                                                 \
  "vcmpps $6, %%zmm27, " PIPECC_ZMM(r) ", %%k1\n\t"                            \
  "vmovaps " PIPECC_ZMM(r) ", " PIPECC_ZMM(r) "%{%%k1%}%{z%}\n\t"
#define PIPECC_STORE(r, at, bv) "vmovups " PIPECC_ZMM(r) ", " at "\n\t"

/// wholeTile's epilogue, read by its assembly from memory (each a test per
/// tile; in registers they would leave too few for the addresses).
struct WholeTileEpilogue {
  float alpha, beta;
  int32_t scale;    // alpha != 1
  int32_t betaMode; // 0: C not read, 1: + C, 2: + beta * C
  int32_t relu;
};

static_assert(kMr == 8 && kNr == 48, "wholeTile's registers and offsets");
__attribute__((noinline)) void wholeTile(int64_t kc, const float *a,
                                         const float *b, float *c,
                                         int64_t ldc, float alpha, float beta,
                                         const float *bias, bool relu) {
  int64_t groups = kc / 4, rest = kc % 4, ldcBytes = ldc * 4;
  int64_t ldc3 = 3 * ldcBytes;
  float *c4 = c + 4 * ldc;
  WholeTileEpilogue e{alpha, beta, alpha != 1.0f,
                      beta == 0.0f ? 0 : beta == 1.0f ? 1 : 2, relu};
  asm volatile(
      "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
      "vmovaps %%zmm0, %%zmm1\n\tvmovaps %%zmm0, %%zmm2\n\t"
      "vmovaps %%zmm0, %%zmm3\n\tvmovaps %%zmm0, %%zmm4\n\t"
      "vmovaps %%zmm0, %%zmm5\n\tvmovaps %%zmm0, %%zmm6\n\t"
      "vmovaps %%zmm0, %%zmm7\n\tvmovaps %%zmm0, %%zmm8\n\t"
      "vmovaps %%zmm0, %%zmm9\n\tvmovaps %%zmm0, %%zmm10\n\t"
      "vmovaps %%zmm0, %%zmm11\n\tvmovaps %%zmm0, %%zmm12\n\t"
      "vmovaps %%zmm0, %%zmm13\n\tvmovaps %%zmm0, %%zmm14\n\t"
      "vmovaps %%zmm0, %%zmm15\n\tvmovaps %%zmm0, %%zmm16\n\t"
      "vmovaps %%zmm0, %%zmm17\n\tvmovaps %%zmm0, %%zmm18\n\t"
      "vmovaps %%zmm0, %%zmm19\n\tvmovaps %%zmm0, %%zmm20\n\t"
      "vmovaps %%zmm0, %%zmm21\n\tvmovaps %%zmm0, %%zmm22\n\t"
      "vmovaps %%zmm0, %%zmm23\n\t"
      "test %[groups], %[groups]\n\t"
      "jz 2f\n\t"
      "1:\n\t" PIPECC_STEP(0) PIPECC_STEP(1) PIPECC_STEP(2) PIPECC_STEP(3)
      "add $128, %[a]\n\t"
      "add $768, %[b]\n\t"
      "dec %[groups]\n\t"
      "jnz 1b\n\t"
      "2:\n\t"
      "test %[rest], %[rest]\n\t"
      "jz 3f\n\t"
      "4:\n\t" PIPECC_STEP(0)
      "add $32, %[a]\n\t"
      "add $192, %[b]\n\t"
      "dec %[rest]\n\t"
      "jnz 4b\n\t"
      "3:\n\t"
      "cmpl $0, %[scale]\n\t"
      "je 5f\n\t"
      "vbroadcastss %[alpha], %%zmm28\n\t" PIPECC_TILE(PIPECC_SCALE)
      "5:\n\t"
      "cmpl $1, %[betaMode]\n\t"
      "jb 7f\n\t"
      "ja 6f\n\t" PIPECC_TILE(PIPECC_ADD_C)
      "jmp 7f\n\t"
      "6:\n\t"
      "vbroadcastss %[beta], %%zmm29\n\t" PIPECC_TILE(PIPECC_ADD_BETA_C)
      "7:\n\t"
      "test %[bias], %[bias]\n\t"
      "jz 8f\n\t"
      "vmovups (%[bias]), %%zmm24\n\t"
      "vmovups 64(%[bias]), %%zmm25\n\t"
      "vmovups 128(%[bias]), %%zmm26\n\t" PIPECC_TILE(PIPECC_ADD_BIAS)
      "8:\n\t"
      "cmpl $0, %[relu]\n\t"
      "je 9f\n\t"
      "vpxord %%zmm27, %%zmm27, %%zmm27\n\t" PIPECC_TILE(PIPECC_RELU)
      "9:\n\t" PIPECC_TILE(PIPECC_STORE)
      : [a] "+&r"(a), [b] "+&r"(b), [groups] "+&r"(groups),
        [rest] "+&r"(rest)
      : [c] "r"(c), [c4] "r"(c4), [ldc] "r"(ldcBytes), [ldc3] "r"(ldc3),
        [bias] "r"(bias), [alpha] "m"(e.alpha), [beta] "m"(e.beta),
        [scale] "m"(e.scale), [betaMode] "m"(e.betaMode), [relu] "m"(e.relu)
      : "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8",
        "zmm9", "zmm10", "zmm11", "zmm12", "zmm13", "zmm14", "zmm15", "zmm16",
        "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm24",
        "zmm25", "zmm26", "zmm27", "zmm28", "zmm29", "k1", "memory", "cc");
}
#undef PIPECC_STORE
#undef PIPECC_RELU
#undef PIPECC_ADD_BIAS
#undef PIPECC_ADD_BETA_C
#undef PIPECC_ADD_C
#undef PIPECC_SCALE
#undef PIPECC_TILE
#undef PIPECC_ROW_VECTORS
#undef PIPECC_STEP
#undef PIPECC_FMA_ROW
#undef PIPECC_ZMM

/// The micro-kernel on the first 16 * NV columns of the panel (NV = 3: the
/// whole tile; 2 and 1: a last panel of at most 32 or 16 valid columns,
/// whose padding columns would otherwise take a third or two thirds of its
/// FMAs). The valid columns' sums are the same in every variant. `Lean`:
/// a whole-row tile without bias or relu (microKernelColumns).
template <int NV, bool Lean>
__attribute__((noinline)) void
microKernelTile(int64_t kc, const float *a, const float *b, float *c,
                int64_t ldc, float alpha, float beta, int64_t rows,
                int64_t cols, const char *prefetch, int64_t prefetchLines,
                const float *bias, bool relu) {
  prefetchTileOfC<NV>(c, ldc, rows, cols);
  __m512 acc[kMr][NV];
  unroll<kMr>([&](auto i) {
    unroll<NV>([&](auto v) { acc[i][v] = _mm512_setzero_ps(); });
  });
  auto step = [&](int64_t q) __attribute__((always_inline)) {
    __m512 bv[NV];
    unroll<NV>([&](auto v) { bv[v] = _mm512_loadu_ps(b + q * kNr + 16 * v); });
    unroll<kMr>([&](auto i) {
      __m512 x = _mm512_set1_ps(a[q * kMr + i]);
      unroll<NV>([&](auto v) {
        acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
      });
    });
  };
  // The prefetches are spread evenly over the groups of 4 steps (as the
  // AVX2 kernel's).
  int64_t groups = kc / 4;
  int64_t credit = 0;
  for (int64_t g = 0; g < groups; ++g) {
    step(0);
    step(1);
    step(2);
    step(3);
    a += 4 * kMr;
    b += 4 * kNr;
    for (credit += prefetchLines; credit >= groups; credit -= groups) {
      _mm_prefetch(prefetch, _MM_HINT_T0);
      prefetch += 64;
    }
  }
  for (int64_t p = groups * 4; p < kc; ++p) {
    step(0);
    a += kMr;
    b += kNr;
  }

  __mmask16 mask[NV];
  unroll<NV>([&](auto v) { mask[v] = columnMask(cols, v); });
  storeTile<kMr, NV, Lean>(acc, c, ldc, rows, mask, alpha, beta, bias, relu);
}

/// A tile with every row and no bias or relu (every weight gradient's,
/// every k-block but a Linear's last) runs a micro-kernel compiled without
/// them. With them in the function GCC 12 spilled more accumulators in the
/// k loop (16 stack accesses per 4 steps against 6) and far more in the
/// epilogue (271 stack references against 19): 1024 x 1024 x 32 (a weight
/// gradient, beta = 1) ran at 197 GFLOP/s with them and 221 without, K =
/// 64 217 against 230. How much the general variant spills changes with
/// the rest of this file (it spilled far less once the direct tile ran in
/// halves, below); the lean one does not depend on it (docs/design.md,
/// "The micro-kernel's epilogue held registers the k loop needed"). A whole
/// 48-column tile that prefetches no panel (every shallow weight
/// gradient's, any epilogue) runs wholeTile's assembly instead: the lean
/// kernel still kept 3 accumulators on the stack. With a panel to prefetch
/// the C++ kernels stay: the same prefetches from the assembly's loop
/// measured 1-4 % slower (docs/design.md, "The whole tile in assembly").
template <int NV>
void microKernelColumns(int64_t kc, const float *a, const float *b, float *c,
                        int64_t ldc, float alpha, float beta, int64_t rows,
                        int64_t cols, const char *prefetch,
                        int64_t prefetchLines, const float *bias, bool relu) {
  if constexpr (NV == 3)
    if (rows == kMr && cols == kNr && prefetchLines == 0) {
      prefetchTileOfC<3>(c, ldc, kMr, kNr);
      return wholeTile(kc, a, b, c, ldc, alpha, beta, bias, relu);
    }
  if (rows == kMr && !bias && !relu)
    return microKernelTile<NV, true>(kc, a, b, c, ldc, alpha, beta, rows, cols,
                                     prefetch, prefetchLines, bias, relu);
  microKernelTile<NV, false>(kc, a, b, c, ldc, alpha, beta, rows, cols,
                             prefetch, prefetchLines, bias, relu);
}

/// Kernel.h's DirectMicroKernel for an MR x 16 * NV tile (MR = 8: the
/// first 16 * NV columns of a 48-column panel, as microKernelColumns; 6 x
/// 64: Kernel::directWideMicroKernel): B's rows through lane masks, so a
/// last panel's loads stop at its valid columns; A's values broadcast from
/// where they lie. At attention's 64 x 64 x 64 the FMAs, not packing, take
/// most of the time; reading in place and the 6 x 64 tile save what packing
/// and the 16-column remainder tile took (docs/design.md, "Small products
/// read their operands in place").
template <int MR, int NV>
void directTile(int64_t k, const float *const *aRows, int64_t aDepth,
                const float *b, int64_t ldb, float *c, int64_t ldc,
                float alpha, float beta, int64_t rows, int64_t cols,
                const char *prefetch, int64_t prefetchLines) {
  for (int64_t i = 0; i < rows; ++i) {
    const char *row = reinterpret_cast<const char *>(c + i * ldc);
    for (int v = 0; v < NV; ++v)
      _mm_prefetch(row + 64 * v, _MM_HINT_T0);
  }
  const float *a[MR];
  unroll<MR>([&](auto i) { a[i] = aRows[i]; });
  __mmask16 mask[NV];
  unroll<NV>([&](auto v) { mask[v] = columnMask(cols, v); });
  __m512 acc[MR][NV];
  unroll<MR>([&](auto i) {
    unroll<NV>([&](auto v) { acc[i][v] = _mm512_setzero_ps(); });
  });
  int64_t at = 0; // q * aDepth
  auto step = [&]() __attribute__((always_inline)) {
    __m512 bv[NV];
    unroll<NV>(
        [&](auto v) { bv[v] = _mm512_maskz_loadu_ps(mask[v], b + 16 * v); });
    unroll<MR>([&](auto i) {
      __m512 x = _mm512_set1_ps(a[i][at]);
      unroll<NV>([&](auto v) {
        acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
      });
    });
    b += ldb;
    at += aDepth;
  };
  int64_t groups = k / 4;
  int64_t credit = 0;
  for (int64_t g = 0; g < groups; ++g) {
    step();
    step();
    step();
    step();
    for (credit += prefetchLines; credit >= groups; credit -= groups) {
      _mm_prefetch(prefetch, _MM_HINT_T0);
      prefetch += 64;
    }
  }
  for (int64_t p = groups * 4; p < k; ++p)
    step();

  storeTile<MR, NV, false>(acc, c, ldc, rows, mask, alpha, beta, nullptr, false);
}

/// The direct variant with the fewest vectors that covers `cols`. A tile
/// wider than 32 columns runs as two 4 x 48 halves, each reading the B
/// rows again (from L1): the 8 x 48 tile read in place needs 8 row pointers
/// beside its 24 accumulators, and GCC 12 spills accumulators in its k loop
/// (304 stack references), which made 4 x 64 x 64 x 48 batched products run
/// at 82 GFLOP/s against 225 as halves (docs/design.md, "The micro-kernel's
/// epilogue held registers the k loop needed").
void directMicroKernel(int64_t k, const float *const *aRows, int64_t aDepth,
                       const float *b, int64_t ldb, float *c, int64_t ldc,
                       float alpha, float beta, int64_t rows, int64_t cols,
                       const char *prefetch, int64_t prefetchLines) {
  if (cols > 32) {
    directTile<kMr / 2, 3>(k, aRows, aDepth, b, ldb, c, ldc, alpha, beta,
                           std::min<int64_t>(rows, kMr / 2), cols, prefetch,
                           prefetchLines);
    if (rows > kMr / 2)
      directTile<kMr / 2, 3>(k, aRows + kMr / 2, aDepth, b, ldb,
                             c + kMr / 2 * ldc, ldc, alpha, beta,
                             rows - kMr / 2, cols, nullptr, 0);
    return;
  }
  DirectMicroKernel variant = cols > 16 ? directTile<kMr, 2>
                                        : directTile<kMr, 1>;
  variant(k, aRows, aDepth, b, ldb, c, ldc, alpha, beta, rows, cols,
          prefetch, prefetchLines);
}

/// Transposes the 16 x 16 block of rows r[0..15] in place (r[i][j]
/// becomes r[j][i]): pairs interleaved, then 4 x 4 blocks within 128-bit
/// lanes, then the lanes themselves.
inline void transpose16x16(__m512 r[16]) {
  // The all-lanes maskz forms: the plain intrinsics pass GCC 12 an
  // undefined vector it warns about (-Wmaybe-uninitialized); the same
  // unmasked instructions either way.
  constexpr __mmask16 all = 0xffff;
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(all, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(all, r[i], r[i + 1]);
  }
  // r[4q + c], lane l: column 4l + c of rows 4q .. 4q + 3.
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_maskz_shuffle_ps(all, t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_maskz_shuffle_ps(all, t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_maskz_shuffle_ps(all, t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_maskz_shuffle_ps(all, t[i + 1], t[i + 3], 0xee);
  }
  // Column 4l + c is lane l of r[c], r[4 + c], r[8 + c], r[12 + c].
  __m512 out[16];
  for (int c = 0; c < 4; ++c) {
    __m512 even01 = _mm512_maskz_shuffle_f32x4(all, r[c], r[4 + c], 0x88);
    __m512 odd01 = _mm512_maskz_shuffle_f32x4(all, r[c], r[4 + c], 0xdd);
    __m512 even23 = _mm512_maskz_shuffle_f32x4(all, r[8 + c], r[12 + c], 0x88);
    __m512 odd23 = _mm512_maskz_shuffle_f32x4(all, r[8 + c], r[12 + c], 0xdd);
    out[c] = _mm512_maskz_shuffle_f32x4(all, even01, even23, 0x88);
    out[8 + c] = _mm512_maskz_shuffle_f32x4(all, even01, even23, 0xdd);
    out[4 + c] = _mm512_maskz_shuffle_f32x4(all, odd01, odd23, 0x88);
    out[12 + c] = _mm512_maskz_shuffle_f32x4(all, odd01, odd23, 0xdd);
  }
  for (int i = 0; i < 16; ++i)
    r[i] = out[i];
}

/// Kernel.h's PackBBlock for 48-column panels. Where B is stored
/// transposed (N x K: a forward x W^T's weight) a panel is 48 rows of B
/// read 16 at a time along their k-block, each 16 x 16 block a whole cache
/// line per row in and out. Packers.h's 8 x 8 loop reads 32 bytes of each
/// of a panel's 48 rows in turn; rows a weight's row stride apart (4 KiB)
/// share an L1 set, so most of those loads missed: 0.43 ms per 1024 x 1024
/// weight, hot or cold (pipecc-gemm-bench's packB line). The row-order
/// copy of plain B is Packers.h's. With Stream the stores are
/// non-temporal (`out` 64-byte aligned: Kernel::packBStreaming).
template <bool Stream, int64_t NR = kNr>
void packBPanels512(bool transB, int64_t kc, int64_t n, const float *b,
                    int64_t ldb, int64_t p0, float *out) {
  static_assert(NR % 16 == 0, "panels of whole 16 x 16 blocks");
  if (!transB)
    return packBPanels<NR, Stream>(transB, kc, n, b, ldb, p0, out);
  for (int64_t j0 = 0; j0 < n; j0 += NR, out += kc * NR) {
    int64_t valid = std::min(NR, n - j0);
    for (int64_t g = 0; g < NR / 16; ++g) {
      int64_t rows = std::clamp<int64_t>(valid - 16 * g, 0, 16);
      const float *src = b + (j0 + 16 * g) * ldb + p0;
      for (int64_t p = 0; p < kc; p += 16) {
        int64_t steps = std::min<int64_t>(16, kc - p);
        __mmask16 lanes = steps == 16 ? __mmask16(0xffff)
                                      : __mmask16((1u << steps) - 1);
        __m512 r[16];
        for (int64_t i = 0; i < 16; ++i)
          r[i] = i < rows ? _mm512_maskz_loadu_ps(lanes, src + i * ldb + p)
                          : _mm512_setzero_ps();
        transpose16x16(r);
        for (int64_t i = 0; i < steps; ++i)
          if constexpr (Stream)
            _mm512_stream_ps(out + (p + i) * NR + 16 * g, r[i]);
          else
            _mm512_storeu_ps(out + (p + i) * NR + 16 * g, r[i]);
      }
    }
  }
}

} // namespace

const Kernel &avx512Kernel() {
  static const Kernel kernel = {"avx512 8x48",     512, kMr, kNr, kKc, kMc,
                                microKernelByColumns<16, microKernelColumns<1>,
                                                     microKernelColumns<2>,
                                                     microKernelColumns<3>>,
                                packBPanels512<false>,
                                packBPanels512<true>,
                                packAPanels<kMr>,
                                directMicroKernel,
                                directTile<kWideMr, kWideNr / 16>,
                                kWideMr,
                                kWideNr,
                                packBPanels512<false, kWideNr>};
  return kernel;
}

} // namespace pipecc::rt::gemm

#endif // defined(__x86_64__)
