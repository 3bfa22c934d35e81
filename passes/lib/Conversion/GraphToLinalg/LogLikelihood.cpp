//===- LogLikelihood.cpp - log_softmax, nll_loss and its gradient ---------===//
//
// log_softmax subtracts the row maximum before exp, as softmax does:
//   log_softmax(x) = x - m - log(sum(exp(x - m))),  m = max(x).
// nll_loss reads each label's entry with tensor.extract inside a generic
// over the label positions, which also counts the positions that are not
// ignore_index; an ignored label may be out of range, so class 0 is read in
// its place and the entry discarded.
//
//===----------------------------------------------------------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
namespace graph = pipecc::graph;

namespace pipecc::conversion {
namespace {

using BodyFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

SmallVector<Value> buildGeneric(OpBuilder &b, Location loc,
                                ArrayRef<utils::IteratorType> iterators,
                                ValueRange inputs, ArrayRef<AffineMap> maps,
                                ValueRange inits, BodyFn body) {
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange(inits), inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResults();
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(),
                                   type.getElementType());
}

struct LogSoftmaxLowering : OpConversionPattern<graph::LogSoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::LogSoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxisAttr().getInt();
    unsigned rank = type.getRank();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap toRow = getDropDimsMap(rank, {axis}, ctx);

    Value max = buildReduction(rewriter, loc, x, {axis}, ReduceKind::Max);
    Value zero = createFloat(rewriter, loc, type.getElementType(), 0.0);
    Value sum = buildGeneric(
        rewriter, loc, getIterators(rank, {axis}), {x, max},
        {identity, toRow, toRow},
        createFilled(rewriter, loc, dropDims(type, {axis}), zero),
        [](OpBuilder &b, Location l, ValueRange args) {
          Value e = b.create<math::ExpOp>(
              l, b.create<arith::SubFOp>(l, args[0], args[1]));
          return SmallVector<Value>{b.create<arith::AddFOp>(l, args[2], e)};
        })[0];
    Value result = buildGeneric(
        rewriter, loc, getIterators(rank), {x, max, sum},
        {identity, toRow, toRow, identity}, emptyLike(rewriter, loc, type),
        [](OpBuilder &b, Location l, ValueRange args) {
          Value shifted = b.create<arith::SubFOp>(l, args[0], args[1]);
          return SmallVector<Value>{b.create<arith::SubFOp>(
              l, shifted, b.create<math::LogOp>(l, args[2]))};
        })[0];
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct NLLLossLowering : OpConversionPattern<graph::NLLLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::NLLLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value input = adaptor.getInput(), labels = adaptor.getLabels();
    auto labelsType = cast<RankedTensorType>(labels.getType());
    Type elementType = cast<RankedTensorType>(input.getType()).getElementType();
    std::optional<int64_t> ignoreIndex = op.getIgnoreIndex();
    StringRef reduction = op.getReduction();
    unsigned rank = labelsType.getRank();

    // -input[n, label, d1, ...] at a counted position, else 0.
    auto positionLoss = [&](OpBuilder &b, Location l, Value label) {
      Value counted = isCounted(b, l, label, ignoreIndex);
      Value zeroLabel =
          b.create<arith::ConstantOp>(l, b.getIntegerAttr(label.getType(), 0));
      Value safeLabel = b.create<arith::SelectOp>(l, counted, label, zeroLabel);
      SmallVector<Value> indices;
      for (unsigned d = 0; d < rank; ++d) {
        indices.push_back(b.create<linalg::IndexOp>(l, d));
        if (d == 0)
          indices.push_back(
              b.create<arith::IndexCastOp>(l, b.getIndexType(), safeLabel));
      }
      Value entry = b.create<tensor::ExtractOp>(l, input, indices);
      return selectFloat(b, l, counted, b.create<arith::NegFOp>(l, entry));
    };

    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    if (reduction == "none") {
      auto type = cast<RankedTensorType>(op.getType());
      rewriter.replaceOp(
          op, buildGeneric(rewriter, loc, getIterators(rank), labels,
                           {identity, identity},
                           emptyLike(rewriter, loc, type),
                           [&](OpBuilder &b, Location l, ValueRange args) {
                             return SmallVector<Value>{
                                 positionLoss(b, l, args[0])};
                           }));
      return success();
    }
    SmallVector<int64_t> all;
    for (unsigned d = 0; d < rank; ++d)
      all.push_back(d);
    auto scalarType = RankedTensorType::get({}, elementType);
    AffineMap toScalar = AffineMap::get(rank, 0, {}, ctx);
    Value total = buildGeneric(
        rewriter, loc, getIterators(rank, all), labels, {identity, toScalar},
        createFilled(rewriter, loc, scalarType,
                     createFloat(rewriter, loc, elementType, 0.0)),
        [&](OpBuilder &b, Location l, ValueRange args) {
          return SmallVector<Value>{
              b.create<arith::AddFOp>(l, args[1], positionLoss(b, l, args[0]))};
        })[0];
    if (reduction == "mean") {
      Value count =
          buildLabelCount(rewriter, loc, labels, ignoreIndex, elementType);
      AffineMap scalar = AffineMap::get(0, 0, {}, ctx);
      total = buildGeneric(rewriter, loc, {}, {total, count},
                           {scalar, scalar, scalar},
                           emptyLike(rewriter, loc, scalarType),
                           [](OpBuilder &b, Location l, ValueRange args) {
                             return SmallVector<Value>{
                                 b.create<arith::DivFOp>(l, args[0], args[1])};
                           })[0];
    }
    rewriter.replaceOp(op, total);
    return success();
  }
};

struct NLLLossGradLowering : OpConversionPattern<graph::NLLLossGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::NLLLossGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    Value labels = adaptor.getLabels(), lossGrad = adaptor.getLossGrad();
    auto type = cast<RankedTensorType>(op.getType());
    Type elementType = type.getElementType();
    std::optional<int64_t> ignoreIndex = op.getIgnoreIndex();
    StringRef reduction = op.getReduction();
    unsigned rank = type.getRank();

    AffineMap toPosition = getDropDimsMap(rank, {1}, ctx);
    SmallVector<Value> inputs = {labels, lossGrad};
    SmallVector<AffineMap> maps = {
        toPosition, reduction == "none" ? toPosition
                                        : AffineMap::get(rank, 0, {}, ctx)};
    if (reduction == "mean") {
      inputs.push_back(
          buildLabelCount(rewriter, loc, labels, ignoreIndex, elementType));
      maps.push_back(AffineMap::get(rank, 0, {}, ctx));
    }
    maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    Value result = buildGeneric(
        rewriter, loc, getIterators(rank), inputs, maps,
        emptyLike(rewriter, loc, type),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value label = args[0];
          Value cls = b.create<arith::IndexCastOp>(
              l, label.getType(), b.create<linalg::IndexOp>(l, 1));
          Value hit = b.create<arith::AndIOp>(
              l, isCounted(b, l, label, ignoreIndex),
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, cls,
                                      label));
          Value grad = b.create<arith::NegFOp>(l, args[1]);
          if (reduction == "mean")
            grad = b.create<arith::DivFOp>(l, grad, args[2]);
          return SmallVector<Value>{selectFloat(b, l, hit, grad)};
        })[0];
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateLogLikelihoodPatterns(RewritePatternSet &patterns) {
  patterns.add<LogSoftmaxLowering, NLLLossLowering, NLLLossGradLowering>(
      patterns.getContext());
}

} // namespace pipecc::conversion
