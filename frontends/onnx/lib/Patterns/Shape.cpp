//===- Shape.cpp - Reshape, Transpose and the shape sub-graph ops ---------===//
//
// Exporters compute Reshape targets with Shape -> Gather -> Unsqueeze ->
// Concat chains. With static shapes every such chain folds to a constant
// here; the ops have no graph counterpart for non-constant data except
// Reshape, Transpose, Identity, (Un)Squeeze and same-type Cast.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/ADT/APSInt.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult push(FailureOr<Value> value,
                          SmallVectorImpl<Value> &results) {
  if (failed(value))
    return failure();
  results.push_back(*value);
  return success();
}

static LogicalResult notSupportedYet(NodeContext &ctx, Value data) {
  return ctx.fail(llvm::formatv("{0} of the non-constant {1} is not "
                                "supported yet (only constant inputs fold)",
                                ctx.node.op_type(), data.getType()));
}

//===----------------------------------------------------------------------===//
// Reshape, Transpose, Identity, Constant
//===----------------------------------------------------------------------===//

/// `AllowZero`: Reshape-14's attribute; a 0 in the shape copies the input's
/// dimension unless it is set.
template <bool AllowZero>
static LogicalResult convertReshape(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  FailureOr<SmallVector<int64_t>> target =
      ctx.getConstantInts(ctx.getOperand(1), "shape");
  if (failed(target))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  bool allowZero = AllowZero && ctx.getInt("allowzero", 0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return ctx.fail(llvm::formatv("shape entry {0} is 0, but the input "
                                      "{1} has no dimension {0}",
                                      i, type));
      dim = type.getDimSize(i);
    } else if (dim == -1) {
      if (inferred >= 0)
        return ctx.fail("the shape has more than one -1");
      inferred = i;
      shape.push_back(1);
      continue;
    } else if (dim < -1) {
      return ctx.fail(llvm::formatv("shape entry {0} is {1}", i, dim));
    }
    if (llvm::MulOverflow(known, dim, known))
      return ctx.fail(llvm::formatv("the shape [{0}] has more than 2^63 "
                                    "elements",
                                    llvm::make_range(target->begin(),
                                                     target->end())));
    shape.push_back(dim);
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known != 0)
      return ctx.fail(llvm::formatv("cannot infer the -1 in the shape: {0} "
                                    "elements do not divide by {1}",
                                    type.getNumElements(), known));
    shape[inferred] = type.getNumElements() / known;
  }
  return push(ctx.reshape(ctx.getOperand(0), shape), results);
}

static LogicalResult convertTranspose(NodeContext &ctx,
                                      SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  int64_t rank = ctx.getOperandType(0).getRank();
  SmallVector<int64_t> perm;
  if (auto given = ctx.getInts("perm"))
    perm = *given;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return push(ctx.create<graph::TransposeOp>(
                  {ctx.getOperand(0)},
                  {ctx.builder.getNamedAttr(
                      "perm", ctx.builder.getDenseI64ArrayAttr(perm))}),
              results);
}

static LogicalResult convertIdentity(NodeContext &ctx,
                                     SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  results.push_back(ctx.getOperand(0));
  return success();
}

/// Dropout in inference mode (or with ratio 0) passes its input through;
/// `Inputs`: Dropout-12 and later take ratio and training_mode as inputs.
template <bool Inputs>
static LogicalResult convertDropout(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  if (ctx.isOutputUsed(1))
    return ctx.fail("the mask output is not supported");
  bool training = false;
  double ratio = ctx.getFloat("ratio", 0.5f);
  if constexpr (Inputs) {
    if (Value mode = ctx.getOperand(2)) {
      DenseElementsAttr value = ctx.getConstant(mode);
      if (!value || value.getNumElements() != 1)
        return ctx.fail("input 'training_mode' must be a constant bool");
      training = !value.getValues<APInt>()[0].isZero();
    }
    ratio = 0.5;
    if (Value given = ctx.getOperand(1)) {
      DenseElementsAttr value = ctx.getConstant(given);
      if (!value || value.getNumElements() != 1 ||
          !llvm::isa<FloatType>(value.getElementType()))
        return ctx.fail("input 'ratio' must be a constant float");
      ratio = value.getValues<APFloat>()[0].convertToDouble();
    }
  }
  if (training && ratio != 0)
    return ctx.fail("Dropout in training mode with a ratio other than 0 is "
                    "not supported (export in inference mode)");
  results.push_back(ctx.getOperand(0));
  return success();
}

static LogicalResult convertConstant(NodeContext &ctx,
                                     SmallVectorImpl<Value> &results) {
  Builder &b = ctx.builder;
  for (const onnx::AttributeProto &attr : ctx.node.attribute()) {
    const std::string &name = attr.name();
    DenseElementsAttr value;
    if (name == "value") {
      std::string error;
      value = convertTensor(attr.t(), ctx.getContext(), error);
      if (!value)
        return ctx.fail("attribute 'value' " + error);
    } else if (name == "value_float") {
      float scalar = attr.f();
      value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                     ArrayRef<float>(scalar));
    } else if (name == "value_floats") {
      SmallVector<float> floats(attr.floats().begin(), attr.floats().end());
      value = DenseElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(floats.size())},
                                b.getF32Type()),
          ArrayRef<float>(floats));
    } else if (name == "value_int") {
      int64_t scalar = attr.i();
      value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                     ArrayRef<int64_t>(scalar));
    } else if (name == "value_ints") {
      SmallVector<int64_t> ints(attr.ints().begin(), attr.ints().end());
      value = DenseElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(ints.size())},
                                b.getI64Type()),
          ArrayRef<int64_t>(ints));
    } else {
      return ctx.fail("attribute " + pipecc::support::quote(name) +
                      " is not supported (value, value_float, value_floats, "
                      "value_int and value_ints are)");
    }
    results.push_back(ctx.createConstant(value));
    return success();
  }
  return ctx.fail("has no value attribute");
}

//===----------------------------------------------------------------------===//
// Shape, Gather, Unsqueeze, Squeeze, Concat, Cast
//===----------------------------------------------------------------------===//

/// `Sliced`: Shape-15's start/end attributes.
template <bool Sliced>
static LogicalResult convertShape(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  ArrayRef<int64_t> dims = ctx.getOperandType(0).getShape();
  int64_t rank = dims.size(), start = 0, end = rank;
  if (Sliced) {
    auto clampIndex = [&](int64_t i) {
      if (i < 0)
        i += rank;
      return std::clamp<int64_t>(i, 0, rank);
    };
    start = clampIndex(ctx.getInt("start", 0));
    end = clampIndex(ctx.getInt("end", rank));
  }
  SmallVector<int64_t> values;
  for (int64_t i = start; i < end; ++i)
    values.push_back(dims[i]);
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    ctx.builder.getI64Type());
  results.push_back(
      ctx.createConstant(DenseElementsAttr::get(type, ArrayRef(values))));
  return success();
}

/// Gather from a tensor the graph computes or trains (an embedding table):
/// a graph.gather, whose gradient scatter-adds. Constant indices are
/// checked here; data-dependent ones are the runtime's to trust.
static LogicalResult convertComputedGather(NodeContext &ctx, int64_t axis,
                                           SmallVectorImpl<Value> &results) {
  Value data = ctx.getOperand(0), indices = ctx.getOperand(1);
  if (!llvm::isa<FloatType>(ctx.getOperandType(0).getElementType()))
    return notSupportedYet(ctx, data);
  Type indexType = ctx.getOperandType(1).getElementType();
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return ctx.fail(llvm::formatv("indices {0} must be int32 or int64",
                                  indices.getType()));
  int64_t size = ctx.getOperandType(0).getDimSize(axis);
  if (DenseElementsAttr constant = ctx.getConstant(indices))
    for (const APInt &index : constant.getValues<APInt>())
      if (index.getSExtValue() < -size || index.getSExtValue() >= size)
        return ctx.fail(llvm::formatv("index {0} is out of range for "
                                      "dimension {1} of size {2}",
                                      index.getSExtValue(), axis, size));
  return push(ctx.create<graph::GatherOp>(
                  {data, indices},
                  {ctx.builder.getNamedAttr(
                      "axis", ctx.builder.getI64IntegerAttr(axis))}),
              results);
}

static LogicalResult convertGather(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  DenseElementsAttr data = ctx.getConstant(ctx.getOperand(0));
  RankedTensorType type = ctx.getOperandType(0);
  ArrayRef<int64_t> dims = type.getShape();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0),
                                              type.getRank());
  if (failed(axis))
    return failure();
  if (!data)
    return convertComputedGather(ctx, *axis, results);
  FailureOr<SmallVector<int64_t>> indices =
      ctx.getConstantInts(ctx.getOperand(1), "indices");
  if (failed(indices))
    return failure();
  int64_t outer = 1, inner = 1, size = dims[*axis];
  for (int64_t d = 0; d < *axis; ++d)
    outer *= dims[d];
  for (int64_t d = *axis + 1; d < type.getRank(); ++d)
    inner *= dims[d];
  for (int64_t &index : *indices) {
    if (index < -size || index >= size)
      return ctx.fail(llvm::formatv("index {0} is out of range for dimension "
                                    "{1} of size {2}",
                                    index, *axis, size));
    if (index < 0)
      index += size;
  }
  auto elements = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : *indices)
      for (int64_t i = 0; i < inner; ++i)
        out.push_back(elements[(o * size + index) * inner + i]);
  SmallVector<int64_t> shape(dims.take_front(*axis));
  auto indexShape = ctx.getOperandType(1).getShape();
  shape.append(indexShape.begin(), indexShape.end());
  shape.append(dims.begin() + *axis + 1, dims.end());
  results.push_back(ctx.createConstant(DenseElementsAttr::get(
      RankedTensorType::get(shape, type.getElementType()), out)));
  return success();
}

/// The axes of (Un)Squeeze: an attribute before opset 13, an (optional for
/// Squeeze) input after.
template <bool AxesInput>
static FailureOr<std::optional<SmallVector<int64_t>>>
getSqueezeAxes(NodeContext &ctx) {
  if (!AxesInput)
    return ctx.getInts("axes");
  Value axes = ctx.getOperand(1);
  if (!axes)
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> values = ctx.getConstantInts(axes, "axes");
  if (failed(values))
    return failure();
  return std::optional<SmallVector<int64_t>>(*values);
}

template <bool AxesInput>
static LogicalResult convertUnsqueeze(NodeContext &ctx,
                                      SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  auto axes = getSqueezeAxes<AxesInput>(ctx);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail("needs axes");
  ArrayRef<int64_t> dims = ctx.getOperandType(0).getShape();
  int64_t rank = dims.size() + (*axes)->size();
  FailureOr<SmallVector<int64_t>> normal = ctx.normalizeAxes(**axes, rank);
  if (failed(normal))
    return failure();
  SmallVector<int64_t> shape;
  const int64_t *next = dims.begin();
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(llvm::is_contained(*normal, d) ? 1 : *next++);
  return push(ctx.reshape(ctx.getOperand(0), shape), results);
}

template <bool AxesInput>
static LogicalResult convertSqueeze(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  auto axes = getSqueezeAxes<AxesInput>(ctx);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> dims = ctx.getOperandType(0).getShape();
  SmallVector<int64_t> squeezed;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> normal =
        ctx.normalizeAxes(**axes, dims.size());
    if (failed(normal))
      return failure();
    squeezed = *normal;
    for (int64_t axis : squeezed)
      if (dims[axis] != 1)
        return ctx.fail(llvm::formatv("cannot squeeze dimension {0} of size "
                                      "{1}",
                                      axis, dims[axis]));
  } else {
    for (auto [d, size] : llvm::enumerate(dims))
      if (size == 1)
        squeezed.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(dims))
    if (!llvm::is_contained(squeezed, static_cast<int64_t>(d)))
      shape.push_back(size);
  return push(ctx.reshape(ctx.getOperand(0), shape), results);
}

static LogicalResult convertConcat(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (ctx.getNumOperands() == 0 || failed(ctx.requireOperands(
                                        ctx.getNumOperands())))
    return ctx.fail("needs inputs");
  std::optional<int64_t> axisAttr = ctx.getInt("axis");
  if (!axisAttr)
    return ctx.fail("needs the 'axis' attribute");
  RankedTensorType first = ctx.getOperandType(0);
  FailureOr<int64_t> axis = ctx.normalizeAxis(*axisAttr, first.getRank());
  if (failed(axis))
    return failure();
  SmallVector<DenseElementsAttr> parts;
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (unsigned i = 0; i < ctx.getNumOperands(); ++i) {
    DenseElementsAttr part = ctx.getConstant(ctx.getOperand(i));
    if (!part)
      return notSupportedYet(ctx, ctx.getOperand(i));
    RankedTensorType type = ctx.getOperandType(i);
    bool compatible = type.getElementType() == first.getElementType() &&
                      type.getRank() == first.getRank();
    for (int64_t d = 0; compatible && d < type.getRank(); ++d)
      compatible = d == *axis || type.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return ctx.fail(llvm::formatv("cannot concatenate {0} and {1} along "
                                    "axis {2}",
                                    first, type, *axis));
    shape[*axis] += type.getDimSize(*axis);
    parts.push_back(part);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= shape[d];
  for (int64_t d = *axis + 1; d < first.getRank(); ++d)
    inner *= shape[d];
  SmallVector<SmallVector<Attribute>> elements;
  for (DenseElementsAttr part : parts)
    elements.push_back(llvm::to_vector(part.getValues<Attribute>()));
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [part, values] : llvm::zip(parts, elements)) {
      int64_t chunk =
          llvm::cast<RankedTensorType>(part.getType()).getDimSize(*axis) *
          inner;
      out.append(values.begin() + o * chunk, values.begin() + (o + 1) * chunk);
    }
  results.push_back(ctx.createConstant(DenseElementsAttr::get(
      RankedTensorType::get(shape, first.getElementType()), out)));
  return success();
}

/// One element converted as ONNX Cast does: floats to integers truncate
/// toward zero, anything to bool is "not zero".
static Attribute castElement(Attribute element, Type to) {
  bool toBool = to.isInteger(1);
  if (auto f = llvm::dyn_cast<FloatAttr>(element)) {
    APFloat value = f.getValue();
    if (auto floatType = llvm::dyn_cast<FloatType>(to)) {
      bool losesInfo;
      value.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      return FloatAttr::get(to, value);
    }
    if (toBool)
      return IntegerAttr::get(to, APInt(1, value.isZero() ? 0 : 1));
    APSInt result(to.getIntOrFloatBitWidth(), /*isUnsigned=*/false);
    bool isExact;
    value.convertToInteger(result, APFloat::rmTowardZero, &isExact);
    return IntegerAttr::get(to, result);
  }
  APInt value = llvm::cast<IntegerAttr>(element).getValue();
  bool fromBool = value.getBitWidth() == 1;
  if (auto floatType = llvm::dyn_cast<FloatType>(to)) {
    APFloat result(floatType.getFloatSemantics());
    result.convertFromAPInt(value, /*IsSigned=*/!fromBool,
                            APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, result);
  }
  if (toBool)
    return IntegerAttr::get(to, APInt(1, value.isZero() ? 0 : 1));
  unsigned width = to.getIntOrFloatBitWidth();
  return IntegerAttr::get(to, fromBool ? value.zextOrTrunc(width)
                                       : value.sextOrTrunc(width));
}

static LogicalResult convertCast(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  std::optional<int64_t> to = ctx.getInt("to");
  if (!to)
    return ctx.fail("needs the 'to' attribute");
  Type toType = convertElementType(*to, ctx.getContext());
  if (!toType)
    return ctx.fail("casts to " + dataTypeName(*to) +
                    ", which pipecc does not support");
  Value input = ctx.getOperand(0);
  RankedTensorType type = ctx.getOperandType(0);
  if (type.getElementType() == toType) {
    results.push_back(input);
    return success();
  }
  DenseElementsAttr data = ctx.getConstant(input);
  if (!data)
    return ctx.fail(llvm::formatv("Cast of the non-constant {0} to {1} is not "
                                  "supported yet",
                                  type, toType));
  SmallVector<Attribute> out;
  for (Attribute element : data.getValues<Attribute>())
    out.push_back(castElement(element, toType));
  results.push_back(ctx.createConstant(
      DenseElementsAttr::get(type.clone(toType), out)));
  return success();
}

void pipecc::frontend::detail::populateShapePatterns(
    PatternRegistry &registry) {
  registry.add("Reshape", 5, convertReshape<false>);
  registry.add("Reshape", 14, convertReshape<true>);
  registry.add("Transpose", 1, convertTranspose);
  registry.add("Identity", 1, convertIdentity);
  // Dropout-7 has no is_test; 12 moved ratio and training_mode to inputs.
  registry.add("Dropout", 7, convertDropout<false>);
  registry.add("Dropout", 12, convertDropout<true>);
  registry.add("Constant", 1, convertConstant);
  registry.add("Shape", 1, convertShape<false>);
  registry.add("Shape", 15, convertShape<true>);
  registry.add("Gather", 1, convertGather);
  registry.add("Unsqueeze", 1, convertUnsqueeze<false>);
  registry.add("Unsqueeze", 13, convertUnsqueeze<true>);
  registry.add("Squeeze", 1, convertSqueeze<false>);
  registry.add("Squeeze", 13, convertSqueeze<true>);
  // Concat-4 made `axis` required; Cast-6 made `to` an integer.
  registry.add("Concat", 4, convertConcat);
  registry.add("Cast", 6, convertCast);
}
