//===- Activation.cpp - Sigmoid, Sin, Cos, LogSoftmax ---------------------===//
//
// SiLU exports as Mul(x, Sigmoid(x)) and imports as exactly that; rotary
// embeddings compute Sin and Cos of positions, which fold to constants when
// the positions are static. LogSoftmax is the first half of the
// cross-entropy that the dynamo exporter writes (LogSoftmax, then
// NegativeLogLikelihoodLoss).
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult createLogSoftmax(NodeContext &ctx, int64_t axis,
                                      SmallVectorImpl<Value> &results) {
  if (!llvm::isa<FloatType>(ctx.getOperandType(0).getElementType()))
    return ctx.fail(llvm::formatv("LogSoftmax of {0} is not supported: graph "
                                  "arithmetic is floating-point",
                                  ctx.getOperand(0).getType()));
  FailureOr<Value> result = ctx.create<graph::LogSoftmaxOp>(
      {ctx.getOperand(0)},
      {ctx.builder.getNamedAttr("axis", ctx.builder.getI64IntegerAttr(axis))});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// LogSoftmax-13: along one axis, by default the last.
static LogicalResult convertLogSoftmax13(NodeContext &ctx,
                                         SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  FailureOr<int64_t> axis = ctx.normalizeAxis(
      ctx.getInt("axis", -1), ctx.getOperandType(0).getRank());
  if (failed(axis))
    return failure();
  return createLogSoftmax(ctx, *axis, results);
}

/// LogSoftmax-1/11: over the input coerced to 2-D at `axis` (default 1),
/// which is a log-softmax along the last axis when the dimensions from
/// `axis` up to the last one are all 1, the only case accepted.
static LogicalResult convertLogSoftmax1(NodeContext &ctx,
                                        SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  for (int64_t d = *axis; d < rank - 1; ++d)
    if (type.getDimSize(d) != 1)
      return ctx.fail(llvm::formatv(
          "LogSoftmax before opset 13 normalises {0} over the flattened "
          "dimensions [{1}, {2}); only a log-softmax along the last axis is "
          "supported (re-export with opset 13 or later)",
          type, *axis, rank));
  return createLogSoftmax(ctx, rank - 1, results);
}

void pipecc::frontend::detail::populateActivationPatterns(
    PatternRegistry &registry) {
  registry.add("Sigmoid", 6, convertFloatUnary<graph::SigmoidOp>);
  registry.add("Sin", 7, convertFloatUnary<graph::SinOp>);
  registry.add("Cos", 7, convertFloatUnary<graph::CosOp>);
  registry.add("LogSoftmax", 1, convertLogSoftmax1);
  registry.add("LogSoftmax", 13, convertLogSoftmax13);
}
