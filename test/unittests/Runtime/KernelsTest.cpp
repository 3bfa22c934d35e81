//===- KernelsTest.cpp ----------------------------------------------------===//
#include "pipecc/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

/// Deterministic values in [-1, 1).
std::vector<float> sequence(size_t n, unsigned seed) {
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 1;
  for (float &x : out) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
  }
  return out;
}

/// Row-major reference: C = alpha * op(A) op(B) + beta * C.
void naiveGemm(bool ta, bool tb, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) {
        float av = ta ? a[p * lda + i] : a[i * lda + p];
        float bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        sum += static_cast<double>(av) * bv;
      }
      c[i * ldc + j] = static_cast<float>(alpha * sum + beta * c[i * ldc + j]);
    }
}

struct GemmCase {
  int ta, tb;
};

class SgemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(SgemmTest, MatchesNaiveLoop) {
  auto [ta, tb] = GetParam();
  const int m = 5, n = 7, k = 3;
  // Leading dimensions larger than needed, to check strides are honoured.
  const int lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 1, ldc = n + 3;
  std::vector<float> a = sequence((ta ? k : m) * lda, 1);
  std::vector<float> b = sequence((tb ? n : k) * ldb, 2);
  std::vector<float> c = sequence(m * ldc, 3);
  std::vector<float> expected = c;
  naiveGemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, 0.5f,
            expected.data(), ldc);
  pipecc_rt_sgemm(ta, tb, m, n, k, 0.75f, a.data(), lda, b.data(), ldb, 0.5f,
                  c.data(), ldc);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_NEAR(c[i], expected[i], 1e-5f) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, SgemmTest,
                         ::testing::Values(GemmCase{0, 0}, GemmCase{0, 1},
                                           GemmCase{1, 0}, GemmCase{1, 1}),
                         [](const auto &info) {
                           return std::string(info.param.ta ? "T" : "N") +
                                  (info.param.tb ? "T" : "N");
                         });

TEST(Sgemm, BatchedWithStridesAndBroadcast) {
  const int m = 3, n = 4, k = 2, batch = 3;
  std::vector<float> a = sequence(batch * m * k, 4);
  std::vector<float> b = sequence(k * n, 5); // stride 0: shared by all
  std::vector<float> c(batch * m * n, 0.0f);
  std::vector<float> expected = c;
  for (int i = 0; i < batch; ++i)
    naiveGemm(false, false, m, n, k, 1.0f, a.data() + i * m * k, k, b.data(),
              n, 0.0f, expected.data() + i * m * n, n);
  pipecc_rt_sgemm_batched(0, 0, m, n, k, 1.0f, a.data(), k, m * k, b.data(),
                          n, 0, 0.0f, c.data(), n, m * n, batch);
  for (size_t i = 0; i < c.size(); ++i)
    EXPECT_NEAR(c[i], expected[i], 1e-5f) << "element " << i;
}

TEST(Sgemm, EmptyDimensionsAreNoOps) {
  float c = 42;
  pipecc_rt_sgemm(0, 0, 0, 1, 1, 1.0f, nullptr, 1, nullptr, 1, 0.0f, &c, 1);
  pipecc_rt_sgemm(0, 0, 1, 1, 0, 1.0f, nullptr, 1, nullptr, 1, 0.5f, &c, 1);
  EXPECT_EQ(c, 21.0f); // K = 0: C = beta * C
}

TEST(ElementwiseKernels, AccumulateScaleSgdZero) {
  std::vector<float> dst = {1, 2, 3}, src = {0.5f, -1, 4};
  pipecc_rt_accumulate_f32(dst.data(), src.data(), 3);
  EXPECT_EQ(dst, (std::vector<float>{1.5f, 1, 7}));
  pipecc_rt_scale_f32(dst.data(), 3, 2.0f);
  EXPECT_EQ(dst, (std::vector<float>{3, 2, 14}));
  std::vector<float> param = {1, 1, 1}, grad = {1, -2, 0.5f};
  pipecc_rt_sgd_update_f32(param.data(), grad.data(), 3, 0.5f);
  EXPECT_EQ(param, (std::vector<float>{0.5f, 2, 0.75f}));
  pipecc_rt_zero(param.data(), 2 * sizeof(float));
  EXPECT_EQ(param, (std::vector<float>{0, 0, 0.75f}));
  pipecc_rt_zero(nullptr, 0);
}

} // namespace
