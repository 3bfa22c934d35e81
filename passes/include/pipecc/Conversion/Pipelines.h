#ifndef PIPECC_CONVERSION_PIPELINES_H
#define PIPECC_CONVERSION_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace pipecc {

/// The front half shared by the CPU and CUDA pipelines: graph -> linalg on
/// tensors, elementwise fusion, one-shot bufferization (identity layouts at
/// function boundaries), results turned into caller-provided
/// out-parameters, buffer deallocation.
void buildStageBufferizationPipeline(mlir::OpPassManager &pm);

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
  /// For testing the CUDA pipeline's kernel logic on the CPU: when not 0,
  /// loops come from pipecc-map-loops-to-gpu with this block size (the
  /// loop nests the CUDA pipeline turns into kernels, run sequentially)
  /// instead of convert-linalg-to-loops.
  Option<int64_t> gpuLoopsBlockSize{
      *this, "gpu-loops-block-size",
      llvm::cl::desc("Lower linalg like the CUDA pipeline (scf.parallel "
                     "loops tiled by this block size; 0: off)"),
      llvm::cl::init(0)};
  Option<int64_t> gpuLoopsReductionChunk{
      *this, "gpu-loops-reduction-chunk",
      llvm::cl::desc("With gpu-loops-block-size: rows per thread of a split "
                     "column sum (pipecc-map-loops-to-gpu's reduction-chunk)"),
      llvm::cl::init(64)};
  /// See pipecc-matmul-to-blas: a measured profile's paths for plain
  /// products (the compile's --device), for a pipeline of `ranks` ranks.
  Option<std::string> device{
      *this, "device",
      llvm::cl::desc("Device profile choosing plain products' paths "
                     "(pipecc-matmul-to-blas; empty: the runtime's rule)"),
      llvm::cl::init("")};
  Option<int64_t> ranks{*this, "ranks",
                        llvm::cl::desc("Ranks of the pipeline (with device)"),
                        llvm::cl::init(1)};
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
                           llvm::cl::desc("GPU architecture of the cubin"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (PTX version)"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("libdevice bitcode linked into every kernel module"),
      llvm::cl::init("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit whose ptxas and fatbinary are run"),
      llvm::cl::init("/usr/local/cuda")};
  /// As in CPULoweringOptions; kernels always take memref descriptors.
  Option<bool> barePtrCallConv{
      *this, "bare-ptr-memref-call-conv",
      llvm::cl::desc("Pass memrefs as bare pointers (static shapes only)"),
      llvm::cl::init(true)};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the generated kernels"),
      llvm::cl::init(256)};
  /// "fatbin" (embedded in the executable), "bin" (cubin), "isa" (PTX
  /// text, for reading) or "offload" (LLVM IR).
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary produces: fatbin, bin, isa "
                     "or offload"),
      llvm::cl::init("fatbin")};
};

/// Lowers a module of graph-dialect stage functions for an NVIDIA GPU. The
/// same front half as the CPU pipeline (graph -> linalg, elementwise
/// fusion, bufferization, results as out-parameters, deallocation), then:
/// f32/bf16 matmuls become `pipecc_rt_cuda_gemm(_batched)` calls (cuBLASLt,
/// a following bias add (+ ReLU) fused as the epilogue); every other linalg
/// op and every independent row loop a kernel (one thread per output
/// element or row, `pipecc-map-loops-to-gpu`); the rest that touches
/// memory a one-thread kernel; temporaries `pipecc_rt_cuda_workspace_alloc`
/// / `_free`. Kernels are outlined into one `gpu.module`, lowered to NVVM
/// with libdevice linked and compiled by ptxas into `gpu.binary` ops (a
/// fatbin for `chip`); the host side is the LLVM dialect with
/// `gpu.launch_func` ops, which the GPU dialect's LLVM IR translation turns
/// into `mgpuModuleLoad` / `mgpuModuleGetFunction` / `mgpuLaunchKernel`
/// calls on the stream `mgpuStreamCreate` returns.
///
/// Stage functions have the CPU pipeline's signature: inputs, then one
/// output buffer per result; here every pointer is a device pointer.
void buildCUDALoweringPipeline(mlir::OpPassManager &pm,
                               const CUDALoweringOptions &options = {});

/// Registers `pipecc-lower-to-cuda`, the pipeline above.
void registerCUDALoweringPipeline();

/// The dialects, interface models and LLVM IR translations (NVVM target,
/// GPU, NVVM, LLVM) the CUDA pipeline needs in a context, beside
/// registerCPULoweringDialects'.
void registerCUDALoweringDialects(mlir::DialectRegistry &registry);

} // namespace pipecc

#endif // PIPECC_CONVERSION_PIPELINES_H
