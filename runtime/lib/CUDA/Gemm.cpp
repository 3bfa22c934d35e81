//===- Gemm.cpp - Row-major matmuls on cuBLASLt --------------------------===//
//
// cuBLASLt is column-major; a row-major C = op(A) op(B) is the column-major
// C^T = op(B)^T op(A)^T, so B's storage goes in cuBLASLt's first operand
// and A's in its second, with M and N swapped. The bias of a row-major C
// (one value per column j) is then one value per row of the column-major
// result, which is what cuBLASLt's BIAS epilogues add.
//
// Building the descriptors and asking the heuristic costs far more than a
// small matmul, and the stage functions call the same shapes every
// micro-batch: both are cached per shape (and pointer alignment, which the
// chosen algorithm may rely on).
//
//===----------------------------------------------------------------------===//
#include "CudaSupport.h"

#include "pipecc/Runtime/CUDA/Kernels.h"

#include <cublasLt.h>

#include <array>
#include <map>
#include <memory>
#include <tuple>

using namespace pipecc::rt;
using namespace pipecc::rt::cuda;

namespace {

/// cublasGetStatusName lives in libcublas, which the runtime does not link.
const char *statusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED (out of memory)";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "cuBLAS error";
  }
}

void checkLt(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(what, ": ", statusName(status), " (status ",
         static_cast<int>(status), ")");
}

/// cuBLASLt's recommended workspace for Hopper.
constexpr size_t kWorkspaceBytes = 32u << 20;

struct GemmShape {
  bool transA, transB;
  int64_t m, n, k, lda, ldb, ldc;
  int64_t strideA, strideB, strideC, batch;
  int32_t abType, cType, epilogue;
  int alignment; // of every pointer, in bytes (a power of two <= 256)

  auto tie() const {
    return std::tie(transA, transB, m, n, k, lda, ldb, ldc, strideA, strideB,
                    strideC, batch, abType, cType, epilogue, alignment);
  }
  bool operator<(const GemmShape &other) const { return tie() < other.tie(); }
};

/// The descriptors and algorithm of one shape.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;

  GemmPlan() = default;
  GemmPlan(const GemmPlan &) = delete;
  GemmPlan &operator=(const GemmPlan &) = delete;
  ~GemmPlan() {
    if (result)
      cublasLtMatrixLayoutDestroy(result);
    if (second)
      cublasLtMatrixLayoutDestroy(second);
    if (first)
      cublasLtMatrixLayoutDestroy(first);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

class GemmEngine {
public:
  static GemmEngine &get() {
    static GemmEngine engine;
    return engine;
  }

  const GemmPlan &plan(const GemmShape &shape) {
    auto it = plans_.find(shape);
    if (it != plans_.end())
      return *it->second;
    auto plan = build(shape);
    return *plans_.emplace(shape, std::move(plan)).first->second;
  }

  cublasLtHandle_t handle() {
    if (!handle_)
      checkLt(cublasLtCreate(&handle_), "cublasLtCreate");
    return handle_;
  }

  void *workspace() {
    // Allocated once and kept: counted in the workspace peak.
    if (!workspace_)
      workspace_ = allocateWorkspace(kWorkspaceBytes);
    return workspace_;
  }

private:
  GemmEngine() = default;
  // Destroyed at exit, possibly after the CUDA context: leak the handle and
  // the plans rather than call into a torn-down library.
  ~GemmEngine() {
    for (auto &entry : plans_)
      entry.second.release();
  }

  std::unique_ptr<GemmPlan> build(const GemmShape &shape);

  cublasLtHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
  std::map<GemmShape, std::unique_ptr<GemmPlan>> plans_;
};

cudaDataType_t dataType(int32_t dtype) {
  return dtype == PIPECC_RT_CUDA_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

cublasLtEpilogue_t ltEpilogue(int32_t flags) {
  bool bias = flags & PIPECC_RT_CUDA_EPILOGUE_BIAS;
  if (flags & PIPECC_RT_CUDA_EPILOGUE_RELU)
    return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  if (flags & PIPECC_RT_CUDA_EPILOGUE_GELU_TANH)
    return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

/// A column-major layout of `rows` x `cols` with leading dimension `ld`,
/// batched when batch > 1.
cublasLtMatrixLayout_t makeLayout(int32_t dtype, int64_t rows, int64_t cols,
                                  int64_t ld, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  checkLt(cublasLtMatrixLayoutCreate(&layout, dataType(dtype),
                                     static_cast<uint64_t>(rows),
                                     static_cast<uint64_t>(cols), ld),
          "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    checkLt(cublasLtMatrixLayoutSetAttribute(
                layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                sizeof count),
            "cublasLtMatrixLayoutSetAttribute(batch count)");
    checkLt(cublasLtMatrixLayoutSetAttribute(
                layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof stride),
            "cublasLtMatrixLayoutSetAttribute(batch stride)");
  }
  return layout;
}

std::unique_ptr<GemmPlan> GemmEngine::build(const GemmShape &s) {
  auto plan = std::make_unique<GemmPlan>();
  // f32 inputs keep full f32 products (no TF32): the CPU target's results
  // are the reference.
  checkLt(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F,
                                   CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  cublasOperation_t opFirst = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(plan->desc,
                                         CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opFirst, sizeof opFirst),
          "cublasLtMatmulDescSetAttribute(transa)");
  checkLt(cublasLtMatmulDescSetAttribute(plan->desc,
                                         CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opSecond, sizeof opSecond),
          "cublasLtMatmulDescSetAttribute(transb)");
  cublasLtEpilogue_t epilogue = ltEpilogue(s.epilogue);
  checkLt(cublasLtMatmulDescSetAttribute(plan->desc,
                                         CUBLASLT_MATMUL_DESC_EPILOGUE,
                                         &epilogue, sizeof epilogue),
          "cublasLtMatmulDescSetAttribute(epilogue)");
  if (s.epilogue & PIPECC_RT_CUDA_EPILOGUE_BIAS) {
    cudaDataType_t biasType = dataType(s.cType);
    checkLt(cublasLtMatmulDescSetAttribute(
                plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType,
                sizeof biasType),
            "cublasLtMatmulDescSetAttribute(bias type)");
  }

  // Column-major views of the row-major storage (see the file comment).
  int64_t firstRows = s.transB ? s.k : s.n, firstCols = s.transB ? s.n : s.k;
  int64_t secondRows = s.transA ? s.m : s.k,
          secondCols = s.transA ? s.k : s.m;
  plan->first = makeLayout(s.abType, firstRows, firstCols, s.ldb, s.batch,
                           s.strideB);
  plan->second = makeLayout(s.abType, secondRows, secondCols, s.lda, s.batch,
                            s.strideA);
  plan->result =
      makeLayout(s.cType, s.n, s.m, s.ldc, s.batch, s.strideC);

  cublasLtMatmulPreference_t preference = nullptr;
  checkLt(cublasLtMatmulPreferenceCreate(&preference),
          "cublasLtMatmulPreferenceCreate");
  uint64_t workspaceLimit = kWorkspaceBytes;
  uint32_t alignment = static_cast<uint32_t>(s.alignment);
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceLimit,
      sizeof workspaceLimit);
  for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                         CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(preference, attribute,
                                                    &alignment,
                                                    sizeof alignment);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(
        handle(), plan->desc, plan->first, plan->second, plan->result,
        plan->result, preference, 1, &heuristic, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  checkLt(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    fail("gemm: cuBLASLt has no algorithm for M=", s.m, " N=", s.n,
         " K=", s.k, " (batch ", s.batch, ", epilogue ", s.epilogue,
         ", pointer alignment ", s.alignment, " bytes)");
  plan->algo = heuristic.algo;
  plan->workspaceBytes = heuristic.workspaceSize;
  return plan;
}

int pointerAlignment(std::initializer_list<const void *> pointers) {
  int alignment = 256;
  for (const void *p : pointers) {
    if (!p)
      continue;
    auto address = reinterpret_cast<uintptr_t>(p);
    while (alignment > 1 && address % alignment != 0)
      alignment /= 2;
  }
  return alignment;
}

int64_t elementBytes(int32_t dtype) {
  return dtype == PIPECC_RT_CUDA_BF16 ? 2 : 4;
}

void checkGemm(const GemmShape &s, const void *bias) {
  checkFloatType(s.abType, "gemm (A and B)");
  checkFloatType(s.cType, "gemm (C)");
  if (s.abType == PIPECC_RT_CUDA_F32 && s.cType != PIPECC_RT_CUDA_F32)
    fail("gemm: f32 inputs need an f32 C");
  if (s.m < 0 || s.n < 0 || s.k < 0)
    fail("gemm: negative dimension (M=", s.m, ", N=", s.n, ", K=", s.k, ")");
  int64_t aColumns = s.transA ? s.m : s.k;
  int64_t bColumns = s.transB ? s.k : s.n;
  if (s.lda < (aColumns > 1 ? aColumns : 1) ||
      s.ldb < (bColumns > 1 ? bColumns : 1) || s.ldc < (s.n > 1 ? s.n : 1))
    fail("gemm: leading dimension too small (lda=", s.lda, " needs >= ",
         aColumns, ", ldb=", s.ldb, " needs >= ", bColumns, ", ldc=", s.ldc,
         " needs >= ", s.n, ")");
  if (s.epilogue & ~(PIPECC_RT_CUDA_EPILOGUE_BIAS |
                     PIPECC_RT_CUDA_EPILOGUE_RELU |
                     PIPECC_RT_CUDA_EPILOGUE_GELU_TANH))
    fail("gemm: unknown epilogue flags ", s.epilogue);
  if ((s.epilogue & PIPECC_RT_CUDA_EPILOGUE_RELU) &&
      (s.epilogue & PIPECC_RT_CUDA_EPILOGUE_GELU_TANH))
    fail("gemm: the RELU and GELU_TANH epilogues exclude each other");
  if ((s.epilogue & PIPECC_RT_CUDA_EPILOGUE_BIAS) && !bias)
    fail("gemm: the BIAS epilogue needs a bias vector");
  if (s.batch < 0 || s.strideA < 0 || s.strideB < 0 || s.strideC < 0)
    fail("gemm_batched: negative batch or stride");
  if (s.batch > 1 && s.strideC == 0 && s.m > 0 && s.n > 0)
    fail("gemm_batched: stride_c of 0 would make every batch write the "
         "same C");
  if (s.batch > 0x7fffffff)
    fail("gemm_batched: batch ", s.batch, " exceeds cuBLASLt's limit");
  if (s.k == 0 && s.m > 0 && s.n > 0)
    fail("gemm: K = 0 (an empty sum) is not supported on CUDA");
}

void runGemm(GemmShape shape, float alpha, const void *a, const void *b,
             float beta, void *c, const void *bias) {
  checkGemm(shape, bias);
  if (shape.m == 0 || shape.n == 0 || shape.batch == 0)
    return;
  shape.alignment = pointerAlignment({a, b, c, bias});
  // Leading dimensions and batch strides move later rows and matrices off
  // the base pointers' alignment.
  int64_t abBytes = elementBytes(shape.abType),
          cBytes = elementBytes(shape.cType);
  for (int64_t bytes :
       {shape.lda * abBytes, shape.ldb * abBytes, shape.strideA * abBytes,
        shape.strideB * abBytes, shape.ldc * cBytes, shape.strideC * cBytes})
    while (shape.alignment > 1 && bytes % shape.alignment != 0)
      shape.alignment /= 2;
  GemmEngine &engine = GemmEngine::get();
  const GemmPlan &plan = engine.plan(shape);
  void *workspace = plan.workspaceBytes ? engine.workspace() : nullptr;
  if (shape.epilogue & PIPECC_RT_CUDA_EPILOGUE_BIAS)
    checkLt(cublasLtMatmulDescSetAttribute(
                plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                sizeof bias),
            "cublasLtMatmulDescSetAttribute(bias pointer)");
  checkLt(cublasLtMatmul(engine.handle(), plan.desc, &alpha, b, plan.first,
                         a, plan.second, &beta, c, plan.result, c,
                         plan.result, &plan.algo, workspace,
                         plan.workspaceBytes, computeStream()),
          "cublasLtMatmul");
}

} // namespace

extern "C" {

void pipecc_rt_cuda_gemm(int32_t trans_a, int32_t trans_b, int64_t m,
                         int64_t n, int64_t k, float alpha, const void *a,
                         int64_t lda, const void *b, int64_t ldb, float beta,
                         void *c, int64_t ldc, int32_t ab_dtype,
                         int32_t c_dtype, const void *bias, int32_t epilogue) {
  guardCall([&] {
    GemmShape shape{trans_a != 0, trans_b != 0, m, n, k, lda, ldb, ldc,
                    0, 0, 0, 1, ab_dtype, c_dtype, epilogue, 0};
    runGemm(shape, alpha, a, b, beta, c, bias);
  });
}

void pipecc_rt_cuda_gemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                                 int64_t n, int64_t k, float alpha,
                                 const void *a, int64_t lda, int64_t stride_a,
                                 const void *b, int64_t ldb, int64_t stride_b,
                                 float beta, void *c, int64_t ldc,
                                 int64_t stride_c, int64_t batch,
                                 int32_t ab_dtype, int32_t c_dtype,
                                 const void *bias, int32_t epilogue) {
  guardCall([&] {
    GemmShape shape{trans_a != 0, trans_b != 0, m,        n,
                    k,            lda,          ldb,      ldc,
                    stride_a,     stride_b,     stride_c, batch,
                    ab_dtype,     c_dtype,      epilogue, 0};
    runGemm(shape, alpha, a, b, beta, c, bias);
  });
}

} // extern "C"
