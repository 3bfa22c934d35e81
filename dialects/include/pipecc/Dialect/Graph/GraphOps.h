#ifndef PIPECC_DIALECT_GRAPH_GRAPHOPS_H
#define PIPECC_DIALECT_GRAPH_GRAPHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Dialect/Graph/GraphInterfaces.h"

namespace pipecc::graph::detail {
/// Numpy broadcasting of two tensor types; fails with a diagnostic at `loc`
/// when the shapes or element types are incompatible.
llvm::LogicalResult inferBroadcastType(std::optional<mlir::Location> loc,
                                       mlir::Type lhs, mlir::Type rhs,
                                       llvm::SmallVectorImpl<mlir::Type> &out);
/// The type left after reducing `input` along `axes`.
llvm::LogicalResult inferReduceType(std::optional<mlir::Location> loc,
                                    mlir::Type input,
                                    llvm::ArrayRef<int64_t> axes,
                                    bool keepDims,
                                    llvm::SmallVectorImpl<mlir::Type> &out);
/// The boolean result of a comparison or logical op: operands of one element
/// type whose shapes broadcast.
llvm::LogicalResult inferPredicateType(mlir::MLIRContext *context,
                                       std::optional<mlir::Location> loc,
                                       mlir::TypeRange operands,
                                       llvm::SmallVectorImpl<mlir::Type> &out);
} // namespace pipecc::graph::detail

#define GET_OP_CLASSES
#include "pipecc/Dialect/Graph/GraphOps.h.inc"

#endif // PIPECC_DIALECT_GRAPH_GRAPHOPS_H
