#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_TD
#define PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_TD

// The typed contract between the partition, split-stages and every later
// pass: what each virtual stage costs, which functions run it and where it
// is placed. The dialect verifies the module's `pipeline.stage_table`
// (verifyOperationAttribute), so a broken contract is a verifier error.

include "pipecc/Dialect/Pipeline/PipelineDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Pipeline_Attr<string name, string attrMnemonic>
    : AttrDef<Pipeline_Dialect, name> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
}

def Pipeline_StageCostAttr : Pipeline_Attr<"StageCost", "stage_cost"> {
  let summary = "Predicted per-micro-batch costs of one virtual stage";
  let description = [{
    Seconds of the stage's forward, backward-input (B) and backward-weight
    (W) functions for one micro-batch, as the partition priced them on the
    device profile (unit seconds when nothing priced them), and bytes per
    micro-batch: activations kept from F to B, the stash kept from B to W
    (gradients W reads from B), the stage's parameters (their gradients are
    the same size), and the tensors crossing the cut after the stage.

    ```mlir
    #pipeline.stage_cost<forward = 1.0e-03, backward_input = 1.0e-03,
      backward_weight = 5.0e-04, activation_bytes = 16384, stash_bytes = 0,
      parameter_bytes = 65536, boundary_bytes = 16384>
    ```
  }];
  let parameters = (ins "::mlir::FloatAttr":$forward,
                        "::mlir::FloatAttr":$backward_input,
                        "::mlir::FloatAttr":$backward_weight,
                        "int64_t":$activation_bytes,
                        "int64_t":$stash_bytes,
                        "int64_t":$parameter_bytes,
                        "int64_t":$boundary_bytes);
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "double":$forward, "double":$backwardInput,
                     "double":$backwardWeight, "int64_t":$activationBytes,
                     "int64_t":$stashBytes, "int64_t":$parameterBytes,
                     "int64_t":$boundaryBytes)>
  ];
  let extraClassDeclaration = [{
    double getForwardSeconds() const;
    double getBackwardInputSeconds() const;
    double getBackwardWeightSeconds() const;
  }];
}

def Pipeline_VirtualStageAttr
    : Pipeline_Attr<"VirtualStage", "virtual_stage"> {
  let summary = "One virtual stage: its functions, rank, chunk and costs";
  let description = [{
    Virtual stage `index` (model order) runs on `rank` as that rank's chunk
    `chunk` (its position among the rank's virtual stages in model order).
    `forward`, `backward_input` and `backward_weight` name its functions;
    the backward ones are absent in an inference compile.

    ```mlir
    #pipeline.virtual_stage<index = 5, rank = 2, chunk = 1,
      forward = @stage5_forward, backward_input = @stage5_backward_input,
      backward_weight = @stage5_backward_weight, cost = #pipeline.stage_cost<...>>
    ```
  }];
  let parameters = (ins "int64_t":$index, "int64_t":$rank, "int64_t":$chunk,
                        "::mlir::FlatSymbolRefAttr":$forward,
                        OptionalParameter<"::mlir::FlatSymbolRefAttr">:$backward_input,
                        OptionalParameter<"::mlir::FlatSymbolRefAttr">:$backward_weight,
                        "StageCostAttr":$cost);
  let genVerifyDecl = 1;
}

def Pipeline_StageTableAttr : Pipeline_Attr<"StageTable", "stage_table"> {
  let summary = "The module's virtual stages and their placement on ranks";
  let description = [{
    Written by `pipecc-split-stages` as the module attribute
    `pipeline.stage_table`; every later pass reads it through
    `pipecc::readStageTable` (passes/include/pipecc/Passes/StageTable.h).
    `ranks` P and `chunks` v give V = P * v virtual stages, listed in model
    order; `placement` (`linear`, `interleaved` or `v`) says which rank
    holds each, and `device` is the profile the costs were priced on.

    The dialect verifies it on the module: P * v entries, entry q has index
    q and the rank and chunk the placement gives it, every named function
    exists, costs are finite and non-negative.

    ```mlir
    module attributes {pipeline.stage_table = #pipeline.stage_table<
        ranks = 2, chunks = 1, placement = "linear", device = "host-cpu",
        stages = [#pipeline.virtual_stage<...>, #pipeline.virtual_stage<...>]>}
    ```
  }];
  let parameters = (ins "int64_t":$ranks, "int64_t":$chunks,
                        StringRefParameter<"placement kind">:$placement,
                        StringRefParameter<"device profile">:$device,
                        "::mlir::ArrayAttr":$stages);
  let genVerifyDecl = 1;
}

def Pipeline_ParameterAttr : Pipeline_Attr<"Parameter", "parameter"> {
  let summary = "A model parameter and the virtual stages holding it";
  let description = [{
    `stages` lists the virtual stages that read the parameter, ascending
    (several for tied weights, whose gradient the holders all-reduce);
    `trainable` is false for frozen parameters and in inference.

    ```mlir
    #pipeline.parameter<name = "w1", stages = array<i64: 0>,
      type = tensor<256x64xf32>, trainable = true>
    ```
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        "::mlir::DenseI64ArrayAttr":$stages,
                        "::mlir::Type":$type,
                        "::mlir::BoolAttr":$trainable);
  let genVerifyDecl = 1;
}

def Pipeline_DataInputAttr : Pipeline_Attr<"DataInput", "data_input"> {
  let summary = "A data input of the split model";
  let description = [{
    ```mlir
    #pipeline.data_input<name = "x", type = tensor<16x64xf32>>
    ```
  }];
  let parameters = (ins StringRefParameter<"input name">:$name,
                        "::mlir::Type":$type);
}

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEATTRS_TD
