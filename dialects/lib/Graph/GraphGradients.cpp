// Reverse-mode gradient rules of the graph ops (GradientOpInterface). Each
// rule builds operand gradients from result gradients with graph ops; the
// autodiff pass decides which rules run and accumulates the results.
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace pipecc::graph;

namespace {

RankedTensorType tensorType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

/// A scalar constant of `like`'s element type, broadcast by its users.
Value scalar(OpBuilder &b, Location loc, Value like, double value) {
  auto type = RankedTensorType::get({}, tensorType(like).getElementType());
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               type, b.getFloatAttr(type.getElementType(), value)));
}

/// Sums a gradient of a broadcast result back to the shape of the operand
/// that was broadcast: over the leading dimensions the operand lacks and
/// over its size-1 dimensions that were stretched.
Value reduceToType(OpBuilder &b, Location loc, Value grad,
                   RankedTensorType target) {
  RankedTensorType type = tensorType(grad);
  if (type == target)
    return grad;
  int64_t lead = type.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i < lead || (target.getDimSize(i - lead) == 1 &&
                     type.getDimSize(i) != 1))
      axes.push_back(i);
  Value reduced = grad;
  if (!axes.empty())
    reduced = b.create<ReduceSumOp>(loc, grad, axes, /*keep_dims=*/false);
  if (tensorType(reduced) != target)
    reduced = b.create<ReshapeOp>(loc, target, reduced);
  return reduced;
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value dy = resultGrads[0];
  grads.push_back(reduceToType(b, getLoc(), dy, getLhs().getType()));
  grads.push_back(reduceToType(b, getLoc(), dy, getRhs().getType()));
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value dy = resultGrads[0];
  grads.push_back(reduceToType(b, getLoc(), dy, getLhs().getType()));
  Value negated = b.create<NegOp>(getLoc(), dy);
  grads.push_back(reduceToType(b, getLoc(), negated, getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  Value dy = resultGrads[0];
  Value dl = b.create<MulOp>(getLoc(), dy, getRhs());
  Value dr = b.create<MulOp>(getLoc(), dy, getLhs());
  grads.push_back(reduceToType(b, getLoc(), dl, getLhs().getType()));
  grads.push_back(reduceToType(b, getLoc(), dr, getRhs().getType()));
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  // y = l / r: dl = dy / r, dr = -dy * y / r.
  Value dy = resultGrads[0];
  Value dl = b.create<DivOp>(getLoc(), dy, getRhs());
  Value dyY = b.create<MulOp>(getLoc(), dy, getResult());
  Value dr = b.create<NegOp>(getLoc(),
                             b.create<DivOp>(getLoc(), dyY, getRhs()));
  grads.push_back(reduceToType(b, getLoc(), dl, getLhs().getType()));
  grads.push_back(reduceToType(b, getLoc(), dr, getRhs().getType()));
  return success();
}

LogicalResult ReluOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  // relu(x) > 0 exactly where x > 0: masking by the result keeps only the
  // result alive for the backward pass, which the next op usually keeps too.
  grads.push_back(b.create<ReluGradOp>(getLoc(), getResult(), resultGrads[0]));
  return success();
}

LogicalResult NegOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<NegOp>(getLoc(), resultGrads[0]));
  return success();
}

LogicalResult TanhOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  // dx = dy * (1 - y^2)
  Value y = getResult();
  Value ySquared = b.create<MulOp>(getLoc(), y, y);
  Value slope = b.create<SubOp>(getLoc(), scalar(b, getLoc(), y, 1.0),
                                ySquared);
  grads.push_back(b.create<MulOp>(getLoc(), resultGrads[0], slope));
  return success();
}

LogicalResult ExpOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<MulOp>(getLoc(), resultGrads[0], getResult()));
  return success();
}

LogicalResult LogOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<DivOp>(getLoc(), resultGrads[0], getInput()));
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  // With op(X) the optionally transposed X and Y = op(A) op(B):
  //   dop(A) = dY op(B)^T and dop(B) = op(A)^T dY, transposed back where
  //   the operand was transposed; each is one matmul with transpose flags.
  Value a = getLhs(), bb = getRhs(), dy = resultGrads[0];
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Location loc = getLoc();
  auto matmul = [&](Value l, Value r, bool tl, bool tr) -> Value {
    return b.create<MatMulOp>(loc, l, r, tl, tr);
  };
  // x @ W with a batched x: W's gradient sums op(A)^T dY over the batch.
  // One matmul over the flattened rows ([rows, K]^T [rows, N]) does the
  // sum inside BLAS, instead of a batch of products and a reduction.
  bool flatRows = !ta && tensorType(a).getRank() > 2 &&
                  tensorType(bb).getRank() == 2;
  auto flatten = [&](Value value) -> Value {
    RankedTensorType type = tensorType(value);
    int64_t columns = type.getDimSize(type.getRank() - 1);
    return b.create<ReshapeOp>(
        loc,
        RankedTensorType::get({type.getNumElements() / columns, columns},
                              type.getElementType()),
        value);
  };
  Value da, db;
  if (!ta && !tb) {
    da = matmul(dy, bb, false, true);
    db = flatRows ? matmul(flatten(a), flatten(dy), true, false)
                  : matmul(a, dy, true, false);
  } else if (!ta && tb) {
    da = matmul(dy, bb, false, false);
    db = flatRows ? matmul(flatten(dy), flatten(a), true, false)
                  : matmul(dy, a, true, false);
  } else if (ta && !tb) {
    da = matmul(bb, dy, false, true);
    db = matmul(a, dy, false, false);
  } else {
    da = matmul(bb, dy, true, true);
    db = matmul(dy, a, true, true);
  }
  grads.push_back(reduceToType(b, loc, da, getLhs().getType()));
  grads.push_back(reduceToType(b, loc, db, getRhs().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and data movement
//===----------------------------------------------------------------------===//

/// Broadcasts the gradient of a reduction back over the reduced axes.
static Value expandReduced(OpBuilder &b, Location loc, Value dy,
                           RankedTensorType inputType, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(inputType.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  auto keptType = RankedTensorType::get(kept, inputType.getElementType());
  if (tensorType(dy) != keptType)
    dy = b.create<ReshapeOp>(loc, keptType, dy);
  if (keptType == inputType)
    return dy;
  return b.create<BroadcastOp>(loc, inputType, dy);
}

LogicalResult ReduceSumOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads,
                                          SmallVectorImpl<Value> &grads) {
  grads.push_back(expandReduced(b, getLoc(), resultGrads[0],
                                getInput().getType(), getAxes()));
  return success();
}

LogicalResult ReduceMeanOp::buildGradients(OpBuilder &b,
                                           ValueRange resultGrads,
                                           SmallVectorImpl<Value> &grads) {
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= getInput().getType().getDimSize(axis);
  Value scaled = b.create<MulOp>(getLoc(), resultGrads[0],
                                 scalar(b, getLoc(), getInput(), 1.0 / count));
  grads.push_back(expandReduced(b, getLoc(), scaled, getInput().getType(),
                                getAxes()));
  return success();
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(
      b.create<ReshapeOp>(getLoc(), getInput().getType(), resultGrads[0]));
  return success();
}

LogicalResult TransposeOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads,
                                          SmallVectorImpl<Value> &grads) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [index, axis] : llvm::enumerate(perm))
    inverse[axis] = index;
  grads.push_back(b.create<TransposeOp>(getLoc(), resultGrads[0], inverse));
  return success();
}

LogicalResult BroadcastOp::buildGradients(OpBuilder &b,
                                          ValueRange resultGrads,
                                          SmallVectorImpl<Value> &grads) {
  grads.push_back(
      reduceToType(b, getLoc(), resultGrads[0], getInput().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  // dx = y * (dy - sum(dy * y, axis))
  Value y = getResult(), dy = resultGrads[0];
  Value product = b.create<MulOp>(getLoc(), dy, y);
  int64_t axis = getAxisAttr().getInt();
  Value sum = b.create<ReduceSumOp>(getLoc(), product,
                                    ArrayRef<int64_t>{axis},
                                    /*keep_dims=*/true);
  Value centered = b.create<SubOp>(getLoc(), dy, sum);
  grads.push_back(b.create<MulOp>(getLoc(), y, centered));
  return success();
}

LogicalResult CrossEntropyOp::buildGradients(OpBuilder &b,
                                             ValueRange resultGrads,
                                             SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<CrossEntropyGradOp>(
      getLoc(), getLogits().getType(), getLogits(), getLabels(),
      resultGrads[0], getIgnoreIndexAttr()));
  grads.push_back(Value()); // integer labels carry no gradient
  return success();
}

LogicalResult MSELossOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  // d/dp mean((p - t)^2) = 2 (p - t) / N, scaled by the loss gradient.
  int64_t count = getPrediction().getType().getNumElements();
  Value diff = b.create<SubOp>(getLoc(), getPrediction(), getTarget());
  Value scale = b.create<MulOp>(
      getLoc(), resultGrads[0],
      scalar(b, getLoc(), getPrediction(), 2.0 / count));
  Value dp = b.create<MulOp>(getLoc(), diff, scale);
  grads.push_back(dp);
  grads.push_back(b.create<NegOp>(getLoc(), dp));
  return success();
}

//===----------------------------------------------------------------------===//
// Square root, erf, selection, slicing and gathers
//===----------------------------------------------------------------------===//

LogicalResult SqrtOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  // dx = dy / (2 sqrt(x)), from the result that is already computed.
  Value y = getResult();
  Value twiceY = b.create<MulOp>(getLoc(), y, scalar(b, getLoc(), y, 2.0));
  grads.push_back(b.create<DivOp>(getLoc(), resultGrads[0], twiceY));
  return success();
}

LogicalResult ErfOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  // dx = dy * 2/sqrt(pi) * exp(-x^2)
  Location loc = getLoc();
  Value x = getInput();
  Value negSquare = b.create<NegOp>(loc, b.create<MulOp>(loc, x, x));
  Value slope = b.create<MulOp>(
      loc, b.create<ExpOp>(loc, negSquare),
      scalar(b, loc, x, 1.1283791670955126)); // 2 / sqrt(pi)
  grads.push_back(b.create<MulOp>(loc, resultGrads[0], slope));
  return success();
}

/// `condition` recomputed at the builder's point when it is a boolean
/// function (comparisons, is_nan, not, and, or) of non-boolean values, as
/// `where(is_nan(p), 0, p)` in exported attention: the backward then reads
/// the float operands, not a boolean tensor (the CPU runtime keeps no
/// boolean buffers between a stage's forward and backward).
static Value recomputeCondition(OpBuilder &b, Value condition,
                                unsigned depth = 0) {
  Operation *def = condition.getDefiningOp();
  if (!def || depth > 8 ||
      !llvm::isa<EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
                 IsNaNOp, NotOp, AndOp, OrOp>(def))
    return condition;
  IRMapping mapping;
  for (Value operand : def->getOperands())
    if (operand.getType() == condition.getType() ||
        llvm::cast<RankedTensorType>(operand.getType())
            .getElementType()
            .isInteger(1))
      mapping.map(operand, recomputeCondition(b, operand, depth + 1));
  Operation *copy = b.clone(*def, mapping);
  // The forward op's annotations (its identity for the partition) are its
  // own; the copy keeps only what the builder gave it.
  for (NamedAttribute attr : def->getDiscardableAttrs())
    if (copy->getDiscardableAttr(attr.getName()) == attr.getValue())
      copy->removeDiscardableAttr(attr.getName());
  return copy->getResult(0);
}

LogicalResult WhereOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &grads) {
  // Each value operand receives dy where it was selected, zero elsewhere.
  Location loc = getLoc();
  Value dy = resultGrads[0];
  Value zero = scalar(b, loc, dy, 0.0);
  Value condition = recomputeCondition(b, getCondition());
  Value dl = b.create<WhereOp>(loc, condition, dy, zero);
  Value dr = b.create<WhereOp>(loc, condition, zero, dy);
  grads.push_back(Value()); // the condition is boolean
  grads.push_back(reduceToType(b, loc, dl, getLhs().getType()));
  grads.push_back(reduceToType(b, loc, dr, getRhs().getType()));
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<PadOp>(getLoc(), getInput().getType(),
                                  resultGrads[0], getOffsets()));
  return success();
}

LogicalResult PadOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SliceOp>(getLoc(), resultGrads[0], getLow(),
                                    getInput().getType().getShape()));
  return success();
}

LogicalResult GatherOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<GatherGradOp>(getLoc(), getData().getType(),
                                         getIndices(), resultGrads[0],
                                         getAxis()));
  grads.push_back(Value()); // integer indices carry no gradient
  return success();
}
