//===- GraphToLinalgPass.cpp - The pipecc-lower-graph-to-linalg pass ------===//
#include "GraphToLinalg.h"

#include "pipecc/Conversion/Passes.h"
#include "pipecc/Dialect/Graph/GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace pipecc {
#define GEN_PASS_DEF_LOWERGRAPHTOLINALG
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
struct LowerGraphToLinalgPass
    : pipecc::impl::LowerGraphToLinalgBase<LowerGraphToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    pipecc::conversion::populateElementwisePatterns(patterns);
    pipecc::conversion::populateShapePatterns(patterns);
    pipecc::conversion::populateContractionPatterns(patterns);
    pipecc::conversion::populateReductionPatterns(patterns);
    pipecc::conversion::populateLossPatterns(patterns);
    pipecc::conversion::populateIndexingPatterns(patterns);
    pipecc::conversion::populateConvolutionPatterns(patterns);
    pipecc::conversion::populateNormalizationPatterns(patterns);
    pipecc::conversion::populateLogLikelihoodPatterns(patterns);
    pipecc::conversion::populateGatherNDPatterns(patterns);
    pipecc::conversion::populateStaticShapePatterns(patterns);

    // Name every graph op that has no pattern at all, not only the first
    // one the conversion trips on.
    llvm::DenseSet<OperationName> lowered;
    for (const std::unique_ptr<RewritePattern> &pattern :
         patterns.getNativePatterns())
      if (std::optional<OperationName> root = pattern->getRootKind())
        lowered.insert(*root);
    bool missing = false;
    getOperation().walk([&](Operation *op) {
      if (isa<pipecc::graph::GraphDialect>(op->getDialect()) &&
          !lowered.contains(op->getName())) {
        op->emitError("no lowering to linalg for '") << op->getName() << "'";
        missing = true;
      }
    });
    if (missing)
      return signalPassFailure();

    ConversionTarget target(*ctx);
    target.addIllegalDialect<pipecc::graph::GraphDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    // A pattern that does not match (an unsupported type, say) leaves its op
    // behind; the conversion then reports "failed to legalize operation".
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
  }

};
} // namespace
