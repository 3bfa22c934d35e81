//===- GemmReference.h - A GEMM held to a double-precision loop -*- C++ -*-===//
//
// What BlasTest (pipecc_rt_sgemm, pipecc_rt_sgemm_weight) and PackedGemmTest
// (the packed engine) check alike: random operands with padded leading
// dimensions, the product under test, and its largest error against a
// plain triple loop in double precision, relative to the magnitude of the
// terms summed. C's padding must stay as it was (bit for bit); with
// beta = 0 C's old values (NaN with nanC) must not show.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_TEST_UNITTESTS_RUNTIME_GEMMREFERENCE_H
#define PIPECC_TEST_UNITTESTS_RUNTIME_GEMMREFERENCE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace pipecc::test {

struct GemmCase {
  bool transA, transB;
  int64_t m, n, k;
  float alpha, beta;
  // Leading dimensions larger than the rows' lengths: row strides count.
  int64_t padA, padB, padC;
  // C's initial values are NaN (with beta = 0 they must not show).
  bool nanC = false;
};

/// Runs the product of `g` on the operands given (row-major, A M x K or
/// K x M when transposed, B K x N or N x K, C M x N), in place on C.
using GemmUnderTest =
    std::function<void(const float *a, int64_t lda, const float *b,
                       int64_t ldb, float *c, int64_t ldc)>;

/// Row-major op(X)[i][j] of a matrix stored with leading dimension ld.
inline float gemmOperandAt(const std::vector<float> &x, bool trans,
                           int64_t ld, int64_t i, int64_t j) {
  return trans ? x[j * ld + i] : x[i * ld + j];
}

/// The largest relative error of `product` over C (infinity for NaN).
inline double worstGemmError(const GemmCase &g, std::mt19937 &random,
                             const GemmUnderTest &product) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  int64_t aRows = g.transA ? g.k : g.m, aCols = g.transA ? g.m : g.k;
  int64_t bRows = g.transB ? g.n : g.k, bCols = g.transB ? g.k : g.n;
  int64_t lda = aCols + g.padA, ldb = bCols + g.padB, ldc = g.n + g.padC;
  std::vector<float> a(aRows * lda), b(bRows * ldb), c(g.m * ldc);
  for (float &x : a)
    x = uniform(random);
  for (float &x : b)
    x = uniform(random);
  for (float &x : c)
    x = g.nanC ? std::numeric_limits<float>::quiet_NaN() : uniform(random);
  std::vector<float> before = c;
  product(a.data(), lda, b.data(), ldb, c.data(), ldc);
  double worst = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      float got = c[i * ldc + j], old = before[i * ldc + j];
      if (j >= g.n) {
        EXPECT_TRUE(std::memcmp(&got, &old, sizeof got) == 0)
            << "padding written at " << i << "," << j;
        continue;
      }
      double sum = 0, scale = g.beta == 0 ? 0 : std::fabs(g.beta * old);
      for (int64_t p = 0; p < g.k; ++p) {
        double term = double(gemmOperandAt(a, g.transA, lda, i, p)) *
                      gemmOperandAt(b, g.transB, ldb, p, j);
        sum += term;
        scale += std::fabs(g.alpha * term);
      }
      double expected = g.alpha * sum + (g.beta == 0 ? 0 : g.beta * old);
      double error = std::fabs(got - expected) / std::max(scale, 1e-30);
      if (!(error <= worst)) // NaN counts as the worst
        worst = std::isnan(error) ? std::numeric_limits<double>::infinity()
                                  : error;
    }
  }
  return worst;
}

} // namespace pipecc::test

#endif // PIPECC_TEST_UNITTESTS_RUNTIME_GEMMREFERENCE_H
