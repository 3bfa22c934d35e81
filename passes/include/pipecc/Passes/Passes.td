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

#endif // PIPECC_PASSES_PASSES_TD
