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
    `stages` is the pipeline depth: rank `r` runs stage `r`. With `chunks`
    greater than one, each stage holds several model chunks (interleaved and
    V schedules). `microbatches` is the number of micro-batches a step splits
    its mini-batch into, and `schedule` names the schedule that ordered the
    programs. The body holds exactly one `pipeline.program` per rank.

    ```mlir
    pipeline.pipeline @mlp stages = 2 chunks = 1 microbatches = 2
        schedule = "gpipe" {
      pipeline.program rank 0 { ... }
      pipeline.program rank 1 { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$stages,
                       I64Attr:$chunks, I64Attr:$microbatches,
                       StrAttr:$schedule);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `stages` `=` $stages `chunks` `=` $chunks
    `microbatches` `=` $microbatches `schedule` `=` $schedule
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Pipeline_ProgramOp : Pipeline_Op<"program", [
    HasParent<"PipelineOp">, NoTerminator, SingleBlock]> {
  let summary = "The ordered actions of one rank";
  let description = [{
    The actions one rank performs in a step, in order. Sends and receives
    block until their peer reaches the matching action.

    ```mlir
    pipeline.program rank 0 {
      pipeline.forward stage 0 chunk 0 mb 0
      pipeline.send "act.0" to 1 mb 0 : tensor<4x256xf32>
    }
    ```
  }];
  let arguments = (ins I64Attr:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`rank` $rank attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    PipelineOp getPipeline() { return (*this)->getParentOfType<PipelineOp>(); }
    /// The stage this rank runs.
    int64_t getStage() { return static_cast<int64_t>(getRank()); }
  }];
}

//===----------------------------------------------------------------------===//
// Compute actions
//===----------------------------------------------------------------------===//

class Pipeline_ComputeOp<string mnemonic, string what>
    : Pipeline_Op<mnemonic, [HasParent<"ProgramOp">]> {
  let summary = "Runs the " # what # " of a stage chunk on a micro-batch";
  let description = [{
    Runs the }] # what # [{ of chunk `chunk` of stage `stage` on micro-batch
    `mb`. The stage is the program's own.

    ```mlir
    pipeline.}] # mnemonic # [{ stage 1 chunk 0 mb 3
    ```
  }];
  let arguments = (ins I64Attr:$stage, I64Attr:$chunk, I64Attr:$microbatch);
  let assemblyFormat = "`stage` $stage `chunk` $chunk `mb` $microbatch attr-dict";
  let hasVerifier = 1;
}

def Pipeline_ForwardOp : Pipeline_ComputeOp<"forward", "forward pass">;
def Pipeline_BackwardInputOp : Pipeline_ComputeOp<"backward_input",
    "input-gradient half of the backward pass (B)">;
def Pipeline_BackwardWeightOp : Pipeline_ComputeOp<"backward_weight",
    "weight-gradient half of the backward pass (W)">;
def Pipeline_BackwardOp : Pipeline_ComputeOp<"backward",
    "whole backward pass (B then W)">;

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

class Pipeline_TransferOp<string mnemonic, string direction, string what>
    : Pipeline_Op<mnemonic, [HasParent<"ProgramOp">]> {
  let description = [{
    }] # what # [{ Blocks until the peer reaches the matching action. Tensors
    are named by the value they carry (an activation or its gradient) and the
    micro-batch.

    ```mlir
    pipeline.}] # mnemonic # [{ "act.0" }] # direction # [{ 1 mb 3 : tensor<4x256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$tensor, I64Attr:$peer, I64Attr:$microbatch,
                       TypeAttrOf<AnyStaticShapeTensor>:$type);
  let assemblyFormat = "$tensor `" # direction #
                       "` $peer `mb` $microbatch attr-dict `:` $type";
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
