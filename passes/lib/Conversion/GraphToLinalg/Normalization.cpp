//===- Normalization.cpp - layer_norm, rms_norm and their gradients -------===//
//
// Each norm is three linalg.generic ops instead of a dozen elementwise
// tensors:
//   1. one pass over every row accumulates its sums (a reduction over the
//      row dimensions into tensors of the leading shape);
//   2. a small parallel loop over the rows turns the sums into mean and
//      1/std (one square root per row);
//   3. a second pass over the elements normalises, centring as
//      (x - k) - sum(d)/n so that no value rounds through a large mean.
// The variance comes from the same single pass as the mean by summing
// d = x - k and d^2 with k the row's first element (the shifted-data
// algorithm): var = sum(d^2)/n - (sum(d)/n)^2 has no catastrophic
// cancellation when k is near the mean, as it is for activations, where
// the textbook E[x^2] - E[x]^2 loses the digits of rows with a large mean.
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

/// The loops and maps of a normalisation of a tensor of `type` whose rows
/// are the dimensions from `axis` on.
struct RowLayout {
  RowLayout(MLIRContext *ctx, RankedTensorType type, int64_t axis)
      : type(type), axis(axis), rank(type.getRank()) {
    SmallVector<int64_t> rowDims, stats;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis)
        stats.push_back(type.getDimSize(d));
      else
        rowDims.push_back(d);
    }
    rowSize = 1;
    for (int64_t d : rowDims)
      rowSize *= type.getDimSize(d);
    statsType = RankedTensorType::get(stats, type.getElementType());
    identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    toStats = getDropDimsMap(rank, rowDims, ctx);
    SmallVector<AffineExpr> rowExprs, firstExprs;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) {
        firstExprs.push_back(getAffineDimExpr(d, ctx));
      } else {
        rowExprs.push_back(getAffineDimExpr(d, ctx));
        firstExprs.push_back(getAffineConstantExpr(0, ctx));
      }
    }
    toRow = AffineMap::get(rank, 0, rowExprs, ctx);
    toFirst = AffineMap::get(rank, 0, firstExprs, ctx);
    statsIdentity = AffineMap::getMultiDimIdentityMap(axis, ctx);
  }

  RankedTensorType type;
  int64_t axis;
  int64_t rank;
  int64_t rowSize;
  /// The leading dimensions: one element per row.
  RankedTensorType statsType;
  /// Over the elements: the element itself, its row's statistics, its
  /// position in the row (a scale or bias) and its row's first element.
  AffineMap identity, toStats, toRow, toFirst;
  /// Over the rows: a statistic.
  AffineMap statsIdentity;

  Type elementType() const { return type.getElementType(); }
};

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

/// Pass 1: `count` sums per row, accumulated over the row's elements.
SmallVector<Value> sumRows(OpBuilder &b, Location loc, const RowLayout &l,
                           ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                           unsigned count, BodyFn body) {
  Value zero = createFloat(b, loc, l.elementType(), 0.0);
  SmallVector<Value> inits;
  SmallVector<AffineMap> maps(inputMaps);
  for (unsigned i = 0; i < count; ++i) {
    inits.push_back(createFilled(b, loc, l.statsType, zero));
    maps.push_back(l.toStats);
  }
  SmallVector<utils::IteratorType> iterators(l.rank,
                                             utils::IteratorType::parallel);
  for (int64_t d = l.axis; d < l.rank; ++d)
    iterators[d] = utils::IteratorType::reduction;
  return buildGeneric(b, loc, iterators, inputs, maps, inits, body);
}

/// Pass 2: `count` values per row computed from its sums.
SmallVector<Value> mapRows(OpBuilder &b, Location loc, const RowLayout &l,
                           ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                           unsigned count, BodyFn body) {
  SmallVector<Value> inits;
  SmallVector<AffineMap> maps(inputMaps);
  for (unsigned i = 0; i < count; ++i) {
    inits.push_back(b.create<tensor::EmptyOp>(loc, l.statsType.getShape(),
                                              l.elementType()));
    maps.push_back(l.statsIdentity);
  }
  SmallVector<utils::IteratorType> iterators(l.axis,
                                             utils::IteratorType::parallel);
  return buildGeneric(b, loc, iterators, inputs, maps, inits, body);
}

/// Pass 3: the result, element by element.
Value mapElements(OpBuilder &b, Location loc, const RowLayout &l,
                  ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                  BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(l.identity);
  Value init =
      b.create<tensor::EmptyOp>(loc, l.type.getShape(), l.elementType());
  SmallVector<utils::IteratorType> iterators(l.rank,
                                             utils::IteratorType::parallel);
  return buildGeneric(b, loc, iterators, inputs, maps, init, body)[0];
}

/// 1 / sqrt(meanSquare + epsilon).
Value rsqrtOf(OpBuilder &b, Location loc, Value meanSquare, double epsilon) {
  Value eps = createFloat(b, loc, meanSquare.getType(), epsilon);
  Value one = createFloat(b, loc, meanSquare.getType(), 1.0);
  Value root =
      b.create<math::SqrtOp>(loc, b.create<arith::AddFOp>(loc, meanSquare, eps));
  return b.create<arith::DivFOp>(loc, one, root);
}

struct LayerNormLowering : OpConversionPattern<graph::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowLayout l(getContext(), op.getType(), op.getAxis());
    Value x = adaptor.getInput();
    double epsilon = op.getEpsilon().convertToDouble();
    double n = static_cast<double>(l.rowSize);

    SmallVector<Value> sums = sumRows(
        rewriter, loc, l, {x, x}, {l.identity, l.toFirst}, 2,
        [](OpBuilder &b, Location nl, ValueRange args) {
          Value d = b.create<arith::SubFOp>(nl, args[0], args[1]);
          Value dd = b.create<arith::MulFOp>(nl, d, d);
          return SmallVector<Value>{
              b.create<arith::AddFOp>(nl, args[2], d),
              b.create<arith::AddFOp>(nl, args[3], dd)};
        });
    SmallVector<Value> stats = mapRows(
        rewriter, loc, l, {sums[0], sums[1]},
        {l.statsIdentity, l.statsIdentity}, 2,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value count = createFloat(b, nl, args[0].getType(), n);
          Value zero = createFloat(b, nl, args[0].getType(), 0.0);
          Value md = b.create<arith::DivFOp>(nl, args[0], count);
          Value meanSquare = b.create<arith::DivFOp>(nl, args[1], count);
          Value var = b.create<arith::SubFOp>(
              nl, meanSquare, b.create<arith::MulFOp>(nl, md, md));
          var = b.create<arith::MaximumFOp>(nl, var, zero);
          return SmallVector<Value>{md, rsqrtOf(b, nl, var, epsilon)};
        });

    // (x - first) - sum(d)/n: centring relative to the row's first element
    // never rounds through the (possibly large) mean itself.
    SmallVector<Value> inputs = {x, x, stats[0], stats[1]};
    SmallVector<AffineMap> maps = {l.identity, l.toFirst, l.toStats,
                                   l.toStats};
    Value scale = adaptor.getScale(), bias = adaptor.getBias();
    if (scale) {
      inputs.push_back(scale);
      maps.push_back(l.toRow);
    }
    if (bias) {
      inputs.push_back(bias);
      maps.push_back(l.toRow);
    }
    Value result = mapElements(
        rewriter, loc, l, inputs, maps,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value d = b.create<arith::SubFOp>(nl, args[0], args[1]);
          Value y = b.create<arith::MulFOp>(
              nl, b.create<arith::SubFOp>(nl, d, args[2]), args[3]);
          unsigned next = 4;
          if (scale)
            y = b.create<arith::MulFOp>(nl, y, args[next++]);
          if (bias)
            y = b.create<arith::AddFOp>(nl, y, args[next++]);
          return SmallVector<Value>{y};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * scale.
/// One pass sums d, d^2, g and g * d (d = x - first); then
/// mean(g * xhat) = rstd * (sum(g d)/n - sum(d)/n * sum(g)/n).
struct LayerNormGradLowering : OpConversionPattern<graph::LayerNormGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::LayerNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowLayout l(getContext(), op.getType(), op.getAxis());
    Value x = adaptor.getInput(), dy = adaptor.getResultGrad(),
          scale = adaptor.getScale();
    double epsilon = op.getEpsilon().convertToDouble();
    double n = static_cast<double>(l.rowSize);

    SmallVector<Value> inputs = {x, x, dy};
    SmallVector<AffineMap> maps = {l.identity, l.toFirst, l.identity};
    if (scale) {
      inputs.push_back(scale);
      maps.push_back(l.toRow);
    }
    unsigned firstSum = inputs.size();
    SmallVector<Value> sums = sumRows(
        rewriter, loc, l, inputs, maps, 4,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value d = b.create<arith::SubFOp>(nl, args[0], args[1]);
          Value g = scale ? b.create<arith::MulFOp>(nl, args[2], args[3])
                                .getResult()
                          : args[2];
          ValueRange acc = args.drop_front(firstSum);
          return SmallVector<Value>{
              b.create<arith::AddFOp>(nl, acc[0], d),
              b.create<arith::AddFOp>(
                  nl, acc[1], b.create<arith::MulFOp>(nl, d, d)),
              b.create<arith::AddFOp>(nl, acc[2], g),
              b.create<arith::AddFOp>(
                  nl, acc[3], b.create<arith::MulFOp>(nl, g, d))};
        });
    SmallVector<Value> stats = mapRows(
        rewriter, loc, l, sums,
        {l.statsIdentity, l.statsIdentity, l.statsIdentity, l.statsIdentity},
        4, [&](OpBuilder &b, Location nl, ValueRange args) {
          Value count = createFloat(b, nl, args[0].getType(), n);
          Value zero = createFloat(b, nl, args[0].getType(), 0.0);
          Value md = b.create<arith::DivFOp>(nl, args[0], count);
          Value var = b.create<arith::SubFOp>(
              nl, b.create<arith::DivFOp>(nl, args[1], count),
              b.create<arith::MulFOp>(nl, md, md));
          var = b.create<arith::MaximumFOp>(nl, var, zero);
          Value rstd = rsqrtOf(b, nl, var, epsilon);
          Value meanG = b.create<arith::DivFOp>(nl, args[2], count);
          Value meanGD = b.create<arith::DivFOp>(nl, args[3], count);
          Value meanGXhat = b.create<arith::MulFOp>(
              nl, rstd,
              b.create<arith::SubFOp>(nl, meanGD,
                                      b.create<arith::MulFOp>(nl, md, meanG)));
          return SmallVector<Value>{md, rstd, meanG, meanGXhat};
        });

    SmallVector<Value> elementInputs = {x, dy, stats[0], stats[1], stats[2],
                                        stats[3], x};
    SmallVector<AffineMap> elementMaps = {l.identity, l.identity, l.toStats,
                                          l.toStats,  l.toStats,  l.toStats,
                                          l.toFirst};
    if (scale) {
      elementInputs.push_back(scale);
      elementMaps.push_back(l.toRow);
    }
    Value result = mapElements(
        rewriter, loc, l, elementInputs, elementMaps,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value rstd = args[3];
          Value g = scale ? b.create<arith::MulFOp>(nl, args[1], args[7])
                                .getResult()
                          : args[1];
          Value d = b.create<arith::SubFOp>(nl, args[0], args[6]);
          Value xhat = b.create<arith::MulFOp>(
              nl, b.create<arith::SubFOp>(nl, d, args[2]), rstd);
          Value inner = b.create<arith::SubFOp>(
              nl, b.create<arith::SubFOp>(nl, g, args[4]),
              b.create<arith::MulFOp>(nl, xhat, args[5]));
          return SmallVector<Value>{
              b.create<arith::MulFOp>(nl, rstd, inner)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct RmsNormLowering : OpConversionPattern<graph::RmsNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::RmsNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowLayout l(getContext(), op.getType(), op.getAxis());
    Value x = adaptor.getInput(), scale = adaptor.getScale();
    double epsilon = op.getEpsilon().convertToDouble();
    double n = static_cast<double>(l.rowSize);

    Value sumSquares = sumRows(
        rewriter, loc, l, {x}, {l.identity}, 1,
        [](OpBuilder &b, Location nl, ValueRange args) {
          return SmallVector<Value>{b.create<arith::AddFOp>(
              nl, args[1], b.create<arith::MulFOp>(nl, args[0], args[0]))};
        })[0];
    Value rstd = mapRows(
        rewriter, loc, l, {sumSquares}, {l.statsIdentity}, 1,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value count = createFloat(b, nl, args[0].getType(), n);
          return SmallVector<Value>{rsqrtOf(
              b, nl, b.create<arith::DivFOp>(nl, args[0], count), epsilon)};
        })[0];
    SmallVector<Value> inputs = {x, rstd};
    SmallVector<AffineMap> maps = {l.identity, l.toStats};
    if (scale) {
      inputs.push_back(scale);
      maps.push_back(l.toRow);
    }
    Value result = mapElements(
        rewriter, loc, l, inputs, maps,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value y = b.create<arith::MulFOp>(nl, args[0], args[1]);
          if (scale)
            y = b.create<arith::MulFOp>(nl, y, args[2]);
          return SmallVector<Value>{y};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dx = rstd * (g - xhat * mean(g * xhat)) with xhat = x * rstd and
/// g = dy * scale: rstd * g - x * rstd^3 * sum(g x) / n.
struct RmsNormGradLowering : OpConversionPattern<graph::RmsNormGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::RmsNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RowLayout l(getContext(), op.getType(), op.getAxis());
    Value x = adaptor.getInput(), dy = adaptor.getResultGrad(),
          scale = adaptor.getScale();
    double epsilon = op.getEpsilon().convertToDouble();
    double n = static_cast<double>(l.rowSize);

    SmallVector<Value> inputs = {x, dy};
    SmallVector<AffineMap> maps = {l.identity, l.identity};
    if (scale) {
      inputs.push_back(scale);
      maps.push_back(l.toRow);
    }
    unsigned firstSum = inputs.size();
    SmallVector<Value> sums = sumRows(
        rewriter, loc, l, inputs, maps, 2,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value g = scale ? b.create<arith::MulFOp>(nl, args[1], args[2])
                                .getResult()
                          : args[1];
          ValueRange acc = args.drop_front(firstSum);
          return SmallVector<Value>{
              b.create<arith::AddFOp>(
                  nl, acc[0], b.create<arith::MulFOp>(nl, args[0], args[0])),
              b.create<arith::AddFOp>(
                  nl, acc[1], b.create<arith::MulFOp>(nl, g, args[0]))};
        });
    SmallVector<Value> stats = mapRows(
        rewriter, loc, l, sums, {l.statsIdentity, l.statsIdentity}, 2,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value count = createFloat(b, nl, args[0].getType(), n);
          Value rstd = rsqrtOf(
              b, nl, b.create<arith::DivFOp>(nl, args[0], count), epsilon);
          Value cube = b.create<arith::MulFOp>(
              nl, rstd, b.create<arith::MulFOp>(nl, rstd, rstd));
          Value coefficient = b.create<arith::MulFOp>(
              nl, cube, b.create<arith::DivFOp>(nl, args[1], count));
          return SmallVector<Value>{rstd, coefficient};
        });
    SmallVector<Value> elementInputs = {x, dy, stats[0], stats[1]};
    SmallVector<AffineMap> elementMaps = {l.identity, l.identity, l.toStats,
                                          l.toStats};
    if (scale) {
      elementInputs.push_back(scale);
      elementMaps.push_back(l.toRow);
    }
    Value result = mapElements(
        rewriter, loc, l, elementInputs, elementMaps,
        [&](OpBuilder &b, Location nl, ValueRange args) {
          Value g = scale ? b.create<arith::MulFOp>(nl, args[1], args[4])
                                .getResult()
                          : args[1];
          return SmallVector<Value>{b.create<arith::SubFOp>(
              nl, b.create<arith::MulFOp>(nl, args[2], g),
              b.create<arith::MulFOp>(nl, args[0], args[3]))};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateNormalizationPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, LayerNormGradLowering, RmsNormLowering,
               RmsNormGradLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
