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
} // namespace pipecc::attrs

#endif // PIPECC_CONVERSION_STAGEABI_H
