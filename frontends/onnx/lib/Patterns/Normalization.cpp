//===- Normalization.cpp - LayerNormalization -----------------------------===//
//
// LayerNormalization-17 imports as one graph.layer_norm. Its opset-13
// decomposition (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
// Add) imports op by op and `pipecc-fuse-norms` fuses it into the same op,
// so both exports train identically through one gradient rule.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "pipecc/Dialect/Graph/Normalization.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// "[16, 64]": the row shape of a normalisation of `type` from `axis`.
static std::string rowShapeText(RankedTensorType type, int64_t axis) {
  std::string text = "[";
  for (int64_t d = axis; d < type.getRank(); ++d)
    text += (d > axis ? ", " : "") + std::to_string(type.getDimSize(d));
  return text + "]";
}

static LogicalResult convertLayerNorm(NodeContext &ctx,
                                      SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value x = ctx.getOperand(0), scale = ctx.getOperand(1),
        bias = ctx.getOperand(2);
  RankedTensorType type = ctx.getOperandType(0);
  if (!llvm::isa<FloatType>(type.getElementType()))
    return ctx.fail(llvm::formatv("LayerNormalization of {0} is not "
                                  "supported: graph arithmetic is "
                                  "floating-point",
                                  x.getType()));
  if (ctx.isOutputUsed(1) || ctx.isOutputUsed(2))
    return ctx.fail("the Mean and InvStdDev outputs are not supported yet");
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  float epsilon = ctx.getFloat("epsilon", 1e-5f);
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    return ctx.fail(llvm::formatv("attribute 'epsilon' is {0}; a finite "
                                  "non-negative number is required",
                                  epsilon));
  // Scale and B broadcast against X and vary only along the normalised
  // dimensions; the fused op takes them in the row's shape.
  SmallVector<Value, 2> rows;
  for (auto [value, name] : {std::pair(scale, "Scale"), std::pair(bias, "B")}) {
    if (!value) {
      rows.push_back(Value());
      continue;
    }
    if (!graph::isRowOperand(value, type, *axis))
      return ctx.fail(llvm::formatv(
          "{0} {1} does not broadcast to the normalised dimensions {2} of X "
          "{3} (axis {4})",
          name, value.getType(), rowShapeText(type, *axis), type, *axis));
    rows.push_back(
        graph::buildRowOperand(ctx.builder, ctx.loc, value, type, *axis));
  }
  FailureOr<Value> y = ctx.createTyped<graph::LayerNormOp>(
      type, x, rows[0], rows[1], ctx.builder.getI64IntegerAttr(*axis),
      ctx.builder.getF64FloatAttr(epsilon));
  if (failed(y))
    return failure();
  results.push_back(*y);
  return success();
}

void pipecc::frontend::detail::populateNormalizationPatterns(
    PatternRegistry &registry) {
  registry.add("LayerNormalization", 17, convertLayerNorm);
}
