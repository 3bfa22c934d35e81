//===- Reference.h - CPU references of the CUDA runtime's kernels -*- C++ -*-===//
//
// Plain C++ (no CUDA) definitions of what every kernel in Kernels.h
// computes, accumulating in double: the GPU tests compare each kernel
// against these, and the CPU tests compare these against numpy and the CPU
// runtime's kernels, so that both sides of the comparison are checked on a
// machine without a GPU. Layouts and argument meanings are those of
// Kernels.h.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CUDA_REFERENCE_H
#define PIPECC_RUNTIME_CUDA_REFERENCE_H

#include <cstdint>
#include <optional>

namespace pipecc::rt::cuda::reference {

/// f32 -> bf16 with round to nearest even; NaN stays a (quiet) NaN.
uint16_t f32ToBf16(float value);
float bf16ToF32(uint16_t value);

/// tanh-approximated GELU (cuBLASLt's GELU epilogue).
float geluTanh(float x);

/// pipecc_rt_cuda_gemm on f32 data (bf16 inputs: round them first), with
/// the epilogue flags of pipecc_rt_cuda_epilogue.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b,
          int64_t ldb, float beta, float *c, int64_t ldc, const float *bias,
          int32_t epilogue);

void softmax(const float *x, float *y, int64_t outer, int64_t dim,
             int64_t inner);
void softmaxBackward(const float *y, const float *dy, float *dx,
                     int64_t outer, int64_t dim, int64_t inner);

void layerNorm(const float *x, const float *scale, const float *bias,
               float *y, int64_t rows, int64_t cols, float epsilon);
void layerNormBackward(const float *x, const float *dy, const float *scale,
                       float *dx, float *dscale, float *dbias, int64_t rows,
                       int64_t cols, float epsilon);

struct CrossEntropyResult {
  float loss = 0;
  float count = 0;
};
CrossEntropyResult crossEntropy(const float *logits, const int64_t *labels,
                                int64_t outer, int64_t classes,
                                int64_t inner,
                                std::optional<int64_t> ignoreIndex);
void crossEntropyBackward(const float *logits, const int64_t *labels,
                          float lossGrad, float *dlogits, int64_t outer,
                          int64_t classes, int64_t inner,
                          std::optional<int64_t> ignoreIndex);

/// param -= lr * grad; paramBf16 (may be null) receives the rounded result.
void sgdUpdate(float *param, const float *grad, uint16_t *paramBf16,
               int64_t n, float lr);
/// dst += src; returns whether any src element is NaN or infinite.
bool accumulate(float *dst, const float *src, int64_t n);

} // namespace pipecc::rt::cuda::reference

#endif // PIPECC_RUNTIME_CUDA_REFERENCE_H
