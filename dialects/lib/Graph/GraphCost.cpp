// Analytic cost estimates of the graph ops (CostOpInterface). Counts are per
// execution on the ops' static shapes; the cost model turns them into time.
#include "pipecc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace pipecc::graph;

static int64_t bytesOf(Type type) {
  auto shaped = llvm::dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  int64_t bits = shaped.getElementTypeBitWidth();
  return shaped.getNumElements() * ((bits + 7) / 8);
}

static int64_t elementsOf(Type type) {
  auto shaped = llvm::dyn_cast<ShapedType>(type);
  return shaped && shaped.hasStaticShape() ? shaped.getNumElements() : 0;
}

static int64_t operandBytes(Operation *op) {
  int64_t total = 0;
  for (Type type : op->getOperandTypes())
    total += bytesOf(type);
  return total;
}

static int64_t resultBytes(Operation *op) {
  int64_t total = 0;
  for (Type type : op->getResultTypes())
    total += bytesOf(type);
  return total;
}

OpCost pipecc::graph::detail::elementwiseCost(Operation *op,
                                              double flopsPerElement,
                                              double transcendentalsPerElement) {
  OpCost cost;
  int64_t elements = 0;
  for (Type type : op->getResultTypes())
    elements += elementsOf(type);
  cost.flops = flopsPerElement * elements;
  cost.transcendentals = transcendentalsPerElement * elements;
  cost.bytesRead = operandBytes(op);
  cost.bytesWritten = resultBytes(op);
  return cost;
}

OpCost pipecc::graph::detail::reductionCost(Operation *op) {
  OpCost cost;
  cost.flops = elementsOf(op->getOperand(0).getType());
  cost.bytesRead = operandBytes(op);
  cost.bytesWritten = resultBytes(op);
  return cost;
}

// Constants and parameters are resident: producing them moves nothing.
OpCost ConstantOp::getCost() { return {}; }
OpCost ParamOp::getCost() { return {}; }

OpCost TanhOp::getCost() { return detail::elementwiseCost(*this, 0, 1); }
OpCost ExpOp::getCost() { return detail::elementwiseCost(*this, 0, 1); }
OpCost LogOp::getCost() { return detail::elementwiseCost(*this, 0, 1); }

OpCost MatMulOp::getCost() {
  // 2*M*N*K flops over every (broadcast) batch entry of the result.
  auto lhs = getLhs().getType();
  int64_t k = getTransposeLhs() ? lhs.getShape()[lhs.getRank() - 2]
                                : lhs.getShape().back();
  OpCost cost;
  cost.flops = 2.0 * static_cast<double>(elementsOf(getType())) * k;
  cost.bytesRead = operandBytes(*this);
  cost.bytesWritten = resultBytes(*this);
  return cost;
}

// A reshape of a contiguous tensor is a view: no data moves.
OpCost ReshapeOp::getCost() { return {}; }

OpCost TransposeOp::getCost() { return detail::elementwiseCost(*this, 0, 0); }

OpCost SoftmaxOp::getCost() {
  // max, subtract, exp, sum, divide per element.
  return detail::elementwiseCost(*this, 4, 1);
}

OpCost CrossEntropyOp::getCost() {
  // A log-softmax over every logit (max, subtract, exp, sum) and a gather.
  OpCost cost;
  double logits = elementsOf(getLogits().getType());
  cost.flops = 3 * logits;
  cost.transcendentals = logits + elementsOf(getLabels().getType());
  cost.bytesRead = operandBytes(*this);
  cost.bytesWritten = resultBytes(*this);
  return cost;
}

OpCost MSELossOp::getCost() {
  OpCost cost;
  cost.flops = 3.0 * elementsOf(getPrediction().getType());
  cost.bytesRead = operandBytes(*this);
  cost.bytesWritten = resultBytes(*this);
  return cost;
}

OpCost BroadcastOp::getCost() { return detail::elementwiseCost(*this, 0, 0); }

OpCost CrossEntropyGradOp::getCost() {
  // A softmax over every logit, minus the one-hot label, times a scale.
  return detail::elementwiseCost(*this, 5, 1);
}

OpCost SqrtOp::getCost() { return detail::elementwiseCost(*this, 0, 1); }
OpCost ErfOp::getCost() { return detail::elementwiseCost(*this, 0, 1); }

// Slices, pads and gathers copy elements: bytes, no arithmetic.
OpCost SliceOp::getCost() { return detail::elementwiseCost(*this, 0, 0); }
OpCost PadOp::getCost() { return detail::elementwiseCost(*this, 0, 0); }
OpCost GatherOp::getCost() { return detail::elementwiseCost(*this, 0, 0); }

OpCost GatherGradOp::getCost() {
  // One addition per element of the incoming gradient.
  OpCost cost = detail::elementwiseCost(*this, 0, 0);
  cost.flops = static_cast<double>(getResultGrad().getType().getNumElements());
  return cost;
}
