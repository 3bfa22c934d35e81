//===- GraphNormalization.cpp - layer_norm and rms_norm -------------------===//
//
// Type rules, verifiers, gradient rules and costs of the fused
// normalisations, and the row-operand helpers the importer and the fusion
// pass share (Normalization.h).
//
// Gradients: the input's gradient is one fused op (layer_norm_grad,
// rms_norm_grad) that recomputes the row statistics from the input instead
// of keeping them alive from the forward pass. The scale's gradient is
// sum over rows of dy * xhat, with xhat recomputed by the same norm without
// scale; the bias's is the sum over rows of dy. Those two only reach
// parameters, so a split backward pass runs them in its weight step.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/Normalization.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// Row operands
//===----------------------------------------------------------------------===//

SmallVector<int64_t> pipecc::graph::getRowShape(RankedTensorType input,
                                                int64_t axis) {
  return SmallVector<int64_t>(input.getShape().drop_front(axis));
}

bool pipecc::graph::isRowOperand(Value value, RankedTensorType input,
                                 int64_t axis) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getElementType() != input.getElementType() ||
      type.getRank() > input.getRank())
    return false;
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(type.getShape(), input.getShape(),
                                          shape) ||
      ArrayRef<int64_t>(shape) != input.getShape())
    return false;
  // Dimensions aligned with the leading (per-row) dimensions must be 1.
  int64_t lead = input.getRank() - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d + lead < axis && type.getDimSize(d) != 1)
      return false;
  return true;
}

Value pipecc::graph::buildRowOperand(OpBuilder &b, Location loc, Value value,
                                     RankedTensorType input, int64_t axis) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> row = getRowShape(input, axis);
  int64_t rowRank = row.size();
  // The trailing rowRank dimensions of `value`, padded with leading 1s.
  SmallVector<int64_t> trailing(rowRank, 1);
  for (int64_t d = 0; d < rowRank && d < type.getRank(); ++d)
    trailing[rowRank - 1 - d] = type.getDimSize(type.getRank() - 1 - d);
  auto trailingType = RankedTensorType::get(trailing, type.getElementType());
  if (trailingType != type)
    value = b.create<ReshapeOp>(loc, trailingType, value);
  auto rowType = RankedTensorType::get(row, type.getElementType());
  if (trailingType != rowType)
    value = b.create<BroadcastOp>(loc, rowType, value);
  return value;
}

//===----------------------------------------------------------------------===//
// Type rules and verifiers
//===----------------------------------------------------------------------===//

/// The checks every norm op shares: `axis` in range, `epsilon` a
/// non-negative number, each present row operand of the row's type.
static LogicalResult verifyNorm(Operation *op, RankedTensorType input,
                                int64_t axis, double epsilon,
                                ValueRange rowOperands,
                                ArrayRef<StringRef> names) {
  if (axis < 0 || axis >= input.getRank())
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << input.getRank();
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return op->emitOpError("epsilon ") << epsilon << " is not a finite "
                                                     "non-negative number";
  auto rowType =
      RankedTensorType::get(getRowShape(input, axis), input.getElementType());
  for (auto [value, name] : llvm::zip(rowOperands, names))
    if (value && value.getType() != rowType)
      return op->emitOpError() << name << " " << value.getType()
                               << " is not of the row type " << rowType;
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput().getType(), getAxis(),
                    getEpsilon().convertToDouble(),
                    ValueRange{getScale(), getBias()}, {"scale", "bias"});
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput().getType(), getAxis(),
                    getEpsilon().convertToDouble(), ValueRange{getScale()},
                    {"scale"});
}

LogicalResult LayerNormGradOp::verify() {
  return verifyNorm(*this, getInput().getType(), getAxis(),
                    getEpsilon().convertToDouble(), ValueRange{getScale()},
                    {"scale"});
}

LogicalResult RmsNormGradOp::verify() {
  return verifyNorm(*this, getInput().getType(), getAxis(),
                    getEpsilon().convertToDouble(), ValueRange{getScale()},
                    {"scale"});
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

/// `value` summed over the leading (per-row) dimensions `[0, axis)`: the
/// gradient of a row operand from a gradient of the input's shape.
static Value sumOverRows(OpBuilder &b, Location loc, Value value,
                         int64_t axis) {
  if (axis == 0)
    return value;
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < axis; ++d)
    axes.push_back(d);
  return b.create<ReduceSumOp>(loc, value, axes, /*keep_dims=*/false);
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                          SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value x = getInput(), dy = resultGrads[0];
  grads.push_back(b.create<LayerNormGradOp>(loc, x.getType(), x, dy,
                                            getScale(), getAxisAttr(),
                                            getEpsilonAttr()));
  if (getScale()) {
    Value xhat = b.create<LayerNormOp>(loc, x.getType(), x, Value(), Value(),
                                       getAxisAttr(), getEpsilonAttr());
    grads.push_back(
        sumOverRows(b, loc, b.create<MulOp>(loc, dy, xhat), getAxis()));
  }
  if (getBias())
    grads.push_back(sumOverRows(b, loc, dy, getAxis()));
  return success();
}

LogicalResult RmsNormOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  Location loc = getLoc();
  Value x = getInput(), dy = resultGrads[0];
  grads.push_back(b.create<RmsNormGradOp>(loc, x.getType(), x, dy, getScale(),
                                          getAxisAttr(), getEpsilonAttr()));
  if (getScale()) {
    Value xhat = b.create<RmsNormOp>(loc, x.getType(), x, Value(),
                                     getAxisAttr(), getEpsilonAttr());
    grads.push_back(
        sumOverRows(b, loc, b.create<MulOp>(loc, dy, xhat), getAxis()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

/// Elementwise flops per element, plus one square root per row.
static OpCost normCost(Operation *op, RankedTensorType input, int64_t axis,
                       double flopsPerElement) {
  OpCost cost = pipecc::graph::detail::elementwiseCost(op, flopsPerElement, 0);
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d)
    rows *= input.getDimSize(d);
  cost.transcendentals = rows;
  return cost;
}

// Statistics (shift, add, square, add), then centre, scale by 1/std and
// apply scale and bias.
OpCost LayerNormOp::getCost() {
  return normCost(*this, getInput().getType(), getAxis(), 8);
}
// Square and add, then two multiplications.
OpCost RmsNormOp::getCost() {
  return normCost(*this, getInput().getType(), getAxis(), 4);
}
// Statistics and the two row sums of g and g * xhat, then the combination.
OpCost LayerNormGradOp::getCost() {
  return normCost(*this, getInput().getType(), getAxis(), 14);
}
OpCost RmsNormGradOp::getCost() {
  return normCost(*this, getInput().getType(), getAxis(), 9);
}
