//===- CUDAWorkspaceAllocations.cpp - Host temporaries on the device ------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace pipecc {
#define GEN_PASS_DEF_CUDAWORKSPACEALLOCATIONS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

struct CUDAWorkspaceAllocationsPass
    : pipecc::impl::CUDAWorkspaceAllocationsBase<CUDAWorkspaceAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // finalize-memref-to-llvm's generic allocation functions; their
    // signatures are those of the workspace functions (Kernels.h).
    const std::pair<StringRef, StringRef> renames[] = {
        {"_mlir_memref_to_llvm_alloc", "pipecc_rt_cuda_workspace_alloc"},
        {"_mlir_memref_to_llvm_free", "pipecc_rt_cuda_workspace_free"}};
    for (auto [from, to] : renames) {
      auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!decl)
        continue;
      if (module.lookupSymbol(to)) {
        decl.emitError("'") << to << "' is already defined";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              decl, StringAttr::get(&getContext(), to), module))) {
        decl.emitError("cannot rename to '") << to << "'";
        return signalPassFailure();
      }
      SymbolTable::setSymbolName(decl, to);
    }
  }
};

} // namespace
