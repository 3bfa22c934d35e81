//===- Selection.cpp - Comparisons, logic and Where -----------------------===//
//
// Exporters build attention masks as Where(Equal(mask, 0), -inf, scores),
// causal masks from Range/Less/And/Not, and padding masks from comparisons.
// Each node is one graph op; on constant inputs (mask buffers, positions)
// the graph dialect's constant evaluator folds it as it is created.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// A node whose inputs map one to one to the operands of `OpTy`.
template <typename OpTy, unsigned NumOperands>
static LogicalResult convertDirect(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(NumOperands)))
    return failure();
  SmallVector<Value> operands;
  for (unsigned i = 0; i < NumOperands; ++i)
    operands.push_back(ctx.getOperand(i));
  FailureOr<Value> result = ctx.create<OpTy>(operands);
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// Max and Min of one or more inputs: a chain of binary extrema.
template <typename OpTy>
static LogicalResult convertExtremum(NodeContext &ctx,
                                     SmallVectorImpl<Value> &results) {
  if (ctx.getNumOperands() == 0 ||
      failed(ctx.requireOperands(ctx.getNumOperands())))
    return ctx.fail("needs inputs");
  Value result = ctx.getOperand(0);
  for (unsigned i = 1; i < ctx.getNumOperands(); ++i) {
    FailureOr<Value> next = ctx.create<OpTy>({result, ctx.getOperand(i)});
    if (failed(next))
      return failure();
    result = *next;
  }
  results.push_back(result);
  return success();
}

void pipecc::frontend::detail::populateSelectionPatterns(
    PatternRegistry &registry) {
  // Equal-7, Less/Greater-7 gained broadcasting; 9, 11, 13 and 19 add
  // element types only.
  registry.add("Equal", 7, convertDirect<graph::EqualOp, 2>);
  registry.add("Less", 7, convertDirect<graph::LessOp, 2>);
  registry.add("Greater", 7, convertDirect<graph::GreaterOp, 2>);
  registry.add("LessOrEqual", 12, convertDirect<graph::LessEqualOp, 2>);
  registry.add("GreaterOrEqual", 12, convertDirect<graph::GreaterEqualOp, 2>);
  registry.add("Not", 1, convertDirect<graph::NotOp, 1>);
  registry.add("And", 7, convertDirect<graph::AndOp, 2>);
  registry.add("Or", 7, convertDirect<graph::OrOp, 2>);
  registry.add("IsNaN", 9, convertDirect<graph::IsNaNOp, 1>);
  // Max/Min-8 gained broadcasting; 12 and 13 add element types.
  registry.add("Max", 8, convertExtremum<graph::MaximumOp>);
  registry.add("Min", 8, convertExtremum<graph::MinimumOp>);
  // Where-16 adds element types only.
  registry.add("Where", 9, convertDirect<graph::WhereOp, 3>);
}
