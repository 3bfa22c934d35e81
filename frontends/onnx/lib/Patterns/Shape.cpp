//===- Shape.cpp - Reshape, Transpose and the shape sub-graph ops ---------===//
//
// Exporters compute Reshape targets with Shape -> Gather -> Unsqueeze ->
// Concat chains. Shape reads the static type; every other node is a graph
// op that the constant evaluator folds as it is created, so such chains end
// as constants and the same ops on computed tensors stay graph ops.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

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

/// The dense value of a sparse tensor (Constant's `sparse_value`): zeros
/// except at `indices`, given as flat positions ([NNZ]) or coordinates
/// ([NNZ, rank]).
static FailureOr<DenseElementsAttr>
densify(NodeContext &ctx, const onnx::SparseTensorProto &sparse) {
  std::string error;
  DenseElementsAttr values =
      convertTensor(sparse.values(), ctx.getContext(), error);
  if (!values)
    return ctx.fail("attribute 'sparse_value' has values that " + error);
  DenseElementsAttr indices =
      convertTensor(sparse.indices(), ctx.getContext(), error);
  if (!indices || !indices.getElementType().isInteger(64))
    return ctx.fail("attribute 'sparse_value' needs int64 indices");
  SmallVector<int64_t> shape(sparse.dims().begin(), sparse.dims().end());
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && count > (int64_t(1) << 30) / dim))
      return ctx.fail("attribute 'sparse_value' has an invalid shape");
    count *= dim;
  }
  int64_t nnz = values.getNumElements();
  auto positions = llvm::to_vector(indices.getValues<int64_t>());
  bool coordinates = static_cast<int64_t>(positions.size()) ==
                         nnz * static_cast<int64_t>(shape.size()) &&
                     shape.size() > 1;
  if (!coordinates && static_cast<int64_t>(positions.size()) != nnz)
    return ctx.fail("attribute 'sparse_value' has indices that do not "
                    "match its values");
  auto type = RankedTensorType::get(shape, values.getElementType());
  auto elements = llvm::to_vector(values.getValues<Attribute>());
  Attribute zero = ctx.builder.getZeroAttr(values.getElementType());
  SmallVector<Attribute> out(count, zero);
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t flat = 0;
    if (coordinates) {
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t at = positions[i * shape.size() + d];
        if (at < 0 || at >= shape[d])
          return ctx.fail("attribute 'sparse_value' has an index out of "
                          "range");
        flat = flat * shape[d] + at;
      }
    } else {
      flat = positions[i];
    }
    if (flat < 0 || flat >= count)
      return ctx.fail("attribute 'sparse_value' has an index out of range");
    out[flat] = elements[i];
  }
  return DenseElementsAttr::get(type, out);
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
    } else if (name == "sparse_value") {
      FailureOr<DenseElementsAttr> dense = densify(ctx, attr.sparse_tensor());
      if (failed(dense))
        return failure();
      value = *dense;
    } else {
      // value_string(s): pipecc has no string tensors.
      return ctx.fail("attribute " + pipecc::support::quote(name) +
                      " is not supported (value, value_float, value_floats, "
                      "value_int, value_ints and sparse_value are)");
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

/// Gather: a graph.gather, whose gradient scatter-adds (an embedding
/// table); on constants it folds. Constant indices are checked here;
/// data-dependent ones are the runtime's to trust.
static LogicalResult convertGather(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value data = ctx.getOperand(0), indices = ctx.getOperand(1);
  RankedTensorType type = ctx.getOperandType(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  Type indexType = ctx.getOperandType(1).getElementType();
  if (!indexType.isInteger(32) && !indexType.isInteger(64))
    return ctx.fail(llvm::formatv("indices {0} must be int32 or int64",
                                  indices.getType()));
  int64_t size = type.getDimSize(*axis);
  if (DenseElementsAttr constant = ctx.getConstant(indices))
    for (const APInt &index : constant.getValues<APInt>())
      if (index.getSExtValue() < -size || index.getSExtValue() >= size)
        return ctx.fail(llvm::formatv("index {0} is out of range for "
                                      "dimension {1} of size {2}",
                                      index.getSExtValue(), *axis, size));
  return push(ctx.create<graph::GatherOp>(
                  {data, indices},
                  {ctx.builder.getNamedAttr(
                      "axis", ctx.builder.getI64IntegerAttr(*axis))}),
              results);
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
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(*axisAttr, ctx.getOperandType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.getNumOperands(); ++i)
    inputs.push_back(ctx.getOperand(i));
  return push(ctx.create<graph::ConcatOp>(
                  inputs, {ctx.builder.getNamedAttr(
                              "axis", ctx.builder.getI64IntegerAttr(*axis))}),
              results);
}

/// `value` converted to `toType` (the identity when it has that element
/// type already).
static FailureOr<Value> castTo(NodeContext &ctx, Value value, Type toType) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (type.getElementType() == toType)
    return value;
  return ctx.createTyped<graph::CastOp>(type.clone(toType), value);
}

/// Cast-19 adds `saturate`, which only concerns float8 types; pipecc has
/// none, so every Cast since 6 is the same conversion.
static LogicalResult convertCast(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  std::optional<int64_t> to = ctx.getInt("to");
  if (!to)
    return ctx.fail("needs the 'to' attribute");
  Type toType = convertElementType(*to, ctx.getContext());
  if (!toType)
    return ctx.fail("attribute 'to' is " + dataTypeName(*to) +
                    ", which pipecc does not support");
  return push(castTo(ctx, ctx.getOperand(0), toType), results);
}

/// CastLike-15: Cast to the element type of the second input.
static LogicalResult convertCastLike(NodeContext &ctx,
                                     SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  return push(castTo(ctx, ctx.getOperand(0),
                     ctx.getOperandType(1).getElementType()),
              results);
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
  registry.add("CastLike", 15, convertCastLike);
}
