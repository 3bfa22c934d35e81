#ifndef PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_H
#define PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace pipecc::graph {

/// What one execution of an op costs, independent of any device.
struct OpCost {
  /// Floating-point additions, multiplications, comparisons.
  double flops = 0;
  /// Evaluations of exp, log, tanh and the like (each far dearer than a flop).
  double transcendentals = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;

  OpCost &operator+=(const OpCost &other) {
    flops += other.flops;
    transcendentals += other.transcendentals;
    bytesRead += other.bytesRead;
    bytesWritten += other.bytesWritten;
    return *this;
  }
};

namespace detail {
/// Cost of an op that reads each operand once, writes each result once and
/// spends `flopsPerElement` flops and `transcendentalsPerElement`
/// transcendentals on each result element.
OpCost elementwiseCost(mlir::Operation *op, double flopsPerElement,
                       double transcendentalsPerElement);
/// Cost of a reduction: one flop per input element.
OpCost reductionCost(mlir::Operation *op);
} // namespace detail

} // namespace pipecc::graph

namespace pipecc::graph::traits {
/// Graph_Pointwise (GraphInterfaces.td): each result element depends only on
/// the operand elements at its (broadcast) position.
template <typename ConcreteType>
class Pointwise : public mlir::OpTrait::TraitBase<ConcreteType, Pointwise> {};
} // namespace pipecc::graph::traits

#include "pipecc/Dialect/Graph/GraphInterfaces.h.inc"

#endif // PIPECC_DIALECT_GRAPH_GRAPHINTERFACES_H
