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

def FuseColumnSums : Pass<"pipecc-fuse-column-sums", "::mlir::func::FuncOp"> {
  let summary = "Adds an elementwise result's column sum in the loop that "
                "writes it";
  let description = [{
    On buffers (after bufferization, CPU pipeline): an all-parallel 2-D
    elementwise `linalg.generic` writing a buffer that a later op in the
    same block sums over its rows (`[reduction, parallel]`,
    `out[j] += in[i, j]`, `out` zeroed by a `linalg.fill` or, after
    pipecc-accumulate-gradients, a gradient accumulator) becomes one
    generic with both outputs, at the producer's place: the loop that
    computes a ReLU's or GELU's backward (dL/dz) adds it into the bias
    gradient as it stores it, instead of a second pass reading the whole
    matrix back. Ops in between may read the stored matrix but not write
    it, nor touch the sums (ops other than linalg ops on whole buffers,
    allocations and pure ops count as touching everything). The sum keeps
    its order (rows in turn), so results are bitwise the same.
  }];
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

    A 2-D matmul whose B operand is a stage function argument bound to a
    parameter (`pipeline.param` in the function's `pipeline.stage_abi`)
    calls `pipecc_rt_sgemm_weight` (same arguments): the runtime may keep
    that B packed for its kernel from one call to the next within a step.

    A 2-D matmul into a zero-filled temporary C that only the next op reads,
    an elementwise `D = C + bias[j]` (optionally followed by the ReLU
    select; C possibly reshaped to D's rank), calls
    `pipecc_rt_sgemm_epilogue` instead: the product writes D and adds the
    bias (and ReLU) in its last store, and the loop and C go (a Linear's
    bias no longer costs a pass over its output). Not where D may share
    bytes with A or B in the stage workspace.

    With `device` naming a measured profile that timed the BLAS and the
    engine apart (`blas_tables`, `engine_tables`), a 2-D product of static
    shape whose B is not a parameter runs on the faster of the two
    (`GemmRateTable::plainChoice` of the profile's rates for a pipeline of
    `ranks` ranks, the cost model's rule): `pipecc_rt_sgemm_epilogue` with
    `PIPECC_RT_GEMM_ON_BLAS` or `PIPECC_RT_GEMM_ON_ENGINE` (and no bias
    unless it has one). Otherwise the runtime's own rule decides. Which is
    faster differs between CPUs and BLAS builds (docs/design.md, "Engine
    or BLAS for a weight gradient is a per-CPU question").
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Device profile whose measured paths choose where plain products "
           "run (empty: the runtime's rule)">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "Ranks of the pipeline: which of the profile's tables applies">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
  let statistics = [
    Statistic<"numGemmCalls", "gemm-calls", "Matmuls turned into sgemm calls">,
    Statistic<"numOnBlas", "on-blas",
              "Plain products the device profile sends to the BLAS">,
    Statistic<"numOnEngine", "on-engine",
              "Plain products the device profile sends to the engine">,
    Statistic<"numWeightGemmCalls", "weight-gemm-calls",
              "Of those, sgemm calls whose B is a stage parameter">,
    Statistic<"numZeroFillsFolded", "zero-fills-folded",
              "Zero fills replaced by beta = 0">,
    Statistic<"numEpilogues", "epilogues",
              "Bias (and ReLU) loops folded into the product's last store">,
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

def AccumulateGradients : Pass<"pipecc-accumulate-gradients",
                               "::mlir::ModuleOp"> {
  let summary = "Stage functions add weight gradients into the accumulator";
  let description = [{
    Runs after buffer-results-to-out-params. A stage function result that is
    the gradient of exactly one parameter and that no action of the rank
    reads (`pipecc::accumulatesInPlace`) is the parameter's gradient
    accumulator: the function adds into the out-param instead of
    overwriting it, and its `pipeline.stage_abi` result binding gets
    `accumulate`, which the host program honours by passing the
    accumulator (the runtime zeroes it once per step). A zero fill followed
    only by ops that add into the buffer (matmuls, whose sgemm then runs
    with beta = 1, and sum reductions) loses the fill; any other producer
    writes a temporary that one loop adds into the accumulator.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numAccumulated", "accumulated-results",
              "Gradient results accumulated in place">,
    Statistic<"numFillsDropped", "zero-fills-dropped",
              "Zero fills dropped (the producers add into the accumulator)">,
    Statistic<"numAddLoops", "add-loops",
              "Gradients written to a temporary and added by a loop">,
  ];
}

def PlanStageWorkspace : Pass<"pipecc-plan-stage-workspace",
                              "::mlir::ModuleOp"> {
  let summary = "Places every static temporary of the stage functions in "
                "one workspace planned at compile time";
  let description = [{
    Runs after bufferization, before buffer deallocation. Every
    `memref.alloc` of static shape in a function becomes a `memref.view` at
    a compile-time offset of one module-level workspace
    (`memref.global @pipecc_stage_workspace`, 64-byte aligned, in the
    executable's zero-initialised data): offsets are 64-byte aligned and
    temporaries whose lifetimes (first to last use of the buffer or any of
    its aliases, in the function's op order) are disjoint share bytes. A
    rank runs one stage function at a time, so all functions share the
    workspace, sized by the largest; its size is recorded on the module as
    `pipeline.workspace_bytes`. Nothing is freed: deallocation then finds no
    allocation. Allocations of dynamic shape, or in functions with more than
    one block, stay heap allocations and are counted.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numPlanned", "planned-allocs",
              "Allocations placed in the workspace">,
    Statistic<"numUnplanned", "unplanned-allocs",
              "Allocations left on the heap (dynamic shape or control flow)">,
    Statistic<"workspaceBytes", "workspace-bytes",
              "Bytes of the workspace (the largest function's plan)">,
  ];
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

def HoistInvariantLoads : Pass<"pipecc-hoist-invariant-loads",
                               "::mlir::func::FuncOp"> {
  let summary = "Moves loads a loop does not change in front of it";
  let description = [{
    A `memref.load` directly in an `scf.for` body (constant bounds, at least
    one iteration) whose indices are defined outside the loop moves in
    front of the loop when nothing in the loop may write what it reads: the
    loop writes only through `memref.store`, and every store's buffer is a
    `memref.view` of the same global at a constant byte offset whose bytes
    do not overlap the load's, or a view of another global (through
    expand_shape, collapse_shape and cast). Any other buffer (a function
    argument) may overlap. Inner loops go first, so a value climbs every
    loop it is invariant in. The stage workspace places buffers that are
    live together apart, and this is what LLVM cannot see: the fused loops'
    per-row values (a layer norm's mean and 1 / std) were reloaded in every
    iteration and the loops stayed scalar. The values are unchanged.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Loads moved in front of their loop">,
  ];
}

def LowerReductionsToLoops : Pass<"pipecc-lower-reductions-to-loops",
                                  "::mlir::func::FuncOp"> {
  let summary = "Lowers row reductions on buffers to loops that carry the "
                "running values";
  let description = [{
    A `linalg.generic` on buffers with static loop ranges, its reduction
    iterators after its parallel ones, outputs indexed by parallel loops
    only and no output that is also an input, becomes `scf.for` loops over
    the parallel dimensions; in them each output is loaded once, the
    reduction loops carry the running values (`iter_args`) through the
    cloned body, and the results are stored once. Upstream's linalg-to-loops
    loads and stores the output in every iteration, which keeps the sum in
    memory and scalar unless LLVM proves the buffers apart. Other ops are
    left to linalg-to-loops. The values and their order are unchanged.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numLowered", "lowered", "Reductions lowered to loops">,
  ];
}

def ReassociateReductions : Pass<"pipecc-reassociate-reductions",
                                 "::mlir::ModuleOp"> {
  let summary = "Marks the float arithmetic of reductions `reassoc` so that "
                "LLVM vectorizes them";
  let description = [{
    A float sum in program order is a serial chain that LLVM's loop
    vectorizer keeps scalar. The float arithmetic in the body of every
    `linalg.generic` with a reduction iterator, and of every `scf.for` that
    carries a float value, gets the `reassoc` fast-math flag (added to the
    flags it has), so the sum runs in vector lanes. No other flag is set:
    NaN and infinity still propagate. ONNX fixes no summation order; the
    compiled order is still the same on every run.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numMarked", "marked-ops", "Float ops marked reassoc">,
  ];
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

def RecordStageAbi : Pass<"pipecc-record-stage-abi", "::mlir::ModuleOp"> {
  let summary = "Records each stage function's tensor bindings in an attribute "
                "that survives the stage lowering";
  let description = [{
    The first pass over a rank module. For every stage function (a
    `func.func` with `pipeline.kind`) it writes `pipeline.stage_abi`, a
    dictionary the host program pass reads after the stage lowering has
    turned the function into an `llvm.func` of bare pointers:

    ```mlir
    pipeline.stage_abi = {kind = "forward",
      args = [{pipeline.input = "x", type = tensor<4x8xf32>},
              {pipeline.param = "fc.weight", type = tensor<3x8xf32>},
              {pipeline.input = "labels", type = tensor<4xi64>,
               num_classes = 3 : i64, ignore_index = -100 : i64} ],
      results = [{pipeline.tensor = "loss", pipeline.loss, type = tensor<f32>} ]}
    ```

    Each argument and result keeps its `pipeline.*` attributes and gains its
    tensor type; an integer input a cross-entropy indexes with gains the
    class count and the label it ignores. The function's own argument and
    result attributes and its `pipeline.stage`, `pipeline.kind`,
    `pipeline.send` and `pipeline.recv` are removed: the stage lowering has
    no use for them. A function attribute is used because the upstream
    conversions (bufferization, func-to-llvm) keep a function's discardable
    attributes while they rewrite its signature.
  }];
}

def LowerRankProgram : Pass<"pipecc-lower-rank-program", "::mlir::ModuleOp"> {
  let summary = "Turns a rank module's pipeline.program into the host code "
                "of a rank executable";
  let description = [{
    The last pass over a rank module, after the stage lowering. The module
    holds the scheduled `pipeline.pipeline` (all ranks' programs, so that
    every rank numbers the message tensors alike), its own rank in
    `pipeline.rank`, the parameters in `pipeline.parameters`, and its stage
    functions as `llvm.func`s taking bare pointers (inputs, then one output
    buffer per result) with the `pipeline.stage_abi` of
    `pipecc-record-stage-abi`. The pass adds, in the LLVM dialect:

    - `pipecc_step(ctx)`: the rank's program in order, through the runtime's
      C API (`runtime/include/pipecc/Runtime/Runtime.h`): loading data,
      calling the stage functions on the buffers of the micro-batch,
      accumulating gradients, non-blocking sends and receives
      (`pipecc_rt_isend` / `pipecc_rt_irecv`, each waited for with
      `pipecc_rt_wait` where its buffer is next used, by the rule of
      `pipecc/Conversion/MessageWaits.h`), all-reduces. Losses
      are reported with `pipecc_rt_report_loss_at`, which reads the value
      where the target keeps it (device memory on CUDA): the host code
      never loads from a buffer itself.
    - `pipecc_buffers`: the buffer table (`pipecc_rt_buffer_desc`), and
      `pipecc_program` (`pipecc_rt_rank_program`) at the runtime's ABI
      version, naming `target`. When the module carries the rank's static
      memory plan (`pipeline.memory_plan`: arena_bytes, and per buffer-table
      entry its name, slots and offset), each entry takes its slots and
      offset and the program the arena size; a plan whose entries do not
      name this table's buffers in order is an error. Without one, slots 0,
      offsets -1 and arena_bytes 0 let the runtime place the buffers.
    - `main`, calling `pipecc_rt_main`.

    The `pipeline.pipeline` and the `pipeline.stage_abi` attributes are
    removed. A stage function whose pointer count does not match its ABI,
    an action naming a missing function or buffer, or an element type the
    runtime has no buffers of is an error.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target named in the program constant (cpu or cuda)">,
    Option<"microbatchSize", "microbatch-size", "int64_t", /*default=*/"0",
           "Samples per micro-batch (0: the runtime takes it from the data)">,
    Option<"learningRate", "learning-rate", "double", /*default=*/"0.1",
           "The program's default SGD learning rate">,
    Option<"inference", "inference", "bool", /*default=*/"false",
           "A forward-only program: the runtime writes the graph outputs">,
    Option<"countedMeanLoss", "counted-mean-loss", "bool", /*default=*/"false",
           "The loss is a mean over counted labels (on every rank)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA stage lowering (CUDAPipeline.cpp)
//===----------------------------------------------------------------------===//

def MatmulToCublas : Pass<"pipecc-matmul-to-cublas", "::mlir::ModuleOp"> {
  let summary = "Turns f32/bf16 linalg matmuls on memrefs into cuBLASLt calls";
  let description = [{
    The CUDA counterpart of `pipecc-matmul-to-blas`, run at the same point
    (after bufferization and deallocation): `linalg.(batch_)matmul
    (_transpose_a|_b)` on memrefs with a unit innermost stride, A and B f32
    or bf16 and C f32 (or bf16 when A and B are), become calls of the CUDA
    runtime's `pipecc_rt_cuda_gemm` / `pipecc_rt_cuda_gemm_batched`
    (runtime/include/pipecc/Runtime/CUDA/Kernels.h), with device pointers
    as `!llvm.ptr` and the element types as the runtime's dtype codes.
    beta = 0 replaces a zero fill of C right before the matmul, as on the
    CPU.

    Epilogue: when the op right after the matmul is a `linalg.generic`
    that adds a vector broadcast along the rows to the matmul's result
    (`D[i][j] = C[i][j] + bias[j]`), optionally followed by a ReLU
    (`max(x, 0)`) in the same body, and C's only other use is its
    deallocation, the generic is folded into the call: the gemm writes
    into D with the BIAS (| RELU) epilogue. GELU is not fused: cuBLASLt's
    is the tanh approximation and GELU imports in its erf form.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
  let statistics = [
    Statistic<"numGemmCalls", "gemm-calls", "Matmuls turned into gemm calls">,
    Statistic<"numEpilogues", "epilogues", "Generics fused as epilogues">,
  ];
}

def MapLoopsToGPU : Pass<"pipecc-map-loops-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Turns linalg ops and independent row loops on memrefs into "
                "scf.parallel loops mapped to GPU blocks and threads";
  let description = [{
    On bufferized stage functions (matmuls already runtime calls):
    `memref.copy` becomes `linalg.copy`; every linalg op becomes an
    `scf.parallel` over its parallel dimensions with `scf.for` loops for its
    reductions inside (one thread per output element: a sum or a row
    maximum is computed by the thread that writes it); an `scf.for` whose
    iterations are independent becomes an `scf.parallel` (the row loops of
    softmax, log-softmax and their gradients: one thread per row). An
    `scf.for` is independent when it carries no values and every buffer it
    writes is accessed only with `memref.load`/`memref.store` at one index
    position that is the induction variable; it must not allocate.

    A row sum (an outermost `scf.for` with constant bounds whose carried
    values are only `acc + term` sums, each term a row's worth of work with
    a nested loop, such as a cross-entropy's loss over the rows) is split:
    an `scf.parallel` stores each row's terms into a buffer of one element
    per row, and a sequential loop adds them in the original order, so the
    result rounds exactly as before. Only that short loop is left to
    `pipecc-launch-remaining-on-gpu`'s one thread.

    A column sum (`linalg.generic` adding `in[r, p]` into `out[p]`, static
    shape, at least two chunks of `reduction-chunk` rows: a bias gradient)
    is split: one thread per chunk and column sums its rows into a buffer
    of partial sums, then one thread per column adds them into the output.
    One thread per column was too few threads for a wide layer's 4096
    columns. The sum is reassociated by chunks, so it rounds differently
    from the CPU target's row-order sum.

    Every outermost `scf.parallel` is then collapsed to one dimension and
    tiled by `block-size`, and the pair is mapped to block x and thread x
    (`#gpu.loop_dim_map`), so that `convert-parallel-loops-to-gpu` makes a
    1-D `gpu.launch` of `ceil(n / block-size)` blocks of `block-size`
    threads (threads past `n` do nothing).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the generated kernels">,
    Option<"reductionChunk", "reduction-chunk", "int64_t", /*default=*/"64",
           "Rows per thread of a split column sum (0: never split)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let statistics = [
    Statistic<"numRowLoops", "row-loops",
              "Independent scf.for loops made parallel">,
    Statistic<"numRowSums", "row-sums",
              "Row sums split into a parallel loop and a short sum">,
    Statistic<"numColumnSums", "column-sums",
              "Column sums split into chunks of rows">,
    Statistic<"numMapped", "mapped-loops", "Parallel loops mapped to the GPU">,
  ];
}

def LaunchRemainingOnGPU : Pass<"pipecc-launch-remaining-on-gpu",
                                "::mlir::func::FuncOp"> {
  let summary = "Runs the device-memory code left on the host as "
                "one-thread kernels";
  let description = [{
    After `convert-parallel-loops-to-gpu`, a stage function's buffers are
    device memory: the host may only allocate and free them, call the
    runtime and launch kernels. Every maximal run of other ops that read or
    write memory (a loop that carries values, such as a cross-entropy's sum
    over the rows, a scalar load or store), together with the pure ops only
    they use, moves into a `gpu.launch` of one block of one thread.
    Regions that contain kernel launches or runtime calls are processed
    inside. A scalar computed by such code and used by host code is an
    error. Finally each launch that reads a constant global (an index
    table, a mask) gets its own `memref.get_global`, so that kernel
    outlining copies the global into the kernel's module: a kernel never
    receives the host address of a constant.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numSequential", "sequential-kernels",
              "One-thread kernels created">,
  ];
}

def MergeGPUModules : Pass<"pipecc-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Moves every outlined kernel into one gpu.module";
  let description = [{
    Runs after `gpu-kernel-outlining`, which makes one `gpu.module` per
    kernel: `gpu-module-to-binary` would run ptxas once per kernel. The
    kernels of every `gpu.module` move into the first, named
    `pipecc_kernels` (kernels renamed on a collision), and each
    `gpu.launch_func` names its kernel there. Modules
    holding anything but `gpu.func`s are left as they are.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def CUDAWorkspaceAllocations : Pass<"pipecc-cuda-workspace-allocations",
                                    "::mlir::ModuleOp"> {
  let summary = "Host allocations of stage temporaries become CUDA workspace "
                "allocations";
  let description = [{
    Runs after `finalize-memref-to-llvm{use-generic-functions}`: the host's
    `_mlir_memref_to_llvm_alloc(i64) -> ptr` and
    `_mlir_memref_to_llvm_free(ptr)` become the CUDA runtime's
    `pipecc_rt_cuda_workspace_alloc` / `pipecc_rt_cuda_workspace_free`
    (same signatures): stream-ordered device memory for the temporaries of
    a stage function. Functions inside `gpu.module`s are left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
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
