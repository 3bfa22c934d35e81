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

} // namespace pipecc

#endif // PIPECC_CONVERSION_PIPELINES_H
