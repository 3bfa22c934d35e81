//===- BlasTest.cpp - The CPU target's sgemm and its counters -------------===//
//
// pipecc_rt_sgemm (whichever BLAS the build links, cmake/PipeccBlas.cmake)
// against a plain triple loop in double precision, the counters the
// --blas and --timers reports read, and --threads' effect on the library.
//
//===----------------------------------------------------------------------===//
#include "GemmReference.h"
#include "pipecc/Runtime/BlasReport.h"
#include "pipecc/Runtime/Runtime.h"
#include "pipecc/Runtime/StepTimers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace {

using Gemm = pipecc::test::GemmCase;

using SgemmFunction = void (*)(int32_t, int32_t, int64_t, int64_t, int64_t,
                               float, const float *, int64_t, const float *,
                               int64_t, float, float *, int64_t);

/// Largest |sgemm - naive| over C (GemmReference.h); `sgemm` is
/// pipecc_rt_sgemm or pipecc_rt_sgemm_weight.
double worstError(const Gemm &g, std::mt19937 &random,
                  SgemmFunction sgemm = pipecc_rt_sgemm) {
  return pipecc::test::worstGemmError(
      g, random, [&](const float *a, int64_t lda, const float *b, int64_t ldb,
                     float *c, int64_t ldc) {
        sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb,
              g.beta, c, ldc);
      });
}

// pipecc_rt_sgemm: the BLAS, or the packed GEMM engine for shallow
// products (runsShallow: {96, 64, 37} and {37, 64, 96} here, on a CPU with
// the engine's kernel); pipecc_rt_sgemm_weight: the engine with B packed
// (every B below is a fresh vector, so a fresh packing each time).
TEST(Blas, SgemmMatchesNaiveLoopForEveryTransposeAndBeta) {
  for (SgemmFunction sgemm : {pipecc_rt_sgemm, pipecc_rt_sgemm_weight}) {
  pipecc_rt_weights_changed();
  std::mt19937 random(7);
  int checked = 0;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (float beta : {0.0f, 1.0f})
        // Odd shapes (no multiple of any kernel's block), a vector, and
        // the shapes of a Linear layer's three GEMMs at a small width.
        for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{7, 13, 5},
                               {1, 33, 17},
                               {31, 1, 9},
                               {37, 64, 96},
                               {96, 64, 37}}) {
          Gemm g{transA, transB, m, n, k, 1.0f, beta, 3, 1, 2};
          // A new B may reuse a freed one's address: say so, as the
          // runtime does between steps.
          pipecc_rt_weights_changed();
          EXPECT_LT(worstError(g, random, sgemm), 1e-5)
              << "trans_a=" << transA << " trans_b=" << transB
              << " beta=" << beta << " M=" << m << " N=" << n << " K=" << k;
          ++checked;
        }
  // alpha other than 1, and beta = 1 with K = 0: C stays.
  pipecc_rt_weights_changed();
  EXPECT_LT(worstError({true, false, 5, 6, 7, -0.5f, 1.0f, 0, 0, 0}, random,
                       sgemm),
            1e-5);
  pipecc_rt_weights_changed();
  EXPECT_LT(worstError({false, true, 5, 6, 0, 1.0f, 1.0f, 1, 1, 0}, random,
                       sgemm),
            1e-6);
  EXPECT_EQ(checked, 40);
  }
}

// One packing per (weight, reading) until pipecc_rt_weights_changed; new
// values after it; none held when turned off.
TEST(Blas, PackedWeightsAreReusedUntilTheWeightsChange) {
  if (!pipecc_rt_blas_set_packed_weights(1))
    GTEST_SKIP() << "no packed-weight kernel for this CPU";
  pipecc_rt_weights_changed();
  const int64_t m = 8, n = 30, k = 20;
  std::vector<float> x(m * k, 0.5f), w(n * k, 0.25f), y(m * n);
  pipecc_rt_packed_weight_counters before, after;
  pipecc_rt_packed_weight_stats(&before);
  // x * W^T twice, then W read the other way (as dY * W): two packings.
  pipecc_rt_sgemm_weight(0, 1, m, n, k, 1, x.data(), k, w.data(), k, 0,
                         y.data(), n);
  pipecc_rt_sgemm_weight(0, 1, m, n, k, 1, x.data(), k, w.data(), k, 0,
                         y.data(), n);
  std::vector<float> dx(m * k);
  pipecc_rt_sgemm_weight(0, 0, m, k, n, 1, y.data(), n, w.data(), k, 0,
                         dx.data(), k);
  pipecc_rt_packed_weight_stats(&after);
  EXPECT_EQ(after.packs - before.packs, 2);
  EXPECT_GE(after.bytes, int64_t(2 * n * k * sizeof(float)));
  EXPECT_FLOAT_EQ(y[0], 0.5f * 0.25f * k);
  // The optimizer writes W: the next call sees the new values.
  std::fill(w.begin(), w.end(), 1.0f);
  pipecc_rt_weights_changed();
  pipecc_rt_sgemm_weight(0, 1, m, n, k, 1, x.data(), k, w.data(), k, 0,
                         y.data(), n);
  EXPECT_FLOAT_EQ(y[0], 0.5f * k);
  pipecc_rt_packed_weight_stats(&before);
  EXPECT_EQ(before.packs - after.packs, 1);
  // Off: the BLAS packs per call, no copies held, same result.
  EXPECT_EQ(pipecc_rt_blas_set_packed_weights(0), 0);
  pipecc_rt_sgemm_weight(0, 1, m, n, k, 1, x.data(), k, w.data(), k, 0,
                         y.data(), n);
  EXPECT_FLOAT_EQ(y[0], 0.5f * k);
  pipecc_rt_packed_weight_stats(&after);
  EXPECT_EQ(after.bytes, 0);
  EXPECT_EQ(after.packs, before.packs);
  EXPECT_EQ(pipecc_rt_blas_set_packed_weights(1), 1);
}

/// y = x W^T through W's packed copy (pipecc_rt_sgemm_weight), x m x k.
void forwardThroughCopy(const std::vector<float> &x,
                        const std::vector<float> &weight,
                        std::vector<float> &y, int64_t m, int64_t n,
                        int64_t k) {
  pipecc_rt_sgemm_weight(0, 1, m, n, k, 1, x.data(), k, weight.data(), k, 0,
                         y.data(), n);
}

/// The optimizer's pass over `param`: written with `value` in runs of
/// `grain` floats, each reported (pipecc_rt_weight_written) as it is done.
void writeInRuns(std::vector<float> &param, int64_t grain, float value) {
  int64_t size = static_cast<int64_t>(param.size());
  for (int64_t first = 0; first < size; first += grain) {
    int64_t end = std::min(size, first + grain);
    std::fill(param.begin() + first, param.begin() + end, value);
    pipecc_rt_weight_written(param.data(), first, end);
  }
}

/// Empties the packed-weight cache (turning the copies off frees them)
/// and turns the copies on again, all stale, so that a test sees only its
/// own; false on a CPU without a packed-weight kernel.
bool startWithNoCopies() {
  pipecc_rt_blas_set_packed_weights(0);
  if (!pipecc_rt_blas_set_packed_weights(1))
    return false;
  pipecc_rt_weights_changed();
  return true;
}

/// Packings of weight copies since the process started.
int64_t packingsSoFar() {
  pipecc_rt_packed_weight_counters counters;
  pipecc_rt_packed_weight_stats(&counters);
  return counters.packs;
}

// The optimizer's repack (pipecc_rt_weight_repack_grain and _written, as
// Device::sgdStepAndClearF32 calls them): a copy one product read in the
// last step is repacked from the rows written, run by run, and is then
// current: the next product sees the new values without packing. A copy
// several products read after the rank's first wait, or a weight whose
// rows were not all reported, is left stale and packed at its next product.
TEST(Blas, OptimizerRepacksCopiesThatOneProductReadPerStep) {
  if (!startWithNoCopies())
    GTEST_SKIP() << "no packed-weight kernel for this CPU";
  const int64_t m = 4, n = 100, k = 30;
  std::vector<float> x(m * k, 0.5f), w(n * k, 0.25f), shared(n * k, 0.25f),
      y(m * n);
  auto forward = [&](const std::vector<float> &weight) {
    forwardThroughCopy(x, weight, y, m, n, k);
  };
  // A step: w read by one product, then a wait, then `shared` read by two.
  forward(w);
  EXPECT_EQ(pipecc_rt_pack_stale_weight(), 0) << "nothing stale to pack";
  forward(shared);
  forward(shared);
  // The optimizer: every copy stale, then each weight written run by run.
  pipecc_rt_weights_changed();
  int64_t grain = pipecc_rt_weight_repack_grain(w.data());
  ASSERT_GT(grain, 0);
  EXPECT_EQ(grain % k, 0) << "whole rows of W";
  EXPECT_EQ(pipecc_rt_weight_repack_grain(shared.data()), 0);
  int64_t before = packingsSoFar();
  writeInRuns(w, grain, 1.0f);
  std::fill(shared.begin(), shared.end(), 1.0f);
  EXPECT_EQ(packingsSoFar() - before, 1) << "w's copy, by the optimizer";
  // The next step: w's product packs nothing and sees the new values;
  // shared's packs.
  forward(w);
  EXPECT_FLOAT_EQ(y[0], 0.5f * k);
  EXPECT_FLOAT_EQ(y[m * n - 1], 0.5f * k);
  EXPECT_EQ(packingsSoFar() - before, 1);
  forward(shared);
  EXPECT_FLOAT_EQ(y[0], 0.5f * k);
  EXPECT_EQ(packingsSoFar() - before, 2);
  // Rows reported with a gap: w's copy stays stale, packed at its use.
  pipecc_rt_weights_changed();
  std::fill(w.begin(), w.end(), 2.0f);
  pipecc_rt_weight_written(w.data(), grain, std::min(n * k, 2 * grain));
  forward(w);
  EXPECT_FLOAT_EQ(y[0], 0.5f * 2.0f * k);
  EXPECT_EQ(packingsSoFar() - before, 3);
  pipecc_rt_weights_changed();
}

// A copy that several products read and the first of them packed before
// the rank's first wait of the step (every copy at P = 1, which never
// waits) is repacked by the optimizer too: no wait could have packed it.
// The next step's products pack nothing and see the new values. A copy a
// wait packed, or one a product packed after a wait, stays.
TEST(Blas, OptimizerRepacksCopiesNoWaitCouldPack) {
  if (!startWithNoCopies())
    GTEST_SKIP() << "no packed-weight kernel for this CPU";
  const int64_t m = 4, n = 100, k = 30;
  std::vector<float> x(m * k, 0.5f), early(n * k, 0.25f),
      waited(n * k, 0.25f), late(n * k, 0.25f), y(m * n);
  auto forward = [&](const std::vector<float> &weight) {
    forwardThroughCopy(x, weight, y, m, n, k);
  };
  // A first step makes the copies (in this order); the optimizer leaves
  // them stale.
  forward(early);
  forward(waited);
  forward(late);
  pipecc_rt_weights_changed();
  // The next step: `early` packed by the first of its three products; a
  // wait packs `waited` (the first stale copy) before its message comes;
  // `late` packed by the first of its two products, after the wait.
  forward(early);
  forward(early);
  forward(early);
  EXPECT_EQ(pipecc_rt_pack_stale_weight(), 1);
  forward(late);
  forward(late);
  forward(waited);
  forward(waited);
  // The optimizer.
  pipecc_rt_weights_changed();
  int64_t grain = pipecc_rt_weight_repack_grain(early.data());
  ASSERT_GT(grain, 0) << "packed by a product before any wait";
  EXPECT_EQ(pipecc_rt_weight_repack_grain(waited.data()), 0)
      << "packed by a wait";
  EXPECT_EQ(pipecc_rt_weight_repack_grain(late.data()), 0)
      << "packed by a product after a wait";
  int64_t before = packingsSoFar();
  writeInRuns(early, grain, 1.0f);
  EXPECT_EQ(packingsSoFar() - before, 1) << "early's copy, by the optimizer";
  for (int i = 0; i < 3; ++i) {
    forward(early);
    EXPECT_FLOAT_EQ(y[0], 0.5f * k);
    EXPECT_FLOAT_EQ(y[m * n - 1], 0.5f * k);
  }
  EXPECT_EQ(packingsSoFar() - before, 1);
  pipecc_rt_weights_changed();
}

// pipecc_rt_sgemm_epilogue: the product (as pipecc_rt_sgemm, or through
// the packed weight with PIPECC_RT_GEMM_WEIGHT_B), then the bias and relu,
// equal to the product followed by the same loop; on every path the
// runtime takes (engine, packed weight, BLAS).
TEST(Blas, EpilogueEqualsTheProductThenBiasAndRelu) {
  std::mt19937 random(5);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (auto [transA, m, n, k] :
       {std::tuple{false, int64_t(40), int64_t(30), int64_t(50)},
        std::tuple{true, int64_t(200), int64_t(100), int64_t(16)},
        std::tuple{false, int64_t(3), int64_t(5), int64_t(7)}})
    for (int32_t flags : {0, 1, 2, 3}) {
      std::vector<float> a(m * k), b(n * k), bias(n), c(m * n);
      for (std::vector<float> *x : {&a, &b, &bias})
        for (float &v : *x)
          v = uniform(random);
      int64_t lda = transA ? m : k;
      std::vector<float> expected(m * n);
      pipecc_rt_sgemm(transA, 1, m, n, k, 1, a.data(), lda, b.data(), k, 0,
                      expected.data(), n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float x = expected[i * n + j] + bias[j];
          if ((flags & PIPECC_RT_GEMM_RELU) && !(x > 0.0f))
            x = 0.0f;
          expected[i * n + j] = x;
        }
      pipecc_rt_weights_changed();
      pipecc_rt_sgemm_epilogue(transA, 1, m, n, k, 1, a.data(), lda, b.data(),
                               k, 0, c.data(), n, bias.data(), flags);
      double worst = 0;
      for (int64_t i = 0; i < m * n; ++i)
        worst = std::max(worst, double(std::fabs(c[i] - expected[i])));
      EXPECT_LT(worst, 1e-4) << "flags=" << flags << " M=" << m;
    }
}

TEST(Blas, CountersCountEveryCallAndItsFlopsExactly) {
  std::vector<float> a(64 * 64, 0.5f), b(64 * 64, 0.25f), c(64 * 64, 0.0f);
  pipecc_rt_blas_reset_stats();
  pipecc_rt_blas_counters counters;
  pipecc_rt_blas_stats(&counters);
  EXPECT_EQ(counters.calls, 0);
  EXPECT_EQ(counters.flops, 0);
  EXPECT_EQ(counters.seconds, 0);

  pipecc_rt_sgemm(0, 1, 7, 13, 5, 1, a.data(), 5, b.data(), 5, 0, c.data(),
                  13);
  pipecc_rt_sgemm(1, 0, 64, 64, 32, 1, a.data(), 64, b.data(), 64, 1,
                  c.data(), 64);
  // An empty C calls no BLAS and counts nothing.
  pipecc_rt_sgemm(0, 0, 0, 13, 5, 1, a.data(), 5, b.data(), 13, 0, c.data(),
                  13);
  // A batch counts each of its matrices.
  pipecc_rt_sgemm_batched(0, 0, 3, 4, 5, 1, a.data(), 5, 15, b.data(), 4, 20,
                          0, c.data(), 4, 12, 3);
  pipecc_rt_blas_stats(&counters);
  EXPECT_EQ(counters.calls, 5);
  EXPECT_EQ(counters.flops, 2 * (7 * 13 * 5 + 64 * 64 * 32 + 3 * 3 * 4 * 5));
  EXPECT_GT(counters.seconds, 0);
  EXPECT_LT(counters.seconds, 10);

  // What the core runtime reads through its weak references.
  std::optional<pipecc::rt::BlasReport> report = pipecc::rt::queryBlas();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->counters.calls, 5);
  std::string line = pipecc::rt::blasReportLine(3);
  EXPECT_EQ(line.rfind("blas rank 3: OpenBLAS ", 0), 0u) << line;
  EXPECT_NE(line.find(" kernels"), std::string::npos) << line;
  EXPECT_NE(line.find("; sgemm 5 calls, 0.000 GFLOP in "), std::string::npos)
      << line;

  pipecc_rt_blas_reset_stats();
  pipecc_rt_blas_stats(&counters);
  EXPECT_EQ(counters.calls, 0);
}

TEST(Blas, CpuTimeIsCountedOnlyWhenTurnedOnAndNeverExceedsTheWallTime) {
  std::vector<float> a(256 * 256, 0.5f), b(256 * 256, 0.25f),
      c(256 * 256, 0.0f);
  auto products = [&] {
    for (int i = 0; i < 8; ++i)
      pipecc_rt_sgemm(0, 0, 256, 256, 256, 1, a.data(), 256, b.data(), 256,
                      0, c.data(), 256);
  };
  pipecc_rt_blas_reset_stats();
  products();
  pipecc_rt_blas_counters counters;
  pipecc_rt_blas_stats(&counters);
  EXPECT_GT(counters.seconds, 0);
  EXPECT_EQ(counters.cpu_seconds, 0);

  pipecc_rt_blas_count_cpu_time(1);
  products();
  pipecc_rt_blas_count_cpu_time(0);
  pipecc_rt_blas_counters after;
  pipecc_rt_blas_stats(&after);
  double wall = after.seconds - counters.seconds;
  // 8 x 33.5 MFLOP: milliseconds of CPU time, none of it outside the
  // products' wall time (a millisecond of slack for the clocks' rounding).
  EXPECT_GT(after.cpu_seconds, 0);
  EXPECT_LT(after.cpu_seconds, wall + 1e-3);
  // What the core runtime reads through its weak references.
  std::optional<pipecc::rt::SgemmCounters> read =
      pipecc::rt::readSgemmCounters();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->cpuSeconds, after.cpu_seconds);

  // Off again: nothing more is counted.
  products();
  pipecc_rt_blas_stats(&counters);
  EXPECT_EQ(counters.cpu_seconds, after.cpu_seconds);
  pipecc_rt_blas_reset_stats();
}

TEST(Blas, ProductCountersKeyEachShapeReadingAndPath) {
  std::vector<float> a(64 * 64, 0.5f), b(64 * 64, 0.25f), c(64 * 64, 0.0f);
  // Not recording: nothing is kept.
  pipecc_rt_blas_record_products(0);
  pipecc_rt_sgemm(0, 1, 7, 13, 5, 1, a.data(), 5, b.data(), 5, 0, c.data(),
                  13);
  EXPECT_EQ(pipecc_rt_blas_products(nullptr, 0), 0);

  pipecc_rt_blas_record_products(1);
  for (int i = 0; i < 3; ++i)
    pipecc_rt_sgemm(0, 1, 7, 13, 5, 1, a.data(), 5, b.data(), 5, 0, c.data(),
                    13);
  // The same shape read otherwise, or added into, is another product.
  pipecc_rt_sgemm(0, 0, 7, 13, 5, 1, a.data(), 5, b.data(), 13, 0, c.data(),
                  13);
  pipecc_rt_sgemm(0, 1, 7, 13, 5, 1, a.data(), 5, b.data(), 5, 1, c.data(),
                  13);
  // A weight's product: the engine on its packed copy, where it has one.
  pipecc_rt_sgemm_weight(0, 1, 8, 64, 64, 1, a.data(), 64, b.data(), 64, 0,
                         c.data(), 64);
  // An empty C counts nothing, here as in the totals.
  pipecc_rt_sgemm(0, 0, 0, 13, 5, 1, a.data(), 5, b.data(), 13, 0, c.data(),
                  13);
  ASSERT_EQ(pipecc_rt_blas_products(nullptr, 0), 4);
  std::vector<pipecc_rt_gemm_product> products(4);
  ASSERT_EQ(pipecc_rt_blas_products(products.data(), 4), 4);
  const pipecc_rt_gemm_product &first = products[0];
  EXPECT_EQ(first.m, 7);
  EXPECT_EQ(first.n, 13);
  EXPECT_EQ(first.k, 5);
  EXPECT_EQ(first.trans_a, 0);
  EXPECT_EQ(first.trans_b, 1);
  EXPECT_EQ(first.accumulate, 0);
  EXPECT_EQ(first.batch, 1);
  EXPECT_EQ(first.calls, 3);
  EXPECT_GT(first.seconds, 0);
  EXPECT_EQ(products[1].trans_b, 0);
  EXPECT_EQ(products[1].calls, 1);
  EXPECT_EQ(products[2].accumulate, 1);
  EXPECT_EQ(products[2].path, first.path);
  EXPECT_EQ(products[3].path, pipecc_rt_blas_set_packed_weights(1)
                                  ? PIPECC_RT_GEMM_PACKED_WEIGHT
                                  : PIPECC_RT_GEMM_BLAS);

  // The report: most time first, one line each.
  std::string lines = pipecc::rt::gemmProductLines(2);
  EXPECT_EQ(lines.rfind("gemm rank 2: ", 0), 0u) << lines;
  EXPECT_NE(lines.find("gemm rank 2: 7x13x5 nt beta 0 "), std::string::npos)
      << lines;
  EXPECT_NE(lines.find(", 3 calls, "), std::string::npos) << lines;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 4) << lines;

  // Recording again starts from empty; a copy stops at the capacity.
  pipecc_rt_blas_record_products(1);
  pipecc_rt_sgemm(0, 1, 7, 13, 5, 1, a.data(), 5, b.data(), 5, 0, c.data(),
                  13);
  pipecc_rt_sgemm(0, 0, 7, 13, 5, 1, a.data(), 5, b.data(), 13, 0, c.data(),
                  13);
  pipecc_rt_gemm_product one{};
  EXPECT_EQ(pipecc_rt_blas_products(&one, 1), 2);
  EXPECT_EQ(one.calls, 1);
  EXPECT_EQ(one.trans_b, 1);
  pipecc_rt_blas_record_products(0);
  EXPECT_EQ(pipecc_rt_blas_products(nullptr, 0), 0);
  EXPECT_EQ(pipecc::rt::gemmProductLines(0), "gemm rank 0: no products\n");
}

// A weight gradient dY^T X over at least a k-block of rows (K = 300:
// deeper than the AVX-512 kernel's 256) runs in the engine wherever the
// CPU has a packed kernel: on AVX-512 because it beats OpenBLAS's own
// AVX-512 kernels there (docs/design.md, "The deep weight gradients run
// in the engine"), on AVX2 because it is shallow for that kernel's k-blocks
// of 512. Held to the double-precision loop with beta 0 and 1 (several
// k-blocks, a partial row tile and a partial panel).
TEST(Blas, DeepWeightGradientsRunInTheEngine) {
  bool engine = pipecc_rt_blas_set_packed_weights(1);
  std::mt19937 random(11);
  for (float beta : {0.0f, 1.0f}) {
    pipecc_rt_blas_record_products(1);
    EXPECT_LT(worstError({true, false, 70, 50, 300, 1.0f, beta, 0, 0, 0},
                         random),
              1e-4)
        << "beta=" << beta;
    pipecc_rt_gemm_product product{};
    ASSERT_EQ(pipecc_rt_blas_products(&product, 1), 1);
    EXPECT_EQ(product.k, 300);
    EXPECT_EQ(product.path,
              engine ? PIPECC_RT_GEMM_ENGINE : PIPECC_RT_GEMM_BLAS);
    pipecc_rt_blas_record_products(0);
  }
}

// A plain product on the path the compiler chose (PIPECC_RT_GEMM_ON_BLAS,
// _ON_ENGINE): it runs there, whatever the runtime's rule would pick (the
// engine only where the CPU has its kernel), and computes the product with
// its bias and ReLU. Both paths in one request, or a path for a weight's
// product (always its packed copy), are errors.
TEST(Blas, ChosenPathRunsThePlainProductThere) {
  bool engine = pipecc_rt_blas_set_packed_weights(1);
  std::mt19937 random(13);
  std::uniform_real_distribution<float> uniform(-1, 1);
  // A weight gradient the rule gives the engine (deep) and one it gives
  // the BLAS where no rule applies (shallow for neither kernel).
  for (auto [m, n, k] : {std::tuple{int64_t(70), int64_t(50), int64_t(300)},
                         std::tuple{int64_t(256), int64_t(2048), int64_t(64)}})
    for (int32_t on : {int32_t(PIPECC_RT_GEMM_ON_BLAS),
                       int32_t(PIPECC_RT_GEMM_ON_ENGINE)})
      for (float beta : {0.0f, 1.0f}) {
        std::vector<float> a(k * m), b(k * n), bias(n), c(m * n),
            expected(m * n);
        for (std::vector<float> *x : {&a, &b, &bias, &c})
          for (float &v : *x)
            v = uniform(random);
        // dY^T X in double, then the bias and the ReLU.
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = beta * c[i * n + j];
            for (int64_t l = 0; l < k; ++l)
              sum += double(a[l * m + i]) * b[l * n + j];
            sum += bias[j];
            expected[i * n + j] = sum > 0 ? float(sum) : 0.0f;
          }
        pipecc_rt_blas_record_products(1);
        pipecc_rt_sgemm_epilogue(1, 0, m, n, k, 1, a.data(), m, b.data(), n,
                                 beta, c.data(), n, bias.data(),
                                 on | PIPECC_RT_GEMM_RELU);
        pipecc_rt_gemm_product product{};
        ASSERT_EQ(pipecc_rt_blas_products(&product, 1), 1);
        pipecc_rt_blas_record_products(0);
        EXPECT_EQ(product.path, on == PIPECC_RT_GEMM_ON_ENGINE && engine
                                    ? PIPECC_RT_GEMM_ENGINE
                                    : PIPECC_RT_GEMM_BLAS)
            << "M=" << m << " on=" << on;
        double worst = 0;
        for (int64_t i = 0; i < m * n; ++i)
          worst = std::max(worst, double(std::fabs(c[i] - expected[i])));
        EXPECT_LT(worst, 1e-3) << "M=" << m << " on=" << on
                               << " beta=" << beta;
      }
}

TEST(BlasDeathTest, ChosenPathIsOneAndNeverForAWeight) {
  std::vector<float> a(64, 1), b(64, 1), c(64, 0);
  EXPECT_EXIT(pipecc_rt_sgemm_epilogue(
                   1, 0, 8, 8, 8, 1, a.data(), 8, b.data(), 8, 0, c.data(), 8,
                   nullptr, PIPECC_RT_GEMM_ON_BLAS | PIPECC_RT_GEMM_ON_ENGINE),
               ::testing::ExitedWithCode(1), "more than one path");
  EXPECT_EXIT(pipecc_rt_sgemm_epilogue(
                   0, 1, 8, 8, 8, 1, a.data(), 8, b.data(), 8, 0, c.data(), 8,
                   nullptr, PIPECC_RT_GEMM_ON_BLAS | PIPECC_RT_GEMM_WEIGHT_B),
               ::testing::ExitedWithCode(1), "more than one path");
  EXPECT_EXIT(pipecc_rt_sgemm_epilogue(0, 1, 8, 8, 8, 1, a.data(), 8,
                                        b.data(), 8, 0, c.data(), 8, nullptr,
                                        16),
               ::testing::ExitedWithCode(1), "unknown flags");
}

TEST(Blas, DescriptionNamesLibraryVersionAndKernels) {
  std::string description = pipecc_rt_blas_description();
  EXPECT_EQ(description.rfind("OpenBLAS 0.", 0), 0u) << description;
  EXPECT_NE(description.find(" ("), std::string::npos) << description;
  // "..., Haswell kernels; weights packed once per step (avx2-fma 4x24)"
  // or "...; weights packed per call" (docs/cli.md).
  size_t kernels = description.find(" kernels; weights packed ");
  EXPECT_NE(kernels, std::string::npos) << description;
  // On a CPU with AVX2, never the SSE3 kernels that Debian's OpenBLAS 0.3.21
  // falls back to on Intel models newer than its tables (issue 10).
  if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(description.find("Prescott"), std::string::npos)
        << description;
  }
  // Where the engine's kernel is wider than the BLAS's (its AVX-512 kernel
  // against OpenBLAS's Haswell kernels, which AMD Zen 5 gets) the engine
  // runs the other products too, and says so; never where the BLAS runs
  // AVX-512 kernels itself.
  bool blasAvx512 = false;
  for (const char *core : {", SkylakeX kernels", ", Cooperlake kernels",
                           ", SapphireRapids kernels"})
    blasAvx512 |= description.find(core) != std::string::npos;
  bool engineAvx512 =
      description.find("once per step (avx512 ") != std::string::npos;
  EXPECT_EQ(description.find("the other products too") != std::string::npos,
            engineAvx512 && !blasAvx512)
      << description;
}

TEST(Blas, SetThreadsTakesEffectInTheLibrary) {
  EXPECT_EQ(pipecc_rt_blas_set_threads(3), 3);
  EXPECT_EQ(pipecc_rt_blas_threads(), 3);
  EXPECT_EQ(pipecc::rt::queryBlas()->threads, 3);
  EXPECT_EQ(pipecc_rt_blas_set_threads(0), 1); // at least one
  EXPECT_EQ(pipecc_rt_blas_set_threads(1), 1);
  EXPECT_EQ(pipecc_rt_blas_threads(), 1);
}

} // namespace
