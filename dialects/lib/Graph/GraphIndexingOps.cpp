//===- GraphIndexingOps.cpp - where, slice, pad, gather: type rules -------===//
//
// Type inference and verifiers of the ops that select, cut out and look up
// elements. Their shapes follow from attributes and operand shapes only, so
// every inconsistency is reported here, before any lowering runs.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  SmallVector<Type, 1> values;
  if (failed(detail::inferBroadcastType(loc, adaptor.getLhs().getType(),
                                        adaptor.getRhs().getType(), values)))
    return failure();
  auto valueType = llvm::cast<RankedTensorType>(values[0]);
  auto condition =
      llvm::cast<RankedTensorType>(adaptor.getCondition().getType());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(condition.getShape(),
                                          valueType.getShape(), shape))
    return emitOptionalError(loc, "condition ", condition,
                             " does not broadcast with ", valueType);
  types.push_back(RankedTensorType::get(shape, valueType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp and PadOp
//===----------------------------------------------------------------------===//

/// Checks that a box of `sizes` at `offsets` lies inside `outer`.
static LogicalResult verifyBox(std::optional<Location> loc,
                               ArrayRef<int64_t> outer,
                               ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> sizes) {
  if (offsets.size() != outer.size() || sizes.size() != outer.size())
    return emitOptionalError(loc,
                             "expected one offset and size per "
                             "dimension of a rank-",
                             outer.size(), " tensor, got ", offsets.size(),
                             " offsets and ", sizes.size(), " sizes");
  for (size_t d = 0; d < outer.size(); ++d)
    if (offsets[d] < 0 || sizes[d] < 0 || offsets[d] + sizes[d] > outer[d])
      return emitOptionalError(loc, "box [", offsets[d], ", ",
                               offsets[d] + sizes[d], ") of dimension ", d,
                               " is outside its size ", outer[d]);
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto type = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(verifyBox(loc, type.getShape(), adaptor.getOffsets(),
                       adaptor.getSizes())))
    return failure();
  types.push_back(
      RankedTensorType::get(adaptor.getSizes(), type.getElementType()));
  return success();
}

LogicalResult PadOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ")
           << in.getElementType() << " to " << out.getElementType();
  return verifyBox(getLoc(), out.getShape(), getLow(), in.getShape());
}

//===----------------------------------------------------------------------===//
// GatherOp and GatherGradOp
//===----------------------------------------------------------------------===//

/// `data`'s shape with dimension `axis` replaced by `indices`' shape.
static FailureOr<SmallVector<int64_t>>
gatheredShape(std::optional<Location> loc, ArrayRef<int64_t> data,
              ArrayRef<int64_t> indices, int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()))
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             data.size());
  SmallVector<int64_t> shape(data.take_front(axis));
  shape.append(indices.begin(), indices.end());
  shape.append(data.begin() + axis + 1, data.end());
  return shape;
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto data = llvm::cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = llvm::cast<RankedTensorType>(adaptor.getIndices().getType());
  FailureOr<SmallVector<int64_t>> shape = gatheredShape(
      loc, data.getShape(), indices.getShape(), adaptor.getAxis());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, data.getElementType()));
  return success();
}

LogicalResult GatherGradOp::verify() {
  RankedTensorType grad = getResultGrad().getType(), data = getType();
  if (grad.getElementType() != data.getElementType())
    return emitOpError("element types differ: ") << grad << " and " << data;
  FailureOr<SmallVector<int64_t>> shape = gatheredShape(
      getLoc(), data.getShape(), getIndices().getType().getShape(), getAxis());
  if (failed(shape))
    return failure();
  if (ArrayRef<int64_t>(*shape) != grad.getShape())
    return emitOpError("result_grad ")
           << grad << " is not the gather of " << data << " by "
           << getIndices().getType();
  return success();
}
