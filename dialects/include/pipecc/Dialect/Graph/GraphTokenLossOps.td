#ifndef PIPECC_DIALECT_GRAPH_GRAPHTOKENLOSSOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHTOKENLOSSOPS_TD

// Included at the end of GraphOps.td: ops that make token losses exact
// under micro-batching (docs/design.md, "Counted-mean losses").

def Graph_LabelCountOp : Graph_Op<"label_count", [Pure,
    Graph_CostOpInterface]> {
  let summary = "Number of label positions a mean loss counts";
  let description = [{
    The number of positions of `labels` that are not `ignore_index` (all of
    them without one), as a floating-point scalar: the denominator of
    `graph.cross_entropy`'s mean. Autodiff multiplies a counted-mean loss by
    it, so each micro-batch contributes its sum, and the runtime divides by
    the step's total count.

    ```mlir
    %n = graph.label_count %labels {ignore_index = -100 : i64}
        : tensor<16xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $labels attr-dict `:` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHTOKENLOSSOPS_TD
