//===- StaticShape.cpp - Comparisons, logic, casts, concat, scans ---------===//
//
// The ops of shape and mask arithmetic that did not fold (their inputs are
// computed): parallel generics over the result, except cumsum, whose
// generic adds the earlier positions along the axis as a reduction loop.
//
//===----------------------------------------------------------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>

using namespace mlir;
namespace graph = pipecc::graph;

namespace pipecc::conversion {
namespace {

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return b.create<arith::ConstantOp>(loc, b.getZeroAttr(type));
}

/// A parallel generic over the result reading each operand through the
/// broadcasting map; `body` maps the operands' elements to the result's.
template <typename SourceOp>
struct BroadcastingLowering : OpConversionPattern<SourceOp> {
  using BodyFn = std::function<Value(OpBuilder &, Location, ValueRange)>;
  BroadcastingLowering(MLIRContext *ctx, BodyFn body)
      : OpConversionPattern<SourceOp>(ctx), body(std::move(body)) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps;
    for (Value input : adaptor.getOperands())
      maps.push_back(getBroadcastMap(cast<RankedTensorType>(input.getType()),
                                     type.getShape(), ctx));
    maps.push_back(AffineMap::getMultiDimIdentityMap(type.getRank(), ctx));
    Value init = rewriter.create<tensor::EmptyOp>(loc(op), type.getShape(),
                                                  type.getElementType());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc(op), type, adaptor.getOperands(), init, maps,
        getIterators(type.getRank()),
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          b.create<linalg::YieldOp>(nloc, body(b, nloc, args));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
  static Location loc(SourceOp op) { return op.getLoc(); }

  BodyFn body;
};

/// A comparison: ordered float predicates (NaN compares false), signed
/// integer ones, unsigned for booleans (true is 1).
std::function<Value(OpBuilder &, Location, ValueRange)>
compare(arith::CmpFPredicate f, arith::CmpIPredicate s,
        arith::CmpIPredicate u) {
  return [=](OpBuilder &b, Location loc, ValueRange args) -> Value {
    Type type = args[0].getType();
    if (isa<FloatType>(type))
      return b.create<arith::CmpFOp>(loc, f, args[0], args[1]);
    return b.create<arith::CmpIOp>(loc, type.isInteger(1) ? u : s, args[0],
                                   args[1]);
  };
}

/// ONNX Cast on one element (see graph.cast).
Value castElement(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    Value zero = zeroOf(b, loc, from);
    if (isa<FloatType>(from))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, zero);
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero);
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? b.create<arith::ExtFOp>(loc, to, x).getResult()
               : b.create<arith::TruncFOp>(loc, to, x).getResult();
  if (toFloat)
    return from.isInteger(1) ? b.create<arith::UIToFPOp>(loc, to, x).getResult()
                             : b.create<arith::SIToFPOp>(loc, to, x).getResult();
  if (fromFloat)
    // fptosi saturates in LLVM's lowering of arith (llvm.fptosi.sat is not
    // used): out-of-range values are undefined in ONNX too.
    return b.create<arith::FPToSIOp>(loc, to, x);
  // Integer to integer.
  if (from.isInteger(1))
    return b.create<arith::ExtUIOp>(loc, to, x);
  return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
             ? b.create<arith::ExtSIOp>(loc, to, x).getResult()
             : b.create<arith::TruncIOp>(loc, to, x).getResult();
}

struct CastLowering : OpConversionPattern<graph::CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    Type to = op.getType().getElementType();
    rewriter.replaceOp(
        op, buildIndexed(rewriter, op.getLoc(), op.getType(),
                         [&](OpBuilder &b, Location loc, ValueRange indices) {
                           return castElement(
                               b, loc,
                               b.create<tensor::ExtractOp>(loc, input,
                                                           indices),
                               to);
                         }));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<graph::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    // Each input goes into its slice of the result: bufferization writes
    // the slices of one buffer (a producer in destination style in place,
    // anything else through a copy loop, see the pipeline's memCpyFn), so
    // the copies run as vector loops, not as selects over clamped reads.
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                    type.getElementType());
    int64_t offset = 0;
    for (Value input : adaptor.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets[axis] = rewriter.getIndexAttr(offset);
      SmallVector<OpFoldResult> sizes;
      for (int64_t size : inputType.getShape())
        sizes.push_back(rewriter.getIndexAttr(size));
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      result = rewriter.create<tensor::InsertSliceOp>(loc, input, result,
                                                      offsets, sizes, strides);
      offset += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TriluLowering : OpConversionPattern<graph::TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), k = op.getK();
    bool upper = op.getUpper();
    rewriter.replaceOp(
        op, buildIndexed(
                rewriter, op.getLoc(), type,
                [&](OpBuilder &b, Location loc, ValueRange indices) {
                  Value element = b.create<tensor::ExtractOp>(loc, input,
                                                              indices);
                  // Kept where c - r >= k (upper) or c - r <= k (lower).
                  Value diagonal = b.create<arith::SubIOp>(
                      loc, indices[rank - 1], indices[rank - 2]);
                  Value kValue = b.create<arith::ConstantIndexOp>(loc, k);
                  Value keep = b.create<arith::CmpIOp>(
                      loc,
                      upper ? arith::CmpIPredicate::sge
                            : arith::CmpIPredicate::sle,
                      diagonal, kValue);
                  return b
                      .create<arith::SelectOp>(
                          loc, keep, element,
                          zeroOf(b, loc, type.getElementType()))
                      .getResult();
                }));
    return success();
  }
};

struct CumSumLowering : OpConversionPattern<graph::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    unsigned rank = type.getRank(), axis = op.getAxis();
    Type elementType = type.getElementType();
    // Loops: the result's dimensions and one more, k, over the positions
    // along `axis` that are summed into position i.
    SmallVector<AffineExpr> inputExprs, outputExprs;
    for (unsigned d = 0; d < rank; ++d) {
      inputExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
      outputExprs.push_back(getAffineDimExpr(d, ctx));
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank + 1, 0, inputExprs, ctx),
        AffineMap::get(rank + 1, 0, outputExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value init = createFilled(rewriter, loc, type,
                              zeroOf(rewriter, loc, elementType));
    arith::CmpIPredicate predicate =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::sgt
                                             : arith::CmpIPredicate::sge)
                        : (op.getExclusive() ? arith::CmpIPredicate::slt
                                             : arith::CmpIPredicate::sle);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{adaptor.getInput()}, init, maps, iterators,
        [&](OpBuilder &b, Location nloc, ValueRange args) {
          Value i = b.create<linalg::IndexOp>(nloc, axis);
          Value k = b.create<linalg::IndexOp>(nloc, rank);
          Value counted = b.create<arith::CmpIOp>(nloc, predicate, k, i);
          Value sum =
              isa<FloatType>(elementType)
                  ? b.create<arith::AddFOp>(nloc, args[1], args[0]).getResult()
                  : b.create<arith::AddIOp>(nloc, args[1], args[0]).getResult();
          b.create<linalg::YieldOp>(
              nloc, b.create<arith::SelectOp>(nloc, counted, sum, args[1])
                        .getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateStaticShapePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  using F = arith::CmpFPredicate;
  using I = arith::CmpIPredicate;
  patterns.add<BroadcastingLowering<graph::EqualOp>>(
      ctx, compare(F::OEQ, I::eq, I::eq));
  patterns.add<BroadcastingLowering<graph::LessOp>>(
      ctx, compare(F::OLT, I::slt, I::ult));
  patterns.add<BroadcastingLowering<graph::LessEqualOp>>(
      ctx, compare(F::OLE, I::sle, I::ule));
  patterns.add<BroadcastingLowering<graph::GreaterOp>>(
      ctx, compare(F::OGT, I::sgt, I::ugt));
  patterns.add<BroadcastingLowering<graph::GreaterEqualOp>>(
      ctx, compare(F::OGE, I::sge, I::uge));
  patterns.add<BroadcastingLowering<graph::NotOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        Value one = b.create<arith::ConstantOp>(loc, b.getBoolAttr(true));
        return b.create<arith::XOrIOp>(loc, args[0], one);
      });
  patterns.add<BroadcastingLowering<graph::AndOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return b.create<arith::AndIOp>(loc, args[0], args[1]);
      });
  patterns.add<BroadcastingLowering<graph::OrOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return b.create<arith::OrIOp>(loc, args[0], args[1]);
      });
  patterns.add<BroadcastingLowering<graph::IsNaNOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO,
                                       args[0], args[0]);
      });
  patterns.add<BroadcastingLowering<graph::MaximumOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return b.create<arith::MaximumFOp>(loc, args[0], args[1]);
        return b.create<arith::MaxSIOp>(loc, args[0], args[1]);
      });
  patterns.add<BroadcastingLowering<graph::MinimumOp>>(
      ctx, [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        if (isa<FloatType>(args[0].getType()))
          return b.create<arith::MinimumFOp>(loc, args[0], args[1]);
        return b.create<arith::MinSIOp>(loc, args[0], args[1]);
      });
  patterns.add<CastLowering, ConcatLowering, TriluLowering, CumSumLowering>(
      ctx);
}

} // namespace pipecc::conversion
