#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEOPS_TD
#define PIPECC_DIALECT_PIPELINE_PIPELINEOPS_TD

include "pipecc/Dialect/Pipeline/PipelineDialect.td"
include "pipecc/Dialect/Pipeline/PipelineAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Pipeline_PipelineOp : Pipeline_Op<"pipeline", [Symbol, NoTerminator,
    SingleBlock, IsolatedFromAbove]> {
  let summary = "A pipeline-parallel training step over several ranks";
  let description = [{
    `ranks` is the pipeline depth P, the number of processes. The model is
    cut into V = P x `chunks` virtual stages, numbered in model order;
    `placement` lists, for each virtual stage, the rank that runs it (linear:
    `[0, 1, 2, 3]`; interleaved: `[0, 1, 0, 1]`; V-shape: `[0, 1, 1, 0]`).
    Every rank holds exactly `chunks` virtual stages; the chunk of a virtual
    stage is its position among its rank's stages in model order.
    `microbatches` is the number of micro-batches a step splits its
    mini-batch into, and `schedule` names the schedule that ordered the
    programs. The body holds exactly one `pipeline.program` per rank.

    The schedule pass also records the scheduling library's simulation of
    the programs: the step's makespan (`predicted_step_s`), the mean idle
    fraction over ranks (`bubble`), each rank's busy seconds
    (`rank_busy_s`) and, per virtual stage, the most micro-batches whose
    activations it holds at once (`peak_live_microbatches`, counted from F
    to the end of the backward, W when split).

    ```mlir
    pipeline.pipeline @train ranks = 2 chunks = 2 microbatches = 2
        schedule = "interleaved-1f1b" placement = [0, 1, 0, 1] {
      pipeline.program rank 0 { ... }
      pipeline.program rank 1 { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$ranks,
                       I64Attr:$chunks, I64Attr:$microbatches,
                       StrAttr:$schedule, DenseI64ArrayAttr:$placement,
                       OptionalAttr<F64Attr>:$predicted_step_s,
                       OptionalAttr<F64Attr>:$bubble,
                       OptionalAttr<DenseF64ArrayAttr>:$rank_busy_s,
                       OptionalAttr<DenseI64ArrayAttr>:$peak_live_microbatches);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `ranks` `=` $ranks `chunks` `=` $chunks
    `microbatches` `=` $microbatches `schedule` `=` $schedule
    `placement` `=` $placement attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let builders = [
    OpBuilder<(ins "llvm::StringRef":$name, "int64_t":$ranks,
                   "int64_t":$chunks, "int64_t":$microbatches,
                   "llvm::StringRef":$schedule,
                   "llvm::ArrayRef<int64_t>":$placement), [{
      build($_builder, $_state, name, ranks, chunks, microbatches, schedule,
            placement, /*predicted_step_s=*/nullptr, /*bubble=*/nullptr,
            /*rank_busy_s=*/nullptr, /*peak_live_microbatches=*/nullptr);
    }]>,
  ];
  let extraClassDeclaration = [{
    /// V = ranks x chunks.
    int64_t getNumVirtualStages() { return getPlacement().size(); }
    /// The rank running virtual stage `stage` (in range: verify() first).
    int64_t getRankOf(int64_t stage) { return getPlacement()[stage]; }
    /// The position of virtual stage `stage` among its rank's stages.
    int64_t getChunkOf(int64_t stage);
    /// The virtual stages `rank` runs, in model order (chunk order).
    llvm::SmallVector<int64_t> getVirtualStagesOf(int64_t rank);
    /// The program of `rank`, or null.
    ProgramOp getProgram(int64_t rank);
  }];
}

def Pipeline_ProgramOp : Pipeline_Op<"program", [
    HasParent<"PipelineOp">, NoTerminator, SingleBlock]> {
  let summary = "The ordered actions of one rank";
  let description = [{
    The actions one rank performs in a step, in order. Sends and receives
    block until their peer reaches the matching action.

    ```mlir
    pipeline.program rank 0 {
      pipeline.forward @stage0_forward stage 0 mb 0
      pipeline.send "h" to 1 mb 0 stages 0 -> 1 : tensor<4x256xf32>
    }
    ```
  }];
  let arguments = (ins I64Attr:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`rank` $rank attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    PipelineOp getPipeline() { return (*this)->getParentOfType<PipelineOp>(); }
  }];
}

//===----------------------------------------------------------------------===//
// Compute actions
//===----------------------------------------------------------------------===//

class Pipeline_ComputeOp<string mnemonic, string what>
    : Pipeline_Op<mnemonic, [HasParent<"ProgramOp">,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs the " # what # " of a virtual stage on a micro-batch";
  let description = [{
    Runs the }] # what # [{ of virtual stage `stage` on micro-batch `mb` by
    calling the stage function `callee`. The verifier checks that the
    virtual stage is placed on the program's rank, and that `callee` is a
    function of the module with the right role for that virtual stage.

    ```mlir
    pipeline.}] # mnemonic # [{ @stage1_}] # mnemonic # [{ stage 1 mb 3
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, I64Attr:$virtual_stage,
                       I64Attr:$microbatch);
  let assemblyFormat =
      "$callee `stage` $virtual_stage `mb` $microbatch attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The rank that runs it: its program's.
    int64_t getRank();
    /// The position of its virtual stage among the rank's stages.
    int64_t getChunk();
  }];
}

def Pipeline_ForwardOp : Pipeline_ComputeOp<"forward", "forward pass">;
def Pipeline_BackwardInputOp : Pipeline_ComputeOp<"backward_input",
    "input-gradient half of the backward pass (B)">;
def Pipeline_BackwardWeightOp : Pipeline_ComputeOp<"backward_weight",
    "weight-gradient half of the backward pass (W)"> {
  let description = [{
    Runs the weight-gradient half of the backward pass (W) of virtual stage
    `stage` on `count` consecutive micro-batches from `mb` (one unless
    written) by calling the stage function `callee` once. A `count` above
    one calls a grouped function (`pipeline.microbatches_per_call`, made by
    `pipecc-group-weight-gradients`), which reads each micro-batch's
    arguments and adds the sum of their weight gradients into the
    accumulators: one product over `count` times the rows, so that each
    accumulator is read and written once per group rather than once per
    micro-batch. The verifier checks the range against the pipeline's
    micro-batches and `count` against the callee's.

    ```mlir
    pipeline.backward_weight @stage1_backward_weight stage 1 mb 3
    pipeline.backward_weight @stage1_backward_weight_x2 stage 1 mb 4 count 2
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, I64Attr:$virtual_stage,
                       I64Attr:$microbatch,
                       DefaultValuedAttr<I64Attr, "1">:$count);
  let assemblyFormat = [{
    $callee `stage` $virtual_stage `mb` $microbatch (`count` $count^)?
    attr-dict
  }];
}
def Pipeline_BackwardOp : Pipeline_ComputeOp<"backward",
    "whole backward pass (B then W)"> {
  let description = [{
    Runs the whole backward pass of virtual stage `stage` on micro-batch
    `mb`: the input-gradient function `callee`, then the weight-gradient
    function `weight` when the stage has one.

    ```mlir
    pipeline.backward @stage1_backward_input, @stage1_backward_weight stage 1 mb 3
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       OptionalAttr<FlatSymbolRefAttr>:$weight,
                       I64Attr:$virtual_stage, I64Attr:$microbatch);
  let assemblyFormat = [{
    $callee (`,` $weight^)? `stage` $virtual_stage `mb` $microbatch attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

class Pipeline_TransferOp<string mnemonic, string direction, string what>
    : Pipeline_Op<mnemonic, [HasParent<"ProgramOp">]> {
  let description = [{
    }] # what # [{ Blocks until the peer reaches the matching action. Tensors
    are named by the value they carry (an activation or its gradient) and the
    micro-batch. `stages q -> q'` names the virtual stages the tensor goes
    from and to (q' = q + 1 for an activation, q - 1 for a gradient); the
    verifier checks that the placement puts them on the two ranks. A
    hand-off between virtual stages of the same rank is no message: the
    rank's buffer table holds the tensor by name.

    ```mlir
    pipeline.}] # mnemonic # [{ "h" }] # direction # [{ 1 mb 3 stages 0 -> 1 : tensor<4x256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$tensor, I64Attr:$peer, I64Attr:$microbatch,
                       I64Attr:$from_stage, I64Attr:$to_stage,
                       TypeAttrOf<AnyStaticShapeTensor>:$type);
  let assemblyFormat = "$tensor `" # direction #
                       "` $peer `mb` $microbatch `stages` $from_stage `->` "
                       "$to_stage attr-dict `:` $type";
  let extraClassDeclaration = [{
    /// An activation travels from virtual stage q to q + 1, its gradient
    /// back from q + 1 to q.
    bool isGradient() { return getToStage() < getFromStage(); }
    /// The boundary it crosses: between virtual stages k and k + 1.
    int64_t getBoundary() { return std::min(getFromStage(), getToStage()); }
  }];
  let hasVerifier = 1;
}

def Pipeline_SendOp : Pipeline_TransferOp<"send", "to",
    "Sends the named tensor of a micro-batch to rank `peer`."> {
  let summary = "Sends a named tensor to another rank";
}
def Pipeline_RecvOp : Pipeline_TransferOp<"recv", "from",
    "Receives the named tensor of a micro-batch from rank `peer`."> {
  let summary = "Receives a named tensor from another rank";
}

def Pipeline_AllReduceOp : Pipeline_Op<"all_reduce", [HasParent<"ProgramOp">]> {
  let summary = "Sums a named tensor over a group of ranks";
  let description = [{
    Sums the named tensor (typically an accumulated parameter gradient) over
    the ranks in `group`, which includes the program's own rank; every rank
    of the group ends with the sum, the same bits on each (the CPU runtime
    adds in rank order on the lowest rank and broadcasts). Used for tied
    weights: the schedule places one per shared parameter gradient
    (`grad.<parameter>`) on each rank holding the parameter, after the
    rank's last W or backward (the verifier checks this), in one order on
    all ranks.

    ```mlir
    pipeline.all_reduce "grad.wte" over [0, 3] : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$tensor, DenseI64ArrayAttr:$group,
                       TypeAttrOf<AnyStaticShapeTensor>:$type);
  let assemblyFormat = "$tensor `over` $group attr-dict `:` $type";
  let hasVerifier = 1;
}

def Pipeline_OptimizerStepOp : Pipeline_Op<"optimizer_step",
    [HasParent<"ProgramOp">]> {
  let summary = "Applies the optimizer update to the rank's parameters";
  let description = [{
    Updates every parameter the rank holds from its gradient accumulated over
    the step's micro-batches, then clears the accumulators.

    ```mlir
    pipeline.optimizer_step
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEOPS_TD
