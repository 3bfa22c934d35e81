#ifndef PIPECC_PASSES_PASSES_TD
#define PIPECC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestGraphCost : Pass<"test-graph-cost", "::mlir::func::FuncOp"> {
  let summary = "Prints the cost estimate of every graph op (for tests)";
  let description = [{
    Prints one line per op implementing `CostOpInterface` with its FLOPs,
    transcendental evaluations and bytes read and written, then the
    function's totals, so that FileCheck sees the numbers the cost model
    starts from.
  }];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def AttachLoss : Pass<"pipecc-attach-loss", "::mlir::ModuleOp"> {
  let summary = "Appends a loss to a model that outputs predictions";
  let description = [{
    For a model whose `@main` returns predictions rather than a loss, adds a
    label input named `label-input` and the chosen loss of the first output
    against it; the loss becomes the function's only result. Cross-entropy
    labels are class indices (int64, the logits' shape without dimension 1);
    MSE targets have the prediction's type.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "The loss: cross-entropy or mse">,
    Option<"labelInput", "label-input", "std::string", /*default=*/"\"labels\"",
           "Name of the new label input">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def Autodiff : Pass<"pipecc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds reverse-mode gradients of the loss";
  let description = [{
    Differentiates the scalar loss returned by `@main` with respect to every
    trainable `graph.param`, through each op's `GradientOpInterface` rule,
    summing the contributions of values used more than once. Forward ops are
    numbered with `graph.op_id`; every op the backward pass creates carries
    `graph.grad_of`, the number of the forward op whose result gradient it
    computes, so later phases place it on that op's stage. `@main` then
    returns the loss followed by one gradient per trainable parameter, each
    marked `{graph.grad = "<parameter name>"}`.
  }];
  let options = [
    Option<"lossOutput", "loss-output", "std::string", /*default=*/"\"\"",
           "Name of the output to differentiate (default: the only scalar "
           "output)">,
  ];
  let statistics = [
    Statistic<"numBackwardOps", "backward-ops", "Ops created for the backward pass">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def Partition : Pass<"pipecc-partition", "::mlir::ModuleOp"> {
  let summary = "Chooses the pipeline stage of every forward op";
  let description = [{
    Prices every forward op of the differentiated `@main` on a device
    profile: its forward time, the time of the backward ops computing its
    input gradients (B) and its weight gradients (W), the activations it
    keeps for the backward pass and the parameters it reads. The forward ops
    in program order, with the tensors flowing between them, form the
    partitioning problem: `dp` cuts it into `stages` x `chunks` contiguous
    virtual stages placed on `stages` ranks (`placement`, or the placement
    `schedule`'s generator uses), minimising the slowest rank's time
    including the bytes crossing cuts between ranks, `uniform` gives each
    stage the same number of ops, and `cut-after` takes the user's cuts
    (ONNX node names). B and W are priced with the BackwardSplit analysis
    split-stages uses. Each forward op gets `pipeline.stage` (its virtual
    stage); the module gets `pipeline.partition`, the chosen cuts and each
    virtual stage's predicted costs, rank and stash bytes.
  }];
  let options = [
    Option<"stages", "stages", "int64_t", /*default=*/"1",
           "Number of pipeline ranks P">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"1",
           "Virtual stages per rank v: the model is cut into P * v virtual "
           "stages">,
    Option<"placement", "placement", "std::string", /*default=*/"\"\"",
           "linear, interleaved or v: which rank holds each virtual stage "
           "(default: the schedule's placement for chunks, linear for one "
           "chunk)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "The schedule the partition is for; its generator chooses the "
           "placement when placement is not given">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"dp\"",
           "dp or uniform (ignored when cut-after is given)">,
    ListOption<"cutAfter", "cut-after", "std::string",
               "ONNX node names that end a stage">,
    Option<"device", "device", "std::string", /*default=*/"\"host-cpu\"",
           "Device profile that prices the ops">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Micro-batches per step, over which the once-per-step all-reduce "
           "of a tied weight's gradient is spread">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def TestPartitionReport : Pass<"test-partition-report", "::mlir::ModuleOp"> {
  let summary = "Prints the cuts and stage costs chosen by pipecc-partition";
  let description = [{
    Prints the `pipeline.partition` attribute as text: the node each stage
    ends with and every stage's predicted forward, B, W, communication and
    total time, activation and parameter bytes.
  }];
}

def SplitStages : Pass<"pipecc-split-stages", "::mlir::ModuleOp"> {
  let summary = "Outlines each stage's forward, B and W functions";
  let description = [{
    Splits the differentiated, partitioned `@main` into three functions per
    virtual stage `q`: `@stage<q>_forward`, `@stage<q>_backward_input` (B:
    the backward ops the gradients sent to earlier stages need) and
    `@stage<q>_backward_weight` (W: the rest, which only parameter
    gradients need), as the BackwardSplit analysis decides. Backward ops
    belong to the stage of the forward op they differentiate
    (`graph.grad_of`). The module gets the typed `pipeline.stage_table`
    (functions, rank, chunk and costs of every virtual stage), which later
    passes read through `readStageTable`.

    Functions exchange named tensors: every argument and result carries
    `pipeline.tensor`. Data inputs carry `pipeline.input`, parameters
    `pipeline.param`, parameter gradients `pipeline.param_grad` (the names
    of the parameters, all on the function's stage: a gradient computed on
    a later stage is sent back to its parameter's stage), the loss
    `pipeline.loss`. A tensor needed by a later stage is sent stage to
    stage (forwarded through the stages in between); `pipeline.recv` and
    `pipeline.send` on the forward and B functions list what each stage
    receives and sends. Parameters and constants are copied to every
    function that reads them; `@main` is replaced.

    With `inference`, `@main` is not differentiated: only the forward
    functions are built, every parameter is frozen, and each of `@main`'s
    results (the graph outputs, in order) is a result of stage 0's forward
    function carrying `pipeline.output` (its ONNX output name).
  }];
  let options = [
    Option<"inference", "inference", "bool", /*default=*/"false",
           "Forward functions only; @main's results are the graph outputs">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect",
                           "::pipecc::pipeline::PipelineDialect"];
}

def PlaceInference : Pass<"pipecc-place-inference", "::mlir::ModuleOp"> {
  let summary = "Places every op of an undifferentiated @main on stage 0";
  let description = [{
    The partition of an inference compile (one stage): every op of `@main`
    but parameters and constants gets `pipeline.stage = 0`. A `@main` that
    autodiff has differentiated (a result carrying `graph.grad`) is an
    error.
  }];
}

def ScheduleInference : Pass<"pipecc-schedule-inference", "::mlir::ModuleOp"> {
  let summary = "Writes the one-rank forward-only pipeline.pipeline";
  let description = [{
    The schedule of an inference compile: one `pipeline.pipeline @infer`
    (schedule `inference`) with one program, rank 0, that runs stage 0's
    forward function once per micro-batch; no backward, no optimizer step.
    Requires exactly one stage (`pipecc-split-stages{inference}` output).
  }];
  let options = [
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Number of micro-batches per step">,
  ];
  let dependentDialects = ["::pipecc::pipeline::PipelineDialect"];
}

def Schedule : Pass<"pipecc-schedule", "::mlir::ModuleOp"> {
  let summary = "Materialises a named schedule as a pipeline.pipeline op";
  let description = [{
    Reads the stage table (the virtual stages `pipecc-split-stages` wrote,
    their placement on ranks and their costs), asks the scheduling library
    for the schedule called `schedule` on `microbatches` micro-batches,
    places the sends and receives with the library's
    `materializeCommunication`, and writes one `pipeline.pipeline @train` op
    with the placement and one `pipeline.program` per rank, each ending with
    `pipeline.optimizer_step`. The pass holds no schedule logic: any name
    the library's generator registry knows works, provided the generator
    schedules the placement the partition cut for (its `placementFor`).

    Per-virtual-stage F, B and W durations come from the stage table (unit
    durations without a partition); link bandwidth and latency from its
    device profile. Each library message across a boundary between virtual
    stages on two ranks becomes one send/receive per tensor in the sending
    stage function's `pipeline.send` list, in that order; a boundary with an
    empty list carries no message, and a hand-off between two virtual
    stages of one rank is no message at all (the rank's buffer table holds
    the tensor by name). Messages may go to any rank the placement names.
    A trainable parameter held by virtual stages on several ranks (tied
    weights) gets one `pipeline.all_reduce` of its gradient over those
    ranks.

    With `split-backward=auto`, a schedule that runs each micro-batch's
    backward as one action (GPipe, 1F1B, interleaved 1F1B) is planned both
    fused and split (W right after its B) where every virtual stage has a
    W, and the split is kept only where the simulated step is strictly
    shorter: split, the input gradient is sent before W runs.

    The op also records the library simulator's prediction for the same
    programs and durations: `predicted_step_s` (makespan), `bubble` (mean
    idle fraction), `rank_busy_s` (per rank) and `peak_live_microbatches`
    (per virtual stage: micro-batches whose activations are held at once).
  }];
  let options = [
    Option<"scheduleName", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "Schedule generator name (gpipe, 1f1b, zb-h1, ...)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Number of micro-batches per step">,
    Option<"splitBackward", "split-backward", "std::string",
           /*default=*/"\"auto\"",
           "Schedule B and W separately: true, false, or auto (as the "
           "schedule needs; for a schedule that fuses them, split where "
           "every virtual stage has a W and the simulated step is strictly "
           "shorter: the input gradient then leaves before W)">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"0",
           "Virtual stages per rank the partition must have cut (0: as "
           "the stage table says)">,
    Option<"weightGradientGroup", "weight-gradient-group", "int64_t",
           /*default=*/"1",
           "Run the weight gradients (W) of this many consecutive "
           "micro-batches back to back where the simulated step is no "
           "longer for it (scheduling library's "
           "groupWeightGradientsInSlack; splits the backward where the "
           "schedule would not); pipecc-group-weight-gradients makes each "
           "run one call. 1: as the schedule places them">,
  ];
  let dependentDialects = ["::pipecc::pipeline::PipelineDialect"];
}

def GroupWeightGradients : Pass<"pipecc-group-weight-gradients",
                                 "::mlir::ModuleOp"> {
  let summary = "Runs the weight gradients of consecutive micro-batches "
                "in one call";
  let description = [{
    Replaces each run of `size` back-to-back `pipeline.backward_weight` ops
    of one virtual stage on micro-batches m, m + 1, ..., m a multiple of
    `size` (as
    `pipecc-schedule{weight-gradient-group=size}` places them) with one
    `pipeline.backward_weight ... mb m count size` that calls a grouped
    copy of the stage's weight-gradient function, `<function>_x<size>`,
    which returns the sum of the micro-batches' parameter gradients. It
    takes a parameter once; a per-micro-batch tensor whose copies lie one
    copy apart (its bytes a multiple of the arena's 64) once, as one block
    of the group's copies side by side (`pipeline.microbatch_group`; the
    memory plan keeps their copy count a multiple of the group), sliced per
    micro-batch; any other argument once per micro-batch (the later ones
    marked `pipeline.microbatch_offset`). A gradient that is a product
    dY^T X becomes one product over the micro-batches' rows joined: the
    block itself where both operands are such blocks, else a
    `graph.concat` (a copy): one pass over its accumulator per group
    instead of one per micro-batch. Other W ops stay as they are; a
    function with a result that is not a parameter gradient is an error.

    ```mlir
    pipeline.backward_weight @stage1_backward_weight stage 1 mb 0
    pipeline.backward_weight @stage1_backward_weight stage 1 mb 1
    // becomes
    pipeline.backward_weight @stage1_backward_weight_x2 stage 1 mb 0 count 2
    ```
  }];
  let options = [
    Option<"size", "size", "int64_t", /*default=*/"2",
           "Micro-batches per call; 1 changes nothing">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect",
                           "::mlir::func::FuncDialect"];
}

def VerifyPipeline : Pass<"pipecc-verify-pipeline", "::mlir::ModuleOp"> {
  let summary = "Proves every pipeline.pipeline finishes under blocking "
                "send/recv";
  let description = [{
    Converts every `pipeline.pipeline` to the scheduling library's
    programs (with the stage table's durations) and lets the library judge
    them: each (virtual stage, micro-batch) runs its forward once and its
    backward once (fused, or B then W) in order, on the rank the placement
    names; the sends from each rank to each peer and the peer's receives
    match one to one, in order; every compute has received its inputs; and
    the programs cannot deadlock when every send and receive blocks until
    its peer reaches the matching action. The actions the library blames
    carry the error and notes. Checked on the IR, where the library has no
    rule: the tensors of a message pair up by name and type, and ranks take
    their shared all-reduces in one order. Success changes nothing.
  }];
}

def TestPrintSchedule : Pass<"test-print-schedule", "::mlir::ModuleOp"> {
  let summary = "Prints each rank's actions and the predicted step (for "
                "tests)";
  let description = [{
    Prints every `pipeline.pipeline` compactly, one line per rank: `F0`,
    `B0`, `W0`, `BW0` for a compute on micro-batch 0 (`F0.1` for chunk 1),
    `>1:name@0` for a send to rank 1 of micro-batch 0, `<0:name@0` for a
    receive from rank 0, `AR:name` and `OPT`. Then the predicted makespan and
    bubble recorded by `pipecc-schedule`, and the library's simulation of
    the op as `toLibraryPrograms` converts it (with the stage table's
    durations), which must reproduce the prediction.
  }];
}

def Rematerialize : Pass<"pipecc-rematerialize", "::mlir::ModuleOp"> {
  let summary = "Recomputes pointwise activations in the backward instead of "
                "keeping them";
  let description = [{
    After `pipecc-autodiff`: a forward value that backward ops read is an
    activation kept from F to the backward, in memory for every micro-batch
    in flight. When its producer is pointwise (`Graph_Pointwise`), every
    backward op reading it is pointwise, and the producer's operands are
    constants, parameters, activations kept anyway or themselves
    recomputable (at most `max-depth` pointwise ops in all), each backward
    read gets its own copy of that chain right before it, tagged with the
    reader's `graph.grad_of` (so it runs on the reader's stage). Ops that
    evaluate a transcendental function (exp, erf, tanh, ...: a polynomial
    of tens of instructions per element) are not recomputed. The value
    is then no longer kept; the copies fuse into the reader's elementwise
    loop and the forward chain into one loop. The copies compute the same
    floats, so results do not change.

    GELU from erf, `x * 0.5 * (1 + erf(x / sqrt(2)))`: its backward read
    x, `x / sqrt(2)` and `1 + erf(x / sqrt(2))`; afterwards it reads x and
    `1 + erf(x / sqrt(2))`, and the forward's division no longer takes a
    loop of its own.

    ```mlir
    // before (backward op, graph.grad_of = 7, reads the kept %a)
    %a = graph.div %x, %c : ...                       {graph.op_id = 5}
    %g = graph.mul %dy, %a : ... {graph.grad_of = 7}
    // after: %x is kept, %a is recomputed
    %a2 = graph.div %x, %c : ...                      {graph.grad_of = 7}
    %g = graph.mul %dy, %a2 : ... {graph.grad_of = 7}
    ```
  }];
  let options = [
    Option<"maxDepth", "max-depth", "unsigned", /*default=*/"8",
           "Most pointwise ops recomputed between kept values and a read "
           "(0: none)">,
  ];
  let statistics = [
    Statistic<"numRematerialized", "reads",
              "Backward reads given a recomputed value">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
}

def FuseNorms : Pass<"pipecc-fuse-norms", "::mlir::func::FuncOp"> {
  let summary = "Fuses decomposed layer and RMS normalisations into one op";
  let description = [{
    Recognises the graph ops that exported normalisations import as and
    replaces each with one `graph.layer_norm` or `graph.rms_norm`:
    `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps)` (PyTorch's opset-13
    LayerNorm) and `x / sqrt(mean(x^2) + eps)` or
    `x * (1 / sqrt(mean(x^2) + eps))` (LLaMA's RMSNorm), the means over
    trailing dimensions with kept dimensions; a following multiplication
    and (for layer norm) addition by tensors that vary only along the
    normalised dimensions become the op's scale and bias. It works on the
    graph dialect, so the opset and the exporter's spelling of Pow, Reciprocal
    and the axes do not matter. Intermediate values used outside the
    pattern leave it unfused. The driver runs it after import.
  }];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
  let statistics = [
    Statistic<"numLayerNorms", "layer-norms", "Layer norms fused">,
    Statistic<"numRmsNorms", "rms-norms", "RMS norms fused">,
  ];
}

def LowerPrecision : Pass<"pipecc-lower-precision", "::mlir::ModuleOp"> {
  let summary = "Computes the stage functions in bf16 with f32 accumulation "
                "and f32 master weights";
  let description = [{
    Runs on the stage functions of the partition phase (functions with a
    `pipeline.kind`). With `precision=bf16`, every f32 tensor becomes bf16
    except:
      * parameters and data inputs (the master weights the optimizer
        updates stay f32; `graph.cast` rounds them to bf16 where they are
        used), parameter gradients, the loss and its label count, and the
        graph outputs of an inference compile, which stay f32 in the
        function signatures;
      * the results of ops that accumulate: reductions (`reduce_sum`,
        `reduce_mean`, `cumsum`), softmax and log-softmax, layer and RMS
        normalisation, the losses and their gradients, `gather_grad`,
        average pooling, `label_count` and `cast`, and the gathers (exact:
        an f32 embedding table is read in place, not copied to bf16
        whole). They read f32 (bf16 operands are extended exactly) and
        produce f32; a bf16 consumer rounds their result once;
      * convolutions, which read their operands rounded to bf16 and
        accumulate in f32;
      * ops with only scalar results (the loss, its scaling, the seed of
        the backward), which compute in f32.
    Matrix products take bf16 operands and produce bf16; their lowering
    accumulates in f32 and rounds once. Activations stashed for the
    backward and the tensors sent between stages are bf16, half the bytes.
    With `precision=fp32` the pass changes nothing.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "fp32 (no change) or bf16">,
  ];
  let dependentDialects = ["::pipecc::graph::GraphDialect"];
  let statistics = [
    Statistic<"numCasts", "casts", "graph.cast ops inserted">,
  ];
}

#endif // PIPECC_PASSES_PASSES_TD
