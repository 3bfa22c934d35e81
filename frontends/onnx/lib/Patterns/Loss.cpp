//===- Loss.cpp - Softmax, LogSoftmax and SoftmaxCrossEntropyLoss ---------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

#include <type_traits>

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

// Softmax and LogSoftmax share their ONNX forms: since opset 13 along one
// axis (by default the last); before, over the input coerced to 2-D at
// `axis` (default 1), which is accepted only where it is the last axis
// (every dimension from `axis` to the last but one is 1).

template <typename OpT>
static LogicalResult createSoftmaxLike(NodeContext &ctx, int64_t axis,
                                       SmallVectorImpl<Value> &results) {
  if (!llvm::isa<FloatType>(ctx.getOperandType(0).getElementType()))
    return ctx.fail(llvm::formatv("{0} of {1} is not supported: graph "
                                  "arithmetic is floating-point",
                                  ctx.node.op_type(),
                                  ctx.getOperand(0).getType()));
  FailureOr<Value> result = ctx.create<OpT>(
      {ctx.getOperand(0)},
      {ctx.builder.getNamedAttr("axis", ctx.builder.getI64IntegerAttr(axis))});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

template <typename OpT>
static LogicalResult convertSoftmaxLike13(NodeContext &ctx,
                                          SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  FailureOr<int64_t> axis = ctx.normalizeAxis(
      ctx.getInt("axis", -1), ctx.getOperandType(0).getRank());
  if (failed(axis))
    return failure();
  return createSoftmaxLike<OpT>(ctx, *axis, results);
}

template <typename OpT>
static LogicalResult convertSoftmaxLike1(NodeContext &ctx,
                                         SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  RankedTensorType type = ctx.getOperandType(0);
  int64_t rank = type.getRank();
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  const char *what =
      std::is_same_v<OpT, graph::LogSoftmaxOp> ? "log-softmax" : "softmax";
  for (int64_t d = *axis; d < rank - 1; ++d)
    if (type.getDimSize(d) != 1)
      return ctx.fail(llvm::formatv(
          "{0} before opset 13 normalises {1} over the flattened "
          "dimensions [{2}, {3}); only a {4} along the last axis is "
          "supported (re-export with opset 13 or later)",
          ctx.node.op_type(), type, *axis, rank, what));
  return createSoftmaxLike<OpT>(ctx, rank - 1, results);
}

static LogicalResult convertSoftmaxCrossEntropy(NodeContext &ctx,
                                                SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  if (ctx.getOperand(2))
    return ctx.fail("the 'weights' input is not supported yet");
  std::string reduction = ctx.getString("reduction").value_or("mean");
  if (reduction != "mean")
    return ctx.fail("reduction " + pipecc::support::quote(reduction) +
                    " is not supported yet; only 'mean' is");
  if (ctx.isOutputUsed(1))
    return ctx.fail("the second output (log_prob) is used, which is not "
                    "supported yet");
  SmallVector<NamedAttribute> attrs;
  if (std::optional<int64_t> ignore = ctx.getInt("ignore_index"))
    attrs.push_back(ctx.builder.getNamedAttr(
        "ignore_index", ctx.builder.getI64IntegerAttr(*ignore)));
  FailureOr<Value> loss = ctx.create<graph::CrossEntropyOp>(
      {ctx.getOperand(0), ctx.getOperand(1)}, attrs);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  return success();
}

void pipecc::frontend::detail::populateLossPatterns(PatternRegistry &registry) {
  registry.add("Softmax", 1, convertSoftmaxLike1<graph::SoftmaxOp>);
  registry.add("Softmax", 13, convertSoftmaxLike13<graph::SoftmaxOp>);
  registry.add("LogSoftmax", 1, convertSoftmaxLike1<graph::LogSoftmaxOp>);
  registry.add("LogSoftmax", 13, convertSoftmaxLike13<graph::LogSoftmaxOp>);
  registry.add("SoftmaxCrossEntropyLoss", 12, convertSoftmaxCrossEntropy);
}
