#ifndef PIPECC_CONVERSION_PASSES_TD
#define PIPECC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerGraphToLinalg : Pass<"pipecc-lower-graph-to-linalg",
                              "::mlir::func::FuncOp"> {
  let summary = "Lowers graph ops to linalg, scf, tensor, arith and math on tensors";
  let description = [{
    Rewrites every graph op into upstream ops with value semantics:
    elementwise ops become `linalg.generic` with numpy-broadcasting indexing
    maps, matmuls the named `linalg.(batch_)matmul(_transpose_a|_b)` ops (so
    that `pipecc-matmul-to-blas` can call BLAS after bufferization),
    reductions `linalg.generic` with a filled init (0 or -inf). Softmax,
    its gradient and cross-entropy (and its gradient) become one `scf.for`
    nest over the rows whose body runs the row's passes (maximum, then
    sum of `exp(x - max)` storing each exp, then the output) on scalars,
    reading with `tensor.extract` and writing with `tensor.insert`; the
    gather's gradient is a scatter-add loop over the gradient's elements.

    Every graph op must be converted: one that is left is an error naming it.

    ```mlir
    %y = graph.add %a, %b : tensor<4x3xf32>, tensor<3xf32>
    // becomes
    %e = tensor.empty() : tensor<4x3xf32>
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1),
                                          (d0, d1) -> (d1),
                                          (d0, d1) -> (d0, d1)], ...}
        ins(%a, %b : ...) outs(%e : tensor<4x3xf32>) { arith.addf ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FuseElementwise : Pass<"pipecc-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuses producer-consumer elementwise linalg.generic ops";
  let description = [{
    Upstream's elementwise fusion patterns alone: a generic whose result has
    one use is fused into the generic consuming it. Unlike
    `linalg-fuse-elementwise-ops` this does not propagate reshapes through
    linalg ops, which would turn the named matmuls that
    `pipecc-matmul-to-blas` looks for into generics.

    A fused body holds at most `max-body-ops` ops: LLVM's InstCombine and
    SLP vectorizer are quadratic in a long chain of scalar ops (the
    backward of 1,000 Relus fused into one body took seconds per rank),
    and each fusion copies the bodies it joins. The values a shorter fusion
    stores and reloads are the same floats, so results do not change.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "unsigned", /*default=*/"64",
           "Most ops in a fused body (0: no limit)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MatmulToBlas : Pass<"pipecc-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "Turns f32 linalg matmuls on memrefs into runtime sgemm calls";
  let description = [{
    After bufferization, rewrites `linalg.matmul`, `linalg.matmul_transpose_a`,
    `linalg.matmul_transpose_b` and their `batch_` variants whose operands are
    f32 memrefs with a unit innermost stride into calls of the runtime's
    `pipecc_rt_sgemm` / `pipecc_rt_sgemm_batched` (declared private in the
    module, pointers passed as `!llvm.ptr`). Leading dimensions, batch
    strides and offsets come from `memref.extract_strided_metadata`.

    linalg matmuls accumulate into their output: the call uses beta = 1,
    except when the op right before it fills the same output buffer with
    zero, in which case that fill is dropped and beta = 0.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
  let statistics = [
    Statistic<"numGemmCalls", "gemm-calls", "Matmuls turned into sgemm calls">,
    Statistic<"numZeroFillsFolded", "zero-fills-folded",
              "Zero fills replaced by beta = 0">,
  ];
}

def CopyAliasedResults : Pass<"pipecc-copy-aliased-results",
                              "::mlir::func::FuncOp"> {
  let summary = "Gives every tensor result of a function a buffer of its own";
  let description = [{
    A function result that is an argument, or a value returned twice,
    becomes a `linalg.copy` into a fresh tensor. After one-shot
    bufferization each result is then a buffer of its own, which
    buffer-results-to-out-params replaces by the caller's (upstream's
    hoisting fails on a result that is a block argument). It runs right
    before bufferization: canonicalization would fold the copies away.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def SplitEmptyTensors : Pass<"pipecc-split-empty-tensors",
                             "::mlir::func::FuncOp"> {
  let summary = "Gives every use of a tensor.empty (or of its fill) its own";
  let description = [{
    CSE merges the `tensor.empty` inits of same-shaped ops into one value,
    and one-shot bufferization then checks every in-place write into it
    against every other use: quadratic in the ops of a function. Run right
    before bufferization, after the last CSE; the allocations it makes are
    the same as before. A `linalg.fill` of a `tensor.empty` with several
    uses (CSE merges the zero inits of same-shaped matmuls and reductions)
    is likewise cloned for each use: bufferization would otherwise fill one
    buffer and copy it into a fresh one for every user.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ApproximateMath : Pass<"pipecc-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replaces f32 math.exp, math.erf and math.tanh by inline "
                "polynomials";
  let description = [{
    Upstream's polynomial approximations, applied to the f32 `math.exp`,
    `math.erf` and `math.tanh` ops only: inline arithmetic instead of one
    libm call per element, so the loops around them (softmax, GELU) can
    vectorize; the `math.fma` and `math.floor` they use are expanded too
    (libm calls on a baseline x86-64). Against libm in double precision:
    exp within 1 ulp over the normal range (results below 2^-126 flush to
    zero), erf within 5 ulp, tanh within 6 ulp (saturating at
    +-(1 - 1.8e-7)). Other math ops keep their libm calls.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def OutlineOpGroups : Pass<"pipecc-outline-op-groups", "::mlir::ModuleOp"> {
  let summary = "Splits long functions on memrefs into calls of bounded groups";
  let description = [{
    Some of LLVM's loop passes are quadratic in the number of loops of one
    function (IndVarSimplify asks ScalarEvolution whether each loop's entry
    is guarded, and that walks back over every loop before it), so a stage
    function of a few thousand ops took minutes at -O3. This pass bounds
    the size of every function: in a function with more than `max-ops`
    top-level ops that become loops or calls, consecutive runs of at most
    `max-ops` such ops move into private `no_inline` functions
    (`<name>_part<k>`), called in their place.

    It runs on memrefs, after deallocation and the BLAS calls. An outlined
    op is one without results (a linalg op on buffers, a copy, a call); the
    ops between them that stay behind are pure or allocations, which
    already come before the call, and deallocations, which move after it.
    Any other op ends a group. Values from outside a group are passed as
    arguments (memrefs with static shapes and identity layouts, scalars,
    pointers); constants and other pure producers are cloned instead, so
    views and metadata never cross a call. An op that would need any other
    argument stays where it is. The order of every memory access is kept,
    so results are bit-identical.
  }];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"32",
           "Most loop nests or calls in one function (0: never split)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numGroups", "groups", "Functions outlined">,
  ];
}

def EmulateBF16 : Pass<"pipecc-emulate-bf16", "::mlir::ModuleOp"> {
  let summary = "Computes bf16 arith and math ops in f32, rounding each "
                "result to bf16";
  let description = [{
    For targets without bf16 arithmetic (the CPU target: x86-64 has bf16
    storage only). Every arith and math op on bf16 extends its operands to
    f32, computes in f32 and truncates the result to bf16 with
    round-to-nearest-even: the result is the bf16 nearest the exact
    result of the op on bf16 inputs whenever the f32 result is (f32 has
    more than twice bf16's 8-bit significand, so the double rounding of
    +, -, *, / and sqrt is exact). The `arith.extf`/`arith.truncf`
    between bf16 and f32 then become integer operations on the bit
    patterns (NaN stays NaN), so no compiler-runtime call is needed.
    Runs on loops (after linalg is lowered), before the arith and math
    lowerings to LLVM. Modules without bf16 are unchanged.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // PIPECC_CONVERSION_PASSES_TD
