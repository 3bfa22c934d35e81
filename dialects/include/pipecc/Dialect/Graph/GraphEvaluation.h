//===- GraphEvaluation.h - The constant evaluator of the graph dialect ----===//
//
// One evaluator for everything static: shape and position arithmetic, masks,
// casts, slices of constant buffers. It computes a graph op on constant
// operands and is the graph dialect's fold hook (a DialectFoldInterface), so
// `Operation::fold`, `OpBuilder::createOrFold` and `canonicalize` all reach
// it; the ONNX importer folds each op it creates through the same hook.
// Elements are computed in int64 or double and rounded to the element type
// on every store, so a float result equals what the op computes in its own
// precision (exactly for +, -, *, / and sqrt).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_DIALECT_GRAPH_GRAPHEVALUATION_H
#define PIPECC_DIALECT_GRAPH_GRAPHEVALUATION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <vector>

namespace pipecc::graph {

/// A constant tensor as the evaluator computes with it: integer and boolean
/// elements as int64 (booleans 0 or 1), floating-point ones as double, in
/// row-major order. A splat holds one element for every position.
class Literal {
public:
  /// A tensor of `type` holding zeros (false).
  explicit Literal(mlir::RankedTensorType type);
  /// A splat of `type` holding element `from` of `source` (same element
  /// type) everywhere.
  static Literal splat(mlir::RankedTensorType type, const Literal &source,
                       int64_t from);
  /// The value of a dense elements attribute, or nothing for other
  /// attributes and element types the graph dialect has none of.
  static std::optional<Literal> fromAttr(mlir::Attribute value);
  /// The attribute of this value (a splat attribute when all elements are
  /// equal).
  mlir::DenseElementsAttr toAttr() const;

  mlir::RankedTensorType getType() const { return type; }
  llvm::ArrayRef<int64_t> getShape() const { return type.getShape(); }
  mlir::Type getElementType() const { return type.getElementType(); }
  bool isFloat() const { return llvm::isa<mlir::FloatType>(getElementType()); }
  bool isSplat() const { return splatValue; }
  int64_t getNumElements() const { return type.getNumElements(); }

  double getFloat(int64_t i) const { return floats[splatValue ? 0 : i]; }
  int64_t getInt(int64_t i) const { return ints[splatValue ? 0 : i]; }
  /// Elementwise access that converts between the kinds: a float read as
  /// an integer truncates toward zero (saturating, NaN reads 0).
  double getAsFloat(int64_t i) const;
  int64_t getAsInt(int64_t i) const;
  /// Stores `value` rounded to the element type (booleans: not zero).
  void setFloat(int64_t i, double value);
  /// Stores `value` wrapped to the element type (booleans: not zero).
  void setInt(int64_t i, int64_t value);
  /// Copies element `from` of `source`, of the same element type, to `to`.
  void copy(int64_t to, const Literal &source, int64_t from);

private:
  mlir::RankedTensorType type;
  bool splatValue = false;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

/// Evaluates `op` on `operands` (its operands' constant values, null where
/// not constant). Fails when an operand is not constant, the evaluator does
/// not know the op, or a non-splat result would exceed the size limit
/// (`kMaxFoldedElements`), so that folding never inflates a model.
llvm::FailureOr<mlir::DenseElementsAttr>
evaluate(mlir::Operation *op, llvm::ArrayRef<mlir::Attribute> operands);

/// The largest number of elements of a folded non-splat constant.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 20;

/// ONNX Range of three scalars of one element type: `start`, `start +
/// delta`, ... up to (excluding) `limit`. Its length depends on the values,
/// so it exists only as a constant; on failure `error` says why.
mlir::DenseElementsAttr evaluateRange(mlir::DenseElementsAttr start,
                                      mlir::DenseElementsAttr limit,
                                      mlir::DenseElementsAttr delta,
                                      std::string &error);

namespace detail {
/// Adds the evaluator as the graph dialect's fold interface.
void addGraphFoldInterface(mlir::Dialect *dialect);

// One function per family of ops (GraphEvaluation*.cpp); each fails when
// it does not know `op`.
llvm::FailureOr<Literal> evaluateElementwise(mlir::Operation *op,
                                             llvm::ArrayRef<Literal> operands);
llvm::FailureOr<Literal> evaluateDataMovement(mlir::Operation *op,
                                              llvm::ArrayRef<Literal> operands);
llvm::FailureOr<Literal> evaluateScan(mlir::Operation *op,
                                      llvm::ArrayRef<Literal> operands);
} // namespace detail

} // namespace pipecc::graph

#endif // PIPECC_DIALECT_GRAPH_GRAPHEVALUATION_H
