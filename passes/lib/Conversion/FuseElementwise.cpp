//===- FuseElementwise.cpp - Elementwise fusion that keeps named ops ------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace pipecc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
struct FuseElementwisePass
    : pipecc::impl::FuseElementwiseBase<FuseElementwisePass> {
  using FuseElementwiseBase::FuseElementwiseBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    unsigned limit = maxBodyOps;
    auto bodySize = [](Operation *op) -> size_t {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      return generic ? generic.getBody()->getOperations().size() : 0;
    };
    // Fuse only producers with a single use: no computation is duplicated.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [=](OpOperand *operand) {
          Operation *producer = operand->get().getDefiningOp();
          if (!producer || !producer->hasOneUse())
            return false;
          return limit == 0 ||
                 bodySize(producer) + bodySize(operand->getOwner()) <= limit;
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
