//===- Convolution.cpp - Conv and the pools -------------------------------===//
//
// Conv, MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on
// channels-first tensors with any number of spatial dimensions. The window
// attributes (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode)
// become the graph ops' explicit pads and sizes here, so the ops never see
// auto_pad. Conv's bias is a broadcast graph.add.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

namespace {

/// The window attributes of a node, defaults applied, auto_pad resolved.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode = false;
};

std::string formatInts(ArrayRef<int64_t> values) {
  return "[" +
         llvm::join(llvm::map_range(
                        values, [](int64_t v) { return std::to_string(v); }),
                    ", ") +
         "]";
}

/// Reads attribute `name` (n values, all >= `min`) or `dflt` when absent.
FailureOr<SmallVector<int64_t>> getSizes(NodeContext &ctx, StringRef name,
                                         size_t n, int64_t dflt, int64_t min) {
  std::optional<SmallVector<int64_t>> values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(n, dflt);
  if (values->size() != n)
    return ctx.fail(llvm::formatv("attribute '{0}' = {1} needs {2} values for "
                                  "{3} spatial dimensions",
                                  name, formatInts(*values), n,
                                  name == "pads" ? n / 2 : n));
  for (int64_t v : *values)
    if (v < min)
      return ctx.fail(llvm::formatv("attribute '{0}' = {1} must hold values "
                                    ">= {2}",
                                    name, formatInts(*values), min));
  return *values;
}

/// Reads the window of a node over `input` (`[N, C, d...]`); `kernel` is the
/// weight's spatial shape for Conv, or null to read `kernel_shape`.
FailureOr<Window> getWindow(NodeContext &ctx, RankedTensorType input,
                            std::optional<ArrayRef<int64_t>> kernel) {
  Window w;
  if (input.getRank() < 3)
    return ctx.fail(llvm::formatv("input {0} must be [N, C, d1, ...] with at "
                                  "least one spatial dimension",
                                  input));
  size_t n = input.getRank() - 2;
  std::optional<SmallVector<int64_t>> kernelAttr = ctx.getInts("kernel_shape");
  if (kernel) {
    w.kernel.assign(kernel->begin(), kernel->end());
    if (kernelAttr && ArrayRef<int64_t>(*kernelAttr) != *kernel)
      return ctx.fail(llvm::formatv("attribute 'kernel_shape' = {0} differs "
                                    "from the weight's kernel {1}",
                                    formatInts(*kernelAttr),
                                    formatInts(*kernel)));
  } else {
    if (!kernelAttr)
      return ctx.fail("attribute 'kernel_shape' is required");
    FailureOr<SmallVector<int64_t>> k = getSizes(ctx, "kernel_shape", n, 1, 1);
    if (failed(k))
      return failure();
    w.kernel = *k;
  }
  FailureOr<SmallVector<int64_t>> strides = getSizes(ctx, "strides", n, 1, 1);
  if (failed(strides))
    return failure();
  FailureOr<SmallVector<int64_t>> dilations =
      getSizes(ctx, "dilations", n, 1, 1);
  if (failed(dilations))
    return failure();
  w.strides = *strides;
  w.dilations = *dilations;
  int64_t ceilMode = ctx.getInt("ceil_mode", 0);
  if (ceilMode != 0 && ceilMode != 1)
    return ctx.fail(
        llvm::formatv("attribute 'ceil_mode' = {0} must be 0 or 1", ceilMode));
  w.ceilMode = ceilMode;

  std::string autoPad = ctx.getString("auto_pad").value_or("NOTSET");
  if (autoPad == "NOTSET") {
    FailureOr<SmallVector<int64_t>> pads = getSizes(ctx, "pads", 2 * n, 0, 0);
    if (failed(pads))
      return failure();
    w.pads = *pads;
    return w;
  }
  if (ctx.getAttr("pads"))
    return ctx.fail(llvm::formatv("attribute 'auto_pad' = '{0}' and "
                                  "attribute 'pads' exclude each other",
                                  pipecc::support::escape(autoPad)));
  w.pads.assign(2 * n, 0);
  if (autoPad == "VALID")
    return w;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.fail(llvm::formatv("attribute 'auto_pad' = '{0}' is not "
                                  "supported (NOTSET, VALID, SAME_UPPER, "
                                  "SAME_LOWER)",
                                  pipecc::support::escape(autoPad)));
  // SAME: the output has ceil(size / stride) positions; the odd pad goes at
  // the end (SAME_UPPER) or the beginning (SAME_LOWER).
  for (size_t i = 0; i < n; ++i) {
    int64_t size = input.getDimSize(2 + i);
    int64_t out = (size + w.strides[i] - 1) / w.strides[i];
    int64_t extent = w.dilations[i] * (w.kernel[i] - 1) + 1;
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[i] + extent - size);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[n + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return w;
}

LogicalResult requireFloatInput(NodeContext &ctx) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  if (!isa<FloatType>(ctx.getOperandType(0).getElementType()))
    return ctx.fail(llvm::formatv("{0} of {1} is not supported: graph "
                                  "arithmetic is floating-point",
                                  ctx.node.op_type(),
                                  ctx.getOperand(0).getType()));
  return success();
}

SmallVector<NamedAttribute> windowAttrs(NodeContext &ctx, const Window &w,
                                        bool withKernel) {
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs;
  if (withKernel)
    attrs.push_back(
        b.getNamedAttr("kernel_shape", b.getDenseI64ArrayAttr(w.kernel)));
  attrs.push_back(b.getNamedAttr("strides", b.getDenseI64ArrayAttr(w.strides)));
  attrs.push_back(b.getNamedAttr("pads", b.getDenseI64ArrayAttr(w.pads)));
  attrs.push_back(
      b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(w.dilations)));
  if (w.ceilMode)
    attrs.push_back(b.getNamedAttr("ceil_mode", b.getUnitAttr()));
  return attrs;
}

LogicalResult convertConv(NodeContext &ctx, SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)) || failed(requireFloatInput(ctx)))
    return failure();
  RankedTensorType input = ctx.getOperandType(0),
                   weight = ctx.getOperandType(1);
  if (weight.getRank() != input.getRank())
    return ctx.fail(llvm::formatv("weight {0} must have the rank of input {1}",
                                  weight, input));
  FailureOr<Window> w = getWindow(ctx, input, weight.getShape().drop_front(2));
  if (failed(w))
    return failure();
  int64_t group = ctx.getInt("group", 1);
  SmallVector<NamedAttribute> attrs = windowAttrs(ctx, *w, false);
  attrs.push_back(
      ctx.builder.getNamedAttr("group", ctx.builder.getI64IntegerAttr(group)));
  FailureOr<Value> y =
      ctx.create<graph::ConvOp>({ctx.getOperand(0), ctx.getOperand(1)}, attrs);
  if (failed(y))
    return failure();
  if (Value bias = ctx.getOperand(2)) {
    RankedTensorType biasType = ctx.getOperandType(2);
    int64_t channels = weight.getDimSize(0);
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != channels)
      return ctx.fail(llvm::formatv("bias {0} must be [{1}], one value per "
                                    "output channel",
                                    biasType, channels));
    // [O] -> [O, 1, ..., 1]: broadcast over the spatial dimensions.
    SmallVector<int64_t> shape(input.getRank() - 1, 1);
    shape[0] = channels;
    FailureOr<Value> column = ctx.reshape(bias, shape);
    if (failed(column))
      return failure();
    y = ctx.create<graph::AddOp>({*y, *column});
    if (failed(y))
      return failure();
  }
  results.push_back(*y);
  return success();
}

LogicalResult convertMaxPool(NodeContext &ctx,
                             SmallVectorImpl<Value> &results) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  // storage_order only lays out the Indices output.
  if (ctx.isOutputUsed(1))
    return ctx.fail("output 'Indices' is not supported (attribute "
                    "'storage_order' and the flat indices of the maxima)");
  FailureOr<Window> w = getWindow(ctx, ctx.getOperandType(0), std::nullopt);
  if (failed(w))
    return failure();
  FailureOr<Value> y = ctx.create<graph::MaxPoolOp>({ctx.getOperand(0)},
                                                    windowAttrs(ctx, *w, true));
  if (failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

LogicalResult convertAveragePool(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  FailureOr<Window> w = getWindow(ctx, ctx.getOperandType(0), std::nullopt);
  if (failed(w))
    return failure();
  SmallVector<NamedAttribute> attrs = windowAttrs(ctx, *w, true);
  int64_t includePad = ctx.getInt("count_include_pad", 0);
  if (includePad != 0 && includePad != 1)
    return ctx.fail(llvm::formatv("attribute 'count_include_pad' = {0} must "
                                  "be 0 or 1",
                                  includePad));
  if (includePad)
    attrs.push_back(ctx.builder.getNamedAttr("count_include_pad",
                                             ctx.builder.getUnitAttr()));
  FailureOr<Value> y = ctx.create<graph::AvgPoolOp>({ctx.getOperand(0)}, attrs);
  if (failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

/// The mean over every spatial dimension, kept as size 1.
LogicalResult convertGlobalAveragePool(NodeContext &ctx,
                                       SmallVectorImpl<Value> &results) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  RankedTensorType input = ctx.getOperandType(0);
  if (input.getRank() < 3)
    return ctx.fail(llvm::formatv("input {0} must be [N, C, d1, ...] with at "
                                  "least one spatial dimension",
                                  input));
  SmallVector<int64_t> axes;
  for (int64_t axis = 2; axis < input.getRank(); ++axis)
    axes.push_back(axis);
  Builder &b = ctx.builder;
  FailureOr<Value> y = ctx.create<graph::ReduceMeanOp>(
      {ctx.getOperand(0)},
      {b.getNamedAttr("axes", b.getDenseI64ArrayAttr(axes)),
       b.getNamedAttr("keep_dims", b.getUnitAttr())});
  if (failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

/// A max pool whose one window is the whole spatial extent, so that it has
/// max pooling's gradient.
LogicalResult convertGlobalMaxPool(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(requireFloatInput(ctx)))
    return failure();
  RankedTensorType input = ctx.getOperandType(0);
  if (input.getRank() < 3)
    return ctx.fail(llvm::formatv("input {0} must be [N, C, d1, ...] with at "
                                  "least one spatial dimension",
                                  input));
  size_t n = input.getRank() - 2;
  Window w;
  w.kernel.assign(input.getShape().drop_front(2).begin(),
                  input.getShape().end());
  w.strides.assign(n, 1);
  w.dilations.assign(n, 1);
  w.pads.assign(2 * n, 0);
  FailureOr<Value> y = ctx.create<graph::MaxPoolOp>({ctx.getOperand(0)},
                                                    windowAttrs(ctx, w, true));
  if (failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

} // namespace

void pipecc::frontend::detail::populateConvolutionPatterns(
    PatternRegistry &registry) {
  // Later versions add attributes (ceil_mode and dilations in 10,
  // AveragePool's dilations in 19) and types; absent ones take defaults.
  registry.add("Conv", 1, convertConv);
  registry.add("MaxPool", 1, convertMaxPool);
  registry.add("AveragePool", 1, convertAveragePool);
  registry.add("GlobalAveragePool", 1, convertGlobalAveragePool);
  registry.add("GlobalMaxPool", 1, convertGlobalMaxPool);
}
