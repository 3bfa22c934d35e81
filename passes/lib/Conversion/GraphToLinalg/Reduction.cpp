//===- Reduction.cpp - reduce_sum / reduce_mean / reduce_max --------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
namespace graph = pipecc::graph;

namespace pipecc::conversion {
namespace {

template <typename SourceOp, ReduceKind Kind, bool Mean = false>
struct ReduceLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> axes;
    int64_t count = 1;
    for (int64_t axis : op.getAxes()) {
      axis = axis < 0 ? axis + inputType.getRank() : axis;
      axes.push_back(axis);
      count *= inputType.getDimSize(axis);
    }
    Value reduced = buildReduction(rewriter, loc, input, axes, Kind);
    if (Mean) {
      auto type = cast<RankedTensorType>(reduced.getType());
      unsigned rank = type.getRank();
      auto identity = AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext());
      Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    type.getElementType());
      reduced = rewriter
                    .create<linalg::GenericOp>(
                        loc, type, reduced, init,
                        SmallVector<AffineMap>{identity, identity},
                        getIterators(rank),
                        [&](OpBuilder &b, Location nloc, ValueRange args) {
                          Value n = createFloat(b, nloc, args[0].getType(),
                                                static_cast<double>(count));
                          b.create<linalg::YieldOp>(
                              nloc,
                              b.create<arith::DivFOp>(nloc, args[0], n)
                                  .getResult());
                        })
                    .getResult(0);
    }
    rewriter.replaceOp(
        op, reshapeTo(rewriter, loc, reduced,
                      cast<RankedTensorType>(op.getType())));
    return success();
  }
};

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReduceLowering<graph::ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<graph::ReduceMeanOp, ReduceKind::Sum, true>,
               ReduceLowering<graph::ReduceMaxOp, ReduceKind::Max>>(ctx);
}

} // namespace pipecc::conversion
