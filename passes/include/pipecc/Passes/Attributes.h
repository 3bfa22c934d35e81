#ifndef PIPECC_PASSES_ATTRIBUTES_H
#define PIPECC_PASSES_ATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace pipecc::attrs {
// Discardable attributes through which the phases hand over what they
// decided. Each is written by one pass and read by later ones.

/// On @main's arguments and results: the ONNX input or output name.
inline constexpr llvm::StringLiteral kInput = "graph.input";
inline constexpr llvm::StringLiteral kOutput = "graph.output";
/// On @main's results after autodiff: the parameter a result is the
/// gradient of.
inline constexpr llvm::StringLiteral kGrad = "graph.grad";
/// On forward ops: their number in program order (autodiff).
inline constexpr llvm::StringLiteral kOpId = "graph.op_id";
/// On backward ops: the number of the forward op they differentiate.
inline constexpr llvm::StringLiteral kGradOf = "graph.grad_of";
} // namespace pipecc::attrs

#endif // PIPECC_PASSES_ATTRIBUTES_H
