//===- Patterns.h - ONNX node conversion patterns ---------------*- C++ -*-===//
//
// The semantics of the frontend: one pattern per (ONNX op type, since
// version), grouped by op family in Patterns/*.cpp. A pattern sees a
// NodeContext (the node, its operand values, a builder inside @main, the
// node's location and attribute helpers), creates graph ops and returns the
// node's result values, or fails after a diagnostic at the node's location.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_FRONTEND_ONNX_PATTERNS_H
#define PIPECC_FRONTEND_ONNX_PATTERNS_H

#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Support/Escape.h"

#include "onnx/onnx_pb.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <string>
#include <vector>

namespace pipecc::frontend::detail {

//===----------------------------------------------------------------------===//
// Tensors and element types
//===----------------------------------------------------------------------===//

/// The MLIR element type of an ONNX TensorProto data type, or null when the
/// graph dialect has none (graph tensors hold floats, i1, i32 and i64).
mlir::Type convertElementType(int32_t dataType, mlir::MLIRContext *context);

/// The ONNX spelling of a data type ("FLOAT", "INT64", ...).
std::string dataTypeName(int32_t dataType);

/// The value of an ONNX tensor (raw_data, little-endian, or the typed
/// fields) as a dense attribute; on failure `error` says why.
mlir::DenseElementsAttr convertTensor(const onnx::TensorProto &tensor,
                                      mlir::MLIRContext *context,
                                      std::string &error);

/// Appends a pattern's created value to `results`, or fails when creating
/// it failed (the diagnostic is already emitted).
inline mlir::LogicalResult push(mlir::FailureOr<mlir::Value> value,
                                llvm::SmallVectorImpl<mlir::Value> &results) {
  if (mlir::failed(value))
    return mlir::failure();
  results.push_back(*value);
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

/// ONNX sequence values by name: SplitToSequence of a static tensor is a
/// list of tensors known at import, read back by SequenceAt.
using SequenceTable = llvm::StringMap<llvm::SmallVector<mlir::Value>>;

/// What a pattern is given to convert one node.
class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset,
              llvm::ArrayRef<mlir::Value> operands,
              llvm::ArrayRef<bool> outputUsed, mlir::OpBuilder &builder,
              mlir::Location loc, SequenceTable *sequences = nullptr)
      : node(node), opset(opset), builder(builder), loc(loc),
        sequences(sequences), operands(operands), outputUsed(outputUsed) {}

  const onnx::NodeProto &node;
  /// The default-domain opset of the model.
  int64_t opset;
  mlir::OpBuilder &builder;
  mlir::Location loc;

  mlir::MLIRContext *getContext() { return builder.getContext(); }

  /// The sequences defined so far (null when the caller keeps none).
  SequenceTable *sequences;

  //===--- Operands and results ---===//

  /// The number of inputs the node lists, including empty optional ones.
  unsigned getNumOperands() const { return operands.size(); }
  /// Input `i`, or null when it is absent or empty (an omitted optional).
  mlir::Value getOperand(unsigned i) const {
    return i < operands.size() ? operands[i] : mlir::Value();
  }
  mlir::RankedTensorType getOperandType(unsigned i) const {
    return llvm::cast<mlir::RankedTensorType>(getOperand(i).getType());
  }
  /// Fails with a diagnostic unless inputs [0, count) are all present.
  mlir::LogicalResult requireOperands(unsigned count);
  /// Whether output `i` is read by another node or is a graph output.
  bool isOutputUsed(unsigned i) const {
    return i < outputUsed.size() && outputUsed[i];
  }

  //===--- Attributes ---===//

  const onnx::AttributeProto *getAttr(llvm::StringRef name) const;
  std::optional<int64_t> getInt(llvm::StringRef name) const;
  int64_t getInt(llvm::StringRef name, int64_t dflt) const {
    return getInt(name).value_or(dflt);
  }
  std::optional<float> getFloat(llvm::StringRef name) const;
  float getFloat(llvm::StringRef name, float dflt) const {
    return getFloat(name).value_or(dflt);
  }
  std::optional<std::string> getString(llvm::StringRef name) const;
  std::optional<llvm::SmallVector<int64_t>>
  getInts(llvm::StringRef name) const;

  //===--- Diagnostics ---===//

  mlir::InFlightDiagnostic emitError() { return mlir::emitError(loc); }
  mlir::LogicalResult fail(const llvm::Twine &message) {
    return emitError() << message;
  }

  //===--- Constants and axes ---===//

  /// The value of `value` when a constant or a non-trainable parameter
  /// defines it, else null.
  mlir::DenseElementsAttr getConstant(mlir::Value value) const;
  /// The integers held by the constant `value` (input `what` of the node);
  /// fails with a diagnostic when it is not a constant integer tensor.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  getConstantInts(mlir::Value value, llvm::StringRef what);
  /// A graph.constant holding `value`.
  mlir::Value createConstant(mlir::DenseElementsAttr value);
  /// A rank-0 floating-point constant of element type `elementType`.
  mlir::Value createScalar(mlir::Type elementType, double value);
  /// `axis` in [-rank, rank) made non-negative, or a diagnostic.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

  //===--- Creating graph ops ---===//

  /// Creates an op whose result type its InferTypeOpInterface infers, and
  /// verifies it; failures become diagnostics at the node, not crashes.
  /// An op whose operands are all constants is evaluated by the graph
  /// dialect's constant evaluator (its fold hook) and replaced by a
  /// graph.constant, so static shape and mask arithmetic never reaches the
  /// graph.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    if (!attrs.empty()) {
      mlir::OpaqueProperties properties =
          &state.getOrAddProperties<
              typename OpTy::template InferredProperties<OpTy>>();
      if (failed(state.name.getRegisteredInfo()->setOpPropertiesFromAttribute(
              state.name, properties,
              state.attributes.getDictionary(getContext()),
              [&] { return emitError(); })))
        return mlir::failure();
    }
    llvm::SmallVector<mlir::Type, 1> types;
    if (failed(OpTy::inferReturnTypes(
            getContext(), loc, state.operands,
            state.attributes.getDictionary(getContext()),
            state.getRawProperties(), state.regions, types)))
      return mlir::failure();
    state.addTypes(types);
    return finish(builder.create(state));
  }

  /// Creates an op with the given result type, verifies and folds it.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> createTyped(mlir::Type type, Args &&...args) {
    return finish(
        builder.create<OpTy>(loc, type, std::forward<Args>(args)...));
  }

  /// `value` reshaped to `shape` (a graph.reshape, folded like any op).
  mlir::FailureOr<mlir::Value> reshape(mlir::Value value,
                                       llvm::ArrayRef<int64_t> shape);

private:
  /// Verifies `op`, erasing it and failing when it does not verify, then
  /// folds it (`fold`).
  mlir::FailureOr<mlir::Value> finish(mlir::Operation *op);
  /// `op`'s result, or, when the op folds on the constants among its
  /// operands (non-trainable parameters included), the folded value.
  mlir::Value fold(mlir::Operation *op);

  llvm::ArrayRef<mlir::Value> operands;
  llvm::ArrayRef<bool> outputUsed;
};

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// Converts one node, appending one value per produced output.
using PatternFn = mlir::LogicalResult (*)(NodeContext &context,
                                          llvm::SmallVectorImpl<mlir::Value> &results);

/// Patterns of the default ONNX domain keyed by (op type, since version).
class PatternRegistry {
public:
  void add(llvm::StringRef opType, int64_t sinceVersion, PatternFn pattern);
  /// The pattern with the largest since version <= `opset`, or null.
  PatternFn lookup(llvm::StringRef opType, int64_t opset) const;
  /// "Op (since v1, v2)" for every op type, sorted.
  std::vector<std::string> describe() const;
  /// Every op type, sorted.
  std::vector<std::string> opTypes() const;

  /// The registry with every family's patterns.
  static const PatternRegistry &get();

private:
  llvm::StringMap<llvm::SmallVector<std::pair<int64_t, PatternFn>, 2>>
      patterns;
};

/// A unary op on a floating-point tensor (Relu, Exp, Sqrt, Erf, ...): one
/// operand, one result of the same type.
template <typename OpTy>
mlir::LogicalResult convertFloatUnary(NodeContext &ctx,
                                      llvm::SmallVectorImpl<mlir::Value> &results) {
  if (mlir::failed(ctx.requireOperands(1)))
    return mlir::failure();
  mlir::Value input = ctx.getOperand(0);
  if (!llvm::isa<mlir::FloatType>(ctx.getOperandType(0).getElementType()))
    return ctx.fail(llvm::formatv("{0} of {1} is not supported: graph "
                                  "arithmetic is floating-point",
                                  ctx.node.op_type(), input.getType()));
  mlir::FailureOr<mlir::Value> result = ctx.create<OpTy>({input});
  if (mlir::failed(result))
    return mlir::failure();
  results.push_back(*result);
  return mlir::success();
}

void populateElementwisePatterns(PatternRegistry &registry);
void populateContractionPatterns(PatternRegistry &registry);
void populateShapePatterns(PatternRegistry &registry);
void populateReductionPatterns(PatternRegistry &registry);
void populateLossPatterns(PatternRegistry &registry);
void populateMathPatterns(PatternRegistry &registry);
void populateSelectionPatterns(PatternRegistry &registry);
void populateSlicingPatterns(PatternRegistry &registry);
void populateNormalizationPatterns(PatternRegistry &registry);
void populateConvolutionPatterns(PatternRegistry &registry);
void populateActivationPatterns(PatternRegistry &registry);
void populateLogLikelihoodPatterns(PatternRegistry &registry);
void populateGatherNDPatterns(PatternRegistry &registry);
void populateStaticShapePatterns(PatternRegistry &registry);

/// The legality gate: one line naming every node that has no pattern for the
/// model's opset (or lies outside the default domain) followed by the
/// supported ops, or the empty string when every node has a pattern.
std::string findUnsupportedNodes(llvm::StringRef path,
                                 const onnx::ModelProto &model);

/// The initializers that no gradient reaches (masks and other buffers):
/// used, but only through inputs that carry no gradient. They import as
/// non-trainable parameters, which patterns read as constants.
llvm::StringSet<> findBuffers(const onnx::GraphProto &graph);

/// The name a node is known by in diagnostics and locations: its own, or
/// "<op_type>_<index>" when it has none.
std::string getNodeName(const onnx::NodeProto &node, int index);

} // namespace pipecc::frontend::detail

#endif // PIPECC_FRONTEND_ONNX_PATTERNS_H
