//===- GemmOperands.h - Matmuls on memrefs as row-major gemm operands -----===//
//
// What MatmulToBlas (CPU) and MatmulToCublas (CUDA) share: which linalg
// matmuls are gemms, the pointer / leading dimension of a memref operand,
// the zero fill that beta = 0 replaces, and the declaration of a runtime
// function.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_CONVERSION_GEMMOPERANDS_H
#define PIPECC_CONVERSION_GEMMOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace pipecc::conversion {

struct GemmShape {
  bool batched, transposeA, transposeB;
};

/// The gemm a named linalg matmul computes, or nothing for other ops.
std::optional<GemmShape> classifyGemm(mlir::Operation *op);

/// A memref of `elementType` whose innermost stride is statically 1 (rows
/// may be strided): row-major with a leading dimension.
bool isRowMajorOperand(mlir::Value value, mlir::Type elementType);

/// A gemm view of one memref operand: its address (with the offset applied)
/// as an `!llvm.ptr`, sizes and strides as i64.
struct GemmOperand {
  mlir::Value pointer;
  llvm::SmallVector<mlir::Value> sizes, strides;
};
GemmOperand unpackGemmOperand(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value memref);

/// The row stride, at least the row length: for a single row the stride is
/// irrelevant to the product but BLAS checks lda >= columns.
mlir::Value leadingDimension(mlir::OpBuilder &b, mlir::Location loc,
                             const GemmOperand &operand);

/// A `linalg.fill` of zero into exactly `output` just before `op` (skipping
/// deallocations of other buffers), which beta = 0 makes redundant.
mlir::linalg::FillOp findZeroFill(mlir::Operation *op, mlir::Value output);

/// A bias epilogue of a matmul on buffers: the op after `matmul` (others
/// that touch no memory, and deallocations of other buffers, aside) is an
/// all-parallel generic computing `D = C + bias[last index]`, then
/// optionally the ReLU as `select(x > 0 or NaN, x, 0)` (the graph
/// lowering's form), into a row-major buffer D of C's shape; the generic
/// may read C through a memref.expand_shape (a 3-D activation: D has the
/// expanded shape, `expanded` is that reshape). C is a temporary (an
/// allocation, or a view of the stage workspace) that nothing else reads.
/// Both gemm lowerings use it: the product then writes D directly and adds
/// the bias (and ReLU) in its last store.
struct BiasEpilogue {
  mlir::linalg::GenericOp generic;
  mlir::Value bias, output;
  bool relu = false;
  mlir::memref::ExpandShapeOp expanded;
};
std::optional<BiasEpilogue> matchBiasEpilogue(mlir::Operation *matmul,
                                              mlir::Value c);

/// Whether `a` and `b` may share bytes: the same value (through reshapes),
/// or views of one global (the stage workspace) whose byte ranges overlap.
/// Distinct allocations and function arguments (the arena's buffers) do not.
bool mayOverlap(mlir::Value a, mlir::Value b);

/// Declares `name` private with `type` in `module`, or checks an existing
/// symbol (an error on the symbol when it differs).
mlir::LogicalResult declareRuntimeFunction(mlir::ModuleOp module,
                                           llvm::StringRef name,
                                           mlir::FunctionType type);

} // namespace pipecc::conversion

#endif // PIPECC_CONVERSION_GEMMOPERANDS_H
