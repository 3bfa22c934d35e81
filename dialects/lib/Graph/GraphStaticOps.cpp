//===- GraphStaticOps.cpp - Comparisons, logic, casts, concat, scans ------===//
//
// Type rules, verifiers and gradient rules of the ops of shape and mask
// arithmetic (GraphStaticOps.td). Their values on constants come from the
// constant evaluator (GraphEvaluation*.cpp).
//
//===----------------------------------------------------------------------===//

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// Comparisons and logic
//===----------------------------------------------------------------------===//

LogicalResult pipecc::graph::detail::inferPredicateType(
    MLIRContext *context, std::optional<Location> loc, TypeRange operands,
    SmallVectorImpl<Type> &out) {
  SmallVector<int64_t> shape;
  Type elementType;
  for (Type operand : operands) {
    auto type = llvm::cast<RankedTensorType>(operand);
    if (elementType && type.getElementType() != elementType)
      return emitOptionalError(loc, "operand element types differ: ",
                               operands[0], " and ", operand);
    elementType = type.getElementType();
    SmallVector<int64_t> next;
    if (!OpTrait::util::getBroadcastedShape(shape, type.getShape(), next))
      return emitOptionalError(loc, "shapes do not broadcast: ", operands[0],
                               " and ", operand);
    shape = std::move(next);
  }
  out.push_back(RankedTensorType::get(shape, IntegerType::get(context, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// MaximumOp and MinimumOp
//===----------------------------------------------------------------------===//

/// Sums `grad` back to `type` over the dimensions broadcasting stretched.
static Value reduceToType(OpBuilder &b, Location loc, Value grad,
                          RankedTensorType target) {
  auto type = llvm::cast<RankedTensorType>(grad.getType());
  if (type == target)
    return grad;
  int64_t lead = type.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i < lead ||
        (target.getDimSize(i - lead) == 1 && type.getDimSize(i) != 1))
      axes.push_back(i);
  Value reduced = grad;
  if (!axes.empty())
    reduced = b.create<ReduceSumOp>(loc, grad, axes, /*keep_dims=*/false);
  if (reduced.getType() != target)
    reduced = b.create<ReshapeOp>(loc, target, reduced);
  return reduced;
}

/// dy to the operand the extremum selected (`lhs` on ties), zero to the
/// other.
template <typename OpTy, typename CompareOp>
static LogicalResult extremumGradients(OpTy op, OpBuilder &b,
                                       ValueRange resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value dy = resultGrads[0];
  auto type = llvm::cast<RankedTensorType>(dy.getType());
  Value zero = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({}, type.getElementType()),
               b.getFloatAttr(type.getElementType(), 0.0)));
  // lhs is selected where it compares so against rhs (>= for max).
  Value lhsWins = b.create<CompareOp>(loc, op.getLhs(), op.getRhs());
  Value dl = b.create<WhereOp>(loc, lhsWins, dy, zero);
  Value dr = b.create<WhereOp>(loc, lhsWins, zero, dy);
  grads.push_back(reduceToType(b, loc, dl, op.getLhs().getType()));
  grads.push_back(reduceToType(b, loc, dr, op.getRhs().getType()));
  return success();
}

LogicalResult MaximumOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  return extremumGradients<MaximumOp, GreaterEqualOp>(*this, b, resultGrads,
                                                      grads);
}

LogicalResult MinimumOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  return extremumGradients<MinimumOp, LessEqualOp>(*this, b, resultGrads,
                                                   grads);
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("shape changes from ")
           << getInput().getType() << " to " << getType();
  return success();
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  // Only float-to-float casts pass a gradient (rounded back to the input's
  // precision); isDifferentiableOperand already excludes integer inputs.
  if (!llvm::isa<FloatType>(getType().getElementType())) {
    grads.push_back(Value());
    return success();
  }
  grads.push_back(
      b.create<CastOp>(getLoc(), getInput().getType(), resultGrads[0]));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp and StridedSliceOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one input");
  auto first = llvm::cast<RankedTensorType>(inputs[0].getType());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  int64_t rank = first.getRank();
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : inputs) {
    auto type = llvm::cast<RankedTensorType>(input.getType());
    bool compatible = type.getElementType() == first.getElementType() &&
                      type.getRank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d)
      compatible = d == axis || type.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return emitOptionalError(loc, "cannot concatenate ", first, " and ",
                               type, " along axis ", axis);
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  // Each input's gradient is its box of the result's gradient.
  int64_t axis = getAxis(), offset = 0;
  for (Value input : getInputs()) {
    auto type = llvm::cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[axis] = offset;
    offset += type.getDimSize(axis);
    if (!llvm::isa<FloatType>(type.getElementType())) {
      grads.push_back(Value());
      continue;
    }
    grads.push_back(
        b.create<SliceOp>(getLoc(), resultGrads[0], offsets, type.getShape()));
  }
  return success();
}

LogicalResult StridedSliceOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto type = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOptionalError(loc, "expected one offset, size and stride per "
                                  "dimension of a rank-",
                             rank, " tensor");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = type.getDimSize(d), size = sizes[d], stride = strides[d];
    if (stride == 0 || size < 0)
      return emitOptionalError(loc, "dimension ", d, " has stride ", stride,
                               " and size ", size);
    if (size == 0)
      continue;
    // The first and last positions read must lie inside the input.
    int64_t last = offsets[d] + (size - 1) * stride;
    if (offsets[d] < 0 || offsets[d] >= dim || last < 0 || last >= dim)
      return emitOptionalError(loc, "dimension ", d, " reads positions ",
                               offsets[d], " to ", last, " of its size ", dim);
  }
  types.push_back(RankedTensorType::get(sizes, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// CumSumOp and TriluOp
//===----------------------------------------------------------------------===//

LogicalResult CumSumOp::verify() {
  int64_t rank = getType().getRank();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << rank;
  return success();
}

LogicalResult CumSumOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &grads) {
  // y_i = sum_{j <= i} x_j, so dx_j = sum_{i >= j} dy_i: the cumulative sum
  // in the other direction (exclusive stays exclusive).
  grads.push_back(b.create<CumSumOp>(getLoc(), resultGrads[0], getAxisAttr(),
                                     getExclusiveAttr(),
                                     getReverse() ? UnitAttr()
                                                  : b.getUnitAttr()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("needs a tensor of rank 2 or more, got ") << getType();
  return success();
}

LogicalResult TriluOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<TriluOp>(getLoc(), resultGrads[0], getUpperAttr(),
                                    getKAttr()));
  return success();
}
