//===- Reduction.cpp - ReduceSum, ReduceMean, ReduceMax -------------------===//

#include "../Patterns.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// `AxesInput`: the axes are the optional second input (ReduceSum-13,
/// ReduceMean/Max-18) with `noop_with_empty_axes`; before, an attribute.
template <typename OpTy, bool AxesInput>
static LogicalResult convertReduce(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  Value input = ctx.getOperand(0);
  int64_t rank = ctx.getOperandType(0).getRank();
  SmallVector<int64_t> axes;
  if constexpr (AxesInput) {
    if (Value axesInput = ctx.getOperand(1)) {
      FailureOr<SmallVector<int64_t>> values =
          ctx.getConstantInts(axesInput, "axes");
      if (failed(values))
        return failure();
      axes = *values;
    }
    if (axes.empty() && ctx.getInt("noop_with_empty_axes", 0)) {
      results.push_back(input);
      return success();
    }
  } else {
    axes = ctx.getInts("axes").value_or(SmallVector<int64_t>());
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  FailureOr<SmallVector<int64_t>> normal = ctx.normalizeAxes(axes, rank);
  if (failed(normal))
    return failure();
  llvm::sort(*normal);
  SmallVector<NamedAttribute> attrs = {
      ctx.builder.getNamedAttr("axes", ctx.builder.getDenseI64ArrayAttr(*normal))};
  if (ctx.getInt("keepdims", 1))
    attrs.push_back(
        ctx.builder.getNamedAttr("keep_dims", ctx.builder.getUnitAttr()));
  FailureOr<Value> result = ctx.create<OpTy>({input}, attrs);
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateReductionPatterns(
    PatternRegistry &registry) {
  registry.add("ReduceSum", 1, convertReduce<graph::ReduceSumOp, false>);
  registry.add("ReduceSum", 13, convertReduce<graph::ReduceSumOp, true>);
  registry.add("ReduceMean", 1, convertReduce<graph::ReduceMeanOp, false>);
  registry.add("ReduceMean", 18, convertReduce<graph::ReduceMeanOp, true>);
  registry.add("ReduceMax", 1, convertReduce<graph::ReduceMaxOp, false>);
  registry.add("ReduceMax", 18, convertReduce<graph::ReduceMaxOp, true>);
}
