#ifndef PIPECC_DIALECT_GRAPH_GRAPHSTATICOPS_TD
#define PIPECC_DIALECT_GRAPH_GRAPHSTATICOPS_TD

// Ops of shape and mask arithmetic: comparisons, logic, casts, concatenation,
// scans and triangles. Exporters apply them mostly to static data (shapes,
// positions, causal masks), where the graph dialect's constant evaluator
// (GraphEvaluation.h) folds them at import; on computed tensors they lower
// like any other op.

//===----------------------------------------------------------------------===//
// Comparisons and logic
//===----------------------------------------------------------------------===//

class Graph_CompareOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, Graph_Pointwise, InferTypeOpAdaptor,
                          Graph_CostOpInterface]> {
  let summary = "Elementwise " # what # " comparison with numpy broadcasting";
  let description = [{
    True where `lhs` }] # what # [{ `rhs`, elementwise; both operands have
    the same element type (floats compare as IEEE values: NaN compares
    false; booleans as 0 and 1) and their shapes broadcast as in numpy. The
    result is boolean.

    ```mlir
    %m = graph.}] # mnemonic # [{ %a, %b : tensor<4x4xi64>, tensor<i64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::pipecc::graph::detail::inferPredicateType(
          context, loc, adaptor.getOperands().getTypes(), types);
    }
  }];
}

def Graph_EqualOp : Graph_CompareOp<"equal", "equals">;
def Graph_LessOp : Graph_CompareOp<"less", "is less than">;
def Graph_LessEqualOp : Graph_CompareOp<"less_equal",
                                        "is less than or equal to">;
def Graph_GreaterOp : Graph_CompareOp<"greater", "is greater than">;
def Graph_GreaterEqualOp : Graph_CompareOp<"greater_equal",
                                           "is greater than or equal to">;

class Graph_LogicalOp<string mnemonic, string what, dag operands>
    : Graph_Op<mnemonic, [Pure, Graph_Pointwise, InferTypeOpAdaptor,
                          Graph_CostOpInterface]> {
  let summary = "Elementwise logical " # what;
  let description = [{
    Logical }] # what # [{ of boolean tensors, elementwise; the shapes of
    two operands broadcast as in numpy.
  }];
  let arguments = operands;
  let results = (outs Graph_BoolTensor:$result);
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::pipecc::graph::detail::inferPredicateType(
          context, loc, adaptor.getOperands().getTypes(), types);
    }
  }];
}

def Graph_NotOp : Graph_LogicalOp<"not", "negation",
                                  (ins Graph_BoolTensor:$input)> {
  let assemblyFormat = "$input attr-dict `:` type($input)";
}
def Graph_AndOp : Graph_LogicalOp<"and", "conjunction",
    (ins Graph_BoolTensor:$lhs, Graph_BoolTensor:$rhs)> {
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}
def Graph_OrOp : Graph_LogicalOp<"or", "disjunction",
    (ins Graph_BoolTensor:$lhs, Graph_BoolTensor:$rhs)> {
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs)";
}

def Graph_IsNaNOp : Graph_Op<"is_nan", [Pure, InferTypeOpAdaptor,
    Graph_CostOpInterface]> {
  let summary = "Elementwise test for NaN";
  let description = [{
    True where the floating-point input is NaN. Exporters guard attention
    probabilities with it (`where(is_nan(p), 0, p)`).

    ```mlir
    %n = graph.is_nan %p : tensor<2x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        $cppClass::Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::pipecc::graph::detail::inferPredicateType(
          context, loc, adaptor.getOperands().getTypes(), types);
    }
  }];
}

class Graph_ExtremumOp<string mnemonic, string what>
    : Graph_Op<mnemonic, [Pure, Graph_Pointwise, Commutative,
                          InferTypeOpAdaptor, Graph_CostOpInterface,
                          Gradient]> {
  let summary = "Elementwise " # what # " with numpy broadcasting";
  let description = [{
    The }] # what # [{ of two tensors of one element type, elementwise
    (ONNX }] # !if(!eq(mnemonic, "maximum"), "Max", "Min") # [{ of two
    inputs); a NaN operand gives NaN. The gradient goes to the operand
    selected (to `lhs` on ties), summed over broadcast dimensions.

    ```mlir
    %y = graph.}] # mnemonic # [{ %a, %b : tensor<4x4xf32>, tensor<f32>
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

def Graph_MaximumOp : Graph_ExtremumOp<"maximum", "maximum">;
def Graph_MinimumOp : Graph_ExtremumOp<"minimum", "minimum">;

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def Graph_CastOp : Graph_Op<"cast", [Pure, Graph_Pointwise, Graph_CostOpInterface,
                                     Gradient]> {
  let summary = "Converts the elements of a tensor to another element type";
  let description = [{
    The input's elements converted to the result's element type, as ONNX
    Cast does: floats round to nearest even, floats to integers truncate
    toward zero (saturating at the integer's range, NaN becomes 0),
    integers wrap to narrower integers, anything to boolean is "not zero",
    booleans are 0 or 1. The shapes are equal. Between floating-point
    types the gradient is cast back; other casts carry none.

    ```mlir
    %f = graph.cast %mask : tensor<4x4xi1> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Concatenation and strided slices
//===----------------------------------------------------------------------===//

def Graph_ConcatOp : Graph_Op<"concat", [Pure, InferTypeOpAdaptor,
    Graph_CostOpInterface, Gradient]> {
  let summary = "Joins tensors along one axis";
  let description = [{
    The inputs, of one element type and equal shapes except along `axis`,
    placed one after another along `axis`. The gradient of each input is
    its slice of the result's gradient.

    ```mlir
    %y = graph.concat %a, %b axis = 1
        : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
}

def Graph_StridedSliceOp : Graph_Op<"strided_slice", [Pure,
    InferTypeOpAdaptor, Graph_CostOpInterface]> {
  let summary = "Every stride-th element of a box of a tensor";
  let description = [{
    Result element `j` (a multi-index) reads input element
    `offsets[i] + j_i * strides[i]` in each dimension `i`; strides are
    non-zero and may be negative (a reversal). Exporters write such slices
    of constants (ONNX Slice with steps), which the constant evaluator
    folds; graph.slice is the unit-stride case on computed tensors.

    ```mlir
    %r = graph.strided_slice %c offsets = [3] sizes = [4] strides = [-1]
        : tensor<4xi64> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input `offsets` `=` $offsets `sizes` `=` $sizes `strides` `=` $strides
    attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Scans and triangles
//===----------------------------------------------------------------------===//

def Graph_CumSumOp : Graph_Op<"cumsum", [Pure, SameOperandsAndResultType,
    InferTypeOpInterface, Graph_CostOpInterface, Gradient]> {
  let summary = "Cumulative sum along one axis";
  let description = [{
    Element `i` along `axis` is the sum of the input's elements `0..i`
    (ONNX CumSum); `exclusive` leaves out element `i` itself, `reverse`
    sums from the end (`i..n-1`). The gradient is the cumulative sum of the
    result's gradient in the other direction, with the same `exclusive`.

    ```mlir
    %p = graph.cumsum %x axis = 1 exclusive : tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                       UnitAttr:$exclusive, UnitAttr:$reverse);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = [{
    $input `axis` `=` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)?
    attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Graph_TriluOp : Graph_Op<"trilu", [Pure, SameOperandsAndResultType,
    InferTypeOpInterface, Graph_CostOpInterface, Gradient]> {
  let summary = "Upper or lower triangle of the innermost matrices";
  let description = [{
    ONNX Trilu on the two innermost dimensions `(r, c)`: with `upper`,
    elements with `c - r >= k` are kept, otherwise those with `c - r <= k`;
    the rest become zero (false for booleans). The gradient is the same
    triangle of the result's gradient.

    ```mlir
    %u = graph.trilu %x upper k = 1 : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, UnitAttr:$upper, I64Attr:$k);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $input (`upper` $upper^)? `k` `=` $k attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

#endif // PIPECC_DIALECT_GRAPH_GRAPHSTATICOPS_TD
