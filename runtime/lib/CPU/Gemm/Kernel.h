//===- Kernel.h - A packed GEMM's micro-kernel and its blocking -*- C++ -*-===//
//
// Private to the packed GEMM engine (PackedGemm.cpp, the kernels' files, the
// tests and the benchmark). A kernel is a register tile of MR rows of op(A)
// by NR columns of op(B), the layouts its operands are packed in and the
// cache blocking tuned for it:
//   - op(B), K x N, is cut into k-blocks of at most `kc` rows (balanced:
//     equal depths but the last); each k-block into panels of NR columns
//     (the last zero-padded); a panel is its kc x NR values row by row.
//     Blocks and panels follow each other in that order, so that the whole
//     packed B is one stream read front to back by a call.
//   - op(A) is packed per call in blocks of at most `mc` rows by one
//     k-block, each block in micro-panels of MR rows (the last zero-padded),
//     a micro-panel its kc x MR values column by column.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPU_GEMM_KERNEL_H
#define PIPECC_RUNTIME_CPU_GEMM_KERNEL_H

#include <cstdint>
#include <vector>

namespace pipecc::rt::gemm {

/// C tile = alpha * (A micro-panel * B panel) + beta * C tile, over `kc`
/// steps, for the top-left `rows` x `cols` of the MR x NR tile (C is never
/// touched outside it; beta = 0 never reads C). While it runs it prefetches
/// `prefetchLines` 64-byte lines from `prefetch` (the next panel the
/// driver will read), spread over its steps. Then, when `bias` is not null,
/// each row of the tile gets bias[0..cols) added, and with `relu` each
/// value x becomes x > 0 or NaN ? x : 0 (PyTorch's and the CPU lowering's
/// relu, -0.0 included): a Linear's epilogue, in the order the separate
/// loop computed it.
using MicroKernel = void (*)(int64_t kc, const float *a, const float *b,
                             float *c, int64_t ldc, float alpha, float beta,
                             int64_t rows, int64_t cols, const char *prefetch,
                             int64_t prefetchLines, const float *bias,
                             bool relu);

/// A micro-kernel that reads both operands where they lie, for a product
/// so small that packing them costs as much as its FMAs (gemmSmall): tile
/// row i reads op(A)(i, q) at aRows[i][q * aDepth] (aRows: mr pointers; a
/// row past `rows` may repeat a valid one), B's row q at b + q * ldb (B
/// stored K x N, or a packed panel with ldb = nr); only the `cols` valid
/// columns of B and C are read. No epilogue.
using DirectMicroKernel = void (*)(int64_t k, const float *const *aRows,
                                   int64_t aDepth, const float *b,
                                   int64_t ldb, float *c, int64_t ldc,
                                   float alpha, float beta, int64_t rows,
                                   int64_t cols, const char *prefetch,
                                   int64_t prefetchLines);

/// Packs op(B)'s k-block (`kc` rows from row p0 of op(B), all `n`
/// columns) into its panels at `out` (B stored as in packB).
using PackBBlock = void (*)(bool transB, int64_t kc, int64_t n,
                            const float *b, int64_t ldb, int64_t p0,
                            float *out);
/// Packs op(A)'s rows [row0, row0 + rows) x columns [p0, p0 + kc) into
/// micro-panels at `out` (A stored as in gemmPackedB).
using PackABlock = void (*)(bool transA, const float *a, int64_t lda,
                            int64_t row0, int64_t rows, int64_t p0,
                            int64_t kc, float *out);

struct Kernel {
  const char *name;
  /// Width of its vectors (256: AVX2, 512: AVX-512).
  int64_t vectorBits;
  int64_t mr, nr;
  /// Depth of a k-block (packed B's layout: fixed when B is packed).
  int64_t kc;
  /// Rows of op(A) per packed A block, a multiple of mr: the block
  /// (mc x kc floats) stays in L2 while every B panel passes over it.
  int64_t mc;
  MicroKernel microKernel;
  PackBBlock packB;
  /// packB's layout written with non-temporal stores (`out` aligned to the
  /// vectors, as a k-block's panels are in a packed matrix): for a copy
  /// packed well before its use (repackBRows), which would otherwise read
  /// each line it writes and push the caches' contents out.
  PackBBlock packBStreaming;
  PackABlock packA;
  /// Null where the kernel has none (gemmSmall then packs both operands).
  DirectMicroKernel directMicroKernel = nullptr;
  /// A direct micro-kernel for a directWideMr x directWideNr tile, which
  /// gemmSmall takes when B is not transposed and its columns are a
  /// multiple of directWideNr (null: none).
  DirectMicroKernel directWideMicroKernel = nullptr;
  int64_t directWideMr = 0, directWideNr = 0;
  /// packB's block packer for panels of directWideNr columns (each a
  /// kc x directWideNr row-major block, which the wide tile reads with a
  /// row stride of directWideNr): gemmSmall packs a transposed B this way
  /// so that it too takes the wide tile (null: it takes the narrow one).
  PackBBlock packBWide = nullptr;
};

#if defined(__x86_64__)
/// The AVX2+FMA kernel (KernelAvx2.cpp, compiled for AVX2): call its
/// micro-kernel only on a CPU that has both.
const Kernel &avx2FmaKernel();
/// The AVX-512 kernel (KernelAvx512.cpp, compiled for AVX-512F, AVX2 and
/// FMA): call it only on a CPU (and OS) with all three.
const Kernel &avx512Kernel();
#endif

/// Every kernel of this build that this CPU can run, best first (the first
/// is what selectPackedGemmKernel() returns): for the tests, which check
/// each, and the benchmark.
std::vector<const Kernel *> runnableKernels();

} // namespace pipecc::rt::gemm

#endif // PIPECC_RUNTIME_CPU_GEMM_KERNEL_H
