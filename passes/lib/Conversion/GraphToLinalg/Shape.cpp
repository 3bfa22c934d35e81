//===- Shape.cpp - Data movement: reshape, transpose ----------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
namespace graph = pipecc::graph;

namespace pipecc::conversion {
namespace {

/// Static reshapes are collapse/expand pairs: no copy after bufferization.
struct ReshapeLowering : OpConversionPattern<graph::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getType()));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<graph::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    Value init = rewriter.create<tensor::EmptyOp>(op.getLoc(), type.getShape(),
                                                  type.getElementType());
    auto transpose = rewriter.create<linalg::TransposeOp>(
        op.getLoc(), adaptor.getInput(), init, op.getPerm());
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};

} // namespace

void populateShapePatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeLowering, TransposeLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
