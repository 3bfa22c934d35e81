//===- KernelsTest.cpp - CUDA kernels against their CPU references -------===//
//
// Needs a GPU: every test skips when cudaGetDeviceCount finds none (CI),
// and test/Runtime/cuda-kernels.test runs the binary again under the lit
// feature cuda-device, where a skip is a failure.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/Kernels.h"
#include "pipecc/Runtime/CUDA/Mgpu.h"
#include "pipecc/Runtime/CUDA/Reference.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace reference = pipecc::rt::cuda::reference;

namespace {

bool haveGpu() {
  int count = 0;
  bool found = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return found;
}

cudaStream_t stream() {
  return static_cast<cudaStream_t>(pipecc_rt_cuda_compute_stream());
}

void sync() { ASSERT_EQ(cudaStreamSynchronize(stream()), cudaSuccess); }

/// Device memory holding a copy of `values`.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(const std::vector<T> &values) : size_(values.size()) {
    EXPECT_EQ(cudaMalloc(&data_, bytes() ? bytes() : 1), cudaSuccess);
    if (bytes()) {
      EXPECT_EQ(cudaMemcpy(data_, values.data(), bytes(),
                           cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }
  explicit DeviceArray(size_t size) : DeviceArray(std::vector<T>(size)) {}
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return static_cast<T *>(data_); }
  /// Waits for the compute stream, then copies back.
  std::vector<T> read() const {
    EXPECT_EQ(cudaStreamSynchronize(stream()), cudaSuccess);
    std::vector<T> values(size_);
    if (bytes()) {
      EXPECT_EQ(cudaMemcpy(values.data(), data_, bytes(),
                           cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    return values;
  }

private:
  size_t bytes() const { return size_ * sizeof(T); }
  void *data_ = nullptr;
  size_t size_;
};

class CudaKernels : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveGpu())
      GTEST_SKIP() << "no CUDA device";
    if (!pipecc_rt_cuda_compute_stream()) {
      cudaStream_t created = nullptr;
      ASSERT_EQ(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
                cudaSuccess);
      pipecc_rt_cuda_set_compute_stream(created);
    }
  }
};

/// Deterministic values in [-scale, scale).
std::vector<float> sequence(size_t n, unsigned seed, float scale = 1.0f) {
  std::vector<float> out(n);
  uint32_t state = seed * 2654435761u + 1;
  for (float &x : out) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) / 8388608.0f - 1.0f) * scale;
  }
  return out;
}

std::vector<uint16_t> toBf16(const std::vector<float> &values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = reference::f32ToBf16(values[i]);
  return out;
}
std::vector<float> fromBf16(const std::vector<uint16_t> &values) {
  std::vector<float> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = reference::bf16ToF32(values[i]);
  return out;
}
/// The values a bf16 kernel sees: rounded to bf16.
std::vector<float> roundedToBf16(const std::vector<float> &values) {
  return fromBf16(toBf16(values));
}

void expectClose(const std::vector<float> &actual,
                 const std::vector<float> &expected, float tolerance,
                 const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i],
                tolerance * (1.0f + std::fabs(expected[i])))
        << what << " element " << i;
}

/// Runs `kernel` on f32 or bf16 copies of `inputs` and returns the
/// outputs (of the given sizes) as f32.
template <typename Kernel>
std::vector<std::vector<float>>
runTyped(int32_t dtype, const std::vector<std::vector<float>> &inputs,
         const std::vector<size_t> &outputSizes, Kernel kernel) {
  std::vector<std::vector<float>> outputs;
  if (dtype == PIPECC_RT_CUDA_F32) {
    std::vector<std::unique_ptr<DeviceArray<float>>> in, out;
    std::vector<void *> inPtrs, outPtrs;
    for (const auto &values : inputs) {
      in.push_back(std::make_unique<DeviceArray<float>>(values));
      inPtrs.push_back(in.back()->get());
    }
    for (size_t size : outputSizes) {
      out.push_back(std::make_unique<DeviceArray<float>>(size));
      outPtrs.push_back(out.back()->get());
    }
    kernel(inPtrs, outPtrs);
    for (auto &array : out)
      outputs.push_back(array->read());
  } else {
    std::vector<std::unique_ptr<DeviceArray<uint16_t>>> in, out;
    std::vector<void *> inPtrs, outPtrs;
    for (const auto &values : inputs) {
      in.push_back(std::make_unique<DeviceArray<uint16_t>>(toBf16(values)));
      inPtrs.push_back(in.back()->get());
    }
    for (size_t size : outputSizes) {
      out.push_back(std::make_unique<DeviceArray<uint16_t>>(size));
      outPtrs.push_back(out.back()->get());
    }
    kernel(inPtrs, outPtrs);
    for (auto &array : out)
      outputs.push_back(fromBf16(array->read()));
  }
  return outputs;
}

struct TypeCase {
  int32_t dtype;
  float tolerance;
  const char *name;
};
const TypeCase kTypes[] = {{PIPECC_RT_CUDA_F32, 2e-5f, "f32"},
                           {PIPECC_RT_CUDA_BF16, 2e-2f, "bf16"}};

std::vector<float> inputsFor(int32_t dtype, std::vector<float> values) {
  return dtype == PIPECC_RT_CUDA_BF16 ? roundedToBf16(values) : values;
}

TEST_F(CudaKernels, SoftmaxAndBackwardMatchReference) {
  struct Shape {
    int64_t outer, dim, inner;
  };
  for (Shape s : {Shape{3, 7, 5}, Shape{4, 1000, 1}, Shape{2, 1, 3}})
    for (TypeCase t : kTypes) {
      size_t n = s.outer * s.dim * s.inner;
      std::vector<float> x = inputsFor(t.dtype, sequence(n, 1, 4.0f));
      std::vector<float> dy = inputsFor(t.dtype, sequence(n, 2));
      std::vector<float> y(n), dx(n);
      reference::softmax(x.data(), y.data(), s.outer, s.dim, s.inner);
      auto forward = runTyped(t.dtype, {x}, {n}, [&](auto in, auto out) {
        pipecc_rt_cuda_softmax(in[0], out[0], s.outer, s.dim, s.inner,
                               t.dtype);
      });
      expectClose(forward[0], y, t.tolerance,
                  std::string("softmax ") + t.name);
      std::vector<float> yIn = inputsFor(t.dtype, y);
      reference::softmaxBackward(yIn.data(), dy.data(), dx.data(), s.outer,
                                 s.dim, s.inner);
      auto backward =
          runTyped(t.dtype, {yIn, dy}, {n}, [&](auto in, auto out) {
            pipecc_rt_cuda_softmax_backward(in[0], in[1], out[0], s.outer,
                                            s.dim, s.inner, t.dtype);
          });
      expectClose(backward[0], dx, t.tolerance,
                  std::string("softmax_backward ") + t.name);
    }
}

TEST_F(CudaKernels, LayerNormAndBackwardMatchReference) {
  const int64_t rows = 7, cols = 1600;
  for (TypeCase t : kTypes)
    for (bool affine : {true, false}) {
      size_t n = rows * cols;
      std::vector<float> x = inputsFor(t.dtype, sequence(n, 3, 3.0f));
      std::vector<float> dy = inputsFor(t.dtype, sequence(n, 4));
      std::vector<float> scale = inputsFor(t.dtype, sequence(cols, 5));
      std::vector<float> bias = inputsFor(t.dtype, sequence(cols, 6));
      const float *scaleRef = affine ? scale.data() : nullptr;
      std::vector<float> y(n), dx(n), dscale(cols), dbias(cols);
      reference::layerNorm(x.data(), scaleRef, affine ? bias.data() : nullptr,
                           y.data(), rows, cols, 1e-5f);
      reference::layerNormBackward(x.data(), dy.data(), scaleRef, dx.data(),
                                   dscale.data(), dbias.data(), rows, cols,
                                   1e-5f);
      auto outputs = runTyped(
          t.dtype, {x, dy, scale, bias}, {n, n, size_t(cols), size_t(cols)},
          [&](auto in, auto out) {
            pipecc_rt_cuda_layer_norm(in[0], affine ? in[2] : nullptr,
                                      affine ? in[3] : nullptr, out[0], rows,
                                      cols, 1e-5f, t.dtype);
            pipecc_rt_cuda_layer_norm_backward(
                in[0], in[1], affine ? in[2] : nullptr, out[1], out[2],
                out[3], rows, cols, 1e-5f, t.dtype);
          });
      std::string what = std::string(t.name) + (affine ? " affine" : "");
      expectClose(outputs[0], y, t.tolerance, "layer_norm " + what);
      expectClose(outputs[1], dx, t.tolerance * 10, "layer_norm dx " + what);
      expectClose(outputs[2], dscale, t.tolerance * 10, "dscale " + what);
      expectClose(outputs[3], dbias, t.tolerance * 10, "dbias " + what);
    }
}

TEST_F(CudaKernels, CrossEntropyAndBackwardMatchReference) {
  struct Case {
    int64_t outer, classes, inner;
    std::optional<int64_t> ignore;
    int32_t labelType;
  };
  for (Case c : {Case{4, 6, 3, -100, PIPECC_RT_CUDA_I64},
                 Case{16, 50257, 1, std::nullopt, PIPECC_RT_CUDA_I32},
                 Case{3, 5, 1, 2, PIPECC_RT_CUDA_I64}})
    for (TypeCase t : kTypes) {
      int64_t positions = c.outer * c.inner;
      size_t n = positions * c.classes;
      std::vector<float> logits = inputsFor(t.dtype, sequence(n, 7, 5.0f));
      std::vector<int64_t> labels(positions);
      for (int64_t p = 0; p < positions; ++p)
        labels[p] = (p * 7919) % c.classes;
      if (c.ignore)
        labels[1] = *c.ignore;
      std::vector<int32_t> labels32(labels.begin(), labels.end());
      reference::CrossEntropyResult expected = reference::crossEntropy(
          logits.data(), labels.data(), c.outer, c.classes, c.inner,
          c.ignore);
      std::vector<float> dlogits(n);
      float lossGrad = inputsFor(t.dtype, {0.75f})[0];
      reference::crossEntropyBackward(logits.data(), labels.data(), lossGrad,
                                      dlogits.data(), c.outer, c.classes,
                                      c.inner, c.ignore);
      DeviceArray<int64_t> labels64Device(labels);
      DeviceArray<int32_t> labels32Device(labels32);
      const void *deviceLabels = c.labelType == PIPECC_RT_CUDA_I64
                                     ? static_cast<void *>(labels64Device.get())
                                     : labels32Device.get();
      DeviceArray<float> count(1);
      auto outputs = runTyped(
          t.dtype, {logits, {lossGrad}}, {1, n}, [&](auto in, auto out) {
            pipecc_rt_cuda_cross_entropy(
                in[0], deviceLabels, out[0], count.get(), c.outer, c.classes,
                c.inner, t.dtype, c.labelType, c.ignore.has_value(),
                c.ignore.value_or(0));
            pipecc_rt_cuda_cross_entropy_backward(
                in[0], deviceLabels, in[1], out[1], c.outer, c.classes,
                c.inner, t.dtype, c.labelType, c.ignore.has_value(),
                c.ignore.value_or(0));
          });
      EXPECT_NEAR(outputs[0][0], expected.loss,
                  t.tolerance * (1 + expected.loss))
          << t.name << " classes " << c.classes;
      EXPECT_EQ(count.read()[0], expected.count);
      expectClose(outputs[1], dlogits, t.tolerance,
                  std::string("cross_entropy_backward ") + t.name);
    }
}

TEST_F(CudaKernels, SgdUpdateEqualsReferenceBitForBit) {
  const int64_t n = 100003;
  std::vector<float> param = sequence(n, 8), grad = sequence(n, 9);
  DeviceArray<float> paramDevice(param), gradDevice(grad);
  DeviceArray<uint16_t> bf16Device(n);
  pipecc_rt_cuda_sgd_update(paramDevice.get(), gradDevice.get(),
                            bf16Device.get(), n, 0.01f);
  std::vector<uint16_t> bf16(n);
  reference::sgdUpdate(param.data(), grad.data(), bf16.data(), n, 0.01f);
  std::vector<float> updated = paramDevice.read();
  EXPECT_EQ(0, std::memcmp(updated.data(), param.data(), n * sizeof(float)));
  EXPECT_EQ(bf16Device.read(), bf16);
  pipecc_rt_cuda_sgd_update_f32(paramDevice.get(), gradDevice.get(), n,
                                0.5f);
  reference::sgdUpdate(param.data(), grad.data(), nullptr, n, 0.5f);
  updated = paramDevice.read();
  EXPECT_EQ(0, std::memcmp(updated.data(), param.data(), n * sizeof(float)));
}

TEST_F(CudaKernels, AccumulateFlagsNonFiniteGradients) {
  const int64_t n = 5000;
  std::vector<float> dst = sequence(n, 10), src = sequence(n, 11);
  DeviceArray<float> dstDevice(dst), srcDevice(src);
  DeviceArray<int32_t> flag(std::vector<int32_t>{0});
  pipecc_rt_cuda_accumulate(dstDevice.get(), srcDevice.get(),
                            PIPECC_RT_CUDA_F32, n, flag.get());
  EXPECT_FALSE(reference::accumulate(dst.data(), src.data(), n));
  EXPECT_EQ(dstDevice.read(), dst);
  EXPECT_EQ(flag.read()[0], 0);

  // A bf16 gradient with one infinity.
  std::vector<float> srcBf16 = roundedToBf16(sequence(n, 12));
  srcBf16[4321] = std::numeric_limits<float>::infinity();
  DeviceArray<uint16_t> bf16Device(toBf16(srcBf16));
  pipecc_rt_cuda_accumulate(dstDevice.get(), bf16Device.get(),
                            PIPECC_RT_CUDA_BF16, n, flag.get());
  EXPECT_TRUE(reference::accumulate(dst.data(), srcBf16.data(), n));
  EXPECT_EQ(flag.read()[0], 1);
  EXPECT_EQ(dstDevice.read(), dst); // the infinity included

  pipecc_rt_cuda_accumulate_f32(dstDevice.get(), srcDevice.get(), n);
  pipecc_rt_cuda_scale_f32(dstDevice.get(), n, 0.5f);
  for (int64_t i = 0; i < n; ++i)
    dst[i] = (dst[i] + src[i]) * 0.5f;
  EXPECT_EQ(dstDevice.read(), dst);
  pipecc_rt_cuda_zero(dstDevice.get(), n * sizeof(float));
  EXPECT_EQ(dstDevice.read(), std::vector<float>(n, 0.0f));
}

TEST_F(CudaKernels, FindNonFiniteGivesTheFirstIndexOrNone) {
  // Over several blocks' grid-stride loops, so that threads race.
  const int64_t n = 3'000'000;
  std::vector<float> values = sequence(n, 13);
  DeviceArray<float> device(values);
  DeviceArray<uint64_t> first(std::vector<uint64_t>{0});
  pipecc_rt_cuda_find_non_finite_f32(device.get(), n, first.get());
  EXPECT_EQ(first.read()[0], UINT64_MAX);

  values[2'999'000] = std::numeric_limits<float>::infinity();
  values[1'234'567] = std::numeric_limits<float>::quiet_NaN();
  values[2'000'001] = -std::numeric_limits<float>::infinity();
  DeviceArray<float> bad(values);
  pipecc_rt_cuda_find_non_finite_f32(bad.get(), n, first.get());
  EXPECT_EQ(first.read()[0], 1'234'567u);
  // Nothing to search: none.
  pipecc_rt_cuda_find_non_finite_f32(bad.get(), 0, first.get());
  EXPECT_EQ(first.read()[0], UINT64_MAX);
}

TEST_F(CudaKernels, Bf16ConversionsEqualReference) {
  std::vector<uint16_t> every(0x10000);
  for (uint32_t i = 0; i < every.size(); ++i)
    every[i] = static_cast<uint16_t>(i);
  DeviceArray<uint16_t> bf16Device(every);
  DeviceArray<float> f32Device(every.size());
  pipecc_rt_cuda_bf16_to_f32(bf16Device.get(), f32Device.get(),
                             every.size());
  std::vector<float> widened = f32Device.read();
  for (uint32_t i = 0; i < every.size(); ++i) {
    float expected = reference::bf16ToF32(every[i]);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(widened[i])) << i;
    } else {
      ASSERT_EQ(std::memcmp(&widened[i], &expected, 4), 0) << i;
    }
  }
  std::vector<float> values = sequence(100000, 13, 3e4f);
  values[5] = std::nanf("");
  values[6] = -std::numeric_limits<float>::infinity();
  values[7] = 1.0f + 0.00390625f; // a tie
  DeviceArray<float> valuesDevice(values);
  DeviceArray<uint16_t> narrowed(values.size());
  pipecc_rt_cuda_f32_to_bf16(valuesDevice.get(), narrowed.get(),
                             values.size());
  std::vector<uint16_t> result = narrowed.read();
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      ASSERT_TRUE(std::isnan(reference::bf16ToF32(result[i])));
    } else {
      ASSERT_EQ(result[i], reference::f32ToBf16(values[i])) << values[i];
    }
  }
}

struct GemmCase {
  int ta, tb;
  int32_t abType, cType, epilogue;
  float beta;
};

TEST_F(CudaKernels, GemmMatchesReference) {
  const int64_t m = 33, n = 48, k = 40;
  std::vector<GemmCase> cases;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      cases.push_back({ta, tb, PIPECC_RT_CUDA_F32, PIPECC_RT_CUDA_F32, 0, 0});
  cases.push_back({0, 1, PIPECC_RT_CUDA_F32, PIPECC_RT_CUDA_F32,
                   PIPECC_RT_CUDA_EPILOGUE_BIAS, 1.0f});
  cases.push_back({0, 0, PIPECC_RT_CUDA_BF16, PIPECC_RT_CUDA_BF16,
                   PIPECC_RT_CUDA_EPILOGUE_BIAS |
                       PIPECC_RT_CUDA_EPILOGUE_GELU_TANH,
                   0});
  cases.push_back({0, 0, PIPECC_RT_CUDA_BF16, PIPECC_RT_CUDA_BF16,
                   PIPECC_RT_CUDA_EPILOGUE_BIAS | PIPECC_RT_CUDA_EPILOGUE_RELU,
                   0});
  // Weight gradient: bf16 product accumulated into an f32 C.
  cases.push_back(
      {1, 0, PIPECC_RT_CUDA_BF16, PIPECC_RT_CUDA_F32, 0, 1.0f});
  for (const GemmCase &g : cases) {
    bool bf16In = g.abType == PIPECC_RT_CUDA_BF16;
    bool bf16Out = g.cType == PIPECC_RT_CUDA_BF16;
    std::vector<float> a = sequence(m * k, 14), b = sequence(k * n, 15);
    std::vector<float> c = sequence(m * n, 16), bias = sequence(n, 17);
    if (bf16In) {
      a = roundedToBf16(a);
      b = roundedToBf16(b);
    }
    if (bf16Out) {
      c = roundedToBf16(c);
      bias = roundedToBf16(bias);
    }
    int64_t lda = g.ta ? m : k, ldb = g.tb ? k : n;
    std::vector<float> expected = c;
    reference::gemm(g.ta, g.tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb,
                    g.beta, expected.data(), n, bias.data(), g.epilogue);
    std::vector<float> actual;
    auto run = [&](void *aDev, void *bDev, void *cDev, void *biasDev) {
      pipecc_rt_cuda_gemm(g.ta, g.tb, m, n, k, 0.5f, aDev, lda, bDev, ldb,
                          g.beta, cDev, n, g.abType, g.cType, biasDev,
                          g.epilogue);
    };
    if (bf16In) {
      DeviceArray<uint16_t> aDev(toBf16(a)), bDev(toBf16(b));
      if (bf16Out) {
        DeviceArray<uint16_t> cDev(toBf16(c)), biasDev(toBf16(bias));
        run(aDev.get(), bDev.get(), cDev.get(), biasDev.get());
        actual = fromBf16(cDev.read());
      } else {
        DeviceArray<float> cDev(c), biasDev(bias);
        run(aDev.get(), bDev.get(), cDev.get(), biasDev.get());
        actual = cDev.read();
      }
    } else {
      DeviceArray<float> aDev(a), bDev(b), cDev(c), biasDev(bias);
      run(aDev.get(), bDev.get(), cDev.get(), biasDev.get());
      actual = cDev.read();
    }
    expectClose(actual, expected, bf16Out ? 1e-2f : 1e-4f,
                "gemm ta=" + std::to_string(g.ta) +
                    " tb=" + std::to_string(g.tb) +
                    " epilogue=" + std::to_string(g.epilogue));
  }
}

TEST_F(CudaKernels, BatchedGemmBroadcastsAStrideOfZero) {
  const int64_t m = 8, n = 16, k = 24, batch = 3;
  std::vector<float> a = sequence(m * k, 18), b = sequence(batch * k * n, 19);
  std::vector<float> c(batch * m * n), expected(batch * m * n);
  for (int64_t i = 0; i < batch; ++i)
    reference::gemm(false, false, m, n, k, 1.0f, a.data(), k,
                    b.data() + i * k * n, n, 0.0f,
                    expected.data() + i * m * n, n, nullptr, 0);
  DeviceArray<float> aDev(a), bDev(b), cDev(c);
  pipecc_rt_cuda_gemm_batched(0, 0, m, n, k, 1.0f, aDev.get(), k, 0,
                              bDev.get(), n, k * n, 0.0f, cDev.get(), n,
                              m * n, batch, PIPECC_RT_CUDA_F32,
                              PIPECC_RT_CUDA_F32, nullptr, 0);
  expectClose(cDev.read(), expected, 1e-4f, "gemm_batched");
}

TEST_F(CudaKernels, MgpuShimsUseTheComputeStreamAndWorkspace) {
  CUstream created = mgpuStreamCreate();
  EXPECT_EQ(static_cast<void *>(created), pipecc_rt_cuda_compute_stream());
  const size_t count = 1000;
  void *device = mgpuMemAlloc(count * 4, created, false);
  ASSERT_NE(device, nullptr);
  mgpuMemset32(device, 0x3f800000u, count, created); // 1.0f
  std::vector<float> host(count, 0.0f);
  mgpuMemcpy(host.data(), device, count * 4, created);
  mgpuStreamSynchronize(created);
  sync();
  EXPECT_EQ(host, std::vector<float>(count, 1.0f));
  mgpuMemFree(device, created);
  mgpuStreamDestroy(created); // leaves the compute stream alone
  EXPECT_EQ(cudaStreamQuery(stream()), cudaSuccess);

  void *workspace = pipecc_rt_cuda_workspace_alloc(1 << 20);
  EXPECT_NE(workspace, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(workspace) % 256, 0u);
  pipecc_rt_cuda_workspace_free(workspace);
  EXPECT_EQ(pipecc_rt_cuda_workspace_alloc(0), nullptr);
  sync();
}

} // namespace
