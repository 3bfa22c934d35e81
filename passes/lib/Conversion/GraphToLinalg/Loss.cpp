//===- Loss.cpp - softmax, cross-entropy (and its gradient), MSE ----------===//
//
// Softmax-based ops subtract the row maximum before exp:
//   m = max_c x,  s = sum_c exp(x - m),  log softmax = x - m - log s.
// Each is one scf.for nest over the rows; a row's passes (the maximum,
// then the exps, stored, and their sum, then the output) are loops on
// scalars inside it, so a row stays in cache, exp runs once per element
// and no per-row temporaries are allocated. Sums run over the columns in
// order, as the linalg reductions they replace did (same results).
// Cross-entropy reads the label's logit with tensor.extract in the loop
// over label positions, which also counts the positions that are not
// ignore_index; a mean over no counted position is 0 (the count is at
// least 1).
//
//===----------------------------------------------------------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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


/// `rowIndices` (every dim but `axis`) with `column` inserted at `axis`.
SmallVector<Value> withColumn(ValueRange rowIndices, int64_t axis,
                              Value column) {
  SmallVector<Value> indices(rowIndices);
  indices.insert(indices.begin() + axis, column);
  return indices;
}

/// The maximum of one row of `x` (the row at `rowIndices`, along `axis`).
Value buildRowMax(OpBuilder &b, Location loc, Value x, int64_t axis,
                  ValueRange rowIndices) {
  auto type = cast<RankedTensorType>(x.getType());
  Value init = createNegInf(b, loc, type.getElementType());
  return buildLoopNest(
      b, loc, {type.getDimSize(axis)}, init,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange acc) {
        Value v = nb.create<tensor::ExtractOp>(
            nloc, x, withColumn(rowIndices, axis, ivs[0]));
        return SmallVector<Value>{
            nb.create<arith::MaximumFOp>(nloc, v, acc[0])};
      })[0];
}

/// The sum of exp(x - max) over one row; with `out`, each exp is also
/// stored into `out` at its position. Returns the sum (and the new `out`).
SmallVector<Value> buildRowSumExp(OpBuilder &b, Location loc, Value x,
                                  int64_t axis, ValueRange rowIndices,
                                  Value max, Value out = {}) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<Value> carried = {createFloat(b, loc, type.getElementType(), 0)};
  if (out)
    carried.push_back(out);
  return buildLoopNest(
      b, loc, {type.getDimSize(axis)}, carried,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange acc) {
        SmallVector<Value> at = withColumn(rowIndices, axis, ivs[0]);
        Value v = nb.create<tensor::ExtractOp>(nloc, x, at);
        Value e = nb.create<math::ExpOp>(
            nloc, nb.create<arith::SubFOp>(nloc, v, max));
        SmallVector<Value> next = {nb.create<arith::AddFOp>(nloc, acc[0], e)};
        if (out)
          next.push_back(nb.create<tensor::InsertOp>(nloc, e, acc[1], at));
        return next;
      });
}

/// A new tensor of `type` written row by row (rows along `axis`): `body`
/// gets the row's indices and the tensor so far and returns it with the
/// row written.
Value buildRows(OpBuilder &b, Location loc, RankedTensorType type,
                int64_t axis,
                function_ref<Value(OpBuilder &, Location, ValueRange, Value)>
                    body) {
  SmallVector<int64_t> rows(type.getShape());
  rows.erase(rows.begin() + axis);
  return buildLoopNest(
      b, loc, rows, emptyLike(b, loc, type),
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange acc) {
        return SmallVector<Value>{body(nb, nloc, ivs, acc[0])};
      })[0];
}

/// Rewrites each element of one row of `out` in place:
/// out[at] = body(out[at], column).
Value buildRowUpdate(
    OpBuilder &b, Location loc, Value out, int64_t axis,
    ValueRange rowIndices,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto type = cast<RankedTensorType>(out.getType());
  return buildLoopNest(
      b, loc, {type.getDimSize(axis)}, out,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange acc) {
        SmallVector<Value> at = withColumn(rowIndices, axis, ivs[0]);
        Value old = nb.create<tensor::ExtractOp>(nloc, acc[0], at);
        Value value = body(nb, nloc, old, ivs[0]);
        return SmallVector<Value>{
            nb.create<tensor::InsertOp>(nloc, value, acc[0], at)};
      })[0];
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

} // namespace

// Shared with the NLL loss lowering (GraphToLinalg.h).

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

namespace {

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
    Value x = adaptor.getInput();
    // Per row: the maximum, the exps (stored) and their sum, then each
    // stored exp divided by the sum.
    rewriter.replaceOp(
        op, buildRows(rewriter, loc, type, axis,
                      [&](OpBuilder &b, Location l, ValueRange row, Value out) {
                        Value max = buildRowMax(b, l, x, axis, row);
                        SmallVector<Value> sum =
                            buildRowSumExp(b, l, x, axis, row, max, out);
                        return buildRowUpdate(
                            b, l, sum[1], axis, row,
                            [&](OpBuilder &nb, Location nl, Value e, Value) {
                              return nb.create<arith::DivFOp>(nl, e, sum[0])
                                  .getResult();
                            });
                      }));
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

    // One loop nest over the label positions (the rows along the class
    // axis 1) sums logsumexp - the label's logit and counts the positions
    // used; the row's maximum and sum of exps are loops inside it.
    Value zero = createFloat(rewriter, loc, elementType, 0.0);
    SmallVector<Value> totals = buildLoopNest(
        rewriter, loc, labelsType.getShape(), {zero, zero},
        [&](OpBuilder &b, Location l, ValueRange row, ValueRange acc) {
          Value label = b.create<tensor::ExtractOp>(l, labels, row);
          Value counted = isCounted(b, l, label, ignoreIndex);
          // Ignored labels may be out of range: read class 0 instead.
          Value zeroLabel = b.create<arith::ConstantOp>(
              l, b.getIntegerAttr(label.getType(), 0));
          Value safeLabel =
              b.create<arith::SelectOp>(l, counted, label, zeroLabel);
          Value max = buildRowMax(b, l, logits, /*axis=*/1, row);
          Value sum = buildRowSumExp(b, l, logits, /*axis=*/1, row, max)[0];
          Value cls =
              b.create<arith::IndexCastOp>(l, b.getIndexType(), safeLabel);
          Value logit = b.create<tensor::ExtractOp>(
              l, logits, withColumn(row, /*axis=*/1, cls));
          Value logSum = b.create<math::LogOp>(l, sum);
          Value lse = b.create<arith::AddFOp>(l, max, logSum);
          Value loss = b.create<arith::SubFOp>(l, lse, logit);
          Value one = createFloat(b, l, loss.getType(), 1.0);
          Value total = b.create<arith::AddFOp>(
              l, acc[0], selectFloat(b, l, counted, loss));
          Value count = b.create<arith::AddFOp>(
              l, acc[1], selectFloat(b, l, counted, one));
          return SmallVector<Value>{total, count};
        });
    // A micro-batch whose labels are all ignored has the mean 0, not 0 / 0.
    Value one = createFloat(rewriter, loc, totals[1].getType(), 1.0);
    Value count = rewriter.create<arith::MaximumFOp>(loc, totals[1], one);
    Value mean = rewriter.create<arith::DivFOp>(loc, totals[0], count);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, cast<RankedTensorType>(op.getType()), mean);
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
    Value lossGrad = adaptor.getLossGrad();
    auto type = cast<RankedTensorType>(logits.getType());
    auto labelsType = cast<RankedTensorType>(labels.getType());
    auto lossGradType = cast<RankedTensorType>(lossGrad.getType());
    if (lossGradType.getNumElements() != 1)
      return rewriter.notifyMatchFailure(op, "loss_grad is not one element");
    Type elementType = type.getElementType();
    std::optional<int64_t> ignoreIndex = op.getIgnoreIndex();

    Value zero = createFloat(rewriter, loc, elementType, 0.0);
    Value count = buildLoopNest(
        rewriter, loc, labelsType.getShape(), zero,
        [&](OpBuilder &b, Location l, ValueRange ivs, ValueRange acc) {
          Value label = b.create<tensor::ExtractOp>(l, labels, ivs);
          Value one = createFloat(b, l, elementType, 1.0);
          Value counted = isCounted(b, l, label, ignoreIndex);
          return SmallVector<Value>{b.create<arith::AddFOp>(
              l, acc[0], selectFloat(b, l, counted, one))};
        })[0];
    // At least 1, as in the forward: all-ignored rows get a zero gradient.
    count = rewriter.create<arith::MaximumFOp>(
        loc, count, createFloat(rewriter, loc, elementType, 1.0));
    SmallVector<Value> origin(
        lossGradType.getRank(),
        rewriter.create<arith::ConstantIndexOp>(loc, 0));
    Value dloss = rewriter.create<tensor::ExtractOp>(loc, lossGrad, origin);
    Value scale = rewriter.create<arith::DivFOp>(loc, dloss, count);

    // Per row: the maximum, the exps (stored) and their sum, then
    // (exp / sum - onehot) * dloss / count, zero at ignored positions.
    Value result = buildRows(
        rewriter, loc, type, /*axis=*/1,
        [&](OpBuilder &b, Location l, ValueRange row, Value out) {
          Value label = b.create<tensor::ExtractOp>(l, labels, row);
          Value counted = isCounted(b, l, label, ignoreIndex);
          Value max = buildRowMax(b, l, logits, /*axis=*/1, row);
          SmallVector<Value> sum =
              buildRowSumExp(b, l, logits, /*axis=*/1, row, max, out);
          return buildRowUpdate(
              b, l, sum[1], /*axis=*/1, row,
              [&](OpBuilder &nb, Location nl, Value e, Value column) {
                Value p = nb.create<arith::DivFOp>(nl, e, sum[0]);
                Value cls = nb.create<arith::IndexCastOp>(
                    nl, label.getType(), column);
                Value isLabel = nb.create<arith::CmpIOp>(
                    nl, arith::CmpIPredicate::eq, cls, label);
                Value one = createFloat(nb, nl, elementType, 1.0);
                Value diff = nb.create<arith::SubFOp>(
                    nl, p, selectFloat(nb, nl, isLabel, one));
                Value grad = nb.create<arith::MulFOp>(nl, diff, scale);
                return selectFloat(nb, nl, counted, grad);
              });
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
