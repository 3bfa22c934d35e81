//===- GraphNLLLossOps.td - negative log-likelihood loss --*- tablegen -*-===//
//
// NegativeLogLikelihoodLoss: what the dynamo exporter writes for a
// cross-entropy after a LogSoftmax. Canonicalization turns the pair into
// `graph.cross_entropy` when the reduction is the mean; on its own the op
// keeps ONNX's three reductions.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_DIALECT_GRAPH_GRAPHNLLLOSSOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHNLLLOSSOPS_TD

def Graph_NLLLossOp : Graph_Op<"nll_loss", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Negative log-likelihood of class labels";
  let description = [{
    `input` is `[N, C]` or `[N, C, d1, ...]` (log-probabilities) and
    `labels` holds class indices of shape `[N]` or `[N, d1, ...]`. Each
    label position contributes `-input[n, label, d1, ...]`; positions whose
    label equals `ignore_index` contribute 0. `reduction` is `mean` (the
    sum over the counted positions divided by their number: a rank-0
    result), `sum` (rank 0) or `none` (one loss per label position, of the
    labels' shape).

    ```mlir
    %l = graph.nll_loss %logp, %labels reduction = "mean" ignore_index = -100
        : tensor<16x10xf32>, tensor<16xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IndexTensor:$labels,
                       StrAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $labels `reduction` `=` $reduction
    (`ignore_index` `=` $ignore_index^)? attr-dict `:` type($input) `,`
    type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

def Graph_NLLLossGradOp : Graph_Op<"nll_loss_grad", [Pure, CostOverride]> {
  let summary = "Gradient of nll_loss with respect to its input";
  let description = [{
    Zero except at each counted label position's class, which holds
    `-loss_grad` (`reduction = "sum"`), `-loss_grad / count` (`"mean"`,
    `count` the number of counted positions) or minus that position's
    element of `loss_grad` (`"none"`). The result has `nll_loss`'s input
    type.

    ```mlir
    %d = graph.nll_loss_grad %labels, %dl reduction = "mean"
        : tensor<16xi64>, tensor<f32> -> tensor<16x10xf32>
    ```
  }];
  let arguments = (ins Graph_IndexTensor:$labels,
                       Graph_FloatTensor:$loss_grad, StrAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $labels `,` $loss_grad `reduction` `=` $reduction
    (`ignore_index` `=` $ignore_index^)? attr-dict `:` type($labels) `,`
    type($loss_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHNLLLOSSOPS_TD
