//===- GraphConvolutionOps.cpp - conv and pooling: types, gradients, costs ===//
//
// The CNN ops keep their whole contract here: window arithmetic, type
// inference and verifiers, gradient rules (a conv's input gradient is a
// transposed convolution, its weight gradient a correlation of input and
// result gradient; pools route or spread their gradient over each window)
// and cost estimates.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Graph/GraphWindows.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// Window arithmetic
//===----------------------------------------------------------------------===//

int64_t WindowDim::outputSize(int64_t size, bool ceilMode) const {
  int64_t span = size + padBegin + padEnd - extent();
  if (span < 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // The last window must start inside the input or its leading padding.
  if (ceilMode && (out - 1) * stride >= size + padBegin)
    --out;
  return out;
}

int64_t WindowDim::count(int64_t o, int64_t size, bool includePad) const {
  int64_t begin = includePad ? -padBegin : 0;
  int64_t end = includePad ? size + padEnd : size;
  int64_t taps = 0;
  for (int64_t j = 0; j < kernel; ++j) {
    int64_t position = o * stride - padBegin + j * dilation;
    taps += position >= begin && position < end;
  }
  return taps;
}

FailureOr<SmallVector<WindowDim>>
pipecc::graph::getWindowDims(std::optional<Location> loc, int64_t spatialRank,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                             ArrayRef<int64_t> dilations) {
  auto size = [](ArrayRef<int64_t> values) {
    return static_cast<int64_t>(values.size());
  };
  if (size(kernel) != spatialRank || size(strides) != spatialRank ||
      size(dilations) != spatialRank || size(pads) != 2 * spatialRank)
    return emitOptionalError(loc, "expected ", spatialRank,
                             " kernel sizes, strides and dilations "
                             "and ",
                             2 * spatialRank, " pads for ", spatialRank,
                             " spatial dimensions, got ", kernel.size(), ", ",
                             strides.size(), ", ", dilations.size(), " and ",
                             pads.size());
  SmallVector<WindowDim> dims;
  for (int64_t i = 0; i < spatialRank; ++i) {
    WindowDim dim{kernel[i], strides[i], pads[i], pads[spatialRank + i],
                  dilations[i]};
    if (dim.kernel < 1 || dim.stride < 1 || dim.dilation < 1)
      return emitOptionalError(loc,
                               "kernel size, stride and dilation must be "
                               "positive, got ",
                               dim.kernel, ", ", dim.stride, " and ",
                               dim.dilation, " in spatial dimension ", i);
    if (dim.padBegin < 0 || dim.padEnd < 0)
      return emitOptionalError(loc, "pads must not be negative, got ",
                               dim.padBegin, " and ", dim.padEnd,
                               " in spatial dimension ", i);
    dims.push_back(dim);
  }
  return dims;
}

FailureOr<SmallVector<int64_t>> pipecc::graph::getWindowOutputShape(
    std::optional<Location> loc, ArrayRef<WindowDim> dims,
    ArrayRef<int64_t> spatialShape, bool ceilMode) {
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(dims)) {
    int64_t out = dim.outputSize(spatialShape[i], ceilMode);
    if (out < 1)
      return emitOptionalError(loc, "window of extent ", dim.extent(),
                               " does not fit spatial dimension ", i,
                               " of size ", spatialShape[i], " padded by ",
                               dim.padBegin, " and ", dim.padEnd);
    shape.push_back(out);
  }
  return shape;
}

//===----------------------------------------------------------------------===//
// Convolution types
//===----------------------------------------------------------------------===//

/// The result type of a conv of `input` by `weight`, with a diagnostic at
/// `loc` for every inconsistency.
static FailureOr<RankedTensorType>
inferConvType(std::optional<Location> loc, RankedTensorType input,
              RankedTensorType weight, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
              int64_t group) {
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "element types differ: ", input, " and ",
                             weight);
  int64_t rank = input.getRank();
  if (rank < 3 || weight.getRank() != rank)
    return emitOptionalError(loc,
                             "expected input [N, C, d1..dn] and weight "
                             "[O, C / group, k1..kn] of the same rank >= 3, "
                             "got ",
                             input, " and ", weight);
  int64_t channels = input.getDimSize(1), outChannels = weight.getDimSize(0);
  if (group < 1 || channels % group != 0 || outChannels % group != 0)
    return emitOptionalError(loc, "group ", group, " does not divide the ",
                             channels, " input and ", outChannels,
                             " output channels");
  if (weight.getDimSize(1) != channels / group)
    return emitOptionalError(loc, "weight ", weight, " has ",
                             weight.getDimSize(1),
                             " channels per group, but the input has ",
                             channels, " channels in ", group, " groups");
  FailureOr<SmallVector<WindowDim>> dims = getWindowDims(
      loc, rank - 2, weight.getShape().drop_front(2), strides, pads, dilations);
  if (failed(dims))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial = getWindowOutputShape(
      loc, *dims, input.getShape().drop_front(2), /*ceilMode=*/false);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  shape.append(spatial->begin(), spatial->end());
  return RankedTensorType::get(shape, input.getElementType());
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type =
      inferConvType(loc, cast<RankedTensorType>(adaptor.getInput().getType()),
                    cast<RankedTensorType>(adaptor.getWeight().getType()),
                    adaptor.getStrides(), adaptor.getPads(),
                    adaptor.getDilations(), adaptor.getGroup());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

/// Checks that a conv gradient op's `resultGrad` has the type of the conv
/// of `input` by `weight` that it differentiates.
template <typename OpTy>
static LogicalResult verifyConvGrad(OpTy op, RankedTensorType input,
                                    RankedTensorType weight,
                                    RankedTensorType resultGrad) {
  FailureOr<RankedTensorType> conv =
      inferConvType(op.getLoc(), input, weight, op.getStrides(), op.getPads(),
                    op.getDilations(), op.getGroup());
  if (failed(conv))
    return failure();
  if (*conv != resultGrad)
    return op.emitOpError("result_grad ")
           << resultGrad << " is not the type " << *conv
           << " of the convolution of " << input << " by " << weight;
  return success();
}

LogicalResult ConvInputGradOp::verify() {
  return verifyConvGrad(*this, getType(), getWeight().getType(),
                        getResultGrad().getType());
}

LogicalResult ConvWeightGradOp::verify() {
  return verifyConvGrad(*this, getInput().getType(), getType(),
                        getResultGrad().getType());
}

//===----------------------------------------------------------------------===//
// Pooling types
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType>
inferPoolType(std::optional<Location> loc, RankedTensorType input,
              ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
              ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
              bool ceilMode) {
  int64_t rank = input.getRank();
  if (rank < 3)
    return emitOptionalError(loc,
                             "expected an input [N, C, d1..dn] of rank "
                             ">= 3, got ",
                             input);
  FailureOr<SmallVector<WindowDim>> dims =
      getWindowDims(loc, rank - 2, kernel, strides, pads, dilations);
  if (failed(dims))
    return failure();
  FailureOr<SmallVector<int64_t>> spatial = getWindowOutputShape(
      loc, *dims, input.getShape().drop_front(2), ceilMode);
  if (failed(spatial))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  shape.append(spatial->begin(), spatial->end());
  return RankedTensorType::get(shape, input.getElementType());
}

template <typename OpTy>
static LogicalResult inferPoolResult(std::optional<Location> loc,
                                     typename OpTy::Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> type = inferPoolType(
      loc, cast<RankedTensorType>(adaptor.getInput().getType()),
      adaptor.getKernelShape(), adaptor.getStrides(), adaptor.getPads(),
      adaptor.getDilations(), adaptor.getCeilMode());
  if (failed(type))
    return failure();
  types.push_back(*type);
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPoolResult<MaxPoolOp>(loc, adaptor, types);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferPoolResult<AvgPoolOp>(loc, adaptor, types);
}

/// Checks that a pool gradient op's `resultGrad` has the type of the pool
/// of `input` that it differentiates.
template <typename OpTy>
static LogicalResult verifyPoolGrad(OpTy op, RankedTensorType input,
                                    RankedTensorType resultGrad) {
  FailureOr<RankedTensorType> pooled =
      inferPoolType(op.getLoc(), input, op.getKernelShape(), op.getStrides(),
                    op.getPads(), op.getDilations(), op.getCeilMode());
  if (failed(pooled))
    return failure();
  if (*pooled != resultGrad)
    return op.emitOpError("result_grad ")
           << resultGrad << " is not the type " << *pooled
           << " of the pooling of " << input;
  return success();
}

LogicalResult MaxPoolGradOp::verify() {
  return verifyPoolGrad(*this, getInput().getType(), getResultGrad().getType());
}

LogicalResult AvgPoolGradOp::verify() {
  return verifyPoolGrad(*this, getType(), getResultGrad().getType());
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &grads) {
  Value dy = resultGrads[0];
  grads.push_back(b.create<ConvInputGradOp>(
      getLoc(), getInput().getType(), dy, getWeight(), getStridesAttr(),
      getPadsAttr(), getDilationsAttr(), getGroupAttr()));
  grads.push_back(b.create<ConvWeightGradOp>(
      getLoc(), getWeight().getType(), getInput(), dy, getStridesAttr(),
      getPadsAttr(), getDilationsAttr(), getGroupAttr()));
  return success();
}

LogicalResult MaxPoolOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<MaxPoolGradOp>(
      getLoc(), getInput().getType(), getInput(), resultGrads[0],
      getKernelShapeAttr(), getStridesAttr(), getPadsAttr(), getDilationsAttr(),
      getCeilModeAttr()));
  return success();
}

LogicalResult AvgPoolOp::buildGradients(OpBuilder &b, ValueRange resultGrads,
                                        SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<AvgPoolGradOp>(
      getLoc(), getInput().getType(), resultGrads[0], getKernelShapeAttr(),
      getStridesAttr(), getPadsAttr(), getDilationsAttr(), getCeilModeAttr(),
      getCountIncludePadAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result *= v;
  return result;
}

/// A conv and both its gradients multiply and add once per (output
/// element, input channel of its group, kernel tap).
static OpCost convCost(Operation *op, RankedTensorType output,
                       RankedTensorType weight) {
  OpCost cost = pipecc::graph::detail::elementwiseCost(op, 0, 0);
  cost.flops = 2.0 * static_cast<double>(output.getNumElements()) *
               static_cast<double>(product(weight.getShape().drop_front(1)));
  return cost;
}

OpCost ConvOp::getCost() {
  return convCost(*this, getType(), getWeight().getType());
}
OpCost ConvInputGradOp::getCost() {
  return convCost(*this, getResultGrad().getType(), getWeight().getType());
}
OpCost ConvWeightGradOp::getCost() {
  return convCost(*this, getResultGrad().getType(), getType());
}

/// One comparison or addition per (pooled element, kernel tap), `passes`
/// times, plus `extraPerElement` per pooled element.
static OpCost poolCost(Operation *op, RankedTensorType pooled,
                       ArrayRef<int64_t> kernel, double passes,
                       double extraPerElement) {
  OpCost cost = pipecc::graph::detail::elementwiseCost(op, 0, 0);
  double elements = static_cast<double>(pooled.getNumElements());
  cost.flops = elements * (passes * product(kernel) + extraPerElement);
  return cost;
}

OpCost MaxPoolOp::getCost() {
  return poolCost(*this, getType(), getKernelShape(), 1, 0);
}
// Finding each window's maximum again, then adding into the winners.
OpCost MaxPoolGradOp::getCost() {
  return poolCost(*this, getResultGrad().getType(), getKernelShape(), 2, 0);
}
OpCost AvgPoolOp::getCost() {
  return poolCost(*this, getType(), getKernelShape(), 1, 1);
}
OpCost AvgPoolGradOp::getCost() {
  return poolCost(*this, getResultGrad().getType(), getKernelShape(), 1, 1);
}
