//===- GraphActivationOps.td - sigmoid, sin, cos, log_softmax -*- tablegen -*-===//
//
// Elementwise functions of transformer decoders beyond those in GraphOps.td:
// the logistic function (SiLU exports as x * sigmoid(x)), the sine and
// cosine of rotary position embeddings, and log-softmax (the first half of
// the cross-entropy that the dynamo exporter writes).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_DIALECT_GRAPH_GRAPHACTIVATIONOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHACTIVATIONOPS_TD

def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid",
    "the logistic function 1 / (1 + exp(-x))", [CostOverride]>;
def Graph_SinOp : Graph_UnaryOp<"sin", "the sine", [CostOverride]>;
def Graph_CosOp : Graph_UnaryOp<"cos", "the cosine", [CostOverride]>;

def Graph_LogSoftmaxOp : Graph_Op<"log_softmax", [Pure,
    SameOperandsAndResultType, InferTypeOpInterface, CostOverride,
    Gradient]> {
  let summary = "Log-softmax along one axis";
  let description = [{
    `x - max(x) - log(sum(exp(x - max(x))))` along `axis`.

    ```mlir
    %l = graph.log_softmax %x axis = 1 : tensor<16x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHACTIVATIONOPS_TD
