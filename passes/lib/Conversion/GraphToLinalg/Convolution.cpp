//===- Convolution.cpp - conv and pooling to linalg -----------------------===//
//
// A convolution is im2col plus one batched matmul per call, so that
// pipecc-matmul-to-blas turns the arithmetic into sgemm:
//   cols[g, (c, k...), (n, o...)]
//       = input[n, g*C/G + c, o*stride - pad + k*dilation]
//   result[n, g, o', p] = weight[g, o', :] . cols[g, :, (n, p)]
// Its weight gradient multiplies the result gradient by the same columns
// (transposed), and its input gradient multiplies it by the weight
// (transposed) and folds the columns back (col2im) with a generic that, for
// each input position, sums the taps that read it: a gather, so no two
// iterations write the same element and the sum's order is fixed.
//
// Pools are generics over the result with the kernel taps as reduction
// loops; their gradients are generics over the input that gather the
// windows containing each position, in the same fixed order. The input is
// read with tensor.extract at clamped indices and padded taps are selected
// away, as in Indexing.cpp.
//
//===----------------------------------------------------------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Graph/GraphWindows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
namespace graph = pipecc::graph;
using pipecc::graph::WindowDim;

namespace pipecc::conversion {
namespace {

int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

RankedTensorType withShape(Type like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape,
                               cast<RankedTensorType>(like).getElementType());
}

Value constIndex(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

Value andOf(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return lhs ? b.create<arith::AndIOp>(loc, lhs, rhs).getResult() : rhs;
}

/// A generic over the shape of `inits` followed by `tapShape` (reduction
/// loops; none when empty) writing into `inits`, whose body yields
/// `body(indices, accumulators)`; `indices` are the loop indices.
Value buildWindowGeneric(OpBuilder &b, Location loc, ValueRange inits,
                         ArrayRef<int64_t> tapShape,
                         function_ref<SmallVector<Value>(
                             OpBuilder &, Location, ValueRange, ValueRange)>
                             body,
                         unsigned resultIndex = 0) {
  MLIRContext *ctx = b.getContext();
  auto initType = cast<RankedTensorType>(inits[0].getType());
  unsigned outerRank = initType.getRank();
  unsigned rank = outerRank + tapShape.size();
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  if (!tapShape.empty()) {
    // The taps' loop bounds come from an operand of their shape.
    inputs.push_back(
        b.create<tensor::EmptyOp>(loc, tapShape, initType.getElementType()));
    SmallVector<AffineExpr> taps;
    for (unsigned d = outerRank; d < rank; ++d)
      taps.push_back(getAffineDimExpr(d, ctx));
    maps.push_back(AffineMap::get(rank, 0, taps, ctx));
  }
  SmallVector<AffineExpr> outerExprs;
  for (unsigned d = 0; d < outerRank; ++d)
    outerExprs.push_back(getAffineDimExpr(d, ctx));
  for (size_t i = 0; i < inits.size(); ++i)
    maps.push_back(AffineMap::get(rank, 0, outerExprs, ctx));
  SmallVector<utils::IteratorType> iterators(outerRank,
                                             utils::IteratorType::parallel);
  iterators.append(tapShape.size(), utils::IteratorType::reduction);
  SmallVector<Type> types;
  for (Value init : inits)
    types.push_back(init.getType());
  auto generic = b.create<linalg::GenericOp>(
      loc, types, inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> indices;
        for (unsigned d = 0; d < rank; ++d)
          indices.push_back(nb.create<linalg::IndexOp>(nloc, d));
        nb.create<linalg::YieldOp>(
            nloc, body(nb, nloc, indices, args.drop_front(inputs.size())));
      });
  return generic.getResult(resultIndex);
}

/// The input position that tap `tap` of output position `out` reads along
/// each window dimension, clamped into the input, and whether every one of
/// them lies inside the input (null when no tap can reach the padding).
struct Tap {
  SmallVector<Value> positions;
  Value inside;
};

Tap windowTap(OpBuilder &b, Location loc, ArrayRef<WindowDim> dims,
              ArrayRef<int64_t> inputSizes, ArrayRef<int64_t> outputSizes,
              ValueRange out, ValueRange tap) {
  Tap result;
  Value zero = constIndex(b, loc, 0);
  for (auto [i, dim] : llvm::enumerate(dims)) {
    // out * stride - padBegin + tap * dilation
    Value position = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(loc, out[i], constIndex(b, loc, dim.stride)),
        b.create<arith::MulIOp>(loc, tap[i], constIndex(b, loc, dim.dilation)));
    position = b.create<arith::SubIOp>(loc, position,
                                       constIndex(b, loc, dim.padBegin));
    // Windows that never leave the input need no bounds check.
    if (dim.padBegin == 0 &&
        (outputSizes[i] - 1) * dim.stride + dim.extent() <= inputSizes[i]) {
      result.positions.push_back(position);
      continue;
    }
    Value last = constIndex(b, loc, inputSizes[i] - 1);
    Value in = b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, position, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, position,
                                last));
    result.inside = andOf(b, loc, result.inside, in);
    result.positions.push_back(b.create<arith::MinSIOp>(
        loc, b.create<arith::MaxSIOp>(loc, position, zero), last));
  }
  return result;
}

/// The output position whose tap `tap` reads input position `position`
/// along each window dimension, clamped into the output, and whether there
/// is one (null when every tap of every position has one).
Tap reverseTap(OpBuilder &b, Location loc, ArrayRef<WindowDim> dims,
               ArrayRef<int64_t> outputSizes, ValueRange position,
               ValueRange tap) {
  Tap result;
  Value zero = constIndex(b, loc, 0);
  for (auto [i, dim] : llvm::enumerate(dims)) {
    // t = position + padBegin - tap * dilation = out * stride
    Value t = b.create<arith::SubIOp>(
        loc,
        b.create<arith::AddIOp>(loc, position[i],
                                constIndex(b, loc, dim.padBegin)),
        b.create<arith::MulIOp>(loc, tap[i], constIndex(b, loc, dim.dilation)));
    Value stride = constIndex(b, loc, dim.stride);
    Value out = dim.stride == 1 ? t : b.create<arith::DivSIOp>(loc, t, stride);
    Value last = constIndex(b, loc, outputSizes[i] - 1);
    Value valid = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, t, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, out, last));
    if (dim.stride != 1)
      valid = b.create<arith::AndIOp>(
          loc, valid,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                  b.create<arith::RemSIOp>(loc, t, stride),
                                  zero));
    result.inside = andOf(b, loc, result.inside, valid);
    result.positions.push_back(b.create<arith::MinSIOp>(
        loc, b.create<arith::MaxSIOp>(loc, out, zero), last));
  }
  return result;
}

Value selectInside(OpBuilder &b, Location loc, Value inside, Value value,
                   Value otherwise) {
  return inside ? b.create<arith::SelectOp>(loc, inside, value, otherwise)
                      .getResult()
                : value;
}

SmallVector<WindowDim> convWindow(RankedTensorType weight,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> pads,
                                  ArrayRef<int64_t> dilations) {
  // The op verified the attributes already.
  return *graph::getWindowDims(std::nullopt, weight.getRank() - 2,
                               weight.getShape().drop_front(2), strides, pads,
                               dilations);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// The sizes of a convolution: batch, groups, channels per group in and
/// out, spatial shapes.
struct ConvShape {
  int64_t batch, groups, inPerGroup, outPerGroup;
  SmallVector<int64_t> inSpatial, outSpatial, kernel;
  SmallVector<WindowDim> window;

  int64_t columnRows() const { return inPerGroup * product(kernel); }
  int64_t columnCols() const { return batch * product(outSpatial); }
};

template <typename OpTy>
ConvShape getConvShape(OpTy op, RankedTensorType input, RankedTensorType weight,
                       RankedTensorType output) {
  ConvShape s;
  s.batch = input.getDimSize(0);
  s.groups = op.getGroup();
  s.inPerGroup = weight.getDimSize(1);
  s.outPerGroup = weight.getDimSize(0) / s.groups;
  s.inSpatial.assign(input.getShape().drop_front(2).begin(),
                     input.getShape().drop_front(2).end());
  s.outSpatial.assign(output.getShape().drop_front(2).begin(),
                      output.getShape().drop_front(2).end());
  s.kernel.assign(weight.getShape().drop_front(2).begin(),
                  weight.getShape().drop_front(2).end());
  s.window =
      convWindow(weight, op.getStrides(), op.getPads(), op.getDilations());
  return s;
}

/// im2col: [G, C/G * k..., N * o...], zero where a tap reads padding.
Value buildColumns(OpBuilder &b, Location loc, Value input,
                   const ConvShape &s) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type elementType = inputType.getElementType();
  unsigned n = s.kernel.size();
  // Loops (g, c, k..., batch, o...): the innermost reads along a row.
  SmallVector<int64_t> shape = {s.groups, s.inPerGroup};
  shape.append(s.kernel);
  shape.push_back(s.batch);
  shape.append(s.outSpatial);
  Value init = b.create<tensor::EmptyOp>(loc, shape, elementType);
  Value columns = buildWindowGeneric(
      b, loc, init, {},
      [&](OpBuilder &nb, Location nloc, ValueRange idx, ValueRange) {
        Value channel = nb.create<arith::AddIOp>(
            nloc,
            nb.create<arith::MulIOp>(nloc, idx[0],
                                     constIndex(nb, nloc, s.inPerGroup)),
            idx[1]);
        ValueRange taps = idx.slice(2, n), outs = idx.slice(3 + n, n);
        Tap tap = windowTap(nb, nloc, s.window, s.inSpatial, s.outSpatial, outs,
                            taps);
        SmallVector<Value> at = {idx[2 + n], channel};
        at.append(tap.positions);
        Value value = nb.create<tensor::ExtractOp>(nloc, input, at);
        return SmallVector<Value>{
            selectInside(nb, nloc, tap.inside, value,
                         createFloat(nb, nloc, elementType, 0))};
      });
  return reshapeTo(
      b, loc, columns,
      withShape(inputType, {s.groups, s.columnRows(), s.columnCols()}));
}

/// [N, O, o...] -> [G, O/G, N * o...]
Value resultGradToColumns(OpBuilder &b, Location loc, Value grad,
                          const ConvShape &s) {
  int64_t points = product(s.outSpatial);
  Value split = reshapeTo(
      b, loc, grad,
      withShape(grad.getType(), {s.batch, s.groups, s.outPerGroup, points}));
  Value init = b.create<tensor::EmptyOp>(
      loc, ArrayRef<int64_t>{s.groups, s.outPerGroup, s.batch, points},
      cast<RankedTensorType>(grad.getType()).getElementType());
  Value moved = b.create<linalg::TransposeOp>(loc, split, init,
                                              ArrayRef<int64_t>{1, 2, 0, 3})
                    ->getResult(0);
  return reshapeTo(
      b, loc, moved,
      withShape(grad.getType(), {s.groups, s.outPerGroup, s.columnCols()}));
}

/// A zero-initialised batched matmul of the named kind.
template <typename MatmulOp>
Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType type) {
  Value init =
      createFilled(b, loc, type, createFloat(b, loc, type.getElementType(), 0));
  return b.create<MatmulOp>(loc, TypeRange{type}, ValueRange{lhs, rhs}, init)
      ->getResult(0);
}

struct ConvLowering : OpConversionPattern<graph::ConvOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    ConvShape s = getConvShape(op, op.getInput().getType(),
                               op.getWeight().getType(), type);
    Value columns = buildColumns(rewriter, loc, adaptor.getInput(), s);
    Value weight =
        reshapeTo(rewriter, loc, adaptor.getWeight(),
                  withShape(type, {s.groups, s.outPerGroup, s.columnRows()}));
    Value matmul = batchMatmul<linalg::BatchMatmulOp>(
        rewriter, loc, weight, columns,
        withShape(type, {s.groups, s.outPerGroup, s.columnCols()}));
    // [G, O/G, N, o...] -> [N, G, O/G, o...]
    int64_t points = product(s.outSpatial);
    matmul =
        reshapeTo(rewriter, loc, matmul,
                  withShape(type, {s.groups, s.outPerGroup, s.batch, points}));
    Value init = rewriter.create<tensor::EmptyOp>(
        loc, ArrayRef<int64_t>{s.batch, s.groups, s.outPerGroup, points},
        type.getElementType());
    Value result = rewriter
                       .create<linalg::TransposeOp>(
                           loc, matmul, init, ArrayRef<int64_t>{2, 0, 1, 3})
                       ->getResult(0);
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, result, type));
    return success();
  }
};

struct ConvWeightGradLowering : OpConversionPattern<graph::ConvWeightGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ConvWeightGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    ConvShape s = getConvShape(op, op.getInput().getType(), type,
                               op.getResultGrad().getType());
    Value columns = buildColumns(rewriter, loc, adaptor.getInput(), s);
    Value grad = resultGradToColumns(rewriter, loc, adaptor.getResultGrad(), s);
    // dW[g] = dY[g] columns[g]^T
    Value product = batchMatmul<linalg::BatchMatmulTransposeBOp>(
        rewriter, loc, grad, columns,
        withShape(type, {s.groups, s.outPerGroup, s.columnRows()}));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, product, type));
    return success();
  }
};

struct ConvInputGradLowering : OpConversionPattern<graph::ConvInputGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ConvInputGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    ConvShape s = getConvShape(op, type, op.getWeight().getType(),
                               op.getResultGrad().getType());
    unsigned n = s.kernel.size();
    Value grad = resultGradToColumns(rewriter, loc, adaptor.getResultGrad(), s);
    Value weight =
        reshapeTo(rewriter, loc, adaptor.getWeight(),
                  withShape(type, {s.groups, s.outPerGroup, s.columnRows()}));
    // dcolumns[g] = W[g]^T dY[g]: [G, C/G * k..., N * o...]
    Value columns = batchMatmul<linalg::BatchMatmulTransposeAOp>(
        rewriter, loc, weight, grad,
        withShape(type, {s.groups, s.columnRows(), s.columnCols()}));
    SmallVector<int64_t> unfolded = {s.groups, s.inPerGroup};
    unfolded.append(s.kernel);
    unfolded.push_back(s.batch);
    unfolded.append(s.outSpatial);
    columns = reshapeTo(rewriter, loc, columns, withShape(type, unfolded));

    // col2im: dx[n, c, x...] = sum over taps k of dcolumns at the output
    // position whose tap k reads x.
    Type elementType = type.getElementType();
    Value zero = createFloat(rewriter, loc, elementType, 0);
    Value init = createFilled(rewriter, loc, type, zero);
    Value result = buildWindowGeneric(
        rewriter, loc, init, s.kernel,
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange acc) {
          ValueRange position = idx.slice(2, n), taps = idx.slice(2 + n, n);
          Tap tap = reverseTap(b, l, s.window, s.outSpatial, position, taps);
          Value perGroup = constIndex(b, l, s.inPerGroup);
          SmallVector<Value> at = {
              b.create<arith::DivUIOp>(l, idx[1], perGroup),
              b.create<arith::RemUIOp>(l, idx[1], perGroup)};
          at.append(taps.begin(), taps.end());
          at.push_back(idx[0]);
          at.append(tap.positions);
          Value value = b.create<tensor::ExtractOp>(l, columns, at);
          Value sum = b.create<arith::AddFOp>(l, acc[0], value);
          return SmallVector<Value>{
              selectInside(b, l, tap.inside, sum, acc[0])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

template <typename OpTy> SmallVector<WindowDim> poolWindow(OpTy op) {
  return *graph::getWindowDims(std::nullopt, op.getKernelShape().size(),
                               op.getKernelShape(), op.getStrides(),
                               op.getPads(), op.getDilations());
}

/// The window sums (or maxima) of `input` over `pooledType`; padded taps
/// contribute the identity `padValue`.
Value buildWindowReduction(OpBuilder &b, Location loc, Value input,
                           RankedTensorType pooledType,
                           ArrayRef<WindowDim> window, ArrayRef<int64_t> kernel,
                           ReduceKind kind) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type elementType = inputType.getElementType();
  unsigned n = kernel.size();
  ArrayRef<int64_t> inSpatial = inputType.getShape().drop_front(2);
  Value identity = kind == ReduceKind::Sum ? createFloat(b, loc, elementType, 0)
                                           : createNegInf(b, loc, elementType);
  Value init = createFilled(b, loc, pooledType, identity);
  return buildWindowGeneric(
      b, loc, init, kernel,
      [&](OpBuilder &nb, Location l, ValueRange idx, ValueRange acc) {
        Tap tap = windowTap(nb, l, window, inSpatial,
                            pooledType.getShape().drop_front(2),
                            idx.slice(2, n), idx.slice(2 + n, n));
        SmallVector<Value> at = {idx[0], idx[1]};
        at.append(tap.positions);
        Value value = nb.create<tensor::ExtractOp>(l, input, at);
        value = selectInside(nb, l, tap.inside, value, identity);
        Value result =
            kind == ReduceKind::Sum
                ? nb.create<arith::AddFOp>(l, acc[0], value).getResult()
                : nb.create<arith::MaximumFOp>(l, acc[0], value).getResult();
        return SmallVector<Value>{result};
      });
}

struct MaxPoolLowering : OpConversionPattern<graph::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, buildWindowReduction(rewriter, op.getLoc(), adaptor.getInput(),
                                 op.getType(), poolWindow(op),
                                 op.getKernelShape(), ReduceKind::Max));
    return success();
  }
};

/// Each window's tap of its first maximum, in row-major tap order (-1 for a
/// window without taps inside the input), as i64; NaN counts as a maximum,
/// the last NaN winning, as in PyTorch's CPU kernel.
Value buildArgMax(OpBuilder &b, Location loc, Value input,
                  RankedTensorType pooledType, ArrayRef<WindowDim> window,
                  ArrayRef<int64_t> kernel) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type elementType = inputType.getElementType();
  unsigned n = kernel.size();
  ArrayRef<int64_t> inSpatial = inputType.getShape().drop_front(2);
  Value maxInit =
      createFilled(b, loc, pooledType, createNegInf(b, loc, elementType));
  auto indexType = RankedTensorType::get(pooledType.getShape(), b.getI64Type());
  Value argInit = createFilled(b, loc, indexType,
                               b.create<arith::ConstantIntOp>(loc, -1, 64));
  return buildWindowGeneric(
      b, loc, {maxInit, argInit}, kernel,
      [&](OpBuilder &nb, Location l, ValueRange idx, ValueRange acc) {
        ValueRange taps = idx.slice(2 + n, n);
        Tap tap = windowTap(nb, l, window, inSpatial,
                            pooledType.getShape().drop_front(2),
                            idx.slice(2, n), taps);
        SmallVector<Value> at = {idx[0], idx[1]};
        at.append(tap.positions);
        Value x = nb.create<tensor::ExtractOp>(l, input, at);
        // Row-major number of the tap.
        Value linear = taps[0];
        for (unsigned i = 1; i < n; ++i)
          linear = nb.create<arith::AddIOp>(
              l,
              nb.create<arith::MulIOp>(l, linear, constIndex(nb, l, kernel[i])),
              taps[i]);
        linear = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), linear);
        Value none =
            nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, acc[1],
                                     nb.create<arith::ConstantIntOp>(l, 0, 64));
        Value greater =
            nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, acc[0]);
        Value nan =
            nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x);
        Value take = nb.create<arith::OrIOp>(
            l, nb.create<arith::OrIOp>(l, none, greater), nan);
        if (tap.inside)
          take = nb.create<arith::AndIOp>(l, take, tap.inside);
        return SmallVector<Value>{
            nb.create<arith::SelectOp>(l, take, x, acc[0]),
            nb.create<arith::SelectOp>(l, take, linear, acc[1])};
      },
      /*resultIndex=*/1);
}

struct MaxPoolGradLowering : OpConversionPattern<graph::MaxPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::MaxPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType pooledType = op.getResultGrad().getType();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    unsigned n = kernel.size();
    SmallVector<WindowDim> window = poolWindow(op);
    Value argMax = buildArgMax(rewriter, loc, adaptor.getInput(), pooledType,
                               window, kernel);
    Value grad = adaptor.getResultGrad();
    Value init =
        createFilled(rewriter, loc, type,
                     createFloat(rewriter, loc, type.getElementType(), 0));
    ArrayRef<int64_t> outSpatial = pooledType.getShape().drop_front(2);
    Value result = buildWindowGeneric(
        rewriter, loc, init, kernel,
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange acc) {
          ValueRange taps = idx.slice(2 + n, n);
          Tap tap = reverseTap(b, l, window, outSpatial, idx.slice(2, n), taps);
          SmallVector<Value> at = {idx[0], idx[1]};
          at.append(tap.positions);
          Value linear = taps[0];
          for (unsigned i = 1; i < n; ++i)
            linear = b.create<arith::AddIOp>(
                l,
                b.create<arith::MulIOp>(l, linear, constIndex(b, l, kernel[i])),
                taps[i]);
          linear = b.create<arith::IndexCastOp>(l, b.getI64Type(), linear);
          Value winner = b.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              b.create<tensor::ExtractOp>(l, argMax, at), linear);
          Value sum = b.create<arith::AddFOp>(
              l, acc[0], b.create<tensor::ExtractOp>(l, grad, at));
          Value valid = andOf(b, l, tap.inside, winner);
          return SmallVector<Value>{
              b.create<arith::SelectOp>(l, valid, sum, acc[0])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The divisors of an average pool over `pooledSpatial`, as a constant.
Value buildCounts(OpBuilder &b, Location loc, ArrayRef<WindowDim> window,
                  ArrayRef<int64_t> inSpatial, ArrayRef<int64_t> pooledSpatial,
                  bool includePad, Type elementType) {
  auto type = RankedTensorType::get(pooledSpatial, elementType);
  SmallVector<APFloat> counts;
  int64_t total = product(pooledSpatial);
  auto floatType = cast<FloatType>(elementType);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, count = 1;
    for (int64_t i = pooledSpatial.size() - 1; i >= 0; --i) {
      int64_t o = rest % pooledSpatial[i];
      rest /= pooledSpatial[i];
      count *= window[i].count(o, inSpatial[i], includePad);
    }
    APFloat value(static_cast<double>(std::max<int64_t>(count, 1)));
    bool lost;
    value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
    counts.push_back(value);
  }
  return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, counts));
}

/// `values` [N, C, o...] divided by `counts` [o...].
Value divideByCounts(OpBuilder &b, Location loc, Value values, Value counts) {
  auto type = cast<RankedTensorType>(values.getType());
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 getDropDimsMap(rank, {0, 1}, ctx),
                                 AffineMap::getMultiDimIdentityMap(rank, ctx)};
  Value init =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, type, ValueRange{values, counts}, init, maps, getIterators(rank),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            nb.create<linalg::YieldOp>(
                l, nb.create<arith::DivFOp>(l, args[0], args[1]).getResult());
          })
      .getResult(0);
}

struct AvgPoolLowering : OpConversionPattern<graph::AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    SmallVector<WindowDim> window = poolWindow(op);
    Value sums =
        buildWindowReduction(rewriter, loc, adaptor.getInput(), type, window,
                             op.getKernelShape(), ReduceKind::Sum);
    Value counts = buildCounts(rewriter, loc, window,
                               op.getInput().getType().getShape().drop_front(2),
                               type.getShape().drop_front(2),
                               op.getCountIncludePad(), type.getElementType());
    rewriter.replaceOp(op, divideByCounts(rewriter, loc, sums, counts));
    return success();
  }
};

struct AvgPoolGradLowering : OpConversionPattern<graph::AvgPoolGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::AvgPoolGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    RankedTensorType pooledType = op.getResultGrad().getType();
    ArrayRef<int64_t> kernel = op.getKernelShape();
    unsigned n = kernel.size();
    SmallVector<WindowDim> window = poolWindow(op);
    ArrayRef<int64_t> outSpatial = pooledType.getShape().drop_front(2);
    Value counts =
        buildCounts(rewriter, loc, window, type.getShape().drop_front(2),
                    outSpatial, op.getCountIncludePad(), type.getElementType());
    Value scaled =
        divideByCounts(rewriter, loc, adaptor.getResultGrad(), counts);
    Value init =
        createFilled(rewriter, loc, type,
                     createFloat(rewriter, loc, type.getElementType(), 0));
    Value result = buildWindowGeneric(
        rewriter, loc, init, kernel,
        [&](OpBuilder &b, Location l, ValueRange idx, ValueRange acc) {
          Tap tap = reverseTap(b, l, window, outSpatial, idx.slice(2, n),
                               idx.slice(2 + n, n));
          SmallVector<Value> at = {idx[0], idx[1]};
          at.append(tap.positions);
          Value sum = b.create<arith::AddFOp>(
              l, acc[0], b.create<tensor::ExtractOp>(l, scaled, at));
          return SmallVector<Value>{
              selectInside(b, l, tap.inside, sum, acc[0])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateConvolutionPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvInputGradLowering, ConvWeightGradLowering,
               MaxPoolLowering, MaxPoolGradLowering, AvgPoolLowering,
               AvgPoolGradLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
