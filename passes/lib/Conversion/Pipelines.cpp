//===- Pipelines.cpp - The CPU lowering pipeline --------------------------===//
#include "pipecc/Conversion/Pipelines.h"
#include "pipecc/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void pipecc::buildStageBufferizationPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createLowerGraphToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCopyAliasedResults());
  // Keeps one-shot bufferization's analysis linear in the op count.
  pm.addNestedPass<func::FuncOp>(createSplitEmptyTensors());

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // A copy into or out of a strided view (a concatenation's slice) would be
  // memref.copy, which lowers to a call of the MLIR runner-utils'
  // memrefCopy: linalg.copy instead, a loop nest like every other. Copies
  // between whole buffers stay memref.copy (llvm.memcpy).
  bufferization.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                              Value to) {
    auto identity = [](Value v) {
      return cast<MemRefType>(v.getType()).getLayout().isIdentity();
    };
    if (identity(from) && identity(to))
      b.create<memref::CopyOp>(loc, from, to);
    else
      b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // A fused row loop's result is its init buffer (scf.for folds the memref
  // it only passes through): then the out-param rewrite below hoists that
  // allocation to the caller instead of copying into the caller's buffer.
  pm.addPass(createCanonicalizerPass());
  // Stage functions write their results into buffers the caller provides;
  // results allocated in the function are allocated by the caller instead.
  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // Weight-gradient out-params are the accumulators: add, don't overwrite.
  pm.addPass(createAccumulateGradients());
  bufferization::buildBufferDeallocationPipeline(pm, {});
}

void pipecc::buildCPULoweringPipeline(OpPassManager &pm,
                                      const CPULoweringOptions &options) {
  buildStageBufferizationPipeline(pm);
  // Issue 10 (fused element-wise loops): a ReLU/GELU backward loop adds the
  // bias gradient as it stores dL/dz (one pass over the matrix, not two).
  pm.addNestedPass<func::FuncOp>(createFuseColumnSums());
  // Temporaries at planned offsets of one static workspace, not malloc'd
  // per call; before MatmulToBlas (see PlanStageWorkspace.cpp).
  pm.addPass(createPlanStageWorkspace());
  // After deallocation: see MatmulToBlas.cpp.
  pm.addPass(createMatmulToBlas({options.device, options.ranks}));
  // Bounded functions keep LLVM's optimisation linear in the op count.
  pm.addPass(createOutlineOpGroups({options.maxOpsPerFunction}));

  if (options.gpuLoopsBlockSize > 0)
    pm.addNestedPass<func::FuncOp>(
        createMapLoopsToGPU(
            {options.gpuLoopsBlockSize, options.gpuLoopsReductionChunk}));
  else {
    // Before the loops lose which of them reduce (see the pass).
    pm.addPass(createReassociateReductions());
    pm.addNestedPass<func::FuncOp>(createLowerReductionsToLoops());
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
    // Lets LLVM vectorize the fused loops (see the pass).
    pm.addNestedPass<func::FuncOp>(createHoistInvariantLoads());
  }
  // x86-64 stores bf16 but has no bf16 arithmetic (--precision bf16).
  pm.addPass(createEmulateBF16());
  // Before MathToLLVM: exp, erf and tanh inline, not a libm call each.
  pm.addPass(createApproximateMath());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // tanh and others without an LLVM intrinsic become libm calls.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = options.barePtrCallConv;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void pipecc::registerCPULoweringPipeline() {
  PassPipelineRegistration<CPULoweringOptions>(
      "pipecc-lower-to-llvm",
      "Lowers graph-dialect functions to the LLVM dialect for the CPU",
      [](OpPassManager &pm, const CPULoweringOptions &options) {
        buildCPULoweringPipeline(pm, options);
      });
}

void pipecc::registerCPULoweringDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}
