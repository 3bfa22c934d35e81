//===- Kernels.cpp - Element-wise helpers called by generated code --------===//
//
// Plain loops the compiler vectorizes (they are memory-bound, BLAS would not
// help); part of the core runtime. The matmuls are the target's (CPU:
// lib/CPU/Blas.cpp).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Runtime.h"

#include <cstring>

extern "C" {

void pipecc_rt_accumulate_f32(float *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] += src[i];
}

void pipecc_rt_scale_f32(float *x, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= s;
}

void pipecc_rt_sgd_update_f32(float *param, const float *grad, int64_t n,
                              float lr) {
  for (int64_t i = 0; i < n; ++i)
    param[i] -= lr * grad[i];
}

void pipecc_rt_zero(void *data, int64_t bytes) {
  if (bytes > 0)
    std::memset(data, 0, static_cast<size_t>(bytes));
}

} // extern "C"
