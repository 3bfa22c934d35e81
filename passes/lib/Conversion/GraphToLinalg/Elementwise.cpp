//===- Elementwise.cpp - Elementwise graph ops to linalg.generic ----------===//
//
// Binary ops broadcast like numpy: each operand reads the iteration space of
// the result through getBroadcastMap, so no broadcast is materialised.
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

using BodyFn = Value (*)(OpBuilder &, Location, ValueRange);

/// A parallel linalg.generic over the result's shape whose operands
/// broadcast into it.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType type,
                       ValueRange inputs, BodyFn body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(getBroadcastMap(cast<RankedTensorType>(input.getType()),
                                   type.getShape(), ctx));
  maps.push_back(AffineMap::getMultiDimIdentityMap(type.getRank(), ctx));
  Value init =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  auto generic = b.create<linalg::GenericOp>(
      loc, type, inputs, init, maps, getIterators(type.getRank()),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

template <typename SourceOp>
struct ElementwiseLowering : OpConversionPattern<SourceOp> {
  ElementwiseLowering(MLIRContext *ctx, BodyFn body)
      : OpConversionPattern<SourceOp>(ctx), body(body) {}

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    rewriter.replaceOp(op, buildElementwise(rewriter, op.getLoc(), type,
                                            adaptor.getOperands(), body));
    return success();
  }

  BodyFn body;
};

struct ConstantLowering : OpConversionPattern<graph::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "value is not a typed attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// Float or integer arithmetic, by the element type (integers are shape
/// and position arithmetic that did not fold).
template <typename FloatOp, typename IntOp>
Value arithmetic(OpBuilder &b, Location loc, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return b.create<FloatOp>(loc, args[0], args[1]);
  return b.create<IntOp>(loc, args[0], args[1]);
}
template <typename MathOp>
Value unary(OpBuilder &b, Location loc, ValueRange args) {
  return b.create<MathOp>(loc, args[0]);
}

Value relu(OpBuilder &b, Location loc, ValueRange args) {
  Value zero = createFloat(b, loc, args[0].getType(), 0.0);
  Value positive =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UGT, args[0], zero);
  return b.create<arith::SelectOp>(loc, positive, args[0], zero);
}

/// dy where x > 0, else 0 (the gradient of relu at 0 is taken as 0).
Value reluGrad(OpBuilder &b, Location loc, ValueRange args) {
  Value zero = createFloat(b, loc, args[0].getType(), 0.0);
  Value positive =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, args[0], zero);
  return b.create<arith::SelectOp>(loc, positive, args[1], zero);
}

Value copy(OpBuilder &, Location, ValueRange args) { return args[0]; }

/// 1 / (1 + exp(-x)): exp(-x) overflows to inf for very negative x, which
/// still gives the right limit 0.
Value sigmoid(OpBuilder &b, Location loc, ValueRange args) {
  Value one = createFloat(b, loc, args[0].getType(), 1.0);
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, args[0]));
  return b.create<arith::DivFOp>(loc, one,
                                 b.create<arith::AddFOp>(loc, one, e));
}

Value select(OpBuilder &b, Location loc, ValueRange args) {
  return b.create<arith::SelectOp>(loc, args[0], args[1], args[2]);
}

} // namespace

void populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering>(ctx);
  patterns.add<ElementwiseLowering<graph::AddOp>>(ctx, arithmetic<arith::AddFOp, arith::AddIOp>);
  patterns.add<ElementwiseLowering<graph::SubOp>>(ctx, arithmetic<arith::SubFOp, arith::SubIOp>);
  patterns.add<ElementwiseLowering<graph::MulOp>>(ctx, arithmetic<arith::MulFOp, arith::MulIOp>);
  patterns.add<ElementwiseLowering<graph::DivOp>>(ctx, arithmetic<arith::DivFOp, arith::DivSIOp>);
  patterns.add<ElementwiseLowering<graph::NegOp>>(ctx, unary<arith::NegFOp>);
  patterns.add<ElementwiseLowering<graph::TanhOp>>(ctx, unary<math::TanhOp>);
  patterns.add<ElementwiseLowering<graph::ExpOp>>(ctx, unary<math::ExpOp>);
  patterns.add<ElementwiseLowering<graph::LogOp>>(ctx, unary<math::LogOp>);
  patterns.add<ElementwiseLowering<graph::ReluOp>>(ctx, relu);
  patterns.add<ElementwiseLowering<graph::ReluGradOp>>(ctx, reluGrad);
  patterns.add<ElementwiseLowering<graph::BroadcastOp>>(ctx, copy);
  patterns.add<ElementwiseLowering<graph::SqrtOp>>(ctx, unary<math::SqrtOp>);
  patterns.add<ElementwiseLowering<graph::ErfOp>>(ctx, unary<math::ErfOp>);
  patterns.add<ElementwiseLowering<graph::WhereOp>>(ctx, select);
  patterns.add<ElementwiseLowering<graph::SigmoidOp>>(ctx, sigmoid);
  patterns.add<ElementwiseLowering<graph::SinOp>>(ctx, unary<math::SinOp>);
  patterns.add<ElementwiseLowering<graph::CosOp>>(ctx, unary<math::CosOp>);
}

} // namespace pipecc::conversion
