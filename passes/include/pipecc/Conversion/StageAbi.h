//===- StageAbi.h - What a rank module hands to the host program pass -----===//
#ifndef PIPECC_CONVERSION_STAGEABI_H
#define PIPECC_CONVERSION_STAGEABI_H

#include "llvm/ADT/StringRef.h"

namespace pipecc::attrs {
/// On a rank module (lower): the rank whose program it holds.
inline constexpr llvm::StringLiteral kRank = "pipeline.rank";
/// On stage functions of a rank module (pipecc-record-stage-abi): the
/// function's kind and, per argument and result, its `pipeline.*`
/// attributes plus `type`, and for class-id inputs `num_classes` and
/// `ignore_index`; read by pipecc-lower-rank-program.
inline constexpr llvm::StringLiteral kStageAbi = "pipeline.stage_abi";
inline constexpr llvm::StringLiteral kAbiKind = "kind";
inline constexpr llvm::StringLiteral kAbiArgs = "args";
inline constexpr llvm::StringLiteral kAbiResults = "results";
inline constexpr llvm::StringLiteral kAbiType = "type";
inline constexpr llvm::StringLiteral kAbiNumClasses = "num_classes";
inline constexpr llvm::StringLiteral kAbiIgnoreIndex = "ignore_index";
/// On a result binding (pipecc-accumulate-gradients): the function adds the
/// gradient into the buffer it is given, the parameter's accumulator.
inline constexpr llvm::StringLiteral kAbiAccumulate = "accumulate";
/// On a rank module (pipecc-plan-stage-workspace): the bytes of the
/// workspace holding the stage functions' temporaries.
inline constexpr llvm::StringLiteral kWorkspaceBytes =
    "pipeline.workspace_bytes";
/// The global holding that workspace (pipecc-plan-stage-workspace defines
/// it, the host program gives the runtime its address).
inline constexpr llvm::StringLiteral kStageWorkspaceSymbol =
    "pipecc_stage_workspace";
} // namespace pipecc::attrs

namespace pipecc {
/// Whether a stage function result that is the gradient of
/// `numParameters` parameters is added into the accumulator by the function
/// itself (rather than written to scratch and added by the runtime): one
/// parameter, and no action of the rank reads the tensor. The lowering, the
/// host program and the memory plan all decide by this rule.
inline bool accumulatesInPlace(size_t numParameters, bool readByRank) {
  return numParameters == 1 && !readByRank;
}
} // namespace pipecc

#endif // PIPECC_CONVERSION_STAGEABI_H
