#ifndef PIPECC_PASSES_PASSES_TD
#define PIPECC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestGraphCost : Pass<"test-graph-cost", "::mlir::func::FuncOp"> {
  let summary = "Prints the cost estimate of every graph op (for tests)";
  let description = [{
    Prints one line per op implementing `CostOpInterface` with its FLOPs,
    transcendental evaluations and bytes read and written, then the
    function's totals, so that FileCheck sees the numbers the cost model
    starts from.
  }];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def AttachLoss : Pass<"pipecc-attach-loss", "::mlir::ModuleOp"> {
  let summary = "Appends a loss to a model that outputs predictions";
  let description = [{
    For a model whose `@main` returns predictions rather than a loss, adds a
    label input named `label-input` and the chosen loss of the first output
    against it; the loss becomes the function's only result. Cross-entropy
    labels are class indices (int64, the logits' shape without dimension 1);
    MSE targets have the prediction's type.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "The loss: cross-entropy or mse">,
    Option<"labelInput", "label-input", "std::string", /*default=*/"\"labels\"",
           "Name of the new label input">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def Autodiff : Pass<"pipecc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds reverse-mode gradients of the loss";
  let description = [{
    Differentiates the scalar loss returned by `@main` with respect to every
    trainable `graph.param`, through each op's `GradientOpInterface` rule,
    summing the contributions of values used more than once. Forward ops are
    numbered with `graph.op_id`; every op the backward pass creates carries
    `graph.grad_of`, the number of the forward op whose result gradient it
    computes, so later phases place it on that op's stage. `@main` then
    returns the loss followed by one gradient per trainable parameter, each
    marked `{graph.grad = "<parameter name>"}`.
  }];
  let options = [
    Option<"lossOutput", "loss-output", "std::string", /*default=*/"\"\"",
           "Name of the output to differentiate (default: the only scalar "
           "output)">,
  ];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Ops created for the backward pass">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

#endif // PIPECC_PASSES_PASSES_TD
