//===- MergeGPUModules.cpp - One gpu.module per host module ---------------===//
//
// gpu-kernel-outlining makes a gpu.module per kernel, and
// gpu-module-to-binary then runs ptxas (and links libdevice) once per
// module: a stage module of 200 kernels took 40 s. Merged, it is one ptxas
// run of one module.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace pipecc {
#define GEN_PASS_DEF_MERGEGPUMODULES
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMergedName = "pipecc_kernels";

struct MergeGPUModulesPass
    : pipecc::impl::MergeGPUModulesBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    // Only modules of kernels and the constant globals they read (what
    // outlining makes) are merged.
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      for (Operation &op : gpuModule.getBody()->without_terminator())
        if (!isa<gpu::GPUFuncOp, memref::GlobalOp>(op))
          return;

    gpu::GPUModuleOp merged = gpuModules.front();
    SymbolTable mergedSymbols(merged);
    MLIRContext *ctx = &getContext();
    // (module, kernel) -> the kernel's name in the merged module.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp gpuModule : llvm::drop_begin(gpuModules)) {
      // Globals are copies of the host module's, so one name is one value:
      // the first copy serves every kernel.
      for (auto global : llvm::make_early_inc_range(
               gpuModule.getBody()->getOps<memref::GlobalOp>())) {
        if (mergedSymbols.lookup(global.getSymName()))
          continue;
        global->moveBefore(merged.getBody()->getTerminator());
        mergedSymbols.insert(global);
      }
      for (auto func : llvm::make_early_inc_range(
               gpuModule.getBody()->getOps<gpu::GPUFuncOp>())) {
        StringAttr oldName = func.getNameAttr();
        func->moveBefore(merged.getBody()->getTerminator());
        // Renames on a collision (outlined kernels of one function share a
        // name in modules named apart).
        StringAttr newName = mergedSymbols.insert(func);
        renamed[{gpuModule.getNameAttr(), oldName}] = newName;
      }
    }
    // The merged module takes a name that says what it holds.
    StringAttr firstName = merged.getNameAttr();
    StringAttr mergedName = firstName;
    if (!module.lookupSymbol(kMergedName)) {
      mergedName = StringAttr::get(ctx, kMergedName);
      merged.setName(kMergedName);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr kernel = launch.getKernelName();
      if (launch.getKernelModuleName() != firstName) {
        auto it = renamed.find({launch.getKernelModuleName(), kernel});
        if (it == renamed.end())
          return;
        kernel = it->second;
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          mergedName, {FlatSymbolRefAttr::get(ctx, kernel)}));
    });
    for (gpu::GPUModuleOp gpuModule : llvm::drop_begin(gpuModules))
      gpuModule.erase();
  }
};

} // namespace
