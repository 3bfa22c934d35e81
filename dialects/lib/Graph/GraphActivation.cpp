//===- GraphActivation.cpp - sigmoid, sin, cos, log_softmax ---------------===//
//
// Gradient rules, costs and verifiers of the elementwise functions declared
// in GraphActivationOps.td.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace pipecc::graph;

/// A rank-0 constant of `like`'s element type, broadcast by its users.
static Value scalarLike(OpBuilder &b, Location loc, Value like, double value) {
  auto type = RankedTensorType::get(
      {}, llvm::cast<RankedTensorType>(like.getType()).getElementType());
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, b.getFloatAttr(type.getElementType(), value)));
}

LogicalResult SigmoidOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  // dx = dy * y * (1 - y), from the result.
  Location loc = getLoc();
  Value y = getResult();
  Value oneMinusY = b.create<SubOp>(loc, scalarLike(b, loc, y, 1.0), y);
  Value slope = b.create<MulOp>(loc, y, oneMinusY);
  grads.push_back(b.create<MulOp>(loc, resultGrads[0], slope));
  return success();
}

LogicalResult SinOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  grads.push_back(
      b.create<MulOp>(loc, resultGrads[0], b.create<CosOp>(loc, getInput())));
  return success();
}

LogicalResult CosOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value dySin =
      b.create<MulOp>(loc, resultGrads[0], b.create<SinOp>(loc, getInput()));
  grads.push_back(b.create<NegOp>(loc, dySin));
  return success();
}

LogicalResult LogSoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << rank;
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b,
                                           ValueRange resultGrads,
                                           SmallVectorImpl<Value> &grads) {
  // dx = dy - softmax(x) * sum(dy, axis), with softmax(x) = exp(y).
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value sum = b.create<ReduceSumOp>(loc, dy, ArrayRef<int64_t>{getAxisAttr().getInt()},
                                    /*keep_dims=*/true);
  Value probabilities = b.create<ExpOp>(loc, getResult());
  grads.push_back(b.create<SubOp>(
      loc, dy, b.create<MulOp>(loc, probabilities, sum)));
  return success();
}

// 1 / (1 + exp(-x)): one exp, an addition and a division.
OpCost SigmoidOp::getCost() { return pipecc::graph::detail::elementwiseCost(*this, 2, 1); }
OpCost SinOp::getCost() { return pipecc::graph::detail::elementwiseCost(*this, 0, 1); }
OpCost CosOp::getCost() { return pipecc::graph::detail::elementwiseCost(*this, 0, 1); }
// max, subtract, exp, sum, subtract the log of the sum.
OpCost LogSoftmaxOp::getCost() {
  return pipecc::graph::detail::elementwiseCost(*this, 4, 1);
}
