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
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Fuse only producers with a single use: no computation is duplicated.
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *operand) {
          Operation *producer = operand->get().getDefiningOp();
          return producer && producer->hasOneUse();
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
