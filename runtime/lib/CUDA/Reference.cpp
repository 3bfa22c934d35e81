//===- Reference.cpp - CPU references of the CUDA runtime's kernels ------===//
#include "pipecc/Runtime/CUDA/Reference.h"

#include "pipecc/Runtime/CUDA/Kernels.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace pipecc::rt::cuda::reference {

uint16_t f32ToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // quiet NaN
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit.
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16ToF32(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}

float geluTanh(float x) {
  double v = x;
  double inner = std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
  return static_cast<float>(0.5 * v * (1.0 + std::tanh(inner)));
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc, const float *bias,
          int32_t epilogue) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[p * lda + i] : a[i * lda + p];
        double bv = transB ? b[j * ldb + p] : b[p * ldb + j];
        sum += av * bv;
      }
      double d = alpha * sum;
      if (beta != 0) // beta = 0 ignores C, NaNs included (as BLAS does)
        d += static_cast<double>(beta) * c[i * ldc + j];
      if (epilogue & PIPECC_RT_CUDA_EPILOGUE_BIAS)
        d += bias[j];
      float result = static_cast<float>(d);
      if (epilogue & PIPECC_RT_CUDA_EPILOGUE_RELU)
        result = result > 0 ? result : 0.0f;
      if (epilogue & PIPECC_RT_CUDA_EPILOGUE_GELU_TANH)
        result = geluTanh(result);
      c[i * ldc + j] = result;
    }
}

// The "rows" of the softmax and cross-entropy kernels: position (o, i) of
// [outer, dim, inner] holds element c at (o * dim + c) * inner + i.
namespace {
template <typename Body>
void forEachRow(int64_t outer, int64_t dim, int64_t inner, Body body) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      body(o * dim * inner + i, o * inner + i);
}
} // namespace

void softmax(const float *x, float *y, int64_t outer, int64_t dim,
             int64_t inner) {
  forEachRow(outer, dim, inner, [&](int64_t base, int64_t) {
    double maximum = -INFINITY;
    for (int64_t c = 0; c < dim; ++c)
      maximum = std::fmax(maximum, x[base + c * inner]);
    double sum = 0;
    for (int64_t c = 0; c < dim; ++c)
      sum += std::exp(x[base + c * inner] - maximum);
    for (int64_t c = 0; c < dim; ++c)
      y[base + c * inner] =
          static_cast<float>(std::exp(x[base + c * inner] - maximum) / sum);
  });
}

void softmaxBackward(const float *y, const float *dy, float *dx,
                     int64_t outer, int64_t dim, int64_t inner) {
  forEachRow(outer, dim, inner, [&](int64_t base, int64_t) {
    double dot = 0;
    for (int64_t c = 0; c < dim; ++c)
      dot += static_cast<double>(dy[base + c * inner]) * y[base + c * inner];
    for (int64_t c = 0; c < dim; ++c)
      dx[base + c * inner] = static_cast<float>(
          y[base + c * inner] * (dy[base + c * inner] - dot));
  });
}

namespace {
struct RowStatistics {
  double mean = 0, rstd = 0;
};
RowStatistics statistics(const float *row, int64_t cols, float epsilon) {
  double sum = 0;
  for (int64_t j = 0; j < cols; ++j)
    sum += row[j];
  double mean = sum / cols, squares = 0;
  for (int64_t j = 0; j < cols; ++j)
    squares += (row[j] - mean) * (row[j] - mean);
  return {mean, 1.0 / std::sqrt(squares / cols + epsilon)};
}
} // namespace

void layerNorm(const float *x, const float *scale, const float *bias,
               float *y, int64_t rows, int64_t cols, float epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols;
    RowStatistics s = statistics(row, cols, epsilon);
    for (int64_t j = 0; j < cols; ++j) {
      double v = (row[j] - s.mean) * s.rstd;
      if (scale)
        v *= scale[j];
      if (bias)
        v += bias[j];
      y[r * cols + j] = static_cast<float>(v);
    }
  }
}

void layerNormBackward(const float *x, const float *dy, const float *scale,
                       float *dx, float *dscale, float *dbias, int64_t rows,
                       int64_t cols, float epsilon) {
  std::vector<double> dscaleSum(cols, 0.0), dbiasSum(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * cols, *dyRow = dy + r * cols;
    RowStatistics s = statistics(row, cols, epsilon);
    double meanG = 0, meanGXhat = 0;
    for (int64_t j = 0; j < cols; ++j) {
      double xhat = (row[j] - s.mean) * s.rstd;
      double g = scale ? dyRow[j] * static_cast<double>(scale[j]) : dyRow[j];
      meanG += g;
      meanGXhat += g * xhat;
      dscaleSum[j] += dyRow[j] * xhat;
      dbiasSum[j] += dyRow[j];
    }
    meanG /= cols;
    meanGXhat /= cols;
    for (int64_t j = 0; j < cols; ++j) {
      double xhat = (row[j] - s.mean) * s.rstd;
      double g = scale ? dyRow[j] * static_cast<double>(scale[j]) : dyRow[j];
      dx[r * cols + j] =
          static_cast<float>(s.rstd * (g - meanG - xhat * meanGXhat));
    }
  }
  for (int64_t j = 0; j < cols; ++j) {
    if (dscale)
      dscale[j] = static_cast<float>(dscaleSum[j]);
    if (dbias)
      dbias[j] = static_cast<float>(dbiasSum[j]);
  }
}

namespace {
bool counted(int64_t label, std::optional<int64_t> ignoreIndex) {
  return !ignoreIndex || label != *ignoreIndex;
}
} // namespace

CrossEntropyResult crossEntropy(const float *logits, const int64_t *labels,
                                int64_t outer, int64_t classes,
                                int64_t inner,
                                std::optional<int64_t> ignoreIndex) {
  double total = 0;
  int64_t count = 0;
  forEachRow(outer, classes, inner, [&](int64_t base, int64_t position) {
    int64_t label = labels[position];
    if (!counted(label, ignoreIndex))
      return;
    ++count;
    if (label < 0 || label >= classes) {
      total = NAN;
      return;
    }
    double maximum = -INFINITY;
    for (int64_t c = 0; c < classes; ++c)
      maximum = std::fmax(maximum, logits[base + c * inner]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(logits[base + c * inner] - maximum);
    total -= logits[base + label * inner] - maximum - std::log(sum);
  });
  CrossEntropyResult result;
  result.count = static_cast<float>(count);
  result.loss = count ? static_cast<float>(total / count) : 0.0f;
  return result;
}

void crossEntropyBackward(const float *logits, const int64_t *labels,
                          float lossGrad, float *dlogits, int64_t outer,
                          int64_t classes, int64_t inner,
                          std::optional<int64_t> ignoreIndex) {
  int64_t count = 0;
  for (int64_t p = 0; p < outer * inner; ++p)
    count += counted(labels[p], ignoreIndex);
  forEachRow(outer, classes, inner, [&](int64_t base, int64_t position) {
    int64_t label = labels[position];
    if (!counted(label, ignoreIndex)) {
      for (int64_t c = 0; c < classes; ++c)
        dlogits[base + c * inner] = 0;
      return;
    }
    double maximum = -INFINITY;
    for (int64_t c = 0; c < classes; ++c)
      maximum = std::fmax(maximum, logits[base + c * inner]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(logits[base + c * inner] - maximum);
    double factor = static_cast<double>(lossGrad) / count;
    for (int64_t c = 0; c < classes; ++c) {
      double p = std::exp(logits[base + c * inner] - maximum) / sum;
      dlogits[base + c * inner] =
          static_cast<float>((p - (c == label ? 1.0 : 0.0)) * factor);
    }
  });
}

void sgdUpdate(float *param, const float *grad, uint16_t *paramBf16,
               int64_t n, float lr) {
  for (int64_t i = 0; i < n; ++i) {
    param[i] -= lr * grad[i];
    if (paramBf16)
      paramBf16[i] = f32ToBf16(param[i]);
  }
}

bool accumulate(float *dst, const float *src, int64_t n) {
  bool nonFinite = false;
  for (int64_t i = 0; i < n; ++i) {
    dst[i] += src[i];
    nonFinite |= !std::isfinite(src[i]);
  }
  return nonFinite;
}

} // namespace pipecc::rt::cuda::reference
