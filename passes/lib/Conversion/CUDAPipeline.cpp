//===- CUDAPipeline.cpp - The CUDA stage-lowering pipeline ----------------===//
//
// Graph-dialect stage functions -> host LLVM dialect + gpu.binary (fatbin).
// See buildCUDALoweringPipeline in Pipelines.h and docs/design.md.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/Pipelines.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void pipecc::buildCUDALoweringPipeline(OpPassManager &pm,
                                       const CUDALoweringOptions &options) {
  buildStageBufferizationPipeline(pm);
  // After deallocation, like MatmulToBlas.
  pm.addPass(createMatmulToCublas());

  // Everything else on buffers becomes kernels.
  pm.addNestedPass<func::FuncOp>(createMapLoopsToGPU({options.blockSize}));
  pm.addNestedPass<func::FuncOp>(createParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createLaunchRemainingOnGPU());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeGPUModules());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());

  // Kernels: NVVM, libdevice for the math functions.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  SmallVector<std::string> linkLibs;
  if (!options.libdevice.empty())
    linkLibs.push_back(options.libdevice);
  target.linkLibs = linkLibs;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(memref::createExpandStridedMetadataPass());
  // bf16 arithmetic and math compute in f32 (libdevice has no bf16
  // functions), rounding each result back to bf16.
  pm.addNestedPass<gpu::GPUModuleOp>(math::createMathLegalizeToF32());
  SmallVector<std::string> emulated = {"bf16"};
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = emulated;
  pm.addNestedPass<gpu::GPUModuleOp>(
      arith::createArithEmulateUnsupportedFloats(emulate));
  // The kernels take memrefs the way the host passes them: gpu-to-llvm
  // passes launch operands as bare pointers whenever the host convention is
  // bare (its kernelBarePtrCallConv is then ignored), so the kernels must
  // expect bare pointers too, or the driver reads parameters past the end of
  // the launch's array.
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = options.barePtrCallConv;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(toNVVM));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // Host: the LLVM dialect; temporaries from the CUDA workspace.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createCUDAWorkspaceAllocations());
  pm.addPass(createArithToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = options.barePtrCallConv;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  GpuToLLVMConversionPassOptions gpuToLLVM;
  gpuToLLVM.hostBarePtrCallConv = options.barePtrCallConv;
  gpuToLLVM.kernelBarePtrCallConv = options.barePtrCallConv;
  pm.addPass(createGpuToLLVMConversionPass(gpuToLLVM));

  // ptxas (and fatbinary) from the toolkit.
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.toolkitPath = options.toolkit;
  toBinary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(toBinary));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void pipecc::registerCUDALoweringPipeline() {
  // The upstream GPU steps on their own, for tests and
  // -mlir-print-ir-after (only these: registering all passes is slow).
  registerPass([] { return createParallelLoopToGpuPass(); });
  registerPass([] { return createGpuKernelOutliningPass(); });
  registerPass([] { return createGpuNVVMAttachTarget(); });
  registerPass([] { return createConvertGpuOpsToNVVMOps(); });
  registerPass([] { return createGpuToLLVMConversionPass(); });
  registerPass([] { return createGpuModuleToBinaryPass(); });
  PassPipelineRegistration<CUDALoweringOptions>(
      "pipecc-lower-to-cuda",
      "Lowers graph-dialect functions to host LLVM dialect launching CUDA "
      "kernels (gpu.binary) and cuBLASLt gemms",
      [](OpPassManager &pm, const CUDALoweringOptions &options) {
        buildCUDALoweringPipeline(pm, options);
      });
}

void pipecc::registerCUDALoweringDialects(DialectRegistry &registry) {
  registerCPULoweringDialects(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
