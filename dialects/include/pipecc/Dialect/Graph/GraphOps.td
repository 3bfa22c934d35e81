#ifndef PIPECC_DIALECT_GRAPH_GRAPHOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHOPS_TD

include "pipecc/Dialect/Graph/GraphDialect.td"
include "pipecc/Dialect/Graph/GraphInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Graph_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Graph_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Graph_Tensor : StaticShapeTensorOf<[AnyFloat, I1, I32, I64]>;
// Arithmetic on integers is shape and position arithmetic, which the
// constant evaluator folds; it lowers too.
def Graph_NumericTensor : StaticShapeTensorOf<[AnyFloat, I32, I64]>;

// Every graph op prices itself; those whose cost is not one arithmetic
// operation per result element override `getCost`.
defvar CostOverride = DeclareOpInterfaceMethods<Graph_CostOpInterface,
                                                ["getCost"]>;
// Differentiable ops implement their rule in GraphGradients.cpp.
defvar Gradient = DeclareOpInterfaceMethods<Graph_GradientOpInterface,
                                            ["buildGradients"]>;

//===----------------------------------------------------------------------===//
// Sources: constants and parameters
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike, Pure,
    InferTypeOpAdaptor, CostOverride]> {
  let summary = "A tensor constant";
  let description = [{
    A constant tensor; its type is the type of `value`.

    ```mlir
    %c = graph.constant dense<[4, 64]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

// Not Pure: a parameter belongs to the model's checkpoint even when no op
// reads it, so canonicalize and cse must not erase it.
def Graph_ParamOp : Graph_Op<"param", [CostOverride]> {
  let summary = "A named model parameter";
  let description = [{
    A model parameter, named by the ONNX initializer it was imported from.
    `trainable` parameters receive gradients and optimizer updates. The
    optional `init` value (written after `=`, with the parameter's type)
    holds the initial value; the driver writes it to each rank's weights
    file. A parameter no op reads is kept (it has unknown side effects, so
    no pass erases it): it is loaded and saved with the others, unchanged.

    ```mlir
    %w = graph.param "layers.0.weight" trainable : tensor<256x64xf32>
    %b = graph.param "layers.0.bias" trainable : tensor<256xf32> = dense<0.0>
    ```
  }];
  let arguments = (ins StrAttr:$param_name, UnitAttr:$trainable,
                       OptionalAttr<ElementsAttr>:$init);
  let results = (outs Graph_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise operations
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_Op<mnemonic, traits # [Pure, Graph_Pointwise, InferTypeOpAdaptor,
                                    Graph_CostOpInterface, Gradient]> {
  let summary = "Elementwise " # what # " with numpy broadcasting";
  let description = [{
    Elementwise }] # what # [{ of two tensors of the same element type
    (floating point, or integers, where division truncates toward zero). Shapes broadcast as in numpy: trailing dimensions are
    aligned and a dimension of size 1 stretches to the other's size.

    ```mlir
    %y = graph.}] # mnemonic # [{ %a, %b : tensor<16x256xf32>, tensor<256xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::pipecc::graph::detail::inferBroadcastType(
          loc, adaptor.getLhs().getType(), adaptor.getRhs().getType(), types);
    }
  }];
}

def Graph_AddOp : Graph_BinaryOp<"add", "addition", [Commutative]>;
def Graph_SubOp : Graph_BinaryOp<"sub", "subtraction">;
def Graph_MulOp : Graph_BinaryOp<"mul", "multiplication", [Commutative]>;
def Graph_DivOp : Graph_BinaryOp<"div", "division">;

class Graph_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_Op<mnemonic, traits # [Pure, Graph_Pointwise,
                                   SameOperandsAndResultType,
                                   InferTypeOpInterface, Gradient]> {
  let summary = what;
  let description = [{
    Applies }] # what # [{ to each element of a floating-point tensor.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<16x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_ReluOp : Graph_UnaryOp<"relu", "the rectifier max(x, 0)",
                                 [Graph_CostOpInterface]>;
def Graph_NegOp : Graph_UnaryOp<"neg", "negation", [Graph_CostOpInterface]>;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "the hyperbolic tangent",
                                 [CostOverride]>;
def Graph_ExpOp : Graph_UnaryOp<"exp", "the exponential", [CostOverride]>;
def Graph_LogOp : Graph_UnaryOp<"log", "the natural logarithm",
                                [CostOverride]>;

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_Op<"matmul", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Batched matrix product with optional transposed operands";
  let description = [{
    The product of the two innermost dimensions of `lhs` and `rhs`, each
    optionally transposed first; leading (batch) dimensions broadcast as in
    numpy. Both operands have rank 2 or more. An operand that is a
    `graph.transpose` of only its two innermost dims canonicalizes into the
    transpose flag (a Linear's exported `Transpose(weight)`), so neither the
    forward nor the gradient copies the weight.

    ```mlir
    %y = graph.matmul %x, %w transpose_rhs
        : tensor<16x64xf32>, tensor<256x64xf32> -> tensor<16x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)?
    (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_Op<mnemonic, traits # [Pure, InferTypeOpAdaptor, CostOverride]> {
  let summary = "Reduces a tensor by " # what # " along axes";
  let description = [{
    Reduces `input` by }] # what # [{ along each axis in `axes` (distinct,
    in range, in any order). With `keep_dims` the reduced axes stay as
    dimensions of size 1; otherwise they are removed.

    ```mlir
    %s = graph.}] # mnemonic # [{ %x axes = [1] keep_dims
        : tensor<16x64xf32> -> tensor<16x1xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keep_dims);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `axes` `=` $axes (`keep_dims` $keep_dims^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> loc,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::pipecc::graph::detail::inferReduceType(
          loc, adaptor.getInput().getType(), adaptor.getAxes(),
          adaptor.getKeepDims(), types);
    }
    ::pipecc::graph::OpCost $cppClass::getCost() {
      return ::pipecc::graph::detail::reductionCost(*this);
    }
  }];
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "summation", [Gradient]>;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "the mean",
                                        [Gradient]>;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "the maximum">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure, CostOverride, Gradient]> {
  let summary = "Reinterprets a tensor with another static shape";
  let description = [{
    The same elements, in the same row-major order, under the result's
    shape. The element counts must agree.

    ```mlir
    %y = graph.reshape %x : tensor<8x16x64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Permutes the dimensions of a tensor";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.

    ```mlir
    %y = graph.transpose %x perm = [1, 0]
        : tensor<256x64xf32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `perm` `=` $perm attr-dict `:` type($input) `->` type($result)
  }];
}

def Graph_BroadcastOp : Graph_Op<"broadcast", [Pure, CostOverride,
    Gradient]> {
  let summary = "Broadcasts a tensor to a larger shape";
  let description = [{
    Numpy broadcasting of `input` to the result's shape: trailing dimensions
    align, and dimensions of size 1 (or missing leading ones) repeat.
    Gradients of broadcasting ops sum back over the repeated dimensions; this
    op is the gradient of those sums.

    ```mlir
    %y = graph.broadcast %x : tensor<16x1xf32> -> tensor<16x256xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation and losses
//===----------------------------------------------------------------------===//

def Graph_SoftmaxOp : Graph_Op<"softmax", [Pure, SameOperandsAndResultType,
    InferTypeOpInterface, CostOverride, Gradient]> {
  let summary = "Softmax along one axis";
  let description = [{
    `exp(x - max(x)) / sum(exp(x - max(x)))` along `axis`.

    ```mlir
    %p = graph.softmax %x axis = 1 : tensor<16x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CrossEntropyOp : Graph_Op<"cross_entropy", [Pure,
    InferTypeOpAdaptor, CostOverride, Gradient]> {
  let summary = "Mean softmax cross-entropy of logits against class labels";
  let description = [{
    `logits` is `[N, C]` or `[N, C, d1, ...]` and `labels` holds class
    indices of shape `[N]` or `[N, d1, ...]`. The result is the mean over all
    label positions of `-log(softmax(logits, axis 1)[label])`. Positions whose
    label equals `ignore_index` count neither in the sum nor in the mean.

    ```mlir
    %l = graph.cross_entropy %logits, %labels
        : tensor<16x10xf32>, tensor<16xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels)
    `->` type($result)
  }];
}

def Graph_MSELossOp : Graph_Op<"mse_loss", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Mean squared error";
  let description = [{
    The mean over all elements of `(prediction - target)^2`; both operands
    have the same type.

    ```mlir
    %l = graph.mse_loss %y, %t : tensor<16x1xf32>, tensor<16x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$prediction,
                       Graph_FloatTensor:$target);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` type($prediction) `,` type($target)
    `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Gradient helpers: ops that only gradient rules create
//===----------------------------------------------------------------------===//

def Graph_ReluGradOp : Graph_Op<"relu_grad", [Pure, Graph_Pointwise, AllTypesMatch<["input",
    "result_grad", "result"]>, Graph_CostOpInterface]> {
  let summary = "Gradient of relu";
  let description = [{
    `result_grad` where `input` is positive, zero elsewhere. `input` may be
    relu's input or its result: both are positive at the same places.

    ```mlir
    %dx = graph.relu_grad %x, %dy : tensor<16x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Graph_FloatTensor:$result_grad);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $result_grad attr-dict `:` type($input)";
}

def Graph_CrossEntropyGradOp : Graph_Op<"cross_entropy_grad", [Pure,
    AllTypesMatch<["logits", "result"]>, CostOverride]> {
  let summary = "Gradient of the mean cross-entropy with respect to logits";
  let description = [{
    `(softmax(logits, axis 1) - onehot(labels)) * loss_grad / count`, where
    `count` is the number of label positions not equal to `ignore_index`;
    ignored positions get a zero gradient. `loss_grad` is the scalar gradient
    of the loss.

    ```mlir
    %dl = graph.cross_entropy_grad %logits, %labels, %dloss
        : tensor<16x10xf32>, tensor<16xi64>, tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IndexTensor:$labels,
                       Graph_FloatTensor:$loss_grad,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $loss_grad attr-dict `:` type($logits) `,`
    type($labels) `,` type($loss_grad)
  }];
}

//===----------------------------------------------------------------------===//
// Transformer building blocks: more elementwise functions, selection,
// slicing and embedding lookups
//===----------------------------------------------------------------------===//

def Graph_BoolTensor : StaticShapeTensorOf<[I1]>;

def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "the square root", [CostOverride]>;
def Graph_ErfOp : Graph_UnaryOp<"erf", "the Gauss error function",
                                [CostOverride]>;

def Graph_WhereOp : Graph_Op<"where", [Pure, Graph_Pointwise, InferTypeOpAdaptor,
    Graph_CostOpInterface, Gradient]> {
  let summary = "Elementwise selection with numpy broadcasting";
  let description = [{
    `lhs` where `condition` is true, else `rhs`. The three shapes broadcast
    as in numpy; `lhs` and `rhs` have the same element type.
    Attention masks use it with a constant condition and a `-inf` operand.

    ```mlir
    %y = graph.where %mask, %ninf, %scores
        : tensor<16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$lhs,
                       Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,`
    type($lhs) `,` type($rhs)
  }];
}

def Graph_SliceOp : Graph_Op<"slice", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "A contiguous box of a tensor";
  let description = [{
    The elements `input[offsets[i] + j_i]` for `0 <= j_i < sizes[i]`: one
    offset and one size per dimension, the box inside the input.

    ```mlir
    %q = graph.slice %qkv offsets = [0, 0, 64] sizes = [8, 16, 64]
        : tensor<8x16x192xf32> -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes attr-dict `:`
    type($input) `->` type($result)
  }];
}

def Graph_PadOp : Graph_Op<"pad", [Pure, CostOverride, Gradient]> {
  let summary = "Places a tensor inside a larger zero tensor";
  let description = [{
    A tensor of the result's type, zero (false) except for the box starting
    at `low` (one offset per dimension), which holds `input`. It is the
    gradient of `graph.slice`, and ONNX Pad with a zero constant.

    ```mlir
    %g = graph.pad %dq low = [0, 0, 64]
        : tensor<8x16x64xf32> -> tensor<8x16x192xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$low);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `low` `=` $low attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure, InferTypeOpAdaptor,
    CostOverride, Gradient]> {
  let summary = "Gathers slices of a tensor along one axis (embeddings)";
  let description = [{
    ONNX Gather: the result is `data` with dimension `axis` replaced by the
    dimensions of `indices`; each index selects one slice along `axis`.
    Negative indices count from the end. An embedding lookup is a gather of
    the table's rows (`axis = 0`).

    ```mlir
    %e = graph.gather %table, %ids axis = 0
        : tensor<128x64xf32>, tensor<8x16xi64> -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `axis` `=` $axis attr-dict `:` type($data) `,`
    type($indices) `->` type($result)
  }];
}

def Graph_GatherGradOp : Graph_Op<"gather_grad", [Pure, CostOverride]> {
  let summary = "Gradient of gather: scatter-add into a zero tensor";
  let description = [{
    A zero tensor of the result's type (gather's `data` type) to which each
    slice of `result_grad` is added at the position its index selects along
    `axis`: repeated indices accumulate.

    ```mlir
    %dt = graph.gather_grad %ids, %de axis = 0
        : tensor<8x16xi64>, tensor<8x16x64xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Graph_IndexTensor:$indices,
                       Graph_FloatTensor:$result_grad, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $result_grad `axis` `=` $axis attr-dict `:` type($indices)
    `,` type($result_grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

include "pipecc/Dialect/Graph/GraphConvolutionOps.td"
include "pipecc/Dialect/Graph/GraphTokenLossOps.td"
include "pipecc/Dialect/Graph/GraphNormalizationOps.td"
include "pipecc/Dialect/Graph/GraphActivationOps.td"
include "pipecc/Dialect/Graph/GraphNLLLossOps.td"
include "pipecc/Dialect/Graph/GraphGatherNDOps.td"
include "pipecc/Dialect/Graph/GraphStaticOps.td"

#endif // PIPECC_DIALECT_GRAPH_GRAPHOPS_TD
