//===- LogLikelihood.cpp - NegativeLogLikelihoodLoss ----------------------===//
//
// NegativeLogLikelihoodLoss imports as graph.nll_loss with ONNX's three
// reductions and ignore_index; after a LogSoftmax along the class axis with
// the mean reduction, canonicalization turns the pair into
// graph.cross_entropy (one fused loss, the same gradient).
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult convertNLLLoss(NodeContext &ctx,
                                    SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  if (ctx.getOperand(2))
    return ctx.fail("the 'weight' input is not supported yet");
  if (!llvm::isa<FloatType>(ctx.getOperandType(0).getElementType()))
    return ctx.fail(llvm::formatv("NegativeLogLikelihoodLoss of {0} is not "
                                  "supported: graph arithmetic is "
                                  "floating-point",
                                  ctx.getOperand(0).getType()));
  std::string reduction = ctx.getString("reduction").value_or("mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return ctx.fail("attribute 'reduction' is " +
                    pipecc::support::quote(reduction) +
                    "; 'mean', 'sum' and 'none' are defined");
  SmallVector<NamedAttribute> attrs = {ctx.builder.getNamedAttr(
      "reduction", ctx.builder.getStringAttr(reduction))};
  if (std::optional<int64_t> ignore = ctx.getInt("ignore_index"))
    attrs.push_back(ctx.builder.getNamedAttr(
        "ignore_index", ctx.builder.getI64IntegerAttr(*ignore)));
  FailureOr<Value> loss = ctx.create<graph::NLLLossOp>(
      {ctx.getOperand(0), ctx.getOperand(1)}, attrs);
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  return success();
}

void pipecc::frontend::detail::populateLogLikelihoodPatterns(
    PatternRegistry &registry) {
  // Version 13 adds element types only.
  registry.add("NegativeLogLikelihoodLoss", 12, convertNLLLoss);
}
