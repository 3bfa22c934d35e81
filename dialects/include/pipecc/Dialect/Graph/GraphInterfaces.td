#ifndef PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_TD
#define PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_TD

include "mlir/IR/OpBase.td"

def Graph_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::pipecc::graph";
  let description = [{
    An analytic estimate of what one execution of the op costs: floating
    point operations, transcendental function evaluations and the bytes it
    reads and writes. The cost model turns these counts into time on a device
    profile; the op itself knows nothing about devices.
  }];
  let methods = [
    InterfaceMethod<
      "Returns the op's cost for one execution on its static shapes.",
      "::pipecc::graph::OpCost", "getCost", (ins), [{}],
      [{ return ::pipecc::graph::detail::elementwiseCost($_op, 1, 0); }]>,
  ];
}

def Graph_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::pipecc::graph";
  let description = [{
    The reverse-mode gradient rule of an op. Given the gradients of the op's
    results (a null value for a result no loss depends on), the rule builds
    the gradients of its operands with `builder`, at the builder's insertion
    point, and stores them in `operandGrads` (one entry per operand, a null
    value for an operand that is not differentiable, such as integer labels).
  }];
  let methods = [
    InterfaceMethod<
      "Builds the gradients of the op's operands from those of its results.",
      "::mlir::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
    InterfaceMethod<
      "Returns true if the op's operand at `index` can carry a gradient.",
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), [{}],
      [{ return ::llvm::isa<::mlir::FloatType>(::mlir::getElementTypeOrSelf(
             $_op->getOperand(index).getType())); }]>,
  ];
}

// Each result element is a function of the operand elements at the same
// (broadcast) position and nothing else: the op lowers to one elementwise
// loop and can be fused into, or recomputed inside, an elementwise consumer
// (pipecc-rematerialize recomputes such ops in the backward instead of
// keeping their results).
def Graph_Pointwise : NativeOpTrait<"Pointwise"> {
  let cppNamespace = "::pipecc::graph::traits";
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_TD
