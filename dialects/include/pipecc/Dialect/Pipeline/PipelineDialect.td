#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_TD
#define PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_TD

include "mlir/IR/OpBase.td"

def Pipeline_Dialect : Dialect {
  let name = "pipeline";
  let cppNamespace = "::pipecc::pipeline";
  let summary = "Per-rank programs of a pipeline-parallel training step";
  let description = [{
    The pipeline dialect records how one training step runs on a pipeline of
    ranks. A `pipeline.pipeline` places the model's virtual stages on its
    ranks and holds one `pipeline.program` per rank, and a program is the
    ordered list of actions that rank performs: forward, backward-input (B)
    and backward-weight (W) computations of a (virtual stage, micro-batch),
    each calling its stage function by symbol, sends and receives of named
    tensors to and from other ranks, gradient all-reduces and the optimizer
    step. Ranks (processes) and virtual stages (pieces of the model) are
    distinct: with `chunks` v, each rank runs v virtual stages.

    The op verifiers check what each action can check alone: ranks, virtual
    stages and micro-batches in range, a compute action's virtual stage
    placed on its program's rank and its callee a stage function of that
    virtual stage and kind, messages between the ranks holding neighbouring
    virtual stages, tensors with static types. Whole-program properties
    (every send matched by a receive, no deadlock) are checked by
    `pipecc-verify-pipeline`, which runs the scheduling library's simulator
    on all programs together.

    Its attributes (PipelineAttrs.td) are the typed contract between the
    partition, split-stages and the passes after them: the module's
    `pipeline.stage_table`, verified on the module.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Pipeline_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pipeline_Dialect, mnemonic, traits>;

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_TD
