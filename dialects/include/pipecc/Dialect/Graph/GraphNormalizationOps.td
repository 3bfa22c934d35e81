//===- GraphNormalizationOps.td - layer_norm and rms_norm --*- tablegen -*-===//
//
// Fused normalisations. LayerNormalization imports as `graph.layer_norm`;
// the decompositions that exporters write (ReduceMean, Sub, Pow, ReduceMean,
// Add, Sqrt, Div, Mul, Add, and RMSNorm's Pow, ReduceMean, Add, Sqrt,
// Reciprocal, Mul, Mul) are recognised by `pipecc-fuse-norms`. One op per
// normalisation keeps the row statistics in one place: the lowering reads
// each row twice instead of materialising a dozen elementwise tensors, and
// the gradient rule is one fused op instead of the chain rule through them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_DIALECT_GRAPH_GRAPHNORMALIZATIONOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHNORMALIZATIONOPS_TD

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure, AttrSizedOperandSegments,
    InferTypeOpAdaptor, CostOverride, Gradient]> {
  let summary = "Layer normalisation over the trailing dimensions";
  let description = [{
    Normalises each row of `input` (the dimensions from `axis` to the last
    form a row) to zero mean and unit variance, then scales and shifts it:
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with the biased
    variance. `scale` and `bias` are optional; each has the row's shape
    `input.shape[axis:]`.

    ```mlir
    %y = graph.layer_norm %x scale %w : tensor<64xf32> bias %b : tensor<64xf32>
        axis = 2 epsilon = 1.0e-05 : tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Optional<Graph_FloatTensor>:$scale,
                       Optional<Graph_FloatTensor>:$bias,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^ `:` type($scale))? (`bias` $bias^ `:` type($bias))?
    `axis` `=` $axis `epsilon` `=` $epsilon attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Graph_RmsNormOp : Graph_Op<"rms_norm", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Root-mean-square normalisation over the trailing dimensions";
  let description = [{
    Divides each row of `input` (the dimensions from `axis` to the last) by
    its root mean square and scales it:
    `x / sqrt(mean(x^2) + epsilon) * scale`, as LLaMA's RMSNorm. `scale` is
    optional and has the row's shape `input.shape[axis:]`.

    ```mlir
    %y = graph.rms_norm %x scale %w : tensor<64xf32> axis = 2
        epsilon = 1.0e-06 : tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Optional<Graph_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`scale` $scale^ `:` type($scale))? `axis` `=` $axis
    `epsilon` `=` $epsilon attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Graph_LayerNormGradOp : Graph_Op<"layer_norm_grad", [Pure,
    AllTypesMatch<["input", "result_grad", "result"]>, CostOverride]> {
  let summary = "Gradient of layer_norm with respect to its input";
  let description = [{
    With `xhat` the normalised row, `rstd = 1 / sqrt(var + epsilon)` and
    `g = result_grad * scale` (or `result_grad` without a scale):
    `rstd * (g - mean(g) - xhat * mean(g * xhat))`, the means over each row.
    The gradients of `scale` and `bias` are sums over rows that the
    gradient rule builds from ordinary ops, so they can run in the weight
    step of a split backward pass.

    ```mlir
    %dx = graph.layer_norm_grad %x, %dy scale %w : tensor<64xf32> axis = 2
        epsilon = 1.0e-05 : tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Graph_FloatTensor:$result_grad,
                       Optional<Graph_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $result_grad (`scale` $scale^ `:` type($scale))? `axis` `=`
    $axis `epsilon` `=` $epsilon attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Graph_RmsNormGradOp : Graph_Op<"rms_norm_grad", [Pure,
    AllTypesMatch<["input", "result_grad", "result"]>, CostOverride]> {
  let summary = "Gradient of rms_norm with respect to its input";
  let description = [{
    With `rstd = 1 / sqrt(mean(x^2) + epsilon)`, `xhat = x * rstd` and
    `g = result_grad * scale` (or `result_grad` without a scale):
    `rstd * (g - xhat * mean(g * xhat))`, the mean over each row.

    ```mlir
    %dx = graph.rms_norm_grad %x, %dy scale %w : tensor<64xf32> axis = 2
        epsilon = 1.0e-06 : tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Graph_FloatTensor:$result_grad,
                       Optional<Graph_FloatTensor>:$scale,
                       I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $result_grad (`scale` $scale^ `:` type($scale))? `axis` `=`
    $axis `epsilon` `=` $epsilon attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHNORMALIZATIONOPS_TD
