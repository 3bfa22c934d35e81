/*===- Kernels.h - C ABI of the CUDA runtime's kernels ---------*- C -*-===*
 *
 * What a rank executable built with `--target cuda` calls besides the core
 * runtime (Runtime.h) and MLIR's gpu-to-llvm host ABI (the mgpu* functions,
 * which libpipecc_runtime_cuda implements with MLIR 19's signatures):
 *   - pipecc_rt_cuda_gemm / _batched: matmuls on cuBLASLt, from the stage
 *     functions (CUDA stage-lowering pipeline);
 *   - pipecc_rt_cuda_workspace_alloc / _free: temporaries of a stage
 *     function;
 *   - the named kernels: softmax, layer-norm, cross-entropy and their
 *     backwards, the SGD update, gradient accumulation, f32 <-> bf16.
 *
 * Every pointer argument is a DEVICE pointer unless said otherwise. Every
 * function enqueues its work on the rank's compute stream (see
 * pipecc_rt_cuda_compute_stream) and returns without waiting for it, so
 * successive calls and the generated kernels (launched by mgpuLaunchKernel
 * on the same stream) run in program order. Errors (a bad argument, a CUDA
 * or cuBLASLt error) print one line
 *   pipecc-runtime: error: rank <r>: <what went wrong>
 * and end the job, as the rest of the runtime does.
 *
 * Element types use the values of the runtime's DType (and Runtime.h's
 * pipecc_rt_dtype for the first three). bf16 is stored as uint16_t (the
 * upper half of an IEEE f32); arithmetic on bf16 data always accumulates in
 * f32.
 *
 * This header includes no CUDA header: the compiler and the host program
 * only see plain C types.
 *
 *===----------------------------------------------------------------------===*/
#ifndef PIPECC_RUNTIME_CUDA_KERNELS_H
#define PIPECC_RUNTIME_CUDA_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types accepted by the CUDA kernels (values of pipecc::rt::DType). */
typedef enum pipecc_rt_cuda_dtype {
  PIPECC_RT_CUDA_F32 = 0,
  PIPECC_RT_CUDA_I64 = 1,
  PIPECC_RT_CUDA_I32 = 2,
  PIPECC_RT_CUDA_BF16 = 5
} pipecc_rt_cuda_dtype;

/* Epilogue flags of pipecc_rt_cuda_gemm, or-ed together; applied in this
 * order after D = alpha * op(A) op(B) + beta * C:
 *   BIAS:      D[i][j] += bias[j]   (bias: N elements, C's element type)
 *   RELU:      D = max(D, 0)
 *   GELU_TANH: D = 0.5 D (1 + tanh(sqrt(2/pi) (D + 0.044715 D^3)))
 * (cuBLASLt's own epilogues: its GELU is the tanh approximation, so an
 * erf-GELU must not be fused into it). RELU and GELU_TANH exclude each
 * other. */
typedef enum pipecc_rt_cuda_epilogue {
  PIPECC_RT_CUDA_EPILOGUE_NONE = 0,
  PIPECC_RT_CUDA_EPILOGUE_BIAS = 1,
  PIPECC_RT_CUDA_EPILOGUE_RELU = 2,
  PIPECC_RT_CUDA_EPILOGUE_GELU_TANH = 4
} pipecc_rt_cuda_epilogue;

/*===----------------------------------------------------------------------===*
 * Streams (set by the runtime; the generated code does not call these)
 *===----------------------------------------------------------------------===*/

/* The rank's compute stream (a CUstream/cudaStream_t). mgpuStreamCreate
 * returns it, and mgpuStreamSynchronize/mgpuStreamDestroy leave it alone:
 * all device work of a stage is ordered on this one stream and the host
 * only waits where it reads device memory (through the runtime). NULL (the
 * legacy default stream) until the runtime sets one. */
void *pipecc_rt_cuda_compute_stream(void);
void pipecc_rt_cuda_set_compute_stream(void *stream);

/*===----------------------------------------------------------------------===*
 * Matmuls (cuBLASLt)
 *===----------------------------------------------------------------------===*/

/* D = epilogue(alpha * op(A) op(B) + beta * C), written over C; row-major
 * like pipecc_rt_sgemm: op(X) = X, or X^T when trans_x != 0; op(A) is
 * M x K, op(B) is K x N, C is M x N; lda/ldb/ldc are row strides in
 * elements. A and B have element type `ab_dtype`, C (and the bias)
 * `c_dtype`; each is PIPECC_RT_CUDA_F32 or PIPECC_RT_CUDA_BF16, and
 * `ab_dtype` F32 needs `c_dtype` F32. The products accumulate in f32 (for
 * f32 inputs: full f32, no TF32), so bf16 inputs with an f32 C accumulate
 * a bf16 product into f32 gradients with beta = 1. `bias` may be NULL
 * unless `epilogue` has PIPECC_RT_CUDA_EPILOGUE_BIAS. The matmul
 * descriptor and the algorithm cuBLASLt's heuristic picks are cached per
 * shape, so the first call of a shape pays for the heuristic once. */
void pipecc_rt_cuda_gemm(int32_t trans_a, int32_t trans_b, int64_t m,
                         int64_t n, int64_t k, float alpha, const void *a,
                         int64_t lda, const void *b, int64_t ldb, float beta,
                         void *c, int64_t ldc, int32_t ab_dtype,
                         int32_t c_dtype, const void *bias, int32_t epilogue);

/* `batch` independent gemms as above; matrix i of A starts at element
 * i * stride_a of `a`, likewise B and C (strides in elements). A stride of
 * 0 broadcasts one A or B matrix; stride_c must not be 0 when batch > 1.
 * The bias (one vector of N elements) is shared by every matrix. */
void pipecc_rt_cuda_gemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                                 int64_t n, int64_t k, float alpha,
                                 const void *a, int64_t lda, int64_t stride_a,
                                 const void *b, int64_t ldb, int64_t stride_b,
                                 float beta, void *c, int64_t ldc,
                                 int64_t stride_c, int64_t batch,
                                 int32_t ab_dtype, int32_t c_dtype,
                                 const void *bias, int32_t epilogue);

/*===----------------------------------------------------------------------===*
 * Workspace for stage-function temporaries
 *===----------------------------------------------------------------------===*/

/* Device memory of at least `bytes` bytes (256-byte aligned), usable by
 * work enqueued on the compute stream after this call, from a stream-ordered
 * pool: after the first step, allocation is cheap. bytes == 0 returns NULL.
 * The runtime counts the bytes in its measured peak. */
void *pipecc_rt_cuda_workspace_alloc(int64_t bytes);
/* Returns `ptr` to the pool once the work enqueued so far on the compute
 * stream is done; NULL is ignored. */
void pipecc_rt_cuda_workspace_free(void *ptr);

/*===----------------------------------------------------------------------===*
 * Named kernels. "rows x cols" tensors are row-major and contiguous;
 * floating-point tensors of one call share `dtype` (F32 or BF16) unless said
 * otherwise; all math is f32.
 *===----------------------------------------------------------------------===*/

/* Softmax along the middle axis of a contiguous [outer, dim, inner] tensor
 * (for softmax along axis a of a shape s: outer = prod s[:a], dim = s[a],
 * inner = prod s[a+1:]):
 *   y = exp(x - max(x)) / sum(exp(x - max(x))). */
void pipecc_rt_cuda_softmax(const void *x, void *y, int64_t outer,
                            int64_t dim, int64_t inner, int32_t dtype);
/* Its backward, from the forward's result y: dx = y * (dy - sum(dy * y)),
 * the sum along the same axis. */
void pipecc_rt_cuda_softmax_backward(const void *y, const void *dy, void *dx,
                                     int64_t outer, int64_t dim,
                                     int64_t inner, int32_t dtype);

/* graph.layer_norm over `rows` rows of `cols` elements:
 *   y = (x - mean) / sqrt(var + epsilon) * scale + bias
 * with the biased variance; `scale` and `bias` (cols elements) may be NULL
 * (then 1 and 0). */
void pipecc_rt_cuda_layer_norm(const void *x, const void *scale,
                               const void *bias, void *y, int64_t rows,
                               int64_t cols, float epsilon, int32_t dtype);
/* graph.layer_norm_grad, recomputing the row statistics from x: with
 * xhat = (x - mean) * rstd and g = dy * scale (dy when scale is NULL),
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
 * When dscale / dbias are not NULL they receive sum over rows of dy * xhat
 * and of dy (cols elements each, overwritten, in `dtype`). */
void pipecc_rt_cuda_layer_norm_backward(const void *x, const void *dy,
                                        const void *scale, void *dx,
                                        void *dscale, void *dbias,
                                        int64_t rows, int64_t cols,
                                        float epsilon, int32_t dtype);

/* graph.cross_entropy over logits [outer, classes, inner] (for logits
 * [N, C, d1, ...]: outer = N, inner = prod d_i; labels [outer, inner] of
 * `label_dtype` I64 or I32): loss = mean over positions whose label is not
 * ignore_index of -log(softmax(logits along classes)[label]), written to
 * the scalar *loss (`dtype`); *count (may be NULL) receives the number of
 * counted positions as f32. No counted position gives loss 0 (not NaN).
 * Set has_ignore_index = 0 when the op has none. A label outside
 * [0, classes) that is not ignored makes the loss NaN. */
void pipecc_rt_cuda_cross_entropy(const void *logits, const void *labels,
                                  void *loss, float *count, int64_t outer,
                                  int64_t classes, int64_t inner,
                                  int32_t dtype, int32_t label_dtype,
                                  int32_t has_ignore_index,
                                  int64_t ignore_index);
/* graph.cross_entropy_grad: dlogits = (softmax(logits) - onehot(label)) *
 * (*loss_grad) / count, count as in the forward; ignored positions get 0.
 * loss_grad is a device scalar of `dtype`. */
void pipecc_rt_cuda_cross_entropy_backward(
    const void *logits, const void *labels, const void *loss_grad,
    void *dlogits, int64_t outer, int64_t classes, int64_t inner,
    int32_t dtype, int32_t label_dtype, int32_t has_ignore_index,
    int64_t ignore_index);

/* SGD on f32 master weights: param[i] -= lr * grad[i]. When param_bf16 is
 * not NULL it receives the updated weights rounded to bf16 (the copy the
 * bf16 stages read). */
void pipecc_rt_cuda_sgd_update(float *param, const float *grad,
                               uint16_t *param_bf16, int64_t n, float lr);

/* Gradient accumulation: dst[i] += src[i] (src of `src_dtype`, F32 or BF16;
 * dst f32). When nonfinite is not NULL, *nonfinite (a device int32) is set
 * to 1 if any src[i] is NaN or infinite (never reset to 0 here: the runtime
 * zeroes it before a step and reads it after). */
void pipecc_rt_cuda_accumulate(float *dst, const void *src,
                               int32_t src_dtype, int64_t n,
                               int32_t *nonfinite);

/* *first (a device uint64) = the lowest i whose data[i] is NaN or infinite,
 * or UINT64_MAX when every one is finite: the check of a gradient on the
 * device (only the index crosses to the host). */
void pipecc_rt_cuda_find_non_finite_f32(const float *data, int64_t n,
                                        uint64_t *first);

/* f32 -> bf16, round to nearest even; NaN stays NaN. */
void pipecc_rt_cuda_f32_to_bf16(const float *src, uint16_t *dst, int64_t n);
/* bf16 -> f32 (exact). */
void pipecc_rt_cuda_bf16_to_f32(const uint16_t *src, float *dst, int64_t n);

/* The CPU runtime's element-wise helpers (Runtime.h) on device memory, same
 * arguments, so the host program's calls map one to one. */
void pipecc_rt_cuda_accumulate_f32(float *dst, const float *src, int64_t n);
void pipecc_rt_cuda_scale_f32(float *x, int64_t n, float s);
void pipecc_rt_cuda_sgd_update_f32(float *param, const float *grad,
                                   int64_t n, float lr);
void pipecc_rt_cuda_zero(void *data, int64_t bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PIPECC_RUNTIME_CUDA_KERNELS_H */
