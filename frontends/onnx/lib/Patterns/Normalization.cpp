//===- Normalization.cpp - LayerNormalization -----------------------------===//
//
// LayerNormalization-17 imports as the same graph ops its opset-13 export
// decomposes into (mean, centre, mean of squares, sqrt, divide, scale,
// shift), so both exports train identically and need no extra gradient rule.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult convertLayerNorm(NodeContext &ctx,
                                      SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value x = ctx.getOperand(0), scale = ctx.getOperand(1),
        bias = ctx.getOperand(2);
  RankedTensorType type = ctx.getOperandType(0);
  Type elementType = type.getElementType();
  if (!llvm::isa<FloatType>(elementType))
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
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < type.getRank(); ++d)
    axes.push_back(d);
  SmallVector<NamedAttribute> reduceAttrs = {
      ctx.builder.getNamedAttr("axes", ctx.builder.getDenseI64ArrayAttr(axes)),
      ctx.builder.getNamedAttr("keep_dims", ctx.builder.getUnitAttr())};

  FailureOr<Value> mean = ctx.create<graph::ReduceMeanOp>({x}, reduceAttrs);
  if (failed(mean))
    return failure();
  FailureOr<Value> centred = ctx.create<graph::SubOp>({x, *mean});
  if (failed(centred))
    return failure();
  FailureOr<Value> square = ctx.create<graph::MulOp>({*centred, *centred});
  if (failed(square))
    return failure();
  FailureOr<Value> variance =
      ctx.create<graph::ReduceMeanOp>({*square}, reduceAttrs);
  if (failed(variance))
    return failure();
  FailureOr<Value> shifted = ctx.create<graph::AddOp>(
      {*variance, ctx.createScalar(elementType, epsilon)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> deviation = ctx.create<graph::SqrtOp>({*shifted});
  if (failed(deviation))
    return failure();
  FailureOr<Value> y = ctx.create<graph::DivOp>({*centred, *deviation});
  if (failed(y))
    return failure();
  y = ctx.create<graph::MulOp>({*y, scale});
  if (failed(y))
    return failure();
  if (bias) {
    y = ctx.create<graph::AddOp>({*y, bias});
    if (failed(y))
      return failure();
  }
  if (y->getType() != type)
    return ctx.fail(llvm::formatv("Scale {0} or B {1} does not broadcast to "
                                  "X {2}",
                                  scale.getType(),
                                  bias ? bias.getType() : Type(), type));
  results.push_back(*y);
  return success();
}

void pipecc::frontend::detail::populateNormalizationPatterns(
    PatternRegistry &registry) {
  registry.add("LayerNormalization", 17, convertLayerNorm);
}
