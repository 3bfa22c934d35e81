//===- Loss.cpp - Softmax and SoftmaxCrossEntropyLoss ---------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult createSoftmax(NodeContext &ctx, int64_t axis,
                                   SmallVectorImpl<Value> &results) {
  FailureOr<Value> result = ctx.create<graph::SoftmaxOp>(
      {ctx.getOperand(0)},
      {ctx.builder.getNamedAttr("axis", ctx.builder.getI64IntegerAttr(axis))});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// Softmax-13: along one axis, by default the last.
static LogicalResult convertSoftmax13(NodeContext &ctx,
                                      SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  FailureOr<int64_t> axis = ctx.normalizeAxis(
      ctx.getInt("axis", -1), ctx.getOperandType(0).getRank());
  if (failed(axis))
    return failure();
  return createSoftmax(ctx, *axis, results);
}

/// Softmax-1/11: over the input coerced to 2-D at `axis` (default 1). That
/// is a softmax along the last axis when the dimensions from `axis` up to
/// the last one are all 1, the only case accepted.
static LogicalResult convertSoftmax1(NodeContext &ctx,
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
          "Softmax before opset 13 normalises {0} over the flattened "
          "dimensions [{1}, {2}); only a softmax along the last axis is "
          "supported (re-export with opset 13 or later)",
          type, *axis, rank));
  return createSoftmax(ctx, rank - 1, results);
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
  registry.add("Softmax", 1, convertSoftmax1);
  registry.add("Softmax", 13, convertSoftmax13);
  registry.add("SoftmaxCrossEntropyLoss", 12, convertSoftmaxCrossEntropy);
}
