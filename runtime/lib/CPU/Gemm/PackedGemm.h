//===- PackedGemm.h - GEMM with a B operand packed once, reused -*- C++ -*-===//
//
// A BLAS packs both operands of every GEMM call into the layout its
// micro-kernel reads. For a stage's matmuls with a weight as B (the forward
// X * W^T and the input gradient dY * W) that repacks the whole weight on
// every micro-batch's call: with 32-row micro-batches about a fifth of the
// matmul time (docs/design.md, "Packed weights"). Here op(B) is packed once
// (PackedMatrix) and every later call only packs its small A.
//
// Mechanism only: which kernel a CPU gets, and whether a rank uses this
// path at all, is decided by selectPackedGemmKernel() and its caller.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPU_GEMM_PACKEDGEMM_H
#define PIPECC_RUNTIME_CPU_GEMM_PACKEDGEMM_H

#include <cstdint>
#include <memory>

namespace pipecc::rt::gemm {

struct Kernel;

/// What the last store of a product adds to C (PackedGemm's callers: a
/// Linear's bias and a ReLU after it, instead of a pass over C): C[i][j] +=
/// bias[j] where bias is not null, then, with relu, C = C > 0 or NaN ? C : 0.
struct Epilogue {
  const float *bias = nullptr;
  bool relu = false;
  bool empty() const { return !bias && !relu; }
};

/// op(B), K x N, in the panel layout of one kernel (zero-padded to whole
/// panels). Owns its storage (64-byte aligned).
class PackedMatrix {
public:
  PackedMatrix();
  ~PackedMatrix();
  PackedMatrix(PackedMatrix &&) noexcept;
  PackedMatrix &operator=(PackedMatrix &&) noexcept;

  int64_t rows() const { return k; }    // K
  int64_t columns() const { return n; } // N
  /// Bytes held (the packed copy, padding included).
  int64_t bytes() const;

private:
  friend void packB(const Kernel &, bool, int64_t, int64_t, const float *,
                    int64_t, PackedMatrix &);
  friend void gemmPackedB(const Kernel &, bool, int64_t, float, const float *,
                          int64_t, const PackedMatrix &, float, float *,
                          int64_t, const Epilogue &);
  friend void gemmSmall(const Kernel &, bool, bool, int64_t, int64_t, int64_t,
                        float, const float *, int64_t, const float *, int64_t,
                        float, float *, int64_t, PackedMatrix &,
                        const struct PrefetchRanges &);
  friend void gemmShallow(const Kernel &, bool, int64_t, float, const float *,
                          int64_t, const PackedMatrix &, float, float *,
                          int64_t, const Epilogue &, bool);
  friend void gemmPackingB(const Kernel &, bool, int64_t, float,
                           const float *, int64_t, bool, int64_t, int64_t,
                           const float *, int64_t, PackedMatrix &, float,
                           float *, int64_t, const Epilogue &);
  friend void repackBRows(const Kernel &, bool, const float *, int64_t,
                          int64_t, int64_t, PackedMatrix &);
  /// Storage for a rows x columns op(B) packed for `kernel` (reused when
  /// large enough), the matrix empty until markPacked: a failed allocation
  /// or an unfinished packing leaves no stale shape.
  float *reserve(const Kernel &kernel, int64_t rows, int64_t columns);
  /// The shape, once the storage holds op(B) packed for `kernel`.
  void markPacked(const Kernel &kernel, int64_t rows, int64_t columns);
  int64_t k = 0, n = 0;
  const Kernel *packedFor = nullptr;
  struct Storage;
  std::unique_ptr<Storage> storage;
};

/// The best kernel of this build for this CPU (by CPUID and the OS's saved
/// register state): the one of its widest vector FMA (AVX-512, else AVX2),
/// or null on a CPU without AVX2+FMA (then use the BLAS).
const Kernel *selectPackedGemmKernel();

/// A short name for reports, e.g. "avx2-fma 4x24".
const char *kernelName(const Kernel &kernel);

/// The width of the kernel's vectors in bits (256: AVX2, 512: AVX-512).
int64_t vectorBits(const Kernel &kernel);

/// The depth of the kernel's k-blocks: op(B) is packed and multiplied
/// that many rows at a time.
int64_t kBlockDepth(const Kernel &kernel);

/// Packs op(B) for `kernel`: B is stored row-major with row stride ldb, as
/// a K x N matrix (transB false) or N x K (transB true). Reuses `out`'s
/// storage when large enough.
void packB(const Kernel &kernel, bool transB, int64_t k, int64_t n,
           const float *b, int64_t ldb, PackedMatrix &out);

/// C = alpha * op(A) * B + beta * C, row-major; op(A) is M x K (A stored
/// M x K, or K x M when transA), `b` was packed by packB for `kernel`,
/// C is M x N with row stride ldc. beta = 0 never reads C (NaN-safe, as
/// sgemm). On setThreads()'s threads (Parallel.h); sums in a fixed order,
/// the same for every number of threads (deterministic).
void gemmPackedB(const Kernel &kernel, bool transA, int64_t m, float alpha,
                 const float *a, int64_t lda, const PackedMatrix &b,
                 float beta, float *c, int64_t ldc,
                 const Epilogue &epilogue = {});

/// gemmPackedB with op(B) (stored as for packB) packed into `out` during
/// the product: each panel just before the product's first row block reads
/// it, so that reading B from memory (a weight the optimizer wrote a step
/// ago, long out of cache) overlaps the FMAs instead of taking a pass of
/// its own, and the panel is in L1 when the micro-kernels read it. After
/// it `out` is what packB gives, for later products by the same B.
void gemmPackingB(const Kernel &kernel, bool transA, int64_t m, float alpha,
                  const float *a, int64_t lda, bool transB, int64_t k,
                  int64_t n, const float *b, int64_t ldb, PackedMatrix &out,
                  float beta, float *c, int64_t ldc,
                  const Epilogue &epilogue = {});

/// The rows of a stored B that repackBRows repacks at a time where B is
/// stored transposed: a panel's columns (kernel.nr).
int64_t repackRowGrain(const Kernel &kernel);

/// Repacks into `packed` (op(B) as packB left it for `kernel`, read from
/// `b` with row stride ldb as then) the part that stored rows [firstRow,
/// endRow) of B make up, after those rows changed: an optimizer's update
/// of a weight, repacked while the rows it wrote are still in cache, so
/// that the step's first product by the weight does not repack it from
/// memory. Where B is stored transposed (N x K) its rows are op(B)'s
/// columns: firstRow must start a panel (a multiple of repackRowGrain),
/// and endRow too unless it is N. Every other value of `packed` is left.
void repackBRows(const Kernel &kernel, bool transB, const float *b,
                 int64_t ldb, int64_t firstRow, int64_t endRow,
                 PackedMatrix &packed);

/// Whether an M x N x K product runs the shallow loop order (one k-block,
/// packed B within L2, C walked along its rows). Where it does, gemm()
/// is faster than a BLAS on a cold C (a weight gradient of a micro-batch:
/// 1024 x 1024 x 32 at about 1.15x OpenBLAS, pipecc-gemm-bench), and the
/// runtime's plain sgemm uses it.
bool runsShallow(const Kernel &kernel, int64_t m, int64_t n, int64_t k);

/// The most bytes of packed B with which an M x N x K product (one k-block)
/// runs the shallow loop order: 256 KiB, or for a C too large for L2 half
/// of this CPU's L2 where that is more (runsShallow).
int64_t shallowPackedBBytes(int64_t m, int64_t n);

/// C = alpha * op(A) * op(B) + beta * C with both operands packed in this
/// call (B into a per-thread scratch copy): the plain sgemm of the engine,
/// for products whose B is not reused (a weight gradient dY^T * X).
void gemm(const Kernel &kernel, bool transA, bool transB, int64_t m,
          int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
          const Epilogue &epilogue = {});

/// The epilogue on its own, over an M x N C with row stride ldc: what the
/// runtime applies after a BLAS product.
void applyEpilogue(int64_t m, int64_t n, float *c, int64_t ldc,
                   const Epilogue &epilogue);

/// Whether gemmBatched runs a batch of M x N x K products: small ones, one
/// k-block whose packed B fits in L2 (attention's per-head products).
bool runsBatched(const Kernel &kernel, int64_t m, int64_t n, int64_t k);

/// `batch` products C_i = alpha * op(A_i) * op(B_i) + beta * C_i, operand i
/// at a + i * strideA (b, c alike), each as gemm(); while one runs it
/// prefetches the next one's A and B into L2. Small products from one batch
/// are each too short for the hardware prefetcher to ramp up, so every
/// operand would otherwise come as a cold miss: 64 x 64 x 64 with operands
/// from memory ran at about 60 % of its rate from cache. Call only where
/// runsBatched holds.
void gemmBatched(const Kernel &kernel, bool transA, bool transB, int64_t m,
                 int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                 int64_t strideB, float beta, float *c, int64_t ldc,
                 int64_t strideC, int64_t batch);

} // namespace pipecc::rt::gemm

#endif // PIPECC_RUNTIME_CPU_GEMM_PACKEDGEMM_H
