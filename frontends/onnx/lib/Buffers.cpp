//===- Buffers.cpp - Which float initializers are trained -----------------===//
//
// ONNX does not say which initializers are parameters and which are
// buffers (an attention mask, a position table). A float initializer is
// trained unless every use of it is cut off from the graph outputs by an
// input that carries no gradient: a comparison, a shape, an index, a Where
// condition, a Cast to a non-float type. Such a buffer then imports as a
// constant, and static mask arithmetic on it folds at import.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "llvm/ADT/StringSet.h"

using namespace pipecc::frontend::detail;

/// Whether input `index` of `node` can pass a gradient to the node's
/// outputs.
static bool carriesGradient(const onnx::NodeProto &node, int index) {
  llvm::StringRef op = node.op_type();
  // Ops whose outputs are booleans, integers or shapes.
  static const llvm::StringSet<> noGradient = {
      "Equal",   "Less",  "LessOrEqual", "Greater", "GreaterOrEqual",
      "Not",     "And",   "Or",          "Xor",     "IsNaN",
      "IsInf",   "Shape", "Size",        "ArgMax",  "ArgMin",
      "NonZero", "Range", "EyeLike",     "OneHot",  "ConstantOfShape",
      "Sign",    "Floor", "Ceil",        "Round",   "BitShift"};
  if (noGradient.contains(op))
    return false;
  // Ops whose later inputs are indices, shapes, axes or conditions.
  static const llvm::StringSet<> onlyFirst = {
      "Reshape", "Slice", "Split", "Gather", "GatherElements", "GatherND",
      "Unsqueeze", "Squeeze", "Expand", "Tile", "TopK", "CumSum", "Trilu",
      "Dropout", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
      "ReduceProd", "ReduceL2", "ReduceLogSumExp", "SoftmaxCrossEntropyLoss",
      "NegativeLogLikelihoodLoss", "Resize", "Pad", "SplitToSequence",
      "SequenceAt",
      // pipecc does not train exponents.
      "Pow"};
  if (onlyFirst.contains(op))
    return index == 0;
  if (op == "Where")
    return index != 0;
  if (op == "Cast" || op == "CastLike") {
    std::optional<int64_t> to;
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == "to")
        to = attr.i();
    switch (to.value_or(onnx::TensorProto::FLOAT)) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return index == 0;
    default:
      return false;
    }
  }
  return true;
}

llvm::StringSet<>
pipecc::frontend::detail::findBuffers(const onnx::GraphProto &graph) {
  // Backwards from the outputs: the values a gradient can reach. ONNX
  // nodes are in topological order, so one reverse sweep suffices.
  llvm::StringSet<> reached, used;
  for (const onnx::ValueInfoProto &output : graph.output())
    reached.insert(output.name());
  for (int n = graph.node_size() - 1; n >= 0; --n) {
    const onnx::NodeProto &node = graph.node(n);
    bool live = llvm::any_of(node.output(), [&](const std::string &name) {
      return reached.contains(name);
    });
    for (auto [index, input] : llvm::enumerate(node.input())) {
      used.insert(input);
      if (live && carriesGradient(node, index))
        reached.insert(input);
    }
  }
  llvm::StringSet<> buffers;
  for (const onnx::TensorProto &init : graph.initializer())
    if (used.contains(init.name()) && !reached.contains(init.name()))
      buffers.insert(init.name());
  return buffers;
}
