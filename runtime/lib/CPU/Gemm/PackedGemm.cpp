//===- PackedGemm.cpp - Blocking, packing and kernel choice ---------------===//
//
// The mechanism of the packed-B GEMM (PackedGemm.h): the packed matrices'
// storage, the blocking of a call (Kernel.h's layouts) and the loops that
// run a kernel's packers and micro-kernel over the blocks. Plain x86-64
// code: the vector code is in the kernels' files, reached only through
// the kernel selectPackedGemmKernel() returns.
//
// Loop order of a call, for each block of mc rows of op(A):
//   for each k-block: pack the A block (mc x kc) into micro-panels,
//     for each B panel (kc x NR): for each micro-panel of A: micro-kernel.
// A B panel is read from memory once per A block and then from L2 by the
// other row tiles; while they run they prefetch the next panel, so that
// the stream of packed B (one contiguous array) overlaps the FMAs.
//
//===----------------------------------------------------------------------===//
#include "PackedGemm.h"

#include "Kernel.h"
#include "Parallel.h"
#include "pipecc/Runtime/CpuFeatures.h"
#include "pipecc/Runtime/Device.h"
#include "pipecc/Runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include <unistd.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace pipecc::rt::gemm {

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// 64-byte aligned floats, grown (never shrunk) on demand; contents are not
/// kept across growth.
class AlignedBuffer {
public:
  ~AlignedBuffer() { std::free(data_); }
  float *reserve(int64_t floats) {
    if (floats > capacity_) {
      std::free(data_);
      data_ = nullptr;
      capacity_ = 0;
      // A packed weight of 2 MiB or more on huge pages (Device.h).
      data_ = static_cast<float *>(allocateHostMemory(floats * 4, 64));
      if (!data_)
        throw std::bad_alloc();
      capacity_ = floats;
    }
    return data_;
  }
  float *data() const { return data_; }
  int64_t capacity() const { return capacity_; }

private:
  float *data_ = nullptr;
  int64_t capacity_ = 0;
};

/// Depth of the k-blocks for K: at most kernel.kc, all equal but the last
/// (K = 1100 with kc = 1024 gives 552 + 548, not 1024 + 76).
int64_t blockDepth(int64_t k, int64_t kc) {
  return k == 0 ? 0 : ceilDiv(k, ceilDiv(k, kc));
}

/// The A blocks of a call, reused across calls (one per thread).
thread_local AlignedBuffer packedA;

/// Bytes of packed B up to which a shallow product (one k-block) keeps all
/// of B in L2 and walks C row by row (gemmShallow): half of a 512 KiB L2
/// (Zen 3's, where this was set; 32 x 1024 is 129 KiB), leaving room for A
/// and C's lines. On 1 MiB L2s (Zen 4 and 5) 512 KiB sped one weight
/// gradient up and slowed another (docs/design.md, "The K = 64 split"), so
/// it stays the limit where C fits in L2; a larger C may take half of L2
/// (shallowPackedBBytes).
constexpr int64_t kShallowBBytes = 256 * 1024;

/// Micro-kernel calls ahead at which a loop prefetches C's tile. A tile's
/// own prefetch (in the micro-kernel) comes one call too late where C is
/// cold and a call is short: the 8 x 48 tile of a K = 32 weight gradient
/// takes about 100 ns, a miss to memory longer. Measured on Zen 5 with a
/// cold 1024 x 1024 accumulator (pipecc-gemm-bench --grad-rows 32): 138-147
/// GFLOP/s with none, 165-168 at 1 call ahead, 170-171 at 2 and 4, 164-168
/// at 8.
constexpr int64_t kCTilePrefetchCalls = 4;

/// FLOPs below which a product runs on the calling thread alone: waking
/// the others and waiting for them costs about a microsecond.
constexpr double kMinSplitFlops = 2e6;

/// Bytes of C above which the loops prefetch its tiles ahead: a C this
/// large (a weight gradient's accumulator; 256 x 1024 activations) is not
/// in L2 when its tiles come round. A smaller one (a 32-row micro-batch's
/// 128 KiB output) is, and the extra prefetches cost 2-4 % there.
constexpr int64_t kUncachedCBytes = 512 * 1024;

/// Whether the loops prefetch the tiles of an M x N C (kUncachedCBytes):
/// decided for the whole C, also in each part of a product split among
/// threads.
bool prefetchesC(int64_t m, int64_t n) { return m * n * 4 > kUncachedCBytes; }

/// Fetches the cache lines of rows [firstRow, endRow) of a stored matrix
/// (`cols` floats from `origin`, rows `ld` apart) into the cache level
/// `Locality` names (__builtin_prefetch's: 3 L1, 2 L2). Always inlined:
/// GCC 12 finds a function of prefetches alone free of side effects and
/// deletes the calls to it.
template <int Locality>
__attribute__((always_inline)) inline void
prefetchRows(const float *origin, int64_t ld, int64_t firstRow,
             int64_t endRow, int64_t cols) {
  for (int64_t r = firstRow; r < endRow; ++r) {
    auto row = reinterpret_cast<uintptr_t>(origin + r * ld);
    for (uintptr_t line = row & ~uintptr_t(63); line < row + 4 * cols;
         line += 64)
      __builtin_prefetch(reinterpret_cast<const char *>(line), 0, Locality);
  }
}

/// Fetches the lines of C's tile (rows x cols at `tile`) into L1, for a
/// micro-kernel call kCTilePrefetchCalls ahead.
__attribute__((always_inline)) inline void
prefetchCTile(const float *tile, int64_t ldc, int64_t rows, int64_t cols) {
  prefetchRows<3>(tile, ldc, 0, rows, cols);
}
} // namespace


struct PackedMatrix::Storage {
  AlignedBuffer values;
  int64_t depth = 0; // of the k-blocks
};

PackedMatrix::PackedMatrix() = default;
PackedMatrix::~PackedMatrix() = default;
// A moved-from matrix is empty (0 x 0), not a shape without storage.
PackedMatrix::PackedMatrix(PackedMatrix &&other) noexcept
    : k(other.k), n(other.n), packedFor(other.packedFor),
      storage(std::move(other.storage)) {
  other.k = other.n = 0;
  other.packedFor = nullptr;
}
PackedMatrix &PackedMatrix::operator=(PackedMatrix &&other) noexcept {
  if (this != &other) {
    k = other.k;
    n = other.n;
    packedFor = other.packedFor;
    storage = std::move(other.storage);
    other.k = other.n = 0;
    other.packedFor = nullptr;
  }
  return *this;
}

int64_t PackedMatrix::bytes() const {
  return storage ? storage->values.capacity() * 4 : 0;
}

std::vector<const Kernel *> runnableKernels() {
  std::vector<const Kernel *> kernels;
#if defined(__x86_64__)
  if (!missingCpuFeatures("avx,avx2,fma").empty())
    return kernels;
  if (missingCpuFeatures("avx512f").empty())
    kernels.push_back(&avx512Kernel());
  kernels.push_back(&avx2FmaKernel());
#endif
  return kernels;
}

const Kernel *selectPackedGemmKernel() {
  // Policy: the kernel of the CPU's widest FMA. An AVX-512 CPU gets the
  // AVX-512 kernel, whose packed weights and epilogues beat OpenBLAS's
  // SkylakeX kernels on a micro-batch's products (docs/design.md, "Packed
  // weights"); an AVX2 kernel on it would run at half the FMA width. A CPU
  // without AVX2+FMA has no kernel here at all: the BLAS runs everything.
  static const Kernel *const chosen = []() -> const Kernel * {
    std::vector<const Kernel *> kernels = runnableKernels();
    return kernels.empty() ? nullptr : kernels.front();
  }();
  return chosen;
}

const char *kernelName(const Kernel &kernel) { return kernel.name; }

int64_t vectorBits(const Kernel &kernel) { return kernel.vectorBits; }

int64_t kBlockDepth(const Kernel &kernel) { return kernel.kc; }

namespace {
/// packB's checks of B's shape and row stride.
void checkB(bool transB, int64_t k, int64_t n, int64_t ldb) {
  int64_t bColumns = transB ? k : n;
  if (k < 0 || n < 0)
    fail("packed sgemm: negative dimension of B (K=", k, ", N=", n, ")");
  if (ldb < std::max<int64_t>(bColumns, 1))
    fail("packed sgemm: leading dimension of B too small (ldb=", ldb,
         " needs >= ", bColumns, ")");
}
} // namespace

float *PackedMatrix::reserve(const Kernel &kernel, int64_t rows,
                             int64_t columns) {
  k = n = 0;
  packedFor = nullptr;
  if (!storage)
    storage = std::make_unique<Storage>();
  float *packed =
      storage->values.reserve(rows * (ceilDiv(columns, kernel.nr) * kernel.nr));
  storage->depth = blockDepth(rows, kernel.kc);
  return packed;
}

void PackedMatrix::markPacked(const Kernel &kernel, int64_t rows,
                              int64_t columns) {
  k = rows;
  n = columns;
  packedFor = &kernel;
}

void packB(const Kernel &kernel, bool transB, int64_t k, int64_t n,
           const float *b, int64_t ldb, PackedMatrix &out) {
  checkB(transB, k, n, ldb);
  float *packed = out.reserve(kernel, k, n);
  int64_t paddedN = ceilDiv(n, kernel.nr) * kernel.nr;
  int64_t depth = out.storage->depth;
  for (int64_t p0 = 0; p0 < k; p0 += depth)
    kernel.packB(transB, std::min(depth, k - p0), n, b, ldb, p0,
                 packed + p0 * paddedN);
  out.markPacked(kernel, k, n);
}

/// A product of one k-block whose packed B fits L2 (a weight gradient:
/// K = the micro-batch's rows): each row tile of A runs over every B panel
/// in turn, so C (the large operand, usually cold: an accumulator) is read
/// and written along its rows, four sequential streams the hardware
/// prefetcher follows (the micro-kernel fetches its own tile early too).
/// The k-block loop of gemmPackedB would walk C down strided column
/// strips: 1024 x 1024 x 32 with a cold C ran at 26 GFLOP/s that way and
/// 56 this way (OpenBLAS: 53).
void gemmShallow(const Kernel &kernel, bool transA, int64_t m, float alpha,
                 const float *a, int64_t lda, const PackedMatrix &b,
                 float beta, float *c, int64_t ldc, const Epilogue &epilogue,
                 bool prefetchC) {
  int64_t k = b.k, n = b.n, mr = kernel.mr, nr = kernel.nr;
  const float *packedB = b.storage->values.data();
  int64_t rowsPerBlock = ceilDiv(ceilDiv(m, ceilDiv(m, kernel.mc)), mr) * mr;
  float *aBlock = packedA.reserve(rowsPerBlock * k);
  for (int64_t i0 = 0; i0 < m; i0 += rowsPerBlock) {
    int64_t rows = std::min(rowsPerBlock, m - i0);
    kernel.packA(transA, a, lda, i0, rows, 0, k, aBlock);
    for (int64_t t = 0; t * mr < rows; ++t) {
      int64_t tileRows = std::min(mr, rows - t * mr);
      float *cRows = c + (i0 + t * mr) * ldc;
      const float *panel = packedB;
      for (int64_t j0 = 0; j0 < n; j0 += nr, panel += k * nr) {
        // The tile kCTilePrefetchCalls calls on: along this row tile, else
        // at the start of the next (the block's; a next block's first
        // tiles miss).
        int64_t aheadColumn = j0 + kCTilePrefetchCalls * nr;
        int64_t aheadRow = t * mr;
        if (aheadColumn >= n) {
          aheadColumn -= ceilDiv(n, nr) * nr;
          aheadRow += mr;
        }
        if (prefetchC && aheadRow < rows && aheadColumn < n)
          prefetchCTile(c + (i0 + aheadRow) * ldc + aheadColumn, ldc,
                        std::min(mr, rows - aheadRow),
                        std::min(nr, n - aheadColumn));
        kernel.microKernel(k, aBlock + t * k * mr, panel, cRows + j0, ldc,
                           alpha, beta, tileRows, std::min(nr, n - j0),
                           nullptr, 0,
                           epilogue.bias ? epilogue.bias + j0 : nullptr,
                           epilogue.relu);
      }
    }
  }
}

namespace {
/// How many parts (Parallel.h) a product of `flops` with `items` units to
/// share out takes: one where splitting it would cost more than it gains.
int productParts(double flops, int64_t items) {
  int parts = threads();
  if (parts <= 1 || flops < kMinSplitFlops)
    return 1;
  return static_cast<int>(std::min<int64_t>(parts, items));
}

/// gemmShallow split among the threads by rows of C (whole row tiles):
/// each part packs its own rows of A.
void shallowInParts(const Kernel &kernel, bool transA, int64_t m,
                    float alpha, const float *a, int64_t lda,
                    const PackedMatrix &b, float beta, float *c, int64_t ldc,
                    const Epilogue &epilogue) {
  int64_t n = b.columns(), tiles = ceilDiv(m, kernel.mr);
  bool prefetchC = prefetchesC(m, n);
  int parts = productParts(2.0 * double(m) * double(n) * double(b.rows()),
                           tiles);
  runParts(parts, [&](int part) {
    int64_t first = partBegin(tiles, part, parts) * kernel.mr;
    int64_t end = std::min(m, partBegin(tiles, part + 1, parts) * kernel.mr);
    if (end > first)
      gemmShallow(kernel, transA, end - first, alpha,
                  transA ? a + first : a + first * lda, lda, b, beta,
                  c + first * ldc, ldc, epilogue, prefetchC);
  });
}

/// Where gemmPackingB packs op(B) from (stored as for packB).
struct PanelSource {
  bool transB;
  const float *b;
  int64_t ldb;
};

/// Packs the panel of columns [j0, j0 + cols) of op(B)'s k-block at row
/// p0 (depth kc) into `out` (kc x NR, zero-padded): the kernel's block
/// packer over those columns alone.
void packPanel(const Kernel &kernel, const PanelSource &source, int64_t p0,
               int64_t kc, int64_t j0, int64_t cols, float *out) {
  const float *origin =
      source.transB ? source.b + j0 * source.ldb : source.b + j0;
  kernel.packB(source.transB, kc, cols, origin, source.ldb, p0, out);
}

/// Fetches into L2 the t-th of `parts` shares of the rows of op(B) that
/// packPanel(p0, kc, j0, cols) will read: B's rows j0 .. j0 + cols from
/// column p0 where B is stored transposed, else rows p0 .. p0 + kc from
/// column j0. The panel being multiplied meanwhile hides their misses.
__attribute__((always_inline)) inline void
prefetchPanelSource(const PanelSource &source, int64_t p0, int64_t kc,
                    int64_t j0, int64_t cols, int64_t part, int64_t parts) {
  const float *origin = source.transB ? source.b + j0 * source.ldb + p0
                                      : source.b + p0 * source.ldb + j0;
  int64_t rows = source.transB ? cols : kc;
  prefetchRows<2>(origin, source.ldb, rows * part / parts,
                  rows * (part + 1) / parts, source.transB ? kc : cols);
}

/// gemmPackedB's blocked loop over packed B (k x n, k-blocks of `depth`)
/// at `packedB`. With `source`, packed B is written here: each panel from
/// `source` just before the first row block's micro-kernels read it, so
/// that the panel is in L1 when they do and B's reads from memory overlap
/// their FMAs (the micro-kernels already prefetch the next panel's lines,
/// which is then where the next packing writes). Only C's columns
/// [jBegin, jEnd) (whole panels: jBegin a multiple of kernel.nr, jEnd too
/// or n), a part of a product split among threads (Parallel.h).
void runBlocked(const Kernel &kernel, bool transA, int64_t m, float alpha,
                const float *a, int64_t lda, int64_t k, int64_t n,
                int64_t depth, float *packedB, float beta, float *c,
                int64_t ldc, const Epilogue &epilogue,
                const PanelSource *source, int64_t jBegin, int64_t jEnd) {
  int64_t mr = kernel.mr, nr = kernel.nr;
  int64_t paddedN = ceilDiv(n, nr) * nr;
  // Rows per A block: balanced like the k-blocks, whole micro-panels.
  int64_t rowsPerBlock = ceilDiv(ceilDiv(m, ceilDiv(m, kernel.mc)), mr) * mr;
  float *aBlock = packedA.reserve(rowsPerBlock * depth);
  bool prefetchC = prefetchesC(m, n);

  for (int64_t i0 = 0; i0 < m; i0 += rowsPerBlock) {
    int64_t rows = std::min(rowsPerBlock, m - i0);
    int64_t tiles = ceilDiv(rows, mr);
    bool lastRowBlock = i0 + rows == m;
    bool packing = source && i0 == 0;
    for (int64_t p0 = 0; p0 < k; p0 += depth) {
      int64_t kc = std::min(depth, k - p0);
      kernel.packA(transA, a, lda, i0, rows, p0, kc, aBlock);
      // The first k-block applies beta, the later ones add to C; the last
      // one stores the epilogue.
      float blockBeta = p0 == 0 ? beta : 1.0f;
      bool lastBlock = p0 + kc == k;
      const float *blockBias = lastBlock ? epilogue.bias : nullptr;
      bool blockRelu = lastBlock && epilogue.relu;
      float *panel = packedB + p0 * paddedN + jBegin * kc;
      for (int64_t j0 = jBegin; j0 < jEnd; j0 += nr, panel += kc * nr) {
        int64_t cols = std::min(nr, n - j0);
        if (packing)
          packPanel(kernel, *source, p0, kc, j0, cols, panel);
        // The next panel this call reads (its depth): the following one of
        // its columns in the packed array, or their first in the next
        // k-block, or the first again for the next A block.
        const float *next = panel + kc * nr;
        int64_t nextDepth = kc;
        if (j0 + nr >= jEnd) {
          nextDepth = std::min(depth, k - p0 - kc);
          next = packedB + (p0 + kc) * paddedN + jBegin * nextDepth;
          if (p0 + kc == k) {
            nextDepth = lastRowBlock ? 0 : std::min(depth, k);
            next = packedB + jBegin * nextDepth;
          }
        }
        int64_t lines = nextDepth * nr * 4 / 64;
        int64_t linesPerTile = ceilDiv(lines, tiles);
        // Packing, the next panel's depth and columns (none after the last).
        int64_t sourceP0 = j0 + nr < jEnd ? p0 : p0 + kc;
        int64_t sourceJ0 = j0 + nr < jEnd ? j0 + nr : jBegin;
        bool sourceNext = packing && sourceP0 < k;
        for (int64_t t = 0; t < tiles; ++t) {
          // C's tile kCTilePrefetchCalls calls on: down this panel's
          // column, else in the next panel's (this k-block's).
          int64_t aheadTile = t + kCTilePrefetchCalls, aheadColumn = j0;
          if (aheadTile >= tiles) {
            aheadTile -= tiles;
            aheadColumn += nr;
          }
          if (prefetchC && aheadColumn < jEnd && aheadTile < tiles)
            prefetchCTile(c + (i0 + aheadTile * mr) * ldc + aheadColumn, ldc,
                          std::min(mr, rows - aheadTile * mr),
                          std::min(nr, n - aheadColumn));
          if (sourceNext)
            prefetchPanelSource(*source, sourceP0,
                                std::min(depth, k - sourceP0), sourceJ0,
                                std::min(nr, n - sourceJ0), t, tiles);
          int64_t first = std::min(lines, t * linesPerTile);
          int64_t count = std::min(lines, first + linesPerTile) - first;
          kernel.microKernel(kc, aBlock + t * kc * mr, panel,
                             c + (i0 + t * mr) * ldc + j0, ldc, alpha,
                             blockBeta, std::min(mr, rows - t * mr), cols,
                             reinterpret_cast<const char *>(next) + 64 * first,
                             count, blockBias ? blockBias + j0 : nullptr,
                             blockRelu);
        }
      }
    }
  }
}

/// runBlocked over all of C's columns, split among the threads by panels.
void blockedInParts(const Kernel &kernel, bool transA, int64_t m, float alpha,
                    const float *a, int64_t lda, int64_t k, int64_t n,
                    int64_t depth, float *packedB, float beta, float *c,
                    int64_t ldc, const Epilogue &epilogue,
                    const PanelSource *source) {
  int64_t panels = ceilDiv(n, kernel.nr);
  int parts = productParts(2.0 * double(m) * double(n) * double(k), panels);
  runParts(parts, [&](int part) {
    int64_t jBegin = partBegin(panels, part, parts) * kernel.nr;
    int64_t jEnd = std::min(n, partBegin(panels, part + 1, parts) * kernel.nr);
    runBlocked(kernel, transA, m, alpha, a, lda, k, n, depth, packedB, beta, c,
               ldc, epilogue, source, jBegin, jEnd);
  });
}
} // namespace

int64_t repackRowGrain(const Kernel &kernel) { return kernel.nr; }

void repackBRows(const Kernel &kernel, bool transB, const float *b,
                 int64_t ldb, int64_t firstRow, int64_t endRow,
                 PackedMatrix &packed) {
  if (packed.packedFor != &kernel || !packed.storage)
    fail("packed sgemm: repacking rows of a B not packed for kernel ",
         kernel.name);
  int64_t k = packed.k, n = packed.n, nr = kernel.nr;
  int64_t storedRows = transB ? n : k;
  checkB(transB, k, n, ldb);
  if (firstRow < 0 || firstRow > endRow || endRow > storedRows)
    fail("packed sgemm: rows [", firstRow, ", ", endRow,
         ") outside B's ", storedRows, " stored rows");
  if (transB && (firstRow % nr != 0 || (endRow % nr != 0 && endRow != n)))
    fail("packed sgemm: rows [", firstRow, ", ", endRow,
         ") of a transposed B do not start and end at panels of ", nr);
  int64_t depth = packed.storage->depth;
  int64_t paddedN = ceilDiv(n, nr) * nr;
  float *values = packed.storage->values.data();
  // A k-block starts at p0 * paddedN, its panel of columns j0 at j0 * kc
  // within it, a row p of that panel at (p - p0) * nr.
  // Non-temporal stores: the copy is read at the next step's first product
  // by the weight, long after, and a write-allocating store would first
  // read each line it overwrites (a 1024 x 1024 weight's two copies took
  // 0.66 ms each that way, 0.27 with these).
  if (transB) {
    for (int64_t j0 = firstRow; j0 < endRow; j0 += nr)
      for (int64_t p0 = 0; p0 < k; p0 += depth) {
        int64_t kc = std::min(depth, k - p0);
        kernel.packBStreaming(true, kc, std::min(nr, n - j0), b + j0 * ldb,
                              ldb, p0, values + p0 * paddedN + j0 * kc);
      }
  } else {
    // Plain B: the rows are op(B)'s, a range within each k-block, written
    // panel by panel (a panel's rows are contiguous in it).
    for (int64_t p0 = depth == 0 ? endRow : firstRow / depth * depth;
         p0 < endRow; p0 += depth) {
      int64_t kc = std::min(depth, k - p0);
      int64_t r0 = std::max(firstRow, p0), r1 = std::min(endRow, p0 + kc);
      float *block = values + p0 * paddedN + (r0 - p0) * nr;
      for (int64_t j0 = 0; j0 < n; j0 += nr)
        kernel.packBStreaming(false, r1 - r0, std::min(nr, n - j0), b + j0,
                              ldb, r0, block + j0 * kc);
    }
  }
#if defined(__x86_64__)
  // Non-temporal stores are weakly ordered: done before anything else
  // reads the copy.
  _mm_sfence();
#endif
}

namespace {
/// A product's checks of op(A) (m x k) and C (m x n).
void checkAAndC(bool transA, int64_t m, int64_t k, int64_t n, int64_t lda,
                int64_t ldc) {
  if (m < 0)
    fail("packed sgemm: negative dimension (M=", m, ")");
  int64_t aColumns = transA ? m : k;
  if (lda < std::max<int64_t>(aColumns, 1) || ldc < std::max<int64_t>(n, 1))
    fail("packed sgemm: leading dimension too small (lda=", lda,
         " needs >= ", aColumns, ", ldc=", ldc, " needs >= ", n, ")");
}

/// The product when there is nothing to multiply (K = 0 or alpha = 0; as
/// sgemm, A and B are not read): C = beta * C, where beta = 0 must not read
/// C, then the epilogue.
void scaleOnly(int64_t m, int64_t n, float beta, float *c, int64_t ldc,
               const Epilogue &epilogue) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
  applyEpilogue(m, n, c, ldc, epilogue);
}

/// Whether gemmPackedB runs the blocked loop (runBlocked) for a product:
/// there is something to multiply, and it is not a shallow one.
bool runsBlocked(const Kernel &kernel, int64_t m, int64_t n, int64_t k,
                 float alpha) {
  return m > 0 && n > 0 && k > 0 && alpha != 0.0f &&
         !(blockDepth(k, kernel.kc) == k && runsShallow(kernel, m, n, k));
}
} // namespace

void gemmPackedB(const Kernel &kernel, bool transA, int64_t m, float alpha,
                 const float *a, int64_t lda, const PackedMatrix &b,
                 float beta, float *c, int64_t ldc, const Epilogue &epilogue) {
  int64_t k = b.k, n = b.n;
  if (b.packedFor != &kernel && b.packedFor)
    fail("packed sgemm: B was packed for kernel ", b.packedFor->name,
         ", not ", kernel.name);
  checkAAndC(transA, m, k, n, lda, ldc);
  if (m == 0 || n == 0)
    return;
  if (k == 0 || alpha == 0.0f)
    return scaleOnly(m, n, beta, c, ldc, epilogue);
  if (!runsBlocked(kernel, m, n, k, alpha))
    return shallowInParts(kernel, transA, m, alpha, a, lda, b, beta, c, ldc,
                          epilogue);
  blockedInParts(kernel, transA, m, alpha, a, lda, k, n, b.storage->depth,
                 b.storage->values.data(), beta, c, ldc, epilogue, nullptr);
}

void gemmPackingB(const Kernel &kernel, bool transA, int64_t m, float alpha,
                  const float *a, int64_t lda, bool transB, int64_t k,
                  int64_t n, const float *b, int64_t ldb, PackedMatrix &out,
                  float beta, float *c, int64_t ldc,
                  const Epilogue &epilogue) {
  // Where the product would not run the blocked loop (or not at all), pack
  // first: out must hold op(B) afterwards either way.
  if (!runsBlocked(kernel, m, n, k, alpha)) {
    packB(kernel, transB, k, n, b, ldb, out);
    return gemmPackedB(kernel, transA, m, alpha, a, lda, out, beta, c, ldc,
                       epilogue);
  }
  checkB(transB, k, n, ldb);
  checkAAndC(transA, m, k, n, lda, ldc);
  float *packed = out.reserve(kernel, k, n);
  int64_t depth = out.storage->depth;
  PanelSource source{transB, b, ldb};
  blockedInParts(kernel, transA, m, alpha, a, lda, k, n, depth, packed, beta,
                 c, ldc, epilogue, &source);
  out.markPacked(kernel, k, n);
}

int64_t shallowPackedBBytes(int64_t m, int64_t n) {
  // A C too large for L2 (prefetchesC: a weight gradient's accumulator)
  // takes the row walk with a packed B of up to half of L2. The blocked
  // loop would walk it down column strips, whose rows a row stride of a
  // multiple of 4 KiB (1024 floats) puts in the same few L1 sets: on Zen 5
  // (1 MiB L2) 256 x 1024 x 64 with a cold C ran at 190-195 GFLOP/s
  // blocked and 215-220 shallow (its neighbours N = 1008 and 1040 at
  // 223-238 blocked; docs/design.md, "The K = 64 split"). Where the L2 is
  // not known, or no larger than 512 KiB, the limit stays.
  static const int64_t halfOfL2 = [] {
    long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return bytes > 0 ? int64_t(bytes) / 2 : int64_t(0);
  }();
  return prefetchesC(m, n) ? std::max(kShallowBBytes, halfOfL2)
                           : kShallowBBytes;
}

bool runsShallow(const Kernel &kernel, int64_t m, int64_t n, int64_t k) {
  int64_t paddedN = ceilDiv(n, kernel.nr) * kernel.nr;
  return k > 0 && k <= kernel.kc &&
         k * paddedN * 4 <= shallowPackedBBytes(m, n) && m > kernel.mr;
}

namespace {
/// The bytes a stored matrix of `rows` rows of `columns` floats with row
/// stride ld spans, from its first element.
int64_t spanBytes(int64_t rows, int64_t columns, int64_t ld) {
  return rows == 0 || columns == 0 ? 0 : ((rows - 1) * ld + columns) * 4;
}
} // namespace

/// Lines to prefetch: one or two ranges of 64-byte lines, handed out in
/// order, a share per micro-kernel call.
struct PrefetchRanges {
  const char *start[2] = {nullptr, nullptr};
  int64_t lines[2] = {0, 0};
  int64_t total() const { return lines[0] + lines[1]; }
  /// The part of lines [first, first + count) within one range (the
  /// micro-kernel takes one contiguous range per call).
  std::pair<const char *, int64_t> slice(int64_t first, int64_t count) const {
    int64_t range = first < lines[0] ? 0 : 1;
    int64_t offset = range == 0 ? first : first - lines[0];
    int64_t left = std::max<int64_t>(lines[range] - offset, 0);
    return {start[range] + 64 * offset, std::min(count, left)};
  }
};

/// One small product, each row tile of A over every B panel (as
/// gemmShallow), the micro-kernels prefetching `prefetch` meanwhile. With a
/// direct micro-kernel A is read where it lies and so is B unless stored
/// transposed (then packed into `scratch`); else both are packed here.
void gemmSmall(const Kernel &kernel, bool transA, bool transB, int64_t m,
               int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
               PackedMatrix &scratch, const PrefetchRanges &prefetch) {
  int64_t mr = kernel.mr, nr = kernel.nr;
  if (kernel.directMicroKernel) {
    DirectMicroKernel tile = kernel.directMicroKernel;
    // The wide tile where B's columns fill it: B read in place, or a
    // transposed B packed into its panels (attention's Q K^T and dO V^T
    // took the narrow tile and its 16-column remainder: 62-75 % of the best
    // rate in the GPT's step, against 85-90 % for P V).
    bool wide = kernel.directWideMicroKernel && n % kernel.directWideNr == 0 &&
                (!transB || kernel.packBWide);
    if (wide) {
      tile = kernel.directWideMicroKernel;
      mr = kernel.directWideMr;
      nr = kernel.directWideNr;
    }
    if (transB && wide)
      // One k-block (k <= kc: runsBatched), whole panels (n % nr == 0).
      kernel.packBWide(transB, k, n, b, ldb, 0, scratch.reserve(kernel, k, n));
    else if (transB)
      packB(kernel, transB, k, n, b, ldb, scratch);
    const float *panels = transB ? scratch.storage->values.data() : b;
    int64_t panelStride = transB ? k * nr : nr; // from one panel to the next
    int64_t rowStride = transB ? nr : ldb;      // B's row q to q + 1
    int64_t calls = ceilDiv(m, mr) * ceilDiv(n, nr);
    int64_t lines = prefetch.total();
    int64_t linesPerCall = ceilDiv(lines, calls);
    int64_t call = 0;
    const float *rows[16];
    for (int64_t t = 0; t * mr < m; ++t) {
      int64_t valid = std::min(mr, m - t * mr);
      for (int64_t i = 0; i < mr; ++i) {
        int64_t row = t * mr + std::min(i, valid - 1);
        rows[i] = transA ? a + row : a + row * lda;
      }
      const float *panel = panels;
      for (int64_t j0 = 0; j0 < n; j0 += nr, panel += panelStride, ++call) {
        int64_t first = std::min(lines, call * linesPerCall);
        auto [from, count] = prefetch.slice(
            first, std::min(lines, first + linesPerCall) - first);
        tile(k, rows, transA ? lda : 1, panel, rowStride,
             c + t * mr * ldc + j0, ldc, alpha, beta, valid,
             std::min(nr, n - j0), from, count);
      }
    }
    return;
  }
  packB(kernel, transB, k, n, b, ldb, scratch);
  const float *packedB = scratch.storage->values.data();
  float *aBlock = packedA.reserve(ceilDiv(m, mr) * mr * k);
  kernel.packA(transA, a, lda, 0, m, 0, k, aBlock);
  int64_t calls = ceilDiv(m, mr) * ceilDiv(n, nr);
  int64_t lines = prefetch.total();
  int64_t linesPerCall = ceilDiv(lines, calls);
  int64_t call = 0;
  for (int64_t t = 0; t * mr < m; ++t) {
    const float *panel = packedB;
    for (int64_t j0 = 0; j0 < n; j0 += nr, panel += k * nr, ++call) {
      int64_t first = std::min(lines, call * linesPerCall);
      auto [from, count] = prefetch.slice(
          first, std::min(lines, first + linesPerCall) - first);
      kernel.microKernel(k, aBlock + t * k * mr, panel, c + t * mr * ldc + j0,
                         ldc, alpha, beta, std::min(mr, m - t * mr),
                         std::min(nr, n - j0), from, count, nullptr, false);
    }
  }
}

bool runsBatched(const Kernel &kernel, int64_t m, int64_t n, int64_t k) {
  int64_t paddedN = ceilDiv(n, kernel.nr) * kernel.nr;
  return m > 0 && n > 0 && k > 0 && k <= kernel.kc && m <= kernel.mc &&
         k * paddedN * 4 <= kShallowBBytes;
}

void gemmBatched(const Kernel &kernel, bool transA, bool transB, int64_t m,
                 int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                 int64_t strideB, float beta, float *c, int64_t ldc,
                 int64_t strideC, int64_t batch) {
  if (!runsBatched(kernel, m, n, k))
    fail("packed sgemm: gemmBatched called for ", m, " x ", n, " x ", k,
         ", which runsBatched rejects");
  int64_t aLines = ceilDiv(
      transA ? spanBytes(k, m, lda) : spanBytes(m, k, lda), 64);
  int64_t bLines = ceilDiv(
      transB ? spanBytes(n, k, ldb) : spanBytes(k, n, ldb), 64);
  // Split among the threads by whole products of the batch, each part
  // prefetching the next of its own; where the outputs overlap (a stride
  // below one C), in order on one thread, as sgemm calls one after another.
  bool disjoint = m == 0 || n == 0 || strideC >= (m - 1) * ldc + n;
  int parts = disjoint ? productParts(2.0 * double(m) * double(n) *
                                          double(k) * double(batch),
                                      batch)
                       : 1;
  runParts(parts, [&](int part) {
    // One per thread, reused: its storage grows to the largest B seen.
    thread_local PackedMatrix scratch;
    int64_t first = partBegin(batch, part, parts);
    int64_t end = partBegin(batch, part + 1, parts);
    for (int64_t i = first; i < end; ++i) {
      PrefetchRanges next;
      if (i + 1 < end) {
        next.start[0] = reinterpret_cast<const char *>(a + (i + 1) * strideA);
        next.lines[0] = aLines;
        next.start[1] = reinterpret_cast<const char *>(b + (i + 1) * strideB);
        next.lines[1] = bLines;
      }
      gemmSmall(kernel, transA, transB, m, n, k, alpha, a + i * strideA, lda,
                b + i * strideB, ldb, beta, c + i * strideC, ldc, scratch,
                next);
    }
  });
}

void gemm(const Kernel &kernel, bool transA, bool transB, int64_t m,
          int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc,
          const Epilogue &epilogue) {
  // One per thread, reused: its storage grows to the largest B seen.
  thread_local PackedMatrix scratch;
  gemmPackingB(kernel, transA, m, alpha, a, lda, transB, k, n, b, ldb,
               scratch, beta, c, ldc, epilogue);
}

void applyEpilogue(int64_t m, int64_t n, float *c, int64_t ldc,
                   const Epilogue &epilogue) {
  if (epilogue.empty())
    return;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float x = c[i * ldc + j];
      if (epilogue.bias)
        x = x + epilogue.bias[j];
      // As the CPU lowering's relu: x > 0 or NaN keeps x, else +0.0.
      if (epilogue.relu && !(x > 0.0f) && !std::isnan(x))
        x = 0.0f;
      c[i * ldc + j] = x;
    }
}

} // namespace pipecc::rt::gemm
