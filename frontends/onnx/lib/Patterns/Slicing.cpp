//===- Slicing.cpp - Slice, Split and Pad ---------------------------------===//
//
// Slice and Split cut boxes out of a tensor: a unit-step box is a
// graph.slice, whose gradient pads back with zeros; other steps are a
// graph.strided_slice, which only constants (mask buffers, shape vectors)
// may take: it folds. Pad is a graph.pad, whose gradient slices.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

namespace {
/// A box with steps: result element j of dimension d reads input element
/// starts[d] + j * steps[d].
struct Box {
  SmallVector<int64_t> starts, steps, sizes;
};
} // namespace

/// The box of a slice that reads all of `type` except along `axes`, where
/// it follows ONNX Slice's clamping rules.
static FailureOr<Box> resolveBox(NodeContext &ctx, RankedTensorType type,
                                 ArrayRef<int64_t> starts,
                                 ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> steps) {
  int64_t rank = type.getRank();
  Box box;
  box.starts.assign(rank, 0);
  box.steps.assign(rank, 1);
  box.sizes.assign(type.getShape().begin(), type.getShape().end());
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.fail(llvm::formatv("starts, ends, axes and steps have {0}, "
                                  "{1}, {2} and {3} entries; they must agree",
                                  starts.size(), ends.size(), axes.size(),
                                  steps.size()));
  FailureOr<SmallVector<int64_t>> normal = ctx.normalizeAxes(axes, rank);
  if (failed(normal))
    return failure();
  for (auto [i, axis] : llvm::enumerate(*normal)) {
    int64_t dim = type.getDimSize(axis), step = steps[i];
    if (step == 0 || step == std::numeric_limits<int64_t>::min())
      return ctx.fail(
          llvm::formatv("step {0} of axis {1} is not supported", step, axis));
    if (dim == 0) {
      box.sizes[axis] = 0;
      continue;
    }
    // Negative positions count from the end; exporters write INT64_MAX or
    // INT64_MIN for "to the end", which the clamps below absorb.
    int64_t start = starts[i], end = ends[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    // Written to not overflow for any step (INT64_MIN is rejected above).
    int64_t size = step > 0 ? (end > start ? (end - start - 1) / step + 1 : 0)
                            : (start > end ? (start - end - 1) / -step + 1 : 0);
    box.starts[axis] = start;
    box.steps[axis] = step;
    box.sizes[axis] = std::max<int64_t>(size, 0);
  }
  return box;
}

/// `value` cut to `box`: a graph.slice (unit steps) or graph.strided_slice;
/// both fold when `value` is a constant.
static FailureOr<Value> cut(NodeContext &ctx, Value value, const Box &box) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  auto resultType = type.clone(box.sizes);
  bool unitSteps = llvm::all_of(box.steps, [](int64_t s) { return s == 1; });
  if (resultType == type && unitSteps)
    return value;
  bool constant = static_cast<bool>(ctx.getConstant(value));
  if (!constant && !unitSteps)
    return ctx.fail(llvm::formatv("{0} of the non-constant {1} with a step "
                                  "other than 1 is not supported yet",
                                  ctx.node.op_type(), type));
  if (!constant && resultType.getNumElements() == 0)
    return ctx.fail(
        llvm::formatv("{0} of {1} is empty", ctx.node.op_type(), type));
  Builder &b = ctx.builder;
  if (unitSteps)
    return ctx.create<graph::SliceOp>(
        {value},
        {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(box.starts)),
         b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(box.sizes))});
  // An empty dimension reads nothing: any in-range offset will do.
  SmallVector<int64_t> starts(box.starts);
  for (size_t d = 0; d < starts.size(); ++d)
    if (box.sizes[d] == 0)
      starts[d] = 0;
  if (resultType.getNumElements() == 0)
    return ctx.createConstant(DenseElementsAttr::get(resultType,
                                                     ArrayRef<Attribute>()));
  return ctx.create<graph::StridedSliceOp>(
      {value}, {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(starts)),
                b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(box.sizes)),
                b.getNamedAttr("strides", b.getDenseI64ArrayAttr(box.steps))});
}

/// `Inputs`: Slice-10 and later take starts, ends, axes and steps as inputs;
/// Slice-1 takes starts, ends and axes as attributes.
template <bool Inputs>
static LogicalResult convertSlice(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(Inputs ? 3 : 1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  SmallVector<int64_t> starts, ends, axes, steps;
  if constexpr (Inputs) {
    auto read = [&](unsigned i, StringRef what,
                    SmallVector<int64_t> &out) -> LogicalResult {
      FailureOr<SmallVector<int64_t>> values =
          ctx.getConstantInts(ctx.getOperand(i), what);
      if (failed(values))
        return failure();
      out = *values;
      return success();
    };
    if (failed(read(1, "starts", starts)) || failed(read(2, "ends", ends)))
      return failure();
    if (ctx.getOperand(3) && failed(read(3, "axes", axes)))
      return failure();
    if (ctx.getOperand(4) && failed(read(4, "steps", steps)))
      return failure();
  } else {
    auto s = ctx.getInts("starts"), e = ctx.getInts("ends");
    if (!s || !e)
      return ctx.fail("needs the 'starts' and 'ends' attributes");
    starts = *s;
    ends = *e;
    if (auto a = ctx.getInts("axes"))
      axes = *a;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  FailureOr<Box> box = resolveBox(ctx, type, starts, ends, axes, steps);
  if (failed(box))
    return failure();
  FailureOr<Value> result = cut(ctx, ctx.getOperand(0), *box);
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// `SizesInput`: where the sizes come from; before opset 13 the `split`
/// attribute, from 13 the optional second input, from 18 also
/// `num_outputs`. Without sizes the axis splits evenly over the outputs.
template <bool SizesInput>
static LogicalResult convertSplit(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  int64_t outputs = ctx.node.output_size();
  SmallVector<int64_t> sizes;
  if constexpr (SizesInput) {
    if (Value split = ctx.getOperand(1)) {
      FailureOr<SmallVector<int64_t>> values =
          ctx.getConstantInts(split, "split");
      if (failed(values))
        return failure();
      sizes = *values;
    }
  } else if (auto split = ctx.getInts("split")) {
    sizes = *split;
  }
  if (sizes.empty()) {
    int64_t parts = ctx.getInt("num_outputs", outputs);
    if (parts <= 0 || parts != outputs)
      return ctx.fail(llvm::formatv("splits into {0} parts but has {1} "
                                    "outputs",
                                    parts, outputs));
    // Split-18: the last part is smaller when the size does not divide.
    int64_t part = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(part, dim - i * part)));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    return ctx.fail(llvm::formatv("has {0} split sizes for {1} outputs",
                                  sizes.size(), outputs));
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
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Box box;
    box.starts.assign(type.getRank(), 0);
    box.steps.assign(type.getRank(), 1);
    box.sizes.assign(type.getShape().begin(), type.getShape().end());
    box.starts[*axis] = offset;
    box.sizes[*axis] = size;
    offset += size;
    FailureOr<Value> part = cut(ctx, ctx.getOperand(0), box);
    if (failed(part))
      return failure();
    results.push_back(*part);
  }
  return success();
}

/// Pad in constant mode. `Inputs`: Pad-11 and later take pads and
/// constant_value as inputs (and from 18 axes); Pad-2 takes attributes.
/// Negative pads crop (a slice first); a non-zero pad value is selected
/// with a constant mask of the input's box.
template <bool Inputs>
static LogicalResult convertPad(NodeContext &ctx,
                                SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(Inputs ? 2 : 1)))
    return failure();
  std::string mode = ctx.getString("mode").value_or("constant");
  if (mode != "constant")
    return ctx.fail("attribute 'mode' is " + pipecc::support::quote(mode) +
                    ", which is not supported (only \"constant\" is)");
  Value input = ctx.getOperand(0);
  RankedTensorType type = ctx.getOperandType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> pads, axes;
  DenseElementsAttr padValue;
  if constexpr (Inputs) {
    FailureOr<SmallVector<int64_t>> given =
        ctx.getConstantInts(ctx.getOperand(1), "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (Value value = ctx.getOperand(2)) {
      padValue = ctx.getConstant(value);
      if (!padValue || padValue.getNumElements() != 1 ||
          padValue.getElementType() != type.getElementType())
        return ctx.fail("input 'constant_value' must be a constant scalar of "
                        "the input's element type");
    }
    if (Value axesInput = ctx.getOperand(3)) {
      FailureOr<SmallVector<int64_t>> values =
          ctx.getConstantInts(axesInput, "axes");
      if (failed(values))
        return failure();
      FailureOr<SmallVector<int64_t>> normal = ctx.normalizeAxes(*values, rank);
      if (failed(normal))
        return failure();
      axes = *normal;
    }
  } else {
    pads = ctx.getInts("pads").value_or(SmallVector<int64_t>());
    float value = ctx.getFloat("value", 0.0f);
    if (value != 0.0f) {
      if (!llvm::isa<FloatType>(type.getElementType()))
        return ctx.fail("attribute 'value' must be 0 for a non-float input");
      padValue = DenseElementsAttr::get(
          RankedTensorType::get({}, type.getElementType()),
          FloatAttr::get(type.getElementType(), value));
    }
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    return ctx.fail(llvm::formatv("has {0} pads for {1} axes; it needs two "
                                  "per axis",
                                  pads.size(), axes.size()));
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    before[axis] = pads[i];
    after[axis] = pads[i + axes.size()];
  }
  // Negative pads remove elements: crop those first.
  Box crop;
  crop.steps.assign(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t start = std::max<int64_t>(0, -before[d]);
    int64_t size = type.getDimSize(d) - start - std::max<int64_t>(0, -after[d]);
    if (size < 0)
      return ctx.fail(llvm::formatv("pads crop dimension {0} of size {1} "
                                    "below zero",
                                    d, type.getDimSize(d)));
    crop.starts.push_back(start);
    crop.sizes.push_back(size);
  }
  FailureOr<Value> cropped = cut(ctx, input, crop);
  if (failed(cropped))
    return failure();
  SmallVector<int64_t> low, shape;
  for (int64_t d = 0; d < rank; ++d) {
    low.push_back(std::max<int64_t>(0, before[d]));
    shape.push_back(crop.sizes[d] + low.back() +
                    std::max<int64_t>(0, after[d]));
  }
  auto resultType = type.clone(shape);
  Builder &b = ctx.builder;
  auto lowAttr = b.getDenseI64ArrayAttr(low);
  FailureOr<Value> padded =
      resultType == llvm::cast<RankedTensorType>(cropped->getType())
          ? *cropped
          : ctx.createTyped<graph::PadOp>(resultType, *cropped, lowAttr);
  if (failed(padded))
    return failure();
  bool zeroValue = !padValue || (*padValue.getValues<Attribute>().begin() ==
                                 b.getZeroAttr(type.getElementType()));
  if (zeroValue || resultType == llvm::cast<RankedTensorType>(
                                     cropped->getType())) {
    results.push_back(*padded);
    return success();
  }
  // The box holds the input, the rest the pad value.
  auto boxType = llvm::cast<RankedTensorType>(cropped->getType())
                     .clone(b.getI1Type());
  FailureOr<Value> box = ctx.createTyped<graph::PadOp>(
      resultType.clone(b.getI1Type()),
      ctx.createConstant(DenseElementsAttr::get(boxType, true)), lowAttr);
  if (failed(box))
    return failure();
  FailureOr<Value> result = ctx.create<graph::WhereOp>(
      {*box, *padded,
       ctx.createConstant(padValue.reshape(
           RankedTensorType::get({}, type.getElementType())))});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateSlicingPatterns(
    PatternRegistry &registry) {
  registry.add("Slice", 1, convertSlice<false>);
  registry.add("Slice", 10, convertSlice<true>);
  registry.add("Split", 2, convertSplit<false>);
  registry.add("Split", 13, convertSplit<true>);
  // Split-18 adds num_outputs, which convertSplit reads.
  registry.add("Split", 18, convertSplit<true>);
  // Pad-11 moved pads and the value to inputs; 18 added axes, 19 the wrap
  // mode (refused like reflect and edge).
  registry.add("Pad", 2, convertPad<false>);
  registry.add("Pad", 11, convertPad<true>);
}
