//===- StaticShape.cpp - Range, CumSum, Trilu, Expand and friends ---------===//
//
// The position and mask arithmetic of exported decoders: Range of static
// bounds, ConstantOfShape, Size, Expand, Flatten, CumSum, Trilu, and
// SplitToSequence read back by SequenceAt. Every node becomes graph ops
// that the constant evaluator folds when their inputs are static; Range,
// whose length depends on its values, exists only as a constant.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "pipecc/Dialect/Graph/GraphEvaluation.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// Fails with a diagnostic when a tensor of `shape` would have more than
/// 2^40 elements (a hostile shape must not overflow element counts).
static LogicalResult checkSize(NodeContext &ctx, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && count > (int64_t(1) << 40) / dim))
      return ctx.fail(llvm::formatv("the shape [{0}] is negative or too "
                                    "large",
                                    llvm::make_range(shape.begin(),
                                                     shape.end())));
    count *= dim;
  }
  return success();
}

/// The one integer a constant scalar (or one-element) input holds.
static FailureOr<int64_t> getConstantScalar(NodeContext &ctx, unsigned i,
                                            StringRef what) {
  FailureOr<SmallVector<int64_t>> values =
      ctx.getConstantInts(ctx.getOperand(i), what);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return ctx.fail(llvm::formatv("input '{0}' must hold one value, not {1}",
                                  what, values->size()));
  return values->front();
}

//===----------------------------------------------------------------------===//
// Range, ConstantOfShape, Size
//===----------------------------------------------------------------------===//

static LogicalResult convertRange(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(3)))
    return failure();
  DenseElementsAttr start = ctx.getConstant(ctx.getOperand(0)),
                    limit = ctx.getConstant(ctx.getOperand(1)),
                    delta = ctx.getConstant(ctx.getOperand(2));
  if (!start || !limit || !delta)
    return ctx.fail("start, limit and delta must be constants (computed from "
                    "constants and static shapes): the result's length "
                    "depends on them");
  std::string error;
  DenseElementsAttr value = graph::evaluateRange(start, limit, delta, error);
  if (!value)
    return ctx.fail(error);
  results.push_back(ctx.createConstant(value));
  return success();
}

static LogicalResult convertConstantOfShape(NodeContext &ctx,
                                            SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      ctx.getConstantInts(ctx.getOperand(0), "input");
  if (failed(shape))
    return failure();
  if (failed(checkSize(ctx, *shape)))
    return failure();
  // The default value is a float 0.
  DenseElementsAttr value = DenseElementsAttr::get(
      RankedTensorType::get({1}, ctx.builder.getF32Type()), 0.0f);
  if (const onnx::AttributeProto *attr = ctx.getAttr("value")) {
    std::string error;
    value = convertTensor(attr->t(), ctx.getContext(), error);
    if (!value)
      return ctx.fail("attribute 'value' " + error);
    if (value.getNumElements() != 1)
      return ctx.fail("attribute 'value' must hold one element");
  }
  auto type = RankedTensorType::get(*shape, value.getElementType());
  results.push_back(ctx.createConstant(
      DenseElementsAttr::get(type, *value.getValues<Attribute>().begin())));
  return success();
}

static LogicalResult convertSize(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  auto type = RankedTensorType::get({}, ctx.builder.getI64Type());
  results.push_back(ctx.createConstant(DenseElementsAttr::get(
      type, ctx.getOperandType(0).getNumElements())));
  return success();
}

//===----------------------------------------------------------------------===//
// Expand, Flatten
//===----------------------------------------------------------------------===//

/// Expand-8: numpy broadcasting of the input and the given shape (either
/// may have the larger dimension); a graph.broadcast, whose gradient sums
/// over the broadcast dimensions.
static LogicalResult convertExpand(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      ctx.getConstantInts(ctx.getOperand(1), "shape");
  if (failed(shape))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  SmallVector<int64_t> resultShape;
  if (!OpTrait::util::getBroadcastedShape(type.getShape(), *shape,
                                          resultShape) ||
      llvm::any_of(resultShape, [](int64_t d) { return d < 0; }))
    return ctx.fail(llvm::formatv("cannot expand {0} to the shape [{1}]",
                                  type,
                                  llvm::make_range(shape->begin(),
                                                   shape->end())));
  if (failed(checkSize(ctx, resultShape)))
    return failure();
  auto resultType = type.clone(resultShape);
  if (resultType == type) {
    results.push_back(ctx.getOperand(0));
    return success();
  }
  return push(
      ctx.createTyped<graph::BroadcastOp>(resultType, ctx.getOperand(0)),
      results);
}

/// Flatten: dimensions before `axis` into the first, the rest into the
/// second; a reshape.
static LogicalResult convertFlatten(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  int64_t rank = type.getRank(), axis = ctx.getInt("axis", 1);
  // Flatten's axis may equal the rank (everything in the first dimension).
  if (axis < -rank || axis > rank)
    return ctx.fail(llvm::formatv("attribute 'axis' {0} is out of range for "
                                  "rank {1}",
                                  axis, rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  return push(ctx.reshape(ctx.getOperand(0), {outer, inner}), results);
}

//===----------------------------------------------------------------------===//
// CumSum, Trilu
//===----------------------------------------------------------------------===//

static LogicalResult convertCumSum(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  FailureOr<int64_t> axis = getConstantScalar(ctx, 1, "axis");
  if (failed(axis))
    return failure();
  FailureOr<int64_t> normal =
      ctx.normalizeAxis(*axis, ctx.getOperandType(0).getRank());
  if (failed(normal))
    return failure();
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("axis", b.getI64IntegerAttr(*normal))};
  for (StringRef flag : {"exclusive", "reverse"}) {
    int64_t value = ctx.getInt(flag, 0);
    if (value != 0 && value != 1)
      return ctx.fail(llvm::formatv("attribute '{0}' is {1}; it must be 0 "
                                    "or 1",
                                    flag, value));
    if (value)
      attrs.push_back(b.getNamedAttr(flag, b.getUnitAttr()));
  }
  return push(ctx.create<graph::CumSumOp>({ctx.getOperand(0)}, attrs),
              results);
}

static LogicalResult convertTrilu(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  int64_t k = 0;
  if (ctx.getOperand(1)) {
    FailureOr<int64_t> given = getConstantScalar(ctx, 1, "k");
    if (failed(given))
      return failure();
    k = *given;
  }
  int64_t upper = ctx.getInt("upper", 1);
  if (upper != 0 && upper != 1)
    return ctx.fail(
        llvm::formatv("attribute 'upper' is {0}; it must be 0 or 1", upper));
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("k", b.getI64IntegerAttr(k))};
  if (upper)
    attrs.push_back(b.getNamedAttr("upper", b.getUnitAttr()));
  return push(ctx.create<graph::TriluOp>({ctx.getOperand(0)}, attrs),
              results);
}

//===----------------------------------------------------------------------===//
// Sequences
//===----------------------------------------------------------------------===//

/// SplitToSequence-11: the parts of a static split, kept by the importer
/// as a sequence (no graph value); `keepdims` 0 without `split` drops the
/// split axis of each size-1 part.
static LogicalResult convertSplitToSequence(NodeContext &ctx,
                                            SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  if (!ctx.sequences)
    return ctx.fail("sequences are not supported here");
  Value input = ctx.getOperand(0);
  RankedTensorType type = ctx.getOperandType(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool dropAxis = false;
  if (Value split = ctx.getOperand(1)) {
    FailureOr<SmallVector<int64_t>> values =
        ctx.getConstantInts(split, "split");
    if (failed(values))
      return failure();
    auto splitType = llvm::cast<RankedTensorType>(split.getType());
    if (splitType.getRank() == 0) {
      // One chunk size: equal parts, the last one smaller.
      int64_t chunk = values->front();
      if (chunk <= 0)
        return ctx.fail(llvm::formatv("split size {0} is not positive",
                                      chunk));
      for (int64_t at = 0; at < dim; at += chunk)
        sizes.push_back(std::min(chunk, dim - at));
    } else {
      sizes = *values;
    }
  } else {
    sizes.assign(dim, 1);
    dropAxis = ctx.getInt("keepdims", 1) == 0;
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return ctx.fail(llvm::formatv("split size {0} is negative", size));
    total += size;
  }
  if (total != dim)
    return ctx.fail(llvm::formatv("split sizes add up to {0}, but dimension "
                                  "{1} has size {2}",
                                  total, *axis, dim));
  SmallVector<Value> parts;
  int64_t offset = 0;
  Builder &b = ctx.builder;
  for (int64_t size : sizes) {
    SmallVector<int64_t> offsets(type.getRank(), 0), shape(type.getShape());
    offsets[*axis] = offset;
    shape[*axis] = size;
    offset += size;
    FailureOr<Value> part =
        ArrayRef<int64_t>(shape) == type.getShape()
            ? FailureOr<Value>(input)
            : ctx.create<graph::SliceOp>(
                  {input},
                  {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(offsets)),
                   b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(shape))});
    if (failed(part))
      return failure();
    if (dropAxis) {
      shape.erase(shape.begin() + *axis);
      part = ctx.reshape(*part, shape);
      if (failed(part))
        return failure();
    }
    parts.push_back(*part);
  }
  (*ctx.sequences)[ctx.node.output(0)] = std::move(parts);
  // The output is a sequence, not a graph value.
  results.push_back(Value());
  return success();
}

/// SequenceAt-11 at a constant position (negative counts from the end).
static LogicalResult convertSequenceAt(NodeContext &ctx,
                                       SmallVectorImpl<Value> &results) {
  if (ctx.getNumOperands() < 2 || !ctx.sequences)
    return ctx.fail("needs a sequence and a position");
  auto found = ctx.sequences->find(ctx.node.input(0));
  if (found == ctx.sequences->end())
    return ctx.fail("input " + pipecc::support::quote(ctx.node.input(0)) +
                    " is not a sequence made by SplitToSequence");
  FailureOr<int64_t> position = getConstantScalar(ctx, 1, "position");
  if (failed(position))
    return failure();
  int64_t count = found->getValue().size();
  if (*position < -count || *position >= count)
    return ctx.fail(llvm::formatv("position {0} is out of range for a "
                                  "sequence of {1} tensors",
                                  *position, count));
  results.push_back(
      found->getValue()[*position < 0 ? *position + count : *position]);
  return success();
}

void pipecc::frontend::detail::populateStaticShapePatterns(
    PatternRegistry &registry) {
  registry.add("Range", 11, convertRange);
  registry.add("ConstantOfShape", 9, convertConstantOfShape);
  registry.add("Size", 1, convertSize);
  registry.add("Expand", 8, convertExpand);
  // Flatten-11 allows a negative axis.
  registry.add("Flatten", 1, convertFlatten);
  // CumSum-14 adds element types only.
  registry.add("CumSum", 11, convertCumSum);
  registry.add("Trilu", 14, convertTrilu);
  registry.add("SplitToSequence", 11, convertSplitToSequence);
  registry.add("SequenceAt", 11, convertSequenceAt);
}
