//===- ArgumentsTest.cpp - Bad arguments to the CUDA kernels -------------===//
//
// A bad argument is one error line naming the function and the value, and
// the end of the rank, before any CUDA call: these run without a GPU.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/Kernels.h"

#include <gtest/gtest.h>

namespace {

using ::testing::ExitedWithCode;

TEST(CudaKernelArguments, NegativeDimensionsAreNamed) {
  EXPECT_EXIT(pipecc_rt_cuda_softmax(nullptr, nullptr, 2, -3, 1,
                                     PIPECC_RT_CUDA_F32),
              ExitedWithCode(1), "error: .*softmax: negative dimension -3");
  EXPECT_EXIT(pipecc_rt_cuda_layer_norm(nullptr, nullptr, nullptr, nullptr,
                                        -1, 8, 1e-5f, PIPECC_RT_CUDA_F32),
              ExitedWithCode(1), "layer_norm: negative dimension -1");
  EXPECT_EXIT(pipecc_rt_cuda_find_non_finite_f32(nullptr, -5, nullptr),
              ExitedWithCode(1), "find_non_finite_f32: negative dimension -5");
}

TEST(CudaKernelArguments, UnsupportedElementTypesAreNamed) {
  EXPECT_EXIT(pipecc_rt_cuda_softmax(nullptr, nullptr, 1, 1, 1,
                                     PIPECC_RT_CUDA_I64),
              ExitedWithCode(1),
              "softmax: element type 1 is neither F32 \\(0\\) nor BF16 "
              "\\(5\\)");
  EXPECT_EXIT(pipecc_rt_cuda_cross_entropy(
                  nullptr, nullptr, nullptr, nullptr, 1, 2, 1,
                  PIPECC_RT_CUDA_F32, PIPECC_RT_CUDA_F32, 0, 0),
              ExitedWithCode(1),
              "cross_entropy: label element type 0 is neither I64");
  EXPECT_EXIT(pipecc_rt_cuda_gemm(0, 0, 2, 2, 2, 1.0f, nullptr, 2, nullptr,
                                  2, 0.0f, nullptr, 2, PIPECC_RT_CUDA_F32,
                                  PIPECC_RT_CUDA_BF16, nullptr, 0),
              ExitedWithCode(1), "gemm: f32 inputs need an f32 C");
}

TEST(CudaKernelArguments, GemmShapesAndEpiloguesAreChecked) {
  EXPECT_EXIT(pipecc_rt_cuda_gemm(0, 0, 4, 5, 6, 1.0f, nullptr, 5, nullptr,
                                  5, 0.0f, nullptr, 5, PIPECC_RT_CUDA_F32,
                                  PIPECC_RT_CUDA_F32, nullptr, 0),
              ExitedWithCode(1),
              "gemm: leading dimension too small \\(lda=5 needs >= 6");
  EXPECT_EXIT(pipecc_rt_cuda_gemm(
                  0, 0, 2, 2, 2, 1.0f, nullptr, 2, nullptr, 2, 0.0f, nullptr,
                  2, PIPECC_RT_CUDA_F32, PIPECC_RT_CUDA_F32, nullptr,
                  PIPECC_RT_CUDA_EPILOGUE_RELU |
                      PIPECC_RT_CUDA_EPILOGUE_GELU_TANH),
              ExitedWithCode(1), "RELU and GELU_TANH epilogues exclude");
  EXPECT_EXIT(pipecc_rt_cuda_gemm(0, 0, 2, 2, 2, 1.0f, nullptr, 2, nullptr,
                                  2, 0.0f, nullptr, 2, PIPECC_RT_CUDA_F32,
                                  PIPECC_RT_CUDA_F32, nullptr,
                                  PIPECC_RT_CUDA_EPILOGUE_BIAS),
              ExitedWithCode(1), "the BIAS epilogue needs a bias vector");
  EXPECT_EXIT(pipecc_rt_cuda_gemm_batched(
                  0, 0, 2, 2, 2, 1.0f, nullptr, 2, 4, nullptr, 2, 4, 0.0f,
                  nullptr, 2, 0, 3, PIPECC_RT_CUDA_F32, PIPECC_RT_CUDA_F32,
                  nullptr, 0),
              ExitedWithCode(1), "stride_c of 0 would make every batch");
}

TEST(CudaKernelArguments, WorkspaceFreeOfAForeignPointerIsAnError) {
  int local = 0;
  EXPECT_EXIT(pipecc_rt_cuda_workspace_free(&local), ExitedWithCode(1),
              "workspace_free: pointer was not returned by workspace_alloc");
  EXPECT_EXIT(pipecc_rt_cuda_workspace_alloc(-8), ExitedWithCode(1),
              "workspace_alloc: negative size -8");
}

} // namespace
