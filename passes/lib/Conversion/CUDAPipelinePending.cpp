//===- CUDAPipelinePending.cpp - TEMPORARY stand-in for the CUDA pipeline -===//
//
// TEMPORARY: the CUDA stage lowering (buildCUDALoweringPipeline and its
// registration, contract 1 of issue 8) is built on another branch. Until it
// lands, these definitions make `--target cuda` fail with a clear error
// instead of a link error. Delete this file when merging the real
// CUDAPipeline.cpp.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct CUDALoweringPendingPass
    : public PassWrapper<CUDALoweringPendingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CUDALoweringPendingPass)
  StringRef getArgument() const final { return "pipecc-cuda-lowering-pending"; }
  void runOnOperation() override {
    getOperation().emitError(
        "the CUDA stage lowering is not built yet (buildCUDALoweringPipeline "
        "is a placeholder in this build of pipecc)");
    signalPassFailure();
  }
};
} // namespace

void pipecc::buildCUDALoweringPipeline(OpPassManager &pm,
                                       const CUDALoweringOptions &) {
  pm.addPass(std::make_unique<CUDALoweringPendingPass>());
}

void pipecc::registerCUDALoweringPipeline() {
  PassPipelineRegistration<CUDALoweringOptions>(
      "pipecc-lower-to-cuda",
      "Lowers graph-dialect functions for CUDA (not built yet)",
      [](OpPassManager &pm, const CUDALoweringOptions &options) {
        buildCUDALoweringPipeline(pm, options);
      });
}

void pipecc::registerCUDALoweringDialects(DialectRegistry &) {}
