#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_TD
#define PIPECC_DIALECT_PIPELINE_PIPELINEDIALECT_TD

include "mlir/IR/OpBase.td"

def Pipeline_Dialect : Dialect {
  let name = "pipeline";
  let cppNamespace = "::pipecc::pipeline";
  let summary = "Per-rank programs of a pipeline-parallel training step";
  let description = [{
    The pipeline dialect records how one training step runs on a pipeline of
    ranks. A `pipeline.pipeline` holds one `pipeline.program` per rank, and a
    program is the ordered list of actions that rank performs: forward,
    backward-input (B) and backward-weight (W) computations of a
    (stage, chunk, micro-batch), sends and receives of named tensors to and
    from other ranks, gradient all-reduces and the optimizer step.

    The op verifiers check what each action can check alone: ranks, stages,
    chunks and micro-batches in range, a rank's compute actions on its own
    stage, tensors with static types. Whole-program properties (every send
    matched by a receive, no deadlock) are checked by a verification pass
    that simulates all programs together.

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
