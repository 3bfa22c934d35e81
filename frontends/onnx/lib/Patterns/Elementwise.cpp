//===- Elementwise.cpp - Add, Sub, Mul, Div, Relu, Tanh, Exp, Log, Neg ----===//

#include "../Patterns.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// Float arithmetic is model arithmetic; integer arithmetic is shape and
/// position arithmetic, which folds when its inputs are static (through
/// the graph dialect's constant evaluator, as every created op does).
template <typename OpTy>
static LogicalResult convertBinary(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  FailureOr<Value> result =
      ctx.create<OpTy>({ctx.getOperand(0), ctx.getOperand(1)});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateElementwisePatterns(
    PatternRegistry &registry) {
  // Opset 7 replaced the `broadcast`/`axis` attributes by numpy broadcasting;
  // later versions only add element types.
  registry.add("Add", 7, convertBinary<graph::AddOp>);
  registry.add("Sub", 7, convertBinary<graph::SubOp>);
  registry.add("Mul", 7, convertBinary<graph::MulOp>);
  registry.add("Div", 7, convertBinary<graph::DivOp>);
  // Opset 6 dropped `consumed_inputs`.
  registry.add("Relu", 6, convertFloatUnary<graph::ReluOp>);
  registry.add("Tanh", 6, convertFloatUnary<graph::TanhOp>);
  registry.add("Exp", 6, convertFloatUnary<graph::ExpOp>);
  registry.add("Log", 6, convertFloatUnary<graph::LogOp>);
  registry.add("Neg", 6, convertFloatUnary<graph::NegOp>);
}
