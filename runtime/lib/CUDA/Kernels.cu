//===- Kernels.cu - Named CUDA kernels of the CUDA runtime ---------------===//
//
// The kernels of Kernels.h that the generated code does not build itself:
// row reductions (softmax, layer-norm, cross-entropy and their backwards),
// the optimizer update, gradient accumulation and f32 <-> bf16. One block
// per row, reductions with warp shuffles, f32 arithmetic whatever the
// storage type; they are memory-bound, so the simple shape is enough.
// Reference.cpp defines what each computes.
//
//===----------------------------------------------------------------------===//
#include "CudaSupport.h"

#include "pipecc/Runtime/CUDA/Kernels.h"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>

using namespace pipecc::rt;
using namespace pipecc::rt::cuda;

namespace {

using bf16 = __nv_bfloat16;
constexpr int kBlock = 256;

__device__ __forceinline__ float load(const float *p, int64_t i) {
  return p[i];
}
__device__ __forceinline__ float load(const bf16 *p, int64_t i) {
  return __bfloat162float(p[i]);
}
__device__ __forceinline__ void store(float *p, int64_t i, float v) {
  p[i] = v;
}
__device__ __forceinline__ void store(bf16 *p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// Reduces `value` over the block (blockDim.x a multiple of 32, at most
/// 1024); every thread gets the result.
template <typename Op>
__device__ float blockReduce(float value, Op op, float identity) {
  __shared__ float partial[32];
  __shared__ float result;
  for (int offset = 16; offset > 0; offset >>= 1)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); // the previous reduction's readers are done
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  if (warp == 0) {
    int warps = blockDim.x >> 5;
    value = lane < warps ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset >>= 1)
      value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
    if (lane == 0)
      result = value;
  }
  __syncthreads();
  return result;
}

// A "row" of [outer, dim, inner] is position (o, i): element c lies at
// (o * dim + c) * inner + i. One block per row.
__device__ __forceinline__ int64_t rowBase(int64_t row, int64_t dim,
                                           int64_t inner) {
  return (row / inner) * dim * inner + row % inner;
}

template <typename T>
__global__ void softmaxKernel(const T *x, T *y, int64_t dim, int64_t inner) {
  int64_t base = rowBase(blockIdx.x, dim, inner);
  float maximum = -INFINITY;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    maximum = fmaxf(maximum, load(x, base + c * inner));
  maximum = blockReduce(maximum, Max(), -INFINITY);
  float sum = 0;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    sum += expf(load(x, base + c * inner) - maximum);
  sum = blockReduce(sum, Sum(), 0.0f);
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    store(y, base + c * inner, expf(load(x, base + c * inner) - maximum) / sum);
}

template <typename T>
__global__ void softmaxBackwardKernel(const T *y, const T *dy, T *dx,
                                      int64_t dim, int64_t inner) {
  int64_t base = rowBase(blockIdx.x, dim, inner);
  float dot = 0;
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x)
    dot += load(dy, base + c * inner) * load(y, base + c * inner);
  dot = blockReduce(dot, Sum(), 0.0f);
  for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) {
    int64_t at = base + c * inner;
    store(dx, at, load(y, at) * (load(dy, at) - dot));
  }
}

/// Mean and 1/sqrt(biased variance + epsilon) of a row, two passes.
template <typename T>
__device__ void rowStatistics(const T *row, int64_t cols, float epsilon,
                              float &mean, float &rstd) {
  float sum = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
    sum += load(row, j);
  mean = blockReduce(sum, Sum(), 0.0f) / cols;
  float squares = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float d = load(row, j) - mean;
    squares += d * d;
  }
  rstd = rsqrtf(blockReduce(squares, Sum(), 0.0f) / cols + epsilon);
}

template <typename T>
__global__ void layerNormKernel(const T *x, const T *scale, const T *bias,
                                T *y, int64_t cols, float epsilon) {
  const T *row = x + blockIdx.x * cols;
  float mean, rstd;
  rowStatistics(row, cols, epsilon, mean, rstd);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float v = (load(row, j) - mean) * rstd;
    if (scale)
      v *= load(scale, j);
    if (bias)
      v += load(bias, j);
    store(y, blockIdx.x * cols + j, v);
  }
}

/// dx of one row; also keeps (mean, rstd) of the row in `stats` when the
/// parameter gradients are wanted.
template <typename T>
__global__ void layerNormBackwardKernel(const T *x, const T *dy,
                                        const T *scale, T *dx, float *stats,
                                        int64_t cols, float epsilon) {
  int64_t offset = blockIdx.x * cols;
  const T *row = x + offset, *dyRow = dy + offset;
  float mean, rstd;
  rowStatistics(row, cols, epsilon, mean, rstd);
  float sumG = 0, sumGXhat = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float g = scale ? load(dyRow, j) * load(scale, j) : load(dyRow, j);
    sumG += g;
    sumGXhat += g * (load(row, j) - mean) * rstd;
  }
  float meanG = blockReduce(sumG, Sum(), 0.0f) / cols;
  float meanGXhat = blockReduce(sumGXhat, Sum(), 0.0f) / cols;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    float xhat = (load(row, j) - mean) * rstd;
    float g = scale ? load(dyRow, j) * load(scale, j) : load(dyRow, j);
    store(dx, offset + j, rstd * (g - meanG - xhat * meanGXhat));
  }
  if (stats && threadIdx.x == 0) {
    stats[2 * blockIdx.x] = mean;
    stats[2 * blockIdx.x + 1] = rstd;
  }
}

/// Column sums over the rows: dscale = sum dy * xhat, dbias = sum dy. One
/// thread per column, so that each row is read coalesced.
template <typename T>
__global__ void layerNormParameterGradKernel(const T *x, const T *dy,
                                             const float *stats, T *dscale,
                                             T *dbias, int64_t rows,
                                             int64_t cols) {
  int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= cols)
    return;
  float sumScale = 0, sumBias = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float g = load(dy, r * cols + j);
    sumScale += g * (load(x, r * cols + j) - stats[2 * r]) * stats[2 * r + 1];
    sumBias += g;
  }
  if (dscale)
    store(dscale, j, sumScale);
  if (dbias)
    store(dbias, j, sumBias);
}

__device__ __forceinline__ bool isCounted(int64_t label, bool hasIgnore,
                                          int64_t ignoreIndex) {
  return !hasIgnore || label != ignoreIndex;
}

/// Per-position loss and count (0 or 1) of the cross-entropy.
template <typename T, typename Label>
__global__ void crossEntropyRowKernel(const T *logits, const Label *labels,
                                      float *rowLoss, float *rowCount,
                                      int64_t classes, int64_t inner,
                                      bool hasIgnore, int64_t ignoreIndex) {
  int64_t position = blockIdx.x;
  int64_t label = static_cast<int64_t>(labels[position]);
  if (!isCounted(label, hasIgnore, ignoreIndex)) {
    if (threadIdx.x == 0)
      rowLoss[position] = rowCount[position] = 0;
    return; // uniform over the block: no thread reaches a barrier
  }
  if (label < 0 || label >= classes) {
    if (threadIdx.x == 0) {
      rowLoss[position] = NAN;
      rowCount[position] = 1;
    }
    return;
  }
  int64_t base = rowBase(position, classes, inner);
  float maximum = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    maximum = fmaxf(maximum, load(logits, base + c * inner));
  maximum = blockReduce(maximum, Max(), -INFINITY);
  float sum = 0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum += expf(load(logits, base + c * inner) - maximum);
  sum = blockReduce(sum, Sum(), 0.0f);
  if (threadIdx.x == 0) {
    rowLoss[position] =
        -(load(logits, base + label * inner) - maximum - logf(sum));
    rowCount[position] = 1;
  }
}

/// One block: loss = sum(rowLoss) / sum(rowCount) (0 without a counted
/// position), in a fixed order so the loss is reproducible.
template <typename T>
__global__ void crossEntropyMeanKernel(const float *rowLoss,
                                       const float *rowCount,
                                       int64_t positions, T *loss,
                                       float *count) {
  float sumLoss = 0, sumCount = 0;
  for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
    sumLoss += rowLoss[p];
    sumCount += rowCount[p];
  }
  sumLoss = blockReduce(sumLoss, Sum(), 0.0f);
  sumCount = blockReduce(sumCount, Sum(), 0.0f);
  if (threadIdx.x == 0) {
    store(loss, 0, sumCount > 0 ? sumLoss / sumCount : 0.0f);
    if (count)
      *count = sumCount;
  }
}

template <typename Label>
__global__ void countLabelsKernel(const Label *labels, int64_t positions,
                                  bool hasIgnore, int64_t ignoreIndex,
                                  float *count) {
  float sum = 0;
  for (int64_t p = threadIdx.x; p < positions; p += blockDim.x)
    sum += isCounted(static_cast<int64_t>(labels[p]), hasIgnore, ignoreIndex);
  sum = blockReduce(sum, Sum(), 0.0f);
  if (threadIdx.x == 0)
    *count = sum;
}

template <typename T, typename Label>
__global__ void crossEntropyBackwardKernel(const T *logits,
                                           const Label *labels,
                                           const T *lossGrad,
                                           const float *count, T *dlogits,
                                           int64_t classes, int64_t inner,
                                           bool hasIgnore,
                                           int64_t ignoreIndex) {
  int64_t position = blockIdx.x;
  int64_t base = rowBase(position, classes, inner);
  int64_t label = static_cast<int64_t>(labels[position]);
  if (!isCounted(label, hasIgnore, ignoreIndex)) {
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
      store(dlogits, base + c * inner, 0.0f);
    return;
  }
  float maximum = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    maximum = fmaxf(maximum, load(logits, base + c * inner));
  maximum = blockReduce(maximum, Max(), -INFINITY);
  float sum = 0;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum += expf(load(logits, base + c * inner) - maximum);
  sum = blockReduce(sum, Sum(), 0.0f);
  float factor = load(lossGrad, 0) / *count;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x) {
    float p = expf(load(logits, base + c * inner) - maximum) / sum;
    store(dlogits, base + c * inner, (p - (c == label ? 1.0f : 0.0f)) * factor);
  }
}

// Element-wise kernels: grid-stride loops.
#define FOR_EACH_ELEMENT(i, n)                                                 \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__global__ void sgdUpdateKernel(float *param, const float *grad,
                                bf16 *paramBf16, int64_t n, float lr) {
  FOR_EACH_ELEMENT(i, n) {
    // No fused multiply-add: the same rounding as the CPU runtime's loop.
    float updated = __fsub_rn(param[i], __fmul_rn(lr, grad[i]));
    param[i] = updated;
    if (paramBf16)
      paramBf16[i] = __float2bfloat16_rn(updated);
  }
}

template <typename T>
__global__ void accumulateKernel(float *dst, const T *src, int64_t n,
                                 int32_t *nonfinite) {
  FOR_EACH_ELEMENT(i, n) {
    float v = load(src, i);
    dst[i] += v;
    if (nonfinite && !isfinite(v))
      *nonfinite = 1; // every writer writes 1: the race is benign
  }
}

__global__ void firstNonFiniteKernel(const float *x, int64_t n,
                                     unsigned long long *first) {
  FOR_EACH_ELEMENT(i, n) {
    if (!isfinite(x[i]))
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

__global__ void scaleKernel(float *x, int64_t n, float s) {
  FOR_EACH_ELEMENT(i, n) { x[i] *= s; }
}

__global__ void toBf16Kernel(const float *src, bf16 *dst, int64_t n) {
  FOR_EACH_ELEMENT(i, n) { dst[i] = __float2bfloat16_rn(src[i]); }
}

__global__ void toF32Kernel(const bf16 *src, float *dst, int64_t n) {
  FOR_EACH_ELEMENT(i, n) { dst[i] = __bfloat162float(src[i]); }
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

void checkLaunch(const char *kernel) {
  checkCuda(cudaGetLastError(), kernel);
}

unsigned elementBlocks(int64_t n) {
  int64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

/// Rows become the grid: at most 2^31 - 1 blocks.
unsigned rowBlocks(int64_t rows, const char *what) {
  if (rows > 0x7fffffff)
    fail(what, ": ", rows, " rows exceed the grid limit of 2^31 - 1");
  return static_cast<unsigned>(rows);
}

void checkDims(const char *what, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (d < 0)
      fail(what, ": negative dimension ", d);
}

void checkLabelType(int32_t labelType, const char *what) {
  if (labelType != PIPECC_RT_CUDA_I64 && labelType != PIPECC_RT_CUDA_I32)
    fail(what, ": label element type ", labelType, " is neither I64 (",
         static_cast<int>(PIPECC_RT_CUDA_I64), ") nor I32 (",
         static_cast<int>(PIPECC_RT_CUDA_I32), ")");
}

/// Calls body(T{}) with T = float or bf16 as `dtype` says.
template <typename Body> void withFloatType(int32_t dtype, Body body) {
  if (dtype == PIPECC_RT_CUDA_F32)
    body(float{});
  else
    body(bf16{});
}
template <typename Body> void withLabelType(int32_t dtype, Body body) {
  if (dtype == PIPECC_RT_CUDA_I64)
    body(int64_t{});
  else
    body(int32_t{});
}

/// Scratch device memory released when the scope ends (stream-ordered, so
/// the kernels enqueued before still see it).
class Scratch {
public:
  explicit Scratch(int64_t bytes) : ptr_(allocateWorkspace(bytes)) {}
  ~Scratch() {
    try {
      freeWorkspace(ptr_);
    } catch (...) {
    }
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  float *floats() const { return static_cast<float *>(ptr_); }

private:
  void *ptr_;
};

} // namespace

void pipecc::rt::cuda::accumulateOnStream(float *dst, const float *src,
                                          int64_t n, cudaStream_t stream) {
  if (n <= 0)
    return;
  accumulateKernel<float>
      <<<elementBlocks(n), kBlock, 0, stream>>>(dst, src, n, nullptr);
  checkLaunch("accumulate kernel launch");
}

extern "C" {

void pipecc_rt_cuda_softmax(const void *x, void *y, int64_t outer,
                            int64_t dim, int64_t inner, int32_t dtype) {
  guardCall([&] {
    checkDims("softmax", {outer, dim, inner});
    checkFloatType(dtype, "softmax");
    if (outer * inner == 0 || dim == 0)
      return;
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      softmaxKernel<T>
          <<<rowBlocks(outer * inner, "softmax"), kBlock, 0,
             computeStream()>>>(static_cast<const T *>(x),
                                static_cast<T *>(y), dim, inner);
    });
    checkLaunch("softmax kernel launch");
  });
}

void pipecc_rt_cuda_softmax_backward(const void *y, const void *dy, void *dx,
                                     int64_t outer, int64_t dim,
                                     int64_t inner, int32_t dtype) {
  guardCall([&] {
    checkDims("softmax_backward", {outer, dim, inner});
    checkFloatType(dtype, "softmax_backward");
    if (outer * inner == 0 || dim == 0)
      return;
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      softmaxBackwardKernel<T>
          <<<rowBlocks(outer * inner, "softmax_backward"), kBlock, 0,
             computeStream()>>>(static_cast<const T *>(y),
                                static_cast<const T *>(dy),
                                static_cast<T *>(dx), dim, inner);
    });
    checkLaunch("softmax_backward kernel launch");
  });
}

void pipecc_rt_cuda_layer_norm(const void *x, const void *scale,
                               const void *bias, void *y, int64_t rows,
                               int64_t cols, float epsilon, int32_t dtype) {
  guardCall([&] {
    checkDims("layer_norm", {rows, cols});
    checkFloatType(dtype, "layer_norm");
    if (rows == 0 || cols == 0)
      return;
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      layerNormKernel<T><<<rowBlocks(rows, "layer_norm"), kBlock, 0,
                           computeStream()>>>(
          static_cast<const T *>(x), static_cast<const T *>(scale),
          static_cast<const T *>(bias), static_cast<T *>(y), cols, epsilon);
    });
    checkLaunch("layer_norm kernel launch");
  });
}

void pipecc_rt_cuda_layer_norm_backward(const void *x, const void *dy,
                                        const void *scale, void *dx,
                                        void *dscale, void *dbias,
                                        int64_t rows, int64_t cols,
                                        float epsilon, int32_t dtype) {
  guardCall([&] {
    checkDims("layer_norm_backward", {rows, cols});
    checkFloatType(dtype, "layer_norm_backward");
    if (cols == 0)
      return;
    bool parameterGrads = dscale || dbias;
    if (rows == 0) {
      // Sums over no rows.
      int64_t bytes = cols * (dtype == PIPECC_RT_CUDA_F32 ? 4 : 2);
      for (void *grad : {dscale, dbias})
        if (grad)
          checkCuda(cudaMemsetAsync(grad, 0, bytes, computeStream()),
                    "cudaMemsetAsync");
      return;
    }
    Scratch stats(parameterGrads ? rows * 2 * sizeof(float) : 0);
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      const T *typedX = static_cast<const T *>(x);
      const T *typedDy = static_cast<const T *>(dy);
      layerNormBackwardKernel<T><<<rowBlocks(rows, "layer_norm_backward"),
                                   kBlock, 0, computeStream()>>>(
          typedX, typedDy, static_cast<const T *>(scale),
          static_cast<T *>(dx), stats.floats(), cols, epsilon);
      checkLaunch("layer_norm_backward kernel launch");
      if (parameterGrads) {
        unsigned blocks = static_cast<unsigned>((cols + kBlock - 1) / kBlock);
        layerNormParameterGradKernel<T>
            <<<blocks, kBlock, 0, computeStream()>>>(
                typedX, typedDy, stats.floats(), static_cast<T *>(dscale),
                static_cast<T *>(dbias), rows, cols);
        checkLaunch("layer_norm parameter gradient kernel launch");
      }
    });
  });
}

void pipecc_rt_cuda_cross_entropy(const void *logits, const void *labels,
                                  void *loss, float *count, int64_t outer,
                                  int64_t classes, int64_t inner,
                                  int32_t dtype, int32_t label_dtype,
                                  int32_t has_ignore_index,
                                  int64_t ignore_index) {
  guardCall([&] {
    checkDims("cross_entropy", {outer, classes, inner});
    checkFloatType(dtype, "cross_entropy");
    checkLabelType(label_dtype, "cross_entropy");
    int64_t positions = outer * inner;
    Scratch perRow(positions * 2 * sizeof(float));
    float *rowLoss = perRow.floats(), *rowCount = rowLoss + positions;
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      if (positions > 0)
        withLabelType(label_dtype, [&](auto labelTag) {
          using Label = decltype(labelTag);
          crossEntropyRowKernel<T, Label>
              <<<rowBlocks(positions, "cross_entropy"), kBlock, 0,
                 computeStream()>>>(static_cast<const T *>(logits),
                                    static_cast<const Label *>(labels),
                                    rowLoss, rowCount, classes, inner,
                                    has_ignore_index != 0, ignore_index);
          checkLaunch("cross_entropy kernel launch");
        });
      crossEntropyMeanKernel<T><<<1, 1024, 0, computeStream()>>>(
          rowLoss, rowCount, positions, static_cast<T *>(loss), count);
      checkLaunch("cross_entropy mean kernel launch");
    });
  });
}

void pipecc_rt_cuda_cross_entropy_backward(
    const void *logits, const void *labels, const void *loss_grad,
    void *dlogits, int64_t outer, int64_t classes, int64_t inner,
    int32_t dtype, int32_t label_dtype, int32_t has_ignore_index,
    int64_t ignore_index) {
  guardCall([&] {
    checkDims("cross_entropy_backward", {outer, classes, inner});
    checkFloatType(dtype, "cross_entropy_backward");
    checkLabelType(label_dtype, "cross_entropy_backward");
    int64_t positions = outer * inner;
    if (positions == 0 || classes == 0)
      return;
    Scratch count(sizeof(float));
    withFloatType(dtype, [&](auto tag) {
      using T = decltype(tag);
      withLabelType(label_dtype, [&](auto labelTag) {
        using Label = decltype(labelTag);
        const Label *typedLabels = static_cast<const Label *>(labels);
        countLabelsKernel<Label><<<1, 1024, 0, computeStream()>>>(
            typedLabels, positions, has_ignore_index != 0, ignore_index,
            count.floats());
        checkLaunch("cross_entropy_backward count kernel launch");
        crossEntropyBackwardKernel<T, Label>
            <<<rowBlocks(positions, "cross_entropy_backward"), kBlock, 0,
               computeStream()>>>(static_cast<const T *>(logits),
                                  typedLabels,
                                  static_cast<const T *>(loss_grad),
                                  count.floats(), static_cast<T *>(dlogits),
                                  classes, inner, has_ignore_index != 0,
                                  ignore_index);
        checkLaunch("cross_entropy_backward kernel launch");
      });
    });
  });
}

void pipecc_rt_cuda_sgd_update(float *param, const float *grad,
                               uint16_t *param_bf16, int64_t n, float lr) {
  guardCall([&] {
    checkDims("sgd_update", {n});
    if (n == 0)
      return;
    sgdUpdateKernel<<<elementBlocks(n), kBlock, 0, computeStream()>>>(
        param, grad, reinterpret_cast<bf16 *>(param_bf16), n, lr);
    checkLaunch("sgd_update kernel launch");
  });
}

void pipecc_rt_cuda_accumulate(float *dst, const void *src,
                               int32_t src_dtype, int64_t n,
                               int32_t *nonfinite) {
  guardCall([&] {
    checkDims("accumulate", {n});
    checkFloatType(src_dtype, "accumulate");
    if (n == 0)
      return;
    withFloatType(src_dtype, [&](auto tag) {
      using T = decltype(tag);
      accumulateKernel<T><<<elementBlocks(n), kBlock, 0, computeStream()>>>(
          dst, static_cast<const T *>(src), n, nonfinite);
    });
    checkLaunch("accumulate kernel launch");
  });
}

void pipecc_rt_cuda_find_non_finite_f32(const float *data, int64_t n,
                                        uint64_t *first) {
  guardCall([&] {
    checkDims("find_non_finite_f32", {n});
    checkCuda(cudaMemsetAsync(first, 0xFF, sizeof(uint64_t), computeStream()),
              "cudaMemsetAsync");
    if (n == 0)
      return;
    firstNonFiniteKernel<<<elementBlocks(n), kBlock, 0, computeStream()>>>(
        data, n, reinterpret_cast<unsigned long long *>(first));
    checkLaunch("find_non_finite_f32 kernel launch");
  });
}

void pipecc_rt_cuda_f32_to_bf16(const float *src, uint16_t *dst, int64_t n) {
  guardCall([&] {
    checkDims("f32_to_bf16", {n});
    if (n == 0)
      return;
    toBf16Kernel<<<elementBlocks(n), kBlock, 0, computeStream()>>>(
        src, reinterpret_cast<bf16 *>(dst), n);
    checkLaunch("f32_to_bf16 kernel launch");
  });
}

void pipecc_rt_cuda_bf16_to_f32(const uint16_t *src, float *dst, int64_t n) {
  guardCall([&] {
    checkDims("bf16_to_f32", {n});
    if (n == 0)
      return;
    toF32Kernel<<<elementBlocks(n), kBlock, 0, computeStream()>>>(
        reinterpret_cast<const bf16 *>(src), dst, n);
    checkLaunch("bf16_to_f32 kernel launch");
  });
}

void pipecc_rt_cuda_accumulate_f32(float *dst, const float *src, int64_t n) {
  pipecc_rt_cuda_accumulate(dst, src, PIPECC_RT_CUDA_F32, n, nullptr);
}

void pipecc_rt_cuda_scale_f32(float *x, int64_t n, float s) {
  guardCall([&] {
    checkDims("scale_f32", {n});
    if (n == 0)
      return;
    scaleKernel<<<elementBlocks(n), kBlock, 0, computeStream()>>>(x, n, s);
    checkLaunch("scale_f32 kernel launch");
  });
}

void pipecc_rt_cuda_sgd_update_f32(float *param, const float *grad,
                                   int64_t n, float lr) {
  pipecc_rt_cuda_sgd_update(param, grad, nullptr, n, lr);
}

void pipecc_rt_cuda_zero(void *data, int64_t bytes) {
  guardCall([&] {
    checkDims("zero", {bytes});
    if (bytes > 0)
      checkCuda(cudaMemsetAsync(data, 0, static_cast<size_t>(bytes),
                                computeStream()),
                "cudaMemsetAsync");
  });
}

} // extern "C"
