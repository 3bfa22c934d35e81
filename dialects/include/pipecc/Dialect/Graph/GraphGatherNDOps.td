//===- GraphGatherNDOps.td - gather_nd and its gradient ---*- tablegen -*-===//
//
// ONNX GatherND on computed tensors (on constants it folds at import), and
// its gradient, a scatter-add like gather_grad's.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_DIALECT_GRAPH_GRAPHGATHERNDOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHGATHERNDOPS_TD

def Graph_GatherNDOp : Graph_Op<"gather_nd", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Gathers slices of a tensor by multi-dimensional indices";
  let description = [{
    ONNX GatherND. With `b = batch_dims` and `k` the last dimension of
    `indices`, the first `b` dimensions of `data` and `indices` agree (they
    are batch dimensions); each index tuple of `k` entries selects, within
    its batch, the slice `data[batch..., i_1, ..., i_k, :, ...]`. The
    result's shape is `indices.shape[:-1] + data.shape[b + k:]`. Negative
    indices count from the end. `data` may hold any element type (masks
    are boolean); only floating-point data carries a gradient.

    ```mlir
    %y = graph.gather_nd %x, %idx batch_dims = 0
        : tensor<4x5x6xf32>, tensor<3x2xi64> -> tensor<3x6xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                       I64Attr:$batch_dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `batch_dims` `=` $batch_dims attr-dict `:`
    type($data) `,` type($indices) `->` type($result)
  }];
}

def Graph_GatherNDGradOp : Graph_Op<"gather_nd_grad", [Pure, CostOverride]> {
  let summary = "Gradient of gather_nd: scatter-add into a zero tensor";
  let description = [{
    A zero tensor of the result's type (gather_nd's `data` type) to which
    each slice of `result_grad` is added at the position its index tuple
    selects: repeated tuples accumulate.

    ```mlir
    %dx = graph.gather_nd_grad %idx, %dy batch_dims = 0
        : tensor<3x2xi64>, tensor<3x6xf32> -> tensor<4x5x6xf32>
    ```
  }];
  let arguments = (ins Graph_IndexTensor:$indices,
                       Graph_FloatTensor:$result_grad, I64Attr:$batch_dims);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $result_grad `batch_dims` `=` $batch_dims attr-dict `:`
    type($indices) `,` type($result_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHGATHERNDOPS_TD
