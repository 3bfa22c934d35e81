#ifndef PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H
#define PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "pipecc/Dialect/Pipeline/PipelineDialect.h"

#include <optional>

namespace pipecc::pipeline {
class ProgramOp;

/// The three functions of a virtual stage.
enum class StageFunctionKind { Forward, BackwardInput, BackwardWeight };

/// "forward", "backward_input", "backward_weight".
llvm::StringRef stageFunctionKindName(StageFunctionKind kind);

/// Which virtual stage a stage function belongs to, and which of its
/// functions it is.
struct StageFunctionRole {
  int64_t virtualStage;
  StageFunctionKind kind;
};

/// The role pipecc-split-stages gave `func`, or nullopt for a function that
/// is not (or no longer, after pipecc-record-stage-abi) a stage function.
/// TEMPORARY: reads split-stages' `pipeline.stage` / `pipeline.kind`
/// attributes; the typed stage attribute of the dialect replaces them
/// (issue 9, contract 2), and this is the one place that reads them.
std::optional<StageFunctionRole> getStageFunctionRole(mlir::Operation *func);

/// On a weight-gradient function that runs several micro-batches in one
/// call (pipecc-group-weight-gradients): how many. A per-micro-batch
/// argument of the single function comes either once per micro-batch, each
/// carrying kMicrobatchOffset (which of them; 0 where absent), or once as
/// one block of the micro-batches' copies side by side along dimension 0,
/// carrying kMicrobatchGroup (how many; the rank's memory plan keeps them
/// adjacent).
inline constexpr llvm::StringLiteral kMicrobatchesPerCall =
    "pipeline.microbatches_per_call";
inline constexpr llvm::StringLiteral kMicrobatchOffset =
    "pipeline.microbatch_offset";
inline constexpr llvm::StringLiteral kMicrobatchGroup =
    "pipeline.microbatch_group";

/// One micro-batch's copy of an argument that holds `group` of them side by
/// side along dimension 0 (kMicrobatchGroup); null when `block` cannot.
mlir::RankedTensorType microbatchCopyType(mlir::RankedTensorType block,
                                          int64_t group);
/// microbatchCopyType for argument `argument` of `func`, or an error on
/// `func` saying that the argument cannot hold `group` micro-batches.
mlir::FailureOr<mlir::RankedTensorType>
argumentMicrobatchCopyType(mlir::Operation *func, unsigned argument,
                           mlir::RankedTensorType block, int64_t group);
} // namespace pipecc::pipeline

#define GET_OP_CLASSES
#include "pipecc/Dialect/Pipeline/PipelineOps.h.inc"

#endif // PIPECC_DIALECT_PIPELINE_PIPELINEOPS_H
