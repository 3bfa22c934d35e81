//===- Normalization.h - Helpers for layer_norm and rms_norm ----*- C++ -*-===//
//
// Shared by the ONNX importer (LayerNormalization's Scale and B) and the
// `pipecc-fuse-norms` pass (the Mul and Add after a decomposed norm): both
// turn a tensor that broadcasts against the normalised input into the
// row-shaped scale or bias operand of the fused op.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_DIALECT_GRAPH_NORMALIZATION_H
#define PIPECC_DIALECT_GRAPH_NORMALIZATION_H

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace pipecc::graph {

/// The shape of one row of a normalisation of `input` from `axis` on:
/// `input.shape[axis:]`.
llvm::SmallVector<int64_t> getRowShape(mlir::RankedTensorType input,
                                       int64_t axis);

/// Whether `value`, broadcast against `input`, gives `input`'s shape and
/// varies only along the row dimensions `[axis, rank)`: then it is a scale
/// or bias of a normalisation of `input` from `axis`.
bool isRowOperand(mlir::Value value, mlir::RankedTensorType input,
                  int64_t axis);

/// `value` (for which isRowOperand holds) reshaped and, where it has
/// size-1 dimensions, broadcast to the row shape.
mlir::Value buildRowOperand(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value value, mlir::RankedTensorType input,
                            int64_t axis);

} // namespace pipecc::graph

#endif // PIPECC_DIALECT_GRAPH_NORMALIZATION_H
