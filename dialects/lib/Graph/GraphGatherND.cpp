//===- GraphGatherND.cpp - gather_nd and its scatter-add gradient ---------===//
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace pipecc::graph;

/// The shape of gather_nd(data, indices, batchDims), or a diagnostic.
static FailureOr<SmallVector<int64_t>>
gatheredNDShape(std::optional<Location> loc, ArrayRef<int64_t> data,
                ArrayRef<int64_t> indices, int64_t batchDims) {
  int64_t r = data.size(), q = indices.size();
  if (q < 1)
    return emitOptionalError(loc, "indices must have rank 1 or more");
  if (batchDims < 0 || batchDims >= std::min(r, q))
    return emitOptionalError(loc, "batch_dims ", batchDims,
                             " must be less than the ranks of data (", r,
                             ") and indices (", q, ")");
  int64_t k = indices.back();
  if (k < 1 || batchDims + k > r)
    return emitOptionalError(loc, "index tuples of ", k,
                             " entries do not fit data of rank ", r,
                             " with ", batchDims, " batch dimensions");
  for (int64_t d = 0; d < batchDims; ++d)
    if (data[d] != indices[d])
      return emitOptionalError(loc, "batch dimension ", d, " of data (",
                               data[d], ") and indices (", indices[d],
                               ") differ");
  SmallVector<int64_t> shape(indices.drop_back());
  shape.append(data.begin() + batchDims + k, data.end());
  return shape;
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto data = llvm::cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = llvm::cast<RankedTensorType>(adaptor.getIndices().getType());
  FailureOr<SmallVector<int64_t>> shape =
      gatheredNDShape(loc, data.getShape(), indices.getShape(),
                      static_cast<int64_t>(adaptor.getBatchDims()));
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, data.getElementType()));
  return success();
}

LogicalResult GatherNDGradOp::verify() {
  RankedTensorType grad = getResultGrad().getType(), data = getType();
  if (grad.getElementType() != data.getElementType())
    return emitOpError("element types differ: ") << grad << " and " << data;
  FailureOr<SmallVector<int64_t>> shape = gatheredNDShape(
      getLoc(), data.getShape(), getIndices().getType().getShape(),
      getBatchDimsAttr().getInt());
  if (failed(shape))
    return failure();
  if (ArrayRef<int64_t>(*shape) != grad.getShape())
    return emitOpError("result_grad ")
           << grad << " is not the gather_nd of " << data << " by "
           << getIndices().getType();
  return success();
}

LogicalResult GatherNDOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                         SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<GatherNDGradOp>(getLoc(), getData().getType(),
                                           getIndices(), resultGrads[0],
                                           getBatchDimsAttr()));
  grads.push_back(Value()); // integer indices carry no gradient
  return success();
}

// Copies: bytes, no arithmetic.
OpCost GatherNDOp::getCost() {
  return pipecc::graph::detail::elementwiseCost(*this, 0, 0);
}

// One addition per element of the incoming gradient.
OpCost GatherNDGradOp::getCost() {
  OpCost cost = pipecc::graph::detail::elementwiseCost(*this, 0, 0);
  cost.flops = static_cast<double>(getResultGrad().getType().getNumElements());
  return cost;
}
