#ifndef PIPECC_CONVERSION_PIPELINES_H
#define PIPECC_CONVERSION_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace pipecc {

struct CPULoweringOptions : mlir::PassPipelineOptions<CPULoweringOptions> {
  /// Memref arguments of lowered functions become one `!llvm.ptr` each (the
  /// aligned pointer; shapes are static). Off: the standard descriptor
  /// expansion, which `printMemrefF32`-style unranked calls need.
  Option<bool> barePtrCallConv{
      *this, "bare-ptr-memref-call-conv",
      llvm::cl::desc("Pass memrefs as bare pointers (static shapes only)"),
      llvm::cl::init(true)};
  /// See pipecc-outline-op-groups.
  Option<unsigned> maxOpsPerFunction{
      *this, "max-ops-per-function",
      llvm::cl::desc("Split longer functions into calls of groups of at most "
                     "this many loop nests or calls (0: never)"),
      llvm::cl::init(32)};
};

/// Lowers a module of graph-dialect functions to the LLVM dialect for the
/// CPU: graph -> linalg on tensors, elementwise fusion, one-shot
/// bufferization (identity layouts at function boundaries), results turned
/// into caller-provided out-parameters, buffer deallocation, f32 matmuls to
/// `pipecc_rt_sgemm(_batched)` calls, long functions split into calls of
/// bounded groups (`pipecc-outline-op-groups`), then loops and the LLVM
/// dialect.
///
/// `func.func @f(%a: tensor<4x16xf32>, %l: tensor<4xi64>)
///     -> (tensor<4x3xf32>, tensor<f32>)` becomes
/// `llvm.func @f(%a, %l, %out0, %out1)`: inputs in order, then one
/// caller-allocated output buffer per result; nothing is returned. With
/// bare pointers each is an `!llvm.ptr` to the first element (row-major,
/// dense); otherwise each memref expands to (allocated ptr, aligned ptr,
/// offset i64, sizes i64 x rank, strides i64 x rank).
void buildCPULoweringPipeline(mlir::OpPassManager &pm,
                              const CPULoweringOptions &options = {});

/// Registers `pipecc-lower-to-llvm`, the pipeline above.
void registerCPULoweringPipeline();

/// The upstream dialects and external interface models (bufferization,
/// deallocation) the pipeline needs in a context.
void registerCPULoweringDialects(mlir::DialectRegistry &registry);

struct CUDALoweringOptions : mlir::PassPipelineOptions<CUDALoweringOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("The GPU architecture (sm_XX)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> libdevice{
      *this, "libdevice", llvm::cl::desc("libdevice bitcode to link"),
      llvm::cl::init("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("The CUDA toolkit's folder"),
                              llvm::cl::init("/usr/local/cuda")};
  Option<bool> barePtrCallConv{
      *this, "bare-ptr-memref-call-conv",
      llvm::cl::desc("Pass memrefs as bare pointers (static shapes only)"),
      llvm::cl::init(true)};
};

/// Lowers a module of graph-dialect functions (the CPU pipeline's input) for
/// CUDA: each stage function becomes an `llvm.func` taking bare DEVICE
/// pointers (inputs, then one output buffer per result), its kernels held
/// by `gpu.binary` ops (a fatbin for `chip`) and launched through MLIR's
/// gpu-to-llvm host ABI, its matmuls `pipecc_rt_cuda_gemm*` calls.
void buildCUDALoweringPipeline(mlir::OpPassManager &pm,
                               const CUDALoweringOptions &options = {});

/// Registers `pipecc-lower-to-cuda`, the pipeline above.
void registerCUDALoweringPipeline();

/// The dialects and external models the CUDA pipeline needs in a context.
void registerCUDALoweringDialects(mlir::DialectRegistry &registry);

} // namespace pipecc

#endif // PIPECC_CONVERSION_PIPELINES_H
