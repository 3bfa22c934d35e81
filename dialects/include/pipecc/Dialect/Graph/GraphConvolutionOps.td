//===- GraphConvolutionOps.td - Convolutions and pooling ---*- tablegen -*-===//
//
// The CNN ops: convolution and its two gradients, max and average pooling
// and their gradients. Tensors are channels-first, [N, C, d1, ..., dn], with
// any number n >= 1 of spatial dimensions. Windows are described as in ONNX:
// `pads` holds the n leading pads and then the n trailing ones.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_DIALECT_GRAPH_GRAPHCONVOLUTIONOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHCONVOLUTIONOPS_TD

// The window of a convolution: one stride and dilation per spatial
// dimension, leading then trailing pads, and the number of channel groups.
defvar Graph_ConvWindowArgs = (ins DenseI64ArrayAttr:$strides,
                                   DenseI64ArrayAttr:$pads,
                                   DenseI64ArrayAttr:$dilations,
                                   I64Attr:$group);

def Graph_ConvOp : Graph_Op<"conv", [Pure, InferTypeOpAdaptor, CostOverride,
    Gradient]> {
  let summary = "Grouped, strided, padded and dilated convolution";
  let description = [{
    ONNX Conv without its bias (the importer adds the bias with
    `graph.add`): `input` is `[N, C, d1..dn]`, `weight` is
    `[O, C / group, k1..kn]`, and the result `[N, O, o1..on]` with
    `o_i = (d_i + pad_begin_i + pad_end_i - dilation_i * (k_i - 1) - 1)
    / stride_i + 1` (rounded down). Output channel `o` of group
    `g = o / (O / group)` reads input channels `[g * C / group,
    (g + 1) * C / group)`; padded positions read zero. Like PyTorch and
    ONNX, this is a cross-correlation (the kernel is not flipped).

    ```mlir
    %y = graph.conv %x, %w strides = [1, 1] pads = [1, 1, 1, 1]
        dilations = [1, 1] group = 1
        : tensor<8x3x16x16xf32>, tensor<4x3x3x3xf32> -> tensor<8x4x16x16xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input,
                            Graph_FloatTensor:$weight), Graph_ConvWindowArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `strides` `=` $strides `pads` `=` $pads
    `dilations` `=` $dilations `group` `=` $group
    attr-dict `:` type($input) `,` type($weight) `->` type($result)
  }];
}

def Graph_ConvInputGradOp : Graph_Op<"conv_input_grad", [Pure,
    CostOverride]> {
  let summary = "Gradient of a convolution with respect to its input";
  let description = [{
    The transposed convolution of `result_grad` (the gradient of a
    `graph.conv` result) with the conv's `weight`, under the same window:
    each input position receives the sum, over the kernel taps and output
    positions that read it, of weight times result gradient. The result has
    the conv input's type, which the result gradient alone does not
    determine when strides drop trailing input positions.

    ```mlir
    %dx = graph.conv_input_grad %dy, %w strides = [1, 1]
        pads = [1, 1, 1, 1] dilations = [1, 1] group = 1
        : tensor<8x4x16x16xf32>, tensor<4x3x3x3xf32> -> tensor<8x3x16x16xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$result_grad,
                            Graph_FloatTensor:$weight), Graph_ConvWindowArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $result_grad `,` $weight `strides` `=` $strides `pads` `=` $pads
    `dilations` `=` $dilations `group` `=` $group
    attr-dict `:` type($result_grad) `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_ConvWeightGradOp : Graph_Op<"conv_weight_grad", [Pure,
    CostOverride]> {
  let summary = "Gradient of a convolution with respect to its weight";
  let description = [{
    The correlation of the conv's `input` with `result_grad` (the gradient
    of the `graph.conv` result), summed over the batch: weight element
    `[o, c, k...]` receives the sum over samples and output positions of
    result gradient times the input value that tap read. The result has the
    conv weight's type.

    ```mlir
    %dw = graph.conv_weight_grad %x, %dy strides = [1, 1]
        pads = [1, 1, 1, 1] dilations = [1, 1] group = 1
        : tensor<8x3x16x16xf32>, tensor<8x4x16x16xf32> -> tensor<4x3x3x3xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input,
                            Graph_FloatTensor:$result_grad),
                       Graph_ConvWindowArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $result_grad `strides` `=` $strides `pads` `=` $pads
    `dilations` `=` $dilations `group` `=` $group
    attr-dict `:` type($input) `,` type($result_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

// The window of a pooling op: its kernel, strides, dilations, pads and
// whether the output size rounds up.
defvar Graph_PoolWindowArgs = (ins DenseI64ArrayAttr:$kernel_shape,
                                   DenseI64ArrayAttr:$strides,
                                   DenseI64ArrayAttr:$pads,
                                   DenseI64ArrayAttr:$dilations,
                                   UnitAttr:$ceil_mode);

def Graph_MaxPoolOp : Graph_Op<"max_pool", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Maximum over sliding windows";
  let description = [{
    Each result element is the maximum of the input elements of its window
    (`[N, C, d1..dn]` input, one window per output position and channel);
    padded positions are ignored. The result is `[N, C, o1..on]` with `o_i =
    (d_i + pad_begin_i + pad_end_i - dilation_i * (k_i - 1) - 1) / stride_i
    + 1`, rounded down, or up with `ceil_mode`; as in PyTorch, a window that
    would start in the trailing padding is dropped.

    ```mlir
    %y = graph.max_pool %x kernel = [2, 2] strides = [2, 2]
        pads = [0, 0, 0, 0] dilations = [1, 1]
        : tensor<8x4x16x16xf32> -> tensor<8x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input), Graph_PoolWindowArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel_shape `strides` `=` $strides
    `pads` `=` $pads `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)?
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Graph_MaxPoolGradOp : Graph_Op<"max_pool_grad", [Pure,
    AllTypesMatch<["input", "result"]>, CostOverride]> {
  let summary = "Gradient of max pooling: routes to each window's maximum";
  let description = [{
    A zero tensor of `input`'s type to which each element of `result_grad`
    is added at the position of its window's maximum in `input`; when
    several elements tie, the first in row-major window order gets it, as
    in PyTorch. Windows overlap when strides are smaller than the kernel,
    and then one position can collect several gradients.

    ```mlir
    %dx = graph.max_pool_grad %x, %dy kernel = [2, 2] strides = [2, 2]
        pads = [0, 0, 0, 0] dilations = [1, 1]
        : tensor<8x4x16x16xf32>, tensor<8x4x8x8xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input,
                            Graph_FloatTensor:$result_grad),
                       Graph_PoolWindowArgs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $result_grad `kernel` `=` $kernel_shape `strides` `=` $strides
    `pads` `=` $pads `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)?
    attr-dict `:` type($input) `,` type($result_grad)
  }];
  let hasVerifier = 1;
}

def Graph_AvgPoolOp : Graph_Op<"avg_pool", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Mean over sliding windows";
  let description = [{
    Each result element is the sum of the input elements of its window
    divided by the window's count: with `count_include_pad`, the window's
    positions inside the padded input (positions that `ceil_mode` adds past
    the trailing pads do not count, as in PyTorch); otherwise only the
    positions inside the input. The result is `[N, C, o1..on]` with `o_i =
    (d_i + pad_begin_i + pad_end_i - dilation_i * (k_i - 1) - 1) / stride_i
    + 1`, rounded down, or up with `ceil_mode`; as in PyTorch, a window that
    would start in the trailing padding is dropped.

    ```mlir
    %y = graph.avg_pool %x kernel = [3, 3] strides = [1, 1]
        pads = [1, 1, 1, 1] dilations = [1, 1] count_include_pad
        : tensor<8x4x16x16xf32> -> tensor<8x4x16x16xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$input), Graph_PoolWindowArgs,
                       (ins UnitAttr:$count_include_pad));
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` `=` $kernel_shape `strides` `=` $strides
    `pads` `=` $pads `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)?
    (`count_include_pad` $count_include_pad^)? attr-dict `:` type($input)
    `->` type($result)
  }];
}

def Graph_AvgPoolGradOp : Graph_Op<"avg_pool_grad", [Pure, CostOverride]> {
  let summary = "Gradient of average pooling";
  let description = [{
    Each input position receives the sum, over the windows that contain it,
    of the window's result gradient divided by the window's count (the
    divisor of `graph.avg_pool` with the same attributes). The result has
    the pooled input's type.

    ```mlir
    %dx = graph.avg_pool_grad %dy kernel = [3, 3] strides = [1, 1]
        pads = [1, 1, 1, 1] dilations = [1, 1] count_include_pad
        : tensor<8x4x16x16xf32> -> tensor<8x4x16x16xf32>
    ```
  }];
  let arguments = !con((ins Graph_FloatTensor:$result_grad),
                       Graph_PoolWindowArgs,
                       (ins UnitAttr:$count_include_pad));
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $result_grad `kernel` `=` $kernel_shape `strides` `=` $strides
    `pads` `=` $pads `dilations` `=` $dilations (`ceil_mode` $ceil_mode^)?
    (`count_include_pad` $count_include_pad^)? attr-dict `:`
    type($result_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHCONVOLUTIONOPS_TD
