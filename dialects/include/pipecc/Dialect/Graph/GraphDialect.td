#ifndef PIPECC_DIALECT_GRAPH_GRAPHDIALECT_TD
#define PIPECC_DIALECT_GRAPH_GRAPHDIALECT_TD

include "mlir/IR/OpBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::pipecc::graph";
  let summary = "Tensor-level operations of a model to train";
  let description = [{
    The graph dialect holds a model as the ONNX frontend imports it and as
    the training passes transform it: tensor operations with value semantics
    and static shapes, whose result types are inferred from their operands.
    Elementwise binary operations broadcast like numpy. Model parameters are
    `graph.param` operations that keep the ONNX initializer's name, so that
    gradients and trained weights can be written back under it.

    Two op interfaces carry what later phases need to know of every op: its
    gradient rule (`GradientOpInterface`) and its cost estimate
    (`CostOpInterface`).
  }];
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

#endif // PIPECC_DIALECT_GRAPH_GRAPHDIALECT_TD
