//===- GatherND.cpp - GatherND ---------------------------------------------===//
//
// GatherND imports as graph.gather_nd, differentiable in its data (the
// gradient scatter-adds). GatherND-11 has no batch_dims; 12 adds it (the
// default 0 is the same op) and 13 adds element types.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

static LogicalResult convertGatherND(NodeContext &ctx,
                                     SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  FailureOr<Value> result = ctx.create<graph::GatherNDOp>(
      {ctx.getOperand(0), ctx.getOperand(1)},
      {ctx.builder.getNamedAttr(
          "batch_dims",
          ctx.builder.getI64IntegerAttr(ctx.getInt("batch_dims", 0)))});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateGatherNDPatterns(
    PatternRegistry &registry) {
  registry.add("GatherND", 11, convertGatherND);
}
