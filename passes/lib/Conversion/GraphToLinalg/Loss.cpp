//===- Loss.cpp - softmax, cross-entropy (and its gradient), MSE ----------===//
//
// Softmax-based ops subtract the row maximum before exp:
//   m = max_c x,  s = sum_c exp(x - m),  log softmax = x - m - log s.
// Cross-entropy reads the label's logit with tensor.extract inside the
// body of the reduction over label positions, which also counts the
// positions that are not ignore_index; a mean over no counted position is 0.
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

using BodyFn = function_ref<SmallVector<Value>(OpBuilder &, Location,
                                               ValueRange)>;

/// A linalg.generic over `loopShape`; inputs and outputs broadcast into it
/// (outputs through getDropDimsMap(reduced)), the loop reduces `reduced`.
SmallVector<Value> buildGeneric(OpBuilder &b, Location loc,
                                ArrayRef<int64_t> loopShape,
                                ArrayRef<int64_t> reduced, ValueRange inputs,
                                ValueRange inits, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = loopShape.size();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(input.getType()),
                                   loopShape, ctx));
  for (size_t i = 0; i < inits.size(); ++i)
    maps.push_back(getDropDimsMap(rank, reduced, ctx));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange(inits), inputs, inits, maps, getIterators(rank, reduced),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResults();
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(),
                                   type.getElementType());
}

/// Max over `axis` and sum of exp(x - max) over it; both without `axis`.
std::pair<Value, Value> buildMaxAndSumExp(OpBuilder &b, Location loc,
                                          Value x, int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  Value max = buildReduction(b, loc, x, {axis}, ReduceKind::Max);
  // The max has `axis` removed; read it through the dims that remain.
  Value zero = createFloat(b, loc, type.getElementType(), 0.0);
  Value sumInit = createFilled(b, loc, dropDims(type, {axis}), zero);
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 getDropDimsMap(rank, {axis}, ctx),
                                 getDropDimsMap(rank, {axis}, ctx)};
  auto sum = b.create<linalg::GenericOp>(
      loc, sumInit.getType(), ValueRange{x, max}, sumInit, maps,
      getIterators(rank, {axis}),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value shifted = nb.create<arith::SubFOp>(nloc, args[0], args[1]);
        Value e = nb.create<math::ExpOp>(nloc, shifted);
        nb.create<linalg::YieldOp>(
            nloc, nb.create<arith::AddFOp>(nloc, args[2], e).getResult());
      });
  return {max, sum.getResult(0)};
}

/// A parallel generic over `type` whose inputs are `x` (identity) and the
/// per-row values in `rowValues` (with `axis` removed).
Value buildRowwise(OpBuilder &b, Location loc, RankedTensorType type,
                   int64_t axis, Value x, ValueRange rowValues,
                   ValueRange scalars, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx)};
  for (Value v : rowValues) {
    inputs.push_back(v);
    maps.push_back(getDropDimsMap(rank, {axis}, ctx));
  }
  for (Value v : scalars) {
    inputs.push_back(v);
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(v.getType()),
                                   type.getShape(), ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  auto generic = b.create<linalg::GenericOp>(
      loc, type, inputs, emptyLike(b, loc, type), maps, getIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

/// `label != ignore_index`, or true without one.
Value isCounted(OpBuilder &b, Location loc, Value label,
                std::optional<int64_t> ignoreIndex) {
  if (!ignoreIndex)
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(true));
  Value ignore = b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(label.getType(), *ignoreIndex));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, label,
                                 ignore);
}

Value selectFloat(OpBuilder &b, Location loc, Value cond, Value value) {
  Value zero = createFloat(b, loc, value.getType(), 0.0);
  return b.create<arith::SelectOp>(loc, cond, value, zero);
}

/// `num / den` for two tensors broadcast to `type` (here rank-0 scalars).
Value buildDivide(OpBuilder &b, Location loc, RankedTensorType type,
                  Value num, Value den) {
  return buildGeneric(b, loc, type.getShape(), {}, ValueRange{num, den},
                      emptyLike(b, loc, type),
                      [](OpBuilder &nb, Location nloc, ValueRange args) {
                        return SmallVector<Value>{nb.create<arith::DivFOp>(
                            nloc, args[0], args[1])};
                      })[0];
}

/// The number of label positions that are not `ignoreIndex`, as a scalar
/// of `elementType`.
Value buildLabelCount(OpBuilder &b, Location loc, Value labels,
                      std::optional<int64_t> ignoreIndex, Type elementType) {
  auto labelsType = cast<RankedTensorType>(labels.getType());
  auto scalarType = RankedTensorType::get({}, elementType);
  Value zero = createFloat(b, loc, elementType, 0.0);
  SmallVector<int64_t> allDims;
  for (int64_t i = 0; i < labelsType.getRank(); ++i)
    allDims.push_back(i);
  return buildGeneric(
      b, loc, labelsType.getShape(), allDims, labels,
      createFilled(b, loc, scalarType, zero),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value one = createFloat(nb, l, args[1].getType(), 1.0);
        Value counted = isCounted(nb, l, args[0], ignoreIndex);
        return SmallVector<Value>{nb.create<arith::AddFOp>(
            l, args[1], selectFloat(nb, l, counted, one))};
      })[0];
}

/// max(count, 1): a mean over no counted position is 0, not 0/0. A
/// micro-batch whose labels are all ignored then adds nothing to the step.
Value buildDenominator(OpBuilder &b, Location loc, Value count) {
  auto type = cast<RankedTensorType>(count.getType());
  return buildGeneric(b, loc, type.getShape(), {}, ValueRange{count},
                      emptyLike(b, loc, type),
                      [](OpBuilder &nb, Location l, ValueRange args) {
                        Value one = createFloat(nb, l, args[0].getType(), 1.0);
                        return SmallVector<Value>{
                            nb.create<arith::MaximumFOp>(l, args[0], one)};
                      })[0];
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

struct SoftmaxLowering : OpConversionPattern<graph::SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = normalizeAxis(op.getAxis(), type.getRank());
    auto [max, sum] =
        buildMaxAndSumExp(rewriter, loc, adaptor.getInput(), axis);
    Value result = buildRowwise(
        rewriter, loc, type, axis, adaptor.getInput(), {max, sum}, {},
        [](OpBuilder &b, Location l, ValueRange args) {
          Value shifted = b.create<arith::SubFOp>(l, args[0], args[1]);
          Value e = b.create<math::ExpOp>(l, shifted);
          return SmallVector<Value>{b.create<arith::DivFOp>(l, e, args[2])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CrossEntropyLowering : OpConversionPattern<graph::CrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::CrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits(), labels = adaptor.getLabels();
    auto labelsType = cast<RankedTensorType>(labels.getType());
    Type elementType =
        cast<RankedTensorType>(logits.getType()).getElementType();
    std::optional<int64_t> ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = buildMaxAndSumExp(rewriter, loc, logits, /*axis=*/1);

    // One reduction over every label position sums the per-position losses
    // (logsumexp - the label's logit) and counts the positions used.
    auto scalarType = RankedTensorType::get({}, elementType);
    Value zero = createFloat(rewriter, loc, elementType, 0.0);
    Value totalInit = createFilled(rewriter, loc, scalarType, zero);
    Value countInit = createFilled(rewriter, loc, scalarType, zero);
    int64_t rank = labelsType.getRank();
    SmallVector<int64_t> allDims;
    for (int64_t i = 0; i < rank; ++i)
      allDims.push_back(i);
    SmallVector<Value> totals = buildGeneric(
        rewriter, loc, labelsType.getShape(), allDims,
        ValueRange{labels, max, sum}, ValueRange{totalInit, countInit},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value label = args[0];
          Value counted = isCounted(b, l, label, ignoreIndex);
          // Ignored labels may be out of range: read class 0 instead.
          Value zeroLabel = b.create<arith::ConstantOp>(
              l, b.getIntegerAttr(label.getType(), 0));
          Value safeLabel =
              b.create<arith::SelectOp>(l, counted, label, zeroLabel);
          SmallVector<Value> indices;
          for (int64_t i = 0; i < rank; ++i) {
            indices.push_back(b.create<linalg::IndexOp>(l, i));
            if (i == 0)
              indices.push_back(b.create<arith::IndexCastOp>(
                  l, b.getIndexType(), safeLabel));
          }
          Value logit = b.create<tensor::ExtractOp>(l, logits, indices);
          Value logSum = b.create<math::LogOp>(l, args[2]);
          Value lse = b.create<arith::AddFOp>(l, args[1], logSum);
          Value loss = b.create<arith::SubFOp>(l, lse, logit);
          Value one = createFloat(b, l, loss.getType(), 1.0);
          Value total = b.create<arith::AddFOp>(
              l, args[3], selectFloat(b, l, counted, loss));
          Value count = b.create<arith::AddFOp>(
              l, args[4], selectFloat(b, l, counted, one));
          return SmallVector<Value>{total, count};
        });
    rewriter.replaceOp(op, buildDivide(rewriter, loc,
                                       cast<RankedTensorType>(op.getType()),
                                       totals[0],
                                       buildDenominator(rewriter, loc,
                                                        totals[1])));
    return success();
  }
};

struct LabelCountLowering : OpConversionPattern<graph::LabelCountOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::LabelCountOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildLabelCount(rewriter, op.getLoc(),
                                           adaptor.getLabels(),
                                           op.getIgnoreIndex(),
                                           op.getType().getElementType()));
    return success();
  }
};

struct CrossEntropyGradLowering
    : OpConversionPattern<graph::CrossEntropyGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::CrossEntropyGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value logits = adaptor.getLogits(), labels = adaptor.getLabels();
    auto type = cast<RankedTensorType>(logits.getType());
    Type elementType = type.getElementType();
    std::optional<int64_t> ignoreIndex = op.getIgnoreIndex();
    auto [max, sum] = buildMaxAndSumExp(rewriter, loc, logits, /*axis=*/1);

    Value count = buildDenominator(
        rewriter, loc,
        buildLabelCount(rewriter, loc, labels, ignoreIndex, elementType));

    // (softmax - onehot) * dloss / count, zero at ignored positions.
    Value result = buildRowwise(
        rewriter, loc, type, /*axis=*/1, logits, {labels, max, sum},
        {adaptor.getLossGrad(), count},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], label = args[1];
          Value shifted = b.create<arith::SubFOp>(l, x, args[2]);
          Value p = b.create<arith::DivFOp>(
              l, b.create<math::ExpOp>(l, shifted), args[3]);
          Value cls = b.create<arith::IndexCastOp>(
              l, label.getType(), b.create<linalg::IndexOp>(l, 1));
          Value isLabel =
              b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, cls, label);
          Value one = createFloat(b, l, x.getType(), 1.0);
          Value diff = b.create<arith::SubFOp>(
              l, p, selectFloat(b, l, isLabel, one));
          Value scale = b.create<arith::DivFOp>(l, args[4], args[5]);
          Value grad = b.create<arith::MulFOp>(l, diff, scale);
          return SmallVector<Value>{
              selectFloat(b, l, isCounted(b, l, label, ignoreIndex), grad)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MSELossLowering : OpConversionPattern<graph::MSELossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::MSELossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(adaptor.getPrediction().getType());
    Type elementType = type.getElementType();
    auto scalarType = RankedTensorType::get({}, elementType);
    SmallVector<int64_t> allDims;
    for (int64_t i = 0; i < type.getRank(); ++i)
      allDims.push_back(i);
    Value zero = createFloat(rewriter, loc, elementType, 0.0);
    Value total = buildGeneric(
        rewriter, loc, type.getShape(), allDims,
        ValueRange{adaptor.getPrediction(), adaptor.getTarget()},
        createFilled(rewriter, loc, scalarType, zero),
        [](OpBuilder &b, Location l, ValueRange args) {
          Value d = b.create<arith::SubFOp>(l, args[0], args[1]);
          Value sq = b.create<arith::MulFOp>(l, d, d);
          return SmallVector<Value>{b.create<arith::AddFOp>(l, args[2], sq)};
        })[0];
    Value count = rewriter.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(
                 scalarType, rewriter.getFloatAttr(
                                 elementType,
                                 static_cast<double>(type.getNumElements()))));
    rewriter.replaceOp(op, buildDivide(rewriter, loc,
                                       cast<RankedTensorType>(op.getType()),
                                       total, count));
    return success();
  }
};

} // namespace

void populateLossPatterns(RewritePatternSet &patterns) {
  patterns.add<SoftmaxLowering, CrossEntropyLowering, CrossEntropyGradLowering,
               LabelCountLowering, MSELossLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
