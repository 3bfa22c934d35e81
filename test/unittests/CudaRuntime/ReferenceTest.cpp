//===- ReferenceTest.cpp - CPU references of the CUDA kernels -------------===//
//
// The CUDA kernels are checked against Reference.cpp on a GPU
// (KernelsTest.cpp); here, on any machine, Reference.cpp itself is checked
// against numpy (make_kernel_references.py) and the CPU runtime's kernels.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/Kernels.h"
#include "pipecc/Runtime/CUDA/Reference.h"
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Runtime.h"

#include "../Runtime/TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace pipecc::rt;
namespace reference = pipecc::rt::cuda::reference;

namespace {

/// Inputs and expectations written by numpy, once per test binary.
class NumpyReference : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new pipecc::rt::testing::TempDir();
    std::string command = std::string("python3 '") +
                          PIPECC_CUDA_TEST_SOURCE_DIR +
                          "/make_kernel_references.py' '" + dir_->path() +
                          "' 2>&1";
    available_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!available_)
      GTEST_SKIP() << "python3 with numpy is not available";
  }

  template <typename T> static std::vector<T> load(const std::string &name) {
    NpyArray array = NpyArray::load(dir_->file(name + ".npy"));
    std::vector<T> values(array.bytes() / sizeof(T));
    std::memcpy(values.data(), array.data(), array.bytes());
    return values;
  }
  static std::vector<float> floats(const std::string &name) {
    return load<float>(name);
  }

  static pipecc::rt::testing::TempDir *dir_;
  static bool available_;
};
pipecc::rt::testing::TempDir *NumpyReference::dir_ = nullptr;
bool NumpyReference::available_ = false;

void expectNear(const std::vector<float> &actual,
                const std::vector<float> &expected, float tolerance,
                const char *what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * (1.0f + std::fabs(expected[i])))
        << what << " element " << i;
}

TEST_F(NumpyReference, SoftmaxAndBackwardAlongMiddleAndLastAxis) {
  struct Case {
    const char *name;
    int64_t outer, dim, inner;
  };
  for (Case c : {Case{"softmax3d", 3, 7, 5}, Case{"softmax2d", 4, 33, 1}}) {
    std::string name = c.name;
    std::vector<float> x = floats(name + "_x"), dy = floats(name + "_dy");
    std::vector<float> y(x.size()), dx(x.size());
    reference::softmax(x.data(), y.data(), c.outer, c.dim, c.inner);
    expectNear(y, floats(name + "_y"), 1e-6f, c.name);
    reference::softmaxBackward(y.data(), dy.data(), dx.data(), c.outer,
                               c.dim, c.inner);
    expectNear(dx, floats(name + "_dx"), 1e-5f, c.name);
  }
}

TEST_F(NumpyReference, LayerNormAndBackwardWithParameterGradients) {
  const int64_t rows = 6, cols = 40;
  std::vector<float> x = floats("layernorm_x"), dy = floats("layernorm_dy"),
                     scale = floats("layernorm_scale"),
                     bias = floats("layernorm_bias");
  std::vector<float> y(x.size()), dx(x.size()), dscale(cols), dbias(cols);
  reference::layerNorm(x.data(), scale.data(), bias.data(), y.data(), rows,
                       cols, 1e-5f);
  expectNear(y, floats("layernorm_y"), 1e-5f, "layer_norm");
  reference::layerNormBackward(x.data(), dy.data(), scale.data(), dx.data(),
                               dscale.data(), dbias.data(), rows, cols,
                               1e-5f);
  expectNear(dx, floats("layernorm_dx"), 1e-4f, "layer_norm dx");
  expectNear(dscale, floats("layernorm_dscale"), 1e-5f, "layer_norm dscale");
  expectNear(dbias, floats("layernorm_dbias"), 1e-5f, "layer_norm dbias");
}

TEST_F(NumpyReference, CrossEntropyAndBackwardAgainstFiniteDifferences) {
  struct Case {
    const char *name;
    int64_t outer, classes, inner;
    std::optional<int64_t> ignore;
  };
  for (Case c : {Case{"ce3d", 4, 6, 3, -100},
                 Case{"ce2d", 8, 10, 1, std::nullopt}}) {
    std::string name = c.name;
    std::vector<float> logits = floats(name + "_logits");
    std::vector<int64_t> labels = load<int64_t>(name + "_labels");
    std::vector<float> expected = floats(name + "_loss");
    reference::CrossEntropyResult result = reference::crossEntropy(
        logits.data(), labels.data(), c.outer, c.classes, c.inner, c.ignore);
    EXPECT_NEAR(result.loss, expected[0], 1e-5f) << c.name;
    EXPECT_EQ(result.count, expected[1]) << c.name;
    std::vector<float> dlogits(logits.size());
    reference::crossEntropyBackward(logits.data(), labels.data(), 0.75f,
                                    dlogits.data(), c.outer, c.classes,
                                    c.inner, c.ignore);
    expectNear(dlogits, floats(name + "_dlogits"), 2e-5f, c.name);
  }
}

TEST_F(NumpyReference, GemmEpiloguesMatchNumpy) {
  const int64_t m = 5, n = 6, k = 7;
  std::vector<float> a = floats("gemm_a"), b = floats("gemm_b"),
                     bias = floats("gemm_bias");
  std::vector<float> c(m * n);
  reference::gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n,
                  0.0f, c.data(), n, nullptr, PIPECC_RT_CUDA_EPILOGUE_NONE);
  expectNear(c, floats("gemm_plain"), 1e-6f, "gemm");
  struct Case {
    int32_t epilogue;
    const char *expected;
  };
  for (Case e :
       {Case{PIPECC_RT_CUDA_EPILOGUE_BIAS | PIPECC_RT_CUDA_EPILOGUE_GELU_TANH,
             "gemm_bias_gelu"},
        Case{PIPECC_RT_CUDA_EPILOGUE_BIAS | PIPECC_RT_CUDA_EPILOGUE_RELU,
             "gemm_bias_relu"}}) {
    c = floats("gemm_c0");
    reference::gemm(false, false, m, n, k, 1.5f, a.data(), k, b.data(), n,
                    -0.5f, c.data(), n, bias.data(), e.epilogue);
    expectNear(c, floats(e.expected), 1e-5f, e.expected);
  }
}

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

TEST(CudaReference, GemmEqualsCpuRuntimeSgemmInEveryTransposition) {
  const int64_t m = 9, n = 11, k = 13;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> a = sequence(m * k, 1), b = sequence(k * n, 2);
      std::vector<float> cpu = sequence(m * n, 3), ref = cpu;
      int64_t lda = ta ? m : k, ldb = tb ? k : n;
      pipecc_rt_sgemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb,
                      2.0f, cpu.data(), n);
      reference::gemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb,
                      2.0f, ref.data(), n, nullptr, 0);
      for (size_t i = 0; i < cpu.size(); ++i)
        ASSERT_NEAR(ref[i], cpu[i], 1e-5f) << "ta=" << ta << " tb=" << tb;
    }
}

TEST(CudaReference, SgdUpdateAndAccumulateEqualCpuRuntimeKernels) {
  const int64_t n = 1000;
  std::vector<float> grad = sequence(n, 4);
  std::vector<float> cpu = sequence(n, 5), ref = cpu;
  pipecc_rt_sgd_update_f32(cpu.data(), grad.data(), n, 0.03f);
  std::vector<uint16_t> bf16(n);
  reference::sgdUpdate(ref.data(), grad.data(), bf16.data(), n, 0.03f);
  EXPECT_EQ(0, std::memcmp(cpu.data(), ref.data(), n * sizeof(float)));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(bf16[i], reference::f32ToBf16(ref[i]));

  std::vector<float> sum = sequence(n, 6), refSum = sum;
  pipecc_rt_accumulate_f32(sum.data(), grad.data(), n);
  EXPECT_FALSE(reference::accumulate(refSum.data(), grad.data(), n));
  EXPECT_EQ(0, std::memcmp(sum.data(), refSum.data(), n * sizeof(float)));
  grad[17] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(reference::accumulate(refSum.data(), grad.data(), n));
  grad[17] = std::nanf("");
  EXPECT_TRUE(reference::accumulate(refSum.data(), grad.data(), n));
}

TEST(CudaReference, Bf16RoundsToNearestEven) {
  // Every bf16 value converts back and forth exactly.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = reference::bf16ToF32(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(
          reference::bf16ToF32(reference::f32ToBf16(value))));
      continue;
    }
    ASSERT_EQ(reference::f32ToBf16(value), bits);
  }
  // Any float lands on one of its two bf16 neighbours, the nearer one, the
  // even one on a tie.
  for (float value : sequence(20000, 7)) {
    value *= 1000.0f;
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    float down = reference::bf16ToF32(static_cast<uint16_t>(bits >> 16));
    float up = reference::bf16ToF32(static_cast<uint16_t>((bits >> 16) + 1));
    float rounded = reference::bf16ToF32(reference::f32ToBf16(value));
    double errDown = std::fabs(double(value) - down),
           errUp = std::fabs(double(value) - up);
    if (errDown < errUp)
      ASSERT_EQ(rounded, down) << value;
    else if (errUp < errDown)
      ASSERT_EQ(rounded, up) << value;
    else
      ASSERT_EQ(reference::f32ToBf16(rounded) & 1, 0) << value;
  }
  // Ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 and goes to 1 (even);
  // 1 + 3 * 2^-8 goes up to 1 + 2^-6.
  EXPECT_EQ(reference::f32ToBf16(1.0f + 0.00390625f), 0x3f80);
  EXPECT_EQ(reference::f32ToBf16(1.0f + 3 * 0.00390625f), 0x3f82);
  EXPECT_EQ(reference::f32ToBf16(std::numeric_limits<float>::infinity()),
            0x7f80);
  EXPECT_TRUE(std::isnan(
      reference::bf16ToF32(reference::f32ToBf16(std::nanf("")))));
}

TEST(CudaReference, CrossEntropyWithoutCountedPositionIsZero) {
  std::vector<float> logits = sequence(2 * 3, 8);
  std::vector<int64_t> labels = {-1, -1};
  reference::CrossEntropyResult result =
      reference::crossEntropy(logits.data(), labels.data(), 2, 3, 1, -1);
  EXPECT_EQ(result.loss, 0.0f);
  EXPECT_EQ(result.count, 0.0f);
  labels = {0, 7}; // out of range and counted
  EXPECT_TRUE(std::isnan(reference::crossEntropy(logits.data(),
                                                 labels.data(), 2, 3, 1,
                                                 std::nullopt)
                             .loss));
}

} // namespace
