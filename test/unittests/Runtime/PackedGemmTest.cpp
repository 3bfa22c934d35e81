//===- PackedGemmTest.cpp - The GEMM with B packed once --------------------===//
//
// gemmPackedB against a plain triple loop in double precision, for every
// transpose, beta 0 and 1, alpha != 1, odd shapes (edge tiles in both
// directions, K not a multiple of the k-block), leading dimensions beyond
// the rows, and a PackedMatrix repacked with other shapes. Each case runs
// with the CPU's kernel as built, and with a copy of it blocked small (kc =
// 7, mc = 8) so that small shapes cross several k-blocks and A blocks.
// They run for every kernel this CPU can run (runnableKernels(): on an
// AVX-512 CPU the AVX-512 and the AVX2 kernel), none where it has no
// AVX2+FMA.
//
//===----------------------------------------------------------------------===//
#include "GemmReference.h"
#include "CPU/Gemm/Kernel.h"
#include "CPU/Gemm/PackedGemm.h"
#include "CPU/Gemm/Parallel.h"
#include "pipecc/Runtime/CpuFeatures.h"
#include "pipecc/Runtime/Error.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using namespace pipecc::rt::gemm;

namespace {

using Case = pipecc::test::GemmCase;

/// The cases below run once per kernel of runnableKernels().
class PackedGemmKernel : public ::testing::TestWithParam<const Kernel *> {};

/// Largest |gemmPackedB - naive| over C (GemmReference.h). `packed` is
/// (re)packed here.
double worstError(const Kernel &kernel, const Case &g, std::mt19937 &random,
                  PackedMatrix &packed) {
  return pipecc::test::worstGemmError(
      g, random, [&](const float *a, int64_t lda, const float *b, int64_t ldb,
                     float *c, int64_t ldc) {
        packB(kernel, g.transB, g.k, g.n, b, ldb, packed);
        EXPECT_EQ(packed.rows(), g.k);
        EXPECT_EQ(packed.columns(), g.n);
        EXPECT_GE(packed.bytes(), int64_t(sizeof(float)) * g.k * g.n);
        gemmPackedB(kernel, g.transA, g.m, g.alpha, a, lda, packed, g.beta, c,
                    ldc);
      });
}

/// The CPU's kernel, and the same blocked small.
std::vector<Kernel> kernelsUnderTest(const Kernel &kernel) {
  Kernel small = kernel;
  small.kc = 7;
  small.mc = 2 * kernel.mr;
  return {kernel, small};
}

using Shape = std::tuple<int64_t, int64_t, int64_t>;

// Every M, N and K of 1, 3, 5, 17, 31, 32, 33, 100, 257 in some triple:
// M not a multiple of the register tile's rows, N not of its columns, and
// K above one k-block of the kernel as built (1100, 2100).
const Shape kShapes[] = {{1, 1, 1},     {3, 5, 17},    {5, 31, 3},
                         {17, 33, 100}, {31, 32, 33},  {32, 100, 31},
                         {33, 17, 257}, {100, 3, 5},   {257, 24, 32},
                         {32, 257, 1},  {1, 100, 257}, {5, 49, 1100},
                         {33, 25, 2100}};

TEST_P(PackedGemmKernel, MatchesNaiveLoopForEveryTransposeBetaAndShape) {
  const Kernel *selected = GetParam();
  std::mt19937 random(11);
  int checked = 0;
  for (const Kernel &kernel : kernelsUnderTest(*selected)) {
    PackedMatrix packed; // repacked by every case: shapes change
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (float beta : {0.0f, 1.0f})
          for (auto [m, n, k] : kShapes) {
            Case g{transA, transB, m, n, k, 1.0f, beta, 3, 1, 2};
            EXPECT_LT(worstError(kernel, g, random, packed), 1e-5)
                << kernelName(kernel) << " kc=" << kernel.kc
                << " trans_a=" << transA << " trans_b=" << transB
                << " beta=" << beta << " M=" << m << " N=" << n
                << " K=" << k;
            ++checked;
          }
  }
  EXPECT_EQ(checked, 2 * 8 * std::size(kShapes));
}

TEST_P(PackedGemmKernel, AlphaAndBetaScaleLikeSgemm) {
  const Kernel *selected = GetParam();
  std::mt19937 random(12);
  for (const Kernel &kernel : kernelsUnderTest(*selected)) {
    PackedMatrix packed;
    for (float alpha : {-0.5f, 3.0f})
      for (float beta : {0.0f, 1.0f, 0.25f}) {
        Case g{true, false, 37, 29, 41, alpha, beta, 0, 2, 1};
        EXPECT_LT(worstError(kernel, g, random, packed), 1e-5)
            << "kc=" << kernel.kc << " alpha=" << alpha << " beta=" << beta;
      }
    // K = 0, or alpha = 0: C = beta * C.
    Case empty{false, true, 5, 6, 0, 1.0f, 0.5f, 1, 1, 3};
    EXPECT_LT(worstError(kernel, empty, random, packed), 1e-7);
    Case noProduct{false, true, 5, 6, 7, 0.0f, 0.5f, 1, 1, 3};
    EXPECT_LT(worstError(kernel, noProduct, random, packed), 1e-7);
  }
}

TEST_P(PackedGemmKernel, BetaZeroNeverReadsC) {
  const Kernel *selected = GetParam();
  std::mt19937 random(13);
  for (const Kernel &kernel : kernelsUnderTest(*selected)) {
    PackedMatrix packed;
    // Full and partial tiles, one and several k-blocks, K = 0.
    for (auto [m, n, k] : {Shape{32, 48, 64}, Shape{33, 50, 1030},
                           Shape{3, 7, 5}, Shape{4, 5, 0}}) {
      Case g{false, true, m, n, k, 1.0f, 0.0f, 1, 1, 3, /*nanC=*/true};
      EXPECT_LT(worstError(kernel, g, random, packed), 1e-5)
          << "kc=" << kernel.kc << " M=" << m << " N=" << n << " K=" << k;
    }
  }
}

TEST_P(PackedGemmKernel, RepackingReusesStorageAndIsDeterministic) {
  const Kernel *selected = GetParam();
  const Kernel &kernel = *selected;
  std::mt19937 random(14);
  PackedMatrix packed;
  EXPECT_EQ(packed.bytes(), 0);
  // Large, then smaller (storage kept), then another aspect ratio.
  for (auto [m, n, k] : {Shape{17, 100, 257}, Shape{5, 3, 31},
                         Shape{31, 257, 17}, Shape{3, 33, 100}}) {
    Case g{false, false, m, n, k, 1.0f, 1.0f, 0, 0, 0};
    int64_t heldBefore = packed.bytes();
    EXPECT_LT(worstError(kernel, g, random, packed), 1e-5)
        << "M=" << m << " N=" << n << " K=" << k;
    // Padded to whole panels of kernel.nr columns.
    int64_t needed = 4 * k * ((n + kernel.nr - 1) / kernel.nr) * kernel.nr;
    EXPECT_GE(packed.bytes(), needed);
    EXPECT_EQ(packed.bytes(), std::max(heldBefore, needed));
  }

  // The same call twice: bit for bit the same C.
  int64_t m = 33, n = 70, k = 300;
  std::vector<float> a(m * k), b(n * k), c1(m * n), c2(m * n);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (float &x : a)
    x = uniform(random);
  for (float &x : b)
    x = uniform(random);
  packB(kernel, true, k, n, b.data(), k, packed);
  gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, 0.0f, c1.data(),
              n);
  gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, 0.0f, c2.data(),
              n);
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)), 0);

  // Moved: the storage goes along, the source is left empty (0 x 0).
  PackedMatrix moved = std::move(packed);
  EXPECT_EQ(moved.rows(), k);
  EXPECT_EQ(moved.columns(), n);
  EXPECT_EQ(packed.rows(), 0);
  EXPECT_EQ(packed.columns(), 0);
  EXPECT_EQ(packed.bytes(), 0);
  gemmPackedB(kernel, false, m, 1.0f, a.data(), k, moved, 0.0f, c2.data(),
              n);
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * sizeof(float)), 0);
}

TEST_P(PackedGemmKernel, MisuseIsAnErrorNotAWrongResult) {
  const Kernel *selected = GetParam();
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 0.0f);
  PackedMatrix packed;
  Kernel other = *selected;
  packB(other, false, 4, 4, b.data(), 4, packed);
  EXPECT_THROW(gemmPackedB(*selected, false, 4, 1.0f, a.data(), 4, packed,
                           0.0f, c.data(), 4),
               pipecc::rt::RuntimeError);
  EXPECT_THROW(packB(*selected, true, 8, 4, b.data(), 7, packed),
               pipecc::rt::RuntimeError);
  packB(*selected, false, 4, 4, b.data(), 4, packed);
  EXPECT_THROW(gemmPackedB(*selected, false, 4, 1.0f, a.data(), 3, packed,
                           0.0f, c.data(), 4),
               pipecc::rt::RuntimeError);
  EXPECT_THROW(gemmPackedB(*selected, false, 4, 1.0f, a.data(), 4, packed,
                           0.0f, c.data(), 3),
               pipecc::rt::RuntimeError);
}

// gemm() packs B per call into a per-thread copy and runs the same loops:
// bit-identical to packB + gemmPackedB, for the weight gradient's shape
// (dY^T * X: A transposed, K the micro-batch's rows, beta = 1; the shallow
// loop order) and a deep one.
TEST_P(PackedGemmKernel, PerCallPackingEqualsPackedOnce) {
  const Kernel *kernel = GetParam();
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (auto [transA, m, n, k] :
       {std::tuple{true, int64_t(300), int64_t(200), int64_t(32)},
        std::tuple{false, int64_t(70), int64_t(90), int64_t(600)}}) {
    std::vector<float> a(m * k), b(k * n), c(m * n);
    for (std::vector<float> *x : {&a, &b, &c})
      for (float &v : *x)
        v = uniform(random);
    std::vector<float> expected = c;
    int64_t lda = transA ? m : k;
    PackedMatrix packed;
    packB(*kernel, false, k, n, b.data(), n, packed);
    gemmPackedB(*kernel, transA, m, 1.0f, a.data(), lda, packed, 1.0f,
                expected.data(), n);
    gemm(*kernel, transA, false, m, n, k, 1.0f, a.data(), lda, b.data(), n,
         1.0f, c.data(), n);
    EXPECT_EQ(0, std::memcmp(c.data(), expected.data(), c.size() * 4))
        << "m=" << m << " n=" << n << " k=" << k;
  }
}

// The loop order follows C's size: a C too large for L2 (a weight
// gradient's accumulator) takes the shallow row walk with a packed B of up
// to half of L2 where that is more than the 256 KiB that bounds a C that
// fits (shallowPackedBBytes, L2 read as the runtime does). Each limit is
// exact: N one panel wider crosses it. On an L2 of 1 MiB or more 256 x 1024
// x 64 takes the row walk and 64 x 1024 x 64 (C within L2) does not. The
// product is held to the naive loop, as a weight gradient (A transposed,
// beta 1).
TEST_P(PackedGemmKernel, ALargeCTakesTheRowWalkWithUpToHalfOfL2) {
  const Kernel *kernel = GetParam();
  const int64_t small = 256 * 1024;
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  int64_t large = std::max<int64_t>(small, l2 > 0 ? l2 / 2 : 0);
  EXPECT_EQ(shallowPackedBBytes(64, 1024), small);   // C of 256 KiB
  EXPECT_EQ(shallowPackedBBytes(256, 1024), large);  // C of 1 MiB
  // The widest N (whole panels) within each limit at K = 64, and one
  // panel more.
  const int64_t k = 64, nr = kernel->nr;
  for (auto [m, limit] : {std::pair{int64_t(64), small},
                          std::pair{int64_t(4096), large}}) {
    int64_t n = limit / (4 * k) / nr * nr;
    EXPECT_TRUE(runsShallow(*kernel, m, n, k)) << "M=" << m << " N=" << n;
    EXPECT_FALSE(runsShallow(*kernel, m, n + nr, k))
        << "M=" << m << " N=" << n + nr;
  }
  if (l2 >= 1024 * 1024) {
    EXPECT_TRUE(runsShallow(*kernel, 256, 1024, 64));
    EXPECT_FALSE(runsShallow(*kernel, 64, 1024, 64));
  }
  std::mt19937 random(23);
  Case g{true, false, 256, 1024, 64, 1.0f, 1.0f, 3, 1, 2};
  EXPECT_LT(pipecc::test::worstGemmError(
                g, random,
                [&](const float *a, int64_t lda, const float *b, int64_t ldb,
                    float *c, int64_t ldc) {
                  gemm(*kernel, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a,
                       lda, b, ldb, g.beta, c, ldc);
                }),
            1e-5);
}

// gemmPackingB packs op(B) panel by panel during the product (a weight's
// first use in a step): C bit-identical to packB + gemmPackedB, and the
// copy it leaves the same as packB's for later products, for every
// transpose, beta, epilogue, edge panels and tiles, several k-blocks and A
// blocks (the small-blocked kernel), leading dimensions beyond the rows,
// and the shapes it hands to packB first (shallow, M = 0, K = 0, alpha =
// 0).
TEST_P(PackedGemmKernel, PackingDuringTheProductEqualsPackedOnce) {
  const Kernel *selected = GetParam();
  std::mt19937 random(19);
  std::uniform_real_distribution<float> uniform(-1, 1);
  int checked = 0;
  for (const Kernel &kernel : kernelsUnderTest(*selected))
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (auto [m, n, k, beta, alpha, epilogueKind] :
             {std::tuple{int64_t(33), int64_t(100), int64_t(257), 0.0f, 1.0f,
                         0},
              std::tuple{int64_t(300), int64_t(97), int64_t(600), 1.0f, 1.0f,
                         1},
              std::tuple{int64_t(17), int64_t(49), int64_t(1100), 0.0f, 1.0f,
                         2},
              std::tuple{int64_t(40), int64_t(30), int64_t(20), 1.0f, 1.0f,
                         0},
              std::tuple{int64_t(0), int64_t(30), int64_t(20), 0.0f, 1.0f, 0},
              std::tuple{int64_t(9), int64_t(30), int64_t(0), 0.5f, 1.0f, 1},
              std::tuple{int64_t(9), int64_t(30), int64_t(40), 0.5f, 0.0f,
                         0}}) {
          int64_t lda = (transA ? m : k) + 3, ldb = (transB ? k : n) + 2,
                  ldc = n + 1;
          std::vector<float> a(std::max<int64_t>(transA ? k : m, 1) * lda),
              b(std::max<int64_t>(transB ? n : k, 1) * ldb),
              c(std::max<int64_t>(m, 1) * ldc), bias(n);
          for (std::vector<float> *x : {&a, &b, &c, &bias})
            for (float &v : *x)
              v = uniform(random);
          Epilogue epilogue{epilogueKind >= 1 ? bias.data() : nullptr,
                            epilogueKind == 2};
          std::vector<float> expected = c;
          PackedMatrix once, during;
          packB(kernel, transB, k, n, b.data(), ldb, once);
          gemmPackedB(kernel, transA, m, alpha, a.data(), lda, once, beta,
                      expected.data(), ldc, epilogue);
          gemmPackingB(kernel, transA, m, alpha, a.data(), lda, transB, k, n,
                       b.data(), ldb, during, beta, c.data(), ldc, epilogue);
          std::string where = std::string(kernelName(kernel)) +
                              " kc=" + std::to_string(kernel.kc) +
                              " trans_a=" + std::to_string(transA) +
                              " trans_b=" + std::to_string(transB) +
                              " M=" + std::to_string(m) +
                              " N=" + std::to_string(n) +
                              " K=" + std::to_string(k);
          EXPECT_EQ(0, std::memcmp(c.data(), expected.data(), c.size() * 4))
              << where;
          EXPECT_EQ(during.rows(), k) << where;
          EXPECT_EQ(during.columns(), n) << where;
          // The copy left behind serves a later product as packB's does.
          int64_t rows = 21;
          std::vector<float> a2((transA ? k : rows) * (transA ? rows : k) + 1),
              c1(rows * n), c2(rows * n);
          for (float &v : a2)
            v = uniform(random);
          int64_t lda2 = transA ? rows : std::max<int64_t>(k, 1);
          gemmPackedB(kernel, transA, rows, 1.0f, a2.data(), lda2, once, 0.0f,
                      c1.data(), n);
          gemmPackedB(kernel, transA, rows, 1.0f, a2.data(), lda2, during,
                      0.0f, c2.data(), n);
          EXPECT_EQ(0, std::memcmp(c1.data(), c2.data(), c1.size() * 4))
              << where;
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 4 * 7);

  // A B too narrow for its row stride: an error before anything is written
  // (the earlier copy stays whole, as with packB).
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 0.0f);
  PackedMatrix packed;
  packB(*selected, false, 4, 4, b.data(), 4, packed);
  EXPECT_THROW(gemmPackingB(*selected, false, 200, 1.0f, a.data(), 4, true, 8,
                            4, b.data(), 7, packed, 0.0f, c.data(), 4),
               pipecc::rt::RuntimeError);
  EXPECT_EQ(packed.rows(), 4);
  EXPECT_EQ(packed.columns(), 4);
}

// repackBRows (the optimizer's repack of a weight it wrote): after B's
// stored rows [0, half) changed and were repacked in runs, products by the
// copy are bit-identical to those by packB of that B (rows from half on
// still the old ones: nothing else was touched), and after the rest too,
// to packB of the new B; for both readings, several k-blocks (the small
// blocked kernel), edge panels, runs that cross k-blocks, a row stride
// beyond the row. Misaligned or out-of-range rows and a copy packed for
// another kernel are errors.
TEST_P(PackedGemmKernel, RepackingChangedRowsEqualsPackingTheNewB) {
  const Kernel *selected = GetParam();
  std::mt19937 random(23);
  std::uniform_real_distribution<float> uniform(-1, 1);
  int checked = 0;
  for (const Kernel &kernel : kernelsUnderTest(*selected))
    for (bool transB : {false, true})
      for (auto [k, n] : {std::pair<int64_t, int64_t>{100, 97},
                          {20, 130},
                          {1, 49},
                          {61, 1}}) {
        int64_t storedRows = transB ? n : k, storedColumns = transB ? k : n;
        int64_t ldb = storedColumns + 3, m = 13;
        std::vector<float> oldB(storedRows * ldb), newB(storedRows * ldb),
            a(m * k), c1(m * n), c2(m * n);
        for (std::vector<float> *x : {&oldB, &newB, &a})
          for (float &v : *x)
            v = uniform(random);
        int64_t grain = repackRowGrain(kernel);
        // Transposed B: whole panels; plain B: runs of 5 rows (crossing
        // the small kernel's k-blocks of 7).
        int64_t run = transB ? grain : 5;
        int64_t half = transB ? grain * (storedRows / grain / 2 + 1)
                              : storedRows / 2 + 1;
        half = std::min(half, storedRows);
        std::string where = std::string(kernelName(kernel)) +
                            " kc=" + std::to_string(kernel.kc) +
                            " trans_b=" + std::to_string(transB) +
                            " K=" + std::to_string(k) +
                            " N=" + std::to_string(n);
        auto sameProducts = [&](PackedMatrix &x, PackedMatrix &y) {
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, x, 0.0f,
                      c1.data(), n);
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, y, 0.0f,
                      c2.data(), n);
          return std::memcmp(c1.data(), c2.data(), c1.size() * 4) == 0;
        };
        PackedMatrix copy, expected;
        std::vector<float> b = oldB;
        packB(kernel, transB, k, n, b.data(), ldb, copy);
        std::copy(newB.begin(), newB.begin() + half * ldb, b.begin());
        for (int64_t r = 0; r < half; r += run)
          repackBRows(kernel, transB, b.data(), ldb, r,
                      std::min(half, r + run), copy);
        packB(kernel, transB, k, n, b.data(), ldb, expected);
        EXPECT_TRUE(sameProducts(copy, expected)) << where << " half";
        b = newB;
        for (int64_t r = half; r < storedRows; r += run)
          repackBRows(kernel, transB, b.data(), ldb, r,
                      std::min(storedRows, r + run), copy);
        packB(kernel, transB, k, n, b.data(), ldb, expected);
        EXPECT_TRUE(sameProducts(copy, expected)) << where << " all";
        ++checked;
      }
  EXPECT_EQ(checked, 2 * 2 * 4);

  std::vector<float> b(64 * 64, 1.0f);
  PackedMatrix packed;
  int64_t grain = repackRowGrain(*selected);
  EXPECT_THROW(repackBRows(*selected, true, b.data(), 64, 0, 1, packed),
               pipecc::rt::RuntimeError); // nothing packed yet
  packB(*selected, true, 64, 2 * grain, b.data(), 64, packed);
  EXPECT_THROW(repackBRows(*selected, true, b.data(), 64, 1, grain, packed),
               pipecc::rt::RuntimeError); // not at a panel
  EXPECT_THROW(
      repackBRows(*selected, true, b.data(), 64, 0, 2 * grain + 1, packed),
      pipecc::rt::RuntimeError); // past B
  Kernel other = *selected;
  EXPECT_THROW(repackBRows(other, true, b.data(), 64, 0, grain, packed),
               pipecc::rt::RuntimeError);
  repackBRows(*selected, true, b.data(), 64, 0, grain, packed);
}

// gemmBatched (small products, the next one's operands prefetched): one
// product held to the naive loop for every transpose, beta and edge tile,
// and a batch with padded strides bit-identical to gemm() per product.
TEST_P(PackedGemmKernel, BatchedSmallProductsMatchNaiveLoopAndPerProductGemm) {
  const Kernel *kernel = GetParam();
  std::mt19937 random(17);
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (float beta : {0.0f, 1.0f})
        for (auto [m, n, k] : {Shape{64, 64, 64}, Shape{1, 1, 1},
                               Shape{5, 31, 3}, Shape{33, 50, 17},
                               Shape{13, 128, 5}, Shape{30, 96, 9}}) {
          Case g{transA, transB, m, n, k, 1.0f, beta, 3, 1, 2};
          ASSERT_TRUE(runsBatched(*kernel, m, n, k));
          double error = pipecc::test::worstGemmError(
              g, random,
              [&](const float *a, int64_t lda, const float *b, int64_t ldb,
                  float *c, int64_t ldc) {
                gemmBatched(*kernel, transA, transB, m, n, k, 1.0f, a, lda,
                            0, b, ldb, 0, beta, c, ldc, 0, 1);
              });
          EXPECT_LT(error, 1e-5) << "trans_a=" << transA << " trans_b="
                                 << transB << " beta=" << beta << " M=" << m
                                 << " N=" << n << " K=" << k;
        }

  std::uniform_real_distribution<float> uniform(-1, 1);
  for (auto [transA, transB] : {std::pair{false, true}, std::pair{true, false}}) {
    int64_t m = 20, n = 30, k = 40, batch = 5;
    int64_t lda = (transA ? m : k) + 3, ldb = (transB ? k : n) + 1, ldc = n + 2;
    int64_t strideA = (transA ? k : m) * lda + 7;
    int64_t strideB = (transB ? n : k) * ldb + 5, strideC = m * ldc + 3;
    std::vector<float> a(batch * strideA), b(batch * strideB),
        c(batch * strideC);
    for (std::vector<float> *x : {&a, &b, &c})
      for (float &v : *x)
        v = uniform(random);
    std::vector<float> expected = c;
    for (int64_t i = 0; i < batch; ++i)
      gemm(*kernel, transA, transB, m, n, k, 0.5f, &a[i * strideA], lda,
           &b[i * strideB], ldb, 1.0f, &expected[i * strideC], ldc);
    gemmBatched(*kernel, transA, transB, m, n, k, 0.5f, a.data(), lda,
                strideA, b.data(), ldb, strideB, 1.0f, c.data(), ldc,
                strideC, batch);
    EXPECT_EQ(0, std::memcmp(c.data(), expected.data(), c.size() * 4))
        << "trans_a=" << transA << " trans_b=" << transB;
  }

  // Products too large for it are refused, not computed wrong.
  EXPECT_FALSE(runsBatched(*kernel, 64, 4096, 64));
  EXPECT_FALSE(runsBatched(*kernel, 64, 64, 4096));
  std::vector<float> big(64 * 4096);
  EXPECT_THROW(gemmBatched(*kernel, false, false, 64, 4096, 64, 1.0f,
                           big.data(), 64, 0, big.data(), 4096, 0, 0.0f,
                           big.data(), 4096, 0, 1),
               pipecc::rt::RuntimeError);
}

// The epilogue (bias, relu) in the last store: bit-identical to the product
// followed by applyEpilogue (the separate loop's arithmetic), over partial
// tiles, several k-blocks (the small-blocked kernel), beta 0 and 1, and
// values that are NaN, -0.0 or negative before the relu.
TEST_P(PackedGemmKernel, EpilogueInTheLastStoreEqualsAPassAfterwards) {
  const Kernel *selected = GetParam();
  std::mt19937 random(23);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (const Kernel &kernel : kernelsUnderTest(*selected))
    for (auto [m, n, k] : {Shape{17, 50, 33}, Shape{64, 64, 64},
                           Shape{5, 7, 1100}, Shape{300, 200, 32}})
      for (float beta : {0.0f, 1.0f})
        for (bool relu : {false, true}) {
          int64_t ldc = n + 3;
          std::vector<float> a(m * k), b(k * n), bias(n), c(m * ldc);
          for (std::vector<float> *x : {&a, &b, &bias, &c})
            for (float &v : *x)
              v = uniform(random);
          bias[0] = std::numeric_limits<float>::quiet_NaN();
          if (n > 2)
            bias[2] = -0.0f;
          if (beta == 1.0f && n > 1)
            c[1] = std::numeric_limits<float>::infinity();
          PackedMatrix packed;
          packB(kernel, false, k, n, b.data(), n, packed);
          std::vector<float> expected = c;
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, beta,
                      expected.data(), ldc);
          applyEpilogue(m, n, expected.data(), ldc, {bias.data(), relu});
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, beta,
                      c.data(), ldc, {bias.data(), relu});
          EXPECT_EQ(0, std::memcmp(c.data(), expected.data(), c.size() * 4))
              << "kc=" << kernel.kc << " M=" << m << " N=" << n << " K=" << k
              << " beta=" << beta << " relu=" << relu;
          // A relu alone (no bias) too.
          std::vector<float> plain = c, plainExpected = c;
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, 0.0f,
                      plainExpected.data(), ldc);
          applyEpilogue(m, n, plainExpected.data(), ldc, {nullptr, true});
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed, 0.0f,
                      plain.data(), ldc, {nullptr, true});
          EXPECT_EQ(0, std::memcmp(plain.data(), plainExpected.data(),
                                   plain.size() * 4));
        }
  // applyEpilogue's relu is the lowering's: NaN stays, -0.0 and negatives
  // become +0.0.
  float values[4] = {std::numeric_limits<float>::quiet_NaN(), -0.0f, -2.0f,
                     3.0f};
  applyEpilogue(1, 4, values, 4, {nullptr, true});
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_FALSE(std::signbit(values[1]));
  EXPECT_EQ(values[1], 0.0f);
  EXPECT_EQ(values[2], 0.0f);
  EXPECT_EQ(values[3], 3.0f);
}

// The A packer's layout, element by element: micro-panel q holds op(A)'s
// rows row0 + q * mr .. + mr - 1, column p at p * mr, zeros past the rows.
// Stored transposed, the micro-panels that share a cache line are copied
// together (Packers.h); counts of rows around those groups (one line, one
// and a part, a single short panel) and offsets within a line check them.
TEST_P(PackedGemmKernel, APackerLaysOutMicroPanelsOfOpA) {
  const Kernel &kernel = *GetParam();
  int64_t mr = kernel.mr;
  for (bool transA : {false, true})
    for (int64_t rows : {int64_t(1), mr, 2 * mr + 3, 16 + mr - 1, int64_t(37)})
      for (int64_t row0 : {int64_t(0), int64_t(5)})
        for (int64_t kc : {int64_t(1), int64_t(9), int64_t(20)}) {
          int64_t p0 = 2, m = row0 + rows, k = p0 + kc;
          int64_t lda = (transA ? m : k) + 3;
          std::vector<float> a((transA ? k : m) * lda);
          for (size_t i = 0; i < a.size(); ++i)
            a[i] = static_cast<float>(i) + 0.5f;
          auto opA = [&](int64_t i, int64_t p) {
            return transA ? a[p * lda + i] : a[i * lda + p];
          };
          int64_t panels = (rows + mr - 1) / mr;
          std::vector<float> out(panels * kc * mr, -1.0f);
          kernel.packA(transA, a.data(), lda, row0, rows, p0, kc, out.data());
          int wrong = 0;
          for (int64_t q = 0; q < panels; ++q)
            for (int64_t p = 0; p < kc; ++p)
              for (int64_t r = 0; r < mr; ++r) {
                int64_t i = q * mr + r;
                float want = i < rows ? opA(row0 + i, p0 + p) : 0.0f;
                wrong += out[(q * kc + p) * mr + r] != want;
              }
          EXPECT_EQ(wrong, 0) << kernelName(kernel) << " trans_a=" << transA
                              << " rows=" << rows << " row0=" << row0
                              << " kc=" << kc;
        }
}

// A whole tile runs other code than a tile of fewer rows (KernelAvx512.cpp:
// in assembly where it prefetches no panel, else a C++ kernel compiled
// apart without bias or relu; a partial tile the general one). Each C value
// is the same sum and the same epilogue either way, so the whole tile must
// equal its rows computed as partial tiles, bit for bit, with and without
// a panel prefetch, for every epilogue (alpha 1 or not, beta 0, 1 or
// other, bias, relu).
TEST_P(PackedGemmKernel, AWholeTileEqualsItsRowsAsPartialTilesBitForBit) {
  const Kernel &kernel = *GetParam();
  int64_t mr = kernel.mr, nr = kernel.nr;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t kc : {int64_t(1), int64_t(3), int64_t(4), int64_t(32),
                     int64_t(37), int64_t(256)})
    for (float beta : {0.0f, 1.0f, 0.5f})
      for (float alpha : {1.25f, 1.0f})
        for (int epilogue = 0; epilogue < 4; ++epilogue)
          for (int64_t cols : {nr, nr - 5, int64_t(1)}) {
            bool withBias = epilogue & 1, relu = epilogue & 2;
            std::vector<float> a(kc * mr), b(kc * nr), bias(nr);
            for (float &v : a)
              v = value(random);
            for (float &v : b)
              v = value(random);
            for (float &v : bias)
              v = value(random);
            const float *biasRow = withBias ? bias.data() : nullptr;
            int64_t ldc = nr + 3;
            std::vector<float> start(mr * ldc);
            for (float &v : start)
              v = value(random);
            std::vector<float> whole = start, byRows = start;
            kernel.microKernel(kc, a.data(), b.data(), whole.data(), ldc,
                               alpha, beta, mr, cols, nullptr, 0, biasRow,
                               relu);
            // Rows 0 .. mr - 2 as one partial tile, the last as another
            // (the A micro-panel's row r is a[p * mr + r]: shift it for
            // the last).
            kernel.microKernel(kc, a.data(), b.data(), byRows.data(), ldc,
                               alpha, beta, mr - 1, cols, nullptr, 0, biasRow,
                               relu);
            std::vector<float> lastRow(kc * mr, 0.0f);
            for (int64_t p = 0; p < kc; ++p)
              lastRow[p * mr] = a[p * mr + mr - 1];
            kernel.microKernel(kc, lastRow.data(), b.data(),
                               byRows.data() + (mr - 1) * ldc, ldc, alpha,
                               beta, 1, cols, nullptr, 0, biasRow, relu);
            std::string where = std::string(kernelName(kernel)) +
                                " kc=" + std::to_string(kc) +
                                " beta=" + std::to_string(beta) +
                                " alpha=" + std::to_string(alpha) +
                                " bias=" + std::to_string(withBias) +
                                " relu=" + std::to_string(relu) +
                                " cols=" + std::to_string(cols);
            EXPECT_EQ(std::memcmp(whole.data(), byRows.data(),
                                  whole.size() * sizeof(float)),
                      0)
                << where;
            std::vector<float> prefetching = start;
            kernel.microKernel(kc, a.data(), b.data(), prefetching.data(), ldc,
                               alpha, beta, mr, cols,
                               reinterpret_cast<const char *>(b.data()), 2,
                               biasRow, relu);
            EXPECT_EQ(std::memcmp(whole.data(), prefetching.data(),
                                  whole.size() * sizeof(float)),
                      0)
                << where << " (prefetching)";
          }
}

TEST(PackedGemm, KernelChoiceFollowsThePolicy) {
  const Kernel *selected = selectPackedGemmKernel();
  EXPECT_EQ(selected, selectPackedGemmKernel()); // decided once
  std::vector<const Kernel *> kernels = runnableKernels();
  if (kernels.empty()) {
    EXPECT_EQ(selected, nullptr);
    return;
  }
  // The widest FMA this CPU has: AVX-512 where it has AVX-512F.
  EXPECT_EQ(selected, kernels.front());
  EXPECT_STREQ(kernelName(*selected),
               pipecc::rt::missingCpuFeatures("avx512f").empty()
                   ? "avx512 8x48"
                   : "avx2-fma 4x24");
}

// --threads N (Parallel.h): each product split among the threads gives
// the one-thread result bit for bit, for every entry point and loop order:
// products by a packed weight (panels split unevenly: N of 250 is 6
// panels of 48 for 4 threads, several A and k-blocks), packing during the
// product, the shallow loop (rows split, one part per tile at most), the
// plain engine, a batch; with beta 0 and 1 and the epilogue. Each must
// actually have been split (splitRuns), so that equality is not one thread
// against itself.
TEST_P(PackedGemmKernel, ThreadsGiveTheOneThreadResultBitForBit) {
  const Kernel *selected = GetParam();
  std::mt19937 random(23);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto randomVector = [&](int64_t size) {
    std::vector<float> v(size);
    for (float &x : v)
      x = uniform(random);
    return v;
  };
  int checked = 0;
  for (const Kernel &kernel : kernelsUnderTest(*selected))
    for (bool transA : {false, true})
      for (bool transB : {false, true})
        for (auto [m, n, k, beta, withEpilogue] :
             {std::tuple{int64_t(64), int64_t(250), int64_t(257), 0.0f,
                         false},
              std::tuple{int64_t(301), int64_t(97), int64_t(600), 1.0f, true},
              std::tuple{int64_t(17), int64_t(250), int64_t(1100), 1.0f,
                         true},
              std::tuple{int64_t(300), int64_t(200), int64_t(40), 1.0f,
                         false}}) {
          int64_t lda = (transA ? m : k) + 3, ldb = (transB ? k : n) + 2,
                  ldc = n + 1;
          std::vector<float> a = randomVector((transA ? k : m) * lda),
                             b = randomVector((transB ? n : k) * ldb),
                             c = randomVector(m * ldc),
                             bias = randomVector(n);
          Epilogue epilogue{withEpilogue ? bias.data() : nullptr,
                            withEpilogue};
          // Every entry point's C at `threads` threads, and a product on
          // one thread by the copy gemmPackingB left (its panels were
          // packed by the parts).
          auto run = [&](int threads) {
            setThreads(threads);
            std::vector<std::vector<float>> out(4, c);
            PackedMatrix once, during;
            packB(kernel, transB, k, n, b.data(), ldb, once);
            gemmPackedB(kernel, transA, m, 0.75f, a.data(), lda, once, beta,
                        out[0].data(), ldc, epilogue);
            gemmPackingB(kernel, transA, m, 0.75f, a.data(), lda, transB, k,
                         n, b.data(), ldb, during, beta, out[1].data(), ldc,
                         epilogue);
            gemm(kernel, transA, transB, m, n, k, 0.75f, a.data(), lda,
                 b.data(), ldb, beta, out[2].data(), ldc, epilogue);
            setThreads(1);
            gemmPackedB(kernel, transA, m, 0.75f, a.data(), lda, during, beta,
                        out[3].data(), ldc, epilogue);
            return out;
          };
          std::vector<std::vector<float>> one = run(1);
          for (int threads : {2, 4}) {
            int64_t splitBefore = splitRuns();
            std::vector<std::vector<float>> many = run(threads);
            EXPECT_GE(splitRuns() - splitBefore, 3);
            for (int entry = 0; entry < 4; ++entry)
              EXPECT_EQ(0, std::memcmp(many[entry].data(), one[entry].data(),
                                       one[entry].size() * 4))
                  << kernelName(kernel) << " kc=" << kernel.kc
                  << " threads=" << threads << " entry=" << entry
                  << " trans_a=" << transA << " trans_b=" << transB
                  << " M=" << m << " N=" << n << " K=" << k;
          }
          ++checked;
        }
  EXPECT_EQ(checked, 2 * 4 * 4);

  // A batch: split by whole products.
  int64_t m = 64, n = 64, k = 64, batch = 7;
  std::vector<float> a = randomVector(batch * m * k),
                     b = randomVector(batch * k * n),
                     c = randomVector(batch * m * n);
  std::vector<float> one = c, many = c;
  gemmBatched(*selected, false, true, m, n, k, 1.0f, a.data(), k, m * k,
              b.data(), k, k * n, 1.0f, one.data(), n, m * n, batch);
  setThreads(3);
  int64_t splitBefore = splitRuns();
  gemmBatched(*selected, false, true, m, n, k, 1.0f, a.data(), k, m * k,
              b.data(), k, k * n, 1.0f, many.data(), n, m * n, batch);
  EXPECT_EQ(splitRuns() - splitBefore, 1);
  setThreads(1);
  EXPECT_EQ(0, std::memcmp(many.data(), one.data(), one.size() * 4));
  EXPECT_EQ(threads(), 1);
}

// The team itself: every part runs exactly once, each on its own thread,
// part 0 on the caller's; parts beyond the team's threads on the caller's.
// Some rounds come after a pause long enough for the threads to sleep, so
// the wake-up is tested too; a part that throws reaches the caller after
// every part has ended, and the team runs on.
TEST(PackedGemmThreads, EveryPartRunsOnceOnItsOwnThread) {
  setThreads(3);
  EXPECT_EQ(threads(), 3);
  for (int round = 0; round < 100; ++round) {
    if (round % 10 == 9)
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::vector<std::thread::id> ran(5);
    std::vector<int> times(5, 0);
    runParts(5, [&](int part) {
      ran[part] = std::this_thread::get_id();
      ++times[part];
    });
    EXPECT_EQ(times, std::vector<int>(5, 1));
    EXPECT_EQ(ran[0], std::this_thread::get_id());
    EXPECT_NE(ran[1], ran[0]);
    EXPECT_NE(ran[2], ran[0]);
    EXPECT_NE(ran[1], ran[2]);
    EXPECT_EQ(ran[3], ran[0]);
    EXPECT_EQ(ran[4], ran[0]);
  }
  std::atomic<int> ended{0};
  EXPECT_THROW(runParts(3,
                        [&](int part) {
                          if (part == 2)
                            throw std::runtime_error("part 2");
                          ++ended;
                        }),
               std::runtime_error);
  EXPECT_EQ(ended.load(), 2);
  int again = 0;
  runParts(2, [&](int part) {
    if (part == 1)
      again = 1;
  });
  EXPECT_EQ(again, 1);
  setThreads(1);
  EXPECT_EQ(threads(), 1);
}

// Every kernel this CPU can run (the AVX-512 kernel and the AVX2 one on an
// AVX-512 CPU), not only the chosen one: none may be wrong where it runs.
INSTANTIATE_TEST_SUITE_P(
    RunnableKernels, PackedGemmKernel, ::testing::ValuesIn(runnableKernels()),
    [](const ::testing::TestParamInfo<const Kernel *> &info) {
      std::string name = kernelName(*info.param);
      for (char &c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)))
          c = '_';
      return name;
    });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PackedGemmKernel);

} // namespace
