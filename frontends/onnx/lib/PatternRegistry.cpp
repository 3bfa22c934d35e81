//===- PatternRegistry.cpp - Registry, node context, tensors --------------===//

#include "ModelLoader.h"
#include "Patterns.h"

#include "pipecc/Support/Escape.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;
using pipecc::support::escape;
using pipecc::support::quote;

//===----------------------------------------------------------------------===//
// Element types and tensors
//===----------------------------------------------------------------------===//

Type pipecc::frontend::detail::convertElementType(int32_t dataType,
                                                  MLIRContext *context) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string pipecc::frontend::detail::dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

/// The host-order bytes of `count` little-endian elements of `width` bytes.
static std::vector<char> toHostOrder(llvm::StringRef bytes, size_t width) {
  std::vector<char> out(bytes.begin(), bytes.end());
  if constexpr (llvm::endianness::native != llvm::endianness::little)
    for (size_t i = 0; i + width <= out.size(); i += width)
      std::reverse(out.begin() + i, out.begin() + i + width);
  return out;
}

DenseElementsAttr
pipecc::frontend::detail::convertTensor(const onnx::TensorProto &tensor,
                                        MLIRContext *context,
                                        std::string &error) {
  int32_t dataType = tensor.data_type();
  Type elementType = convertElementType(dataType, context);
  if (!elementType) {
    error = "has element type " + dataTypeName(dataType) +
            ", which pipecc does not support (FLOAT, DOUBLE, FLOAT16, "
            "BFLOAT16, INT64, INT32, BOOL)";
    return {};
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "has external data that was not loaded";
    return {};
  }
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      error = "has a negative dimension " + std::to_string(dim);
      return {};
    }
    if (dim != 0 && count > (int64_t(1) << 40) / dim) {
      error = "is too large";
      return {};
    }
    count *= dim;
    shape.push_back(dim);
  }
  auto type = RankedTensorType::get(shape, elementType);
  auto wrongCount = [&](size_t have) {
    error = llvm::formatv("has {0} values, but its shape needs {1}", have,
                          count)
                .str();
    return DenseElementsAttr();
  };

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (elementType.isInteger(1)) {
      if (raw.size() != static_cast<size_t>(count))
        return wrongCount(raw.size());
      SmallVector<bool> values;
      for (char c : raw)
        values.push_back(c != 0);
      return DenseElementsAttr::get(type, ArrayRef<bool>(values));
    }
    size_t width = elementType.getIntOrFloatBitWidth() / 8;
    if (raw.size() != static_cast<size_t>(count) * width)
      return wrongCount(raw.size() / width);
    std::vector<char> bytes = toHostOrder(raw, width);
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  }

  auto fromTyped = [&](auto values) -> DenseElementsAttr {
    if (values.size() != static_cast<size_t>(count))
      return wrongCount(values.size());
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  };
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return fromTyped(llvm::SmallVector<float>(tensor.float_data().begin(),
                                              tensor.float_data().end()));
  case onnx::TensorProto::DOUBLE:
    return fromTyped(llvm::SmallVector<double>(tensor.double_data().begin(),
                                               tensor.double_data().end()));
  case onnx::TensorProto::INT64:
    return fromTyped(llvm::SmallVector<int64_t>(tensor.int64_data().begin(),
                                                tensor.int64_data().end()));
  case onnx::TensorProto::INT32:
    return fromTyped(llvm::SmallVector<int32_t>(tensor.int32_data().begin(),
                                                tensor.int32_data().end()));
  case onnx::TensorProto::BOOL: {
    llvm::SmallVector<bool> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(v != 0);
    return fromTyped(values);
  }
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    // ONNX stores the 16-bit patterns in int32_data.
    if (tensor.int32_data_size() != count)
      return wrongCount(tensor.int32_data_size());
    std::vector<uint16_t> bits(tensor.int32_data().begin(),
                               tensor.int32_data().end());
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                             bits.size() * sizeof(uint16_t)));
  }
  default:
    error = "has no data";
    return {};
  }
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::requireOperands(unsigned count) {
  for (unsigned i = 0; i < count; ++i)
    if (!getOperand(i))
      return fail(llvm::formatv("needs input {0}, which is missing", i));
  return success();
}

const onnx::AttributeProto *
NodeContext::getAttr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

std::optional<int64_t> NodeContext::getInt(llvm::StringRef name) const {
  if (const onnx::AttributeProto *attr = getAttr(name))
    return attr->i();
  return std::nullopt;
}

std::optional<float> NodeContext::getFloat(llvm::StringRef name) const {
  if (const onnx::AttributeProto *attr = getAttr(name))
    return attr->f();
  return std::nullopt;
}

std::optional<std::string>
NodeContext::getString(llvm::StringRef name) const {
  if (const onnx::AttributeProto *attr = getAttr(name))
    return attr->s();
  return std::nullopt;
}

std::optional<SmallVector<int64_t>>
NodeContext::getInts(llvm::StringRef name) const {
  if (const onnx::AttributeProto *attr = getAttr(name))
    return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
  return std::nullopt;
}

DenseElementsAttr NodeContext::getConstant(Value value) const {
  if (!value)
    return {};
  if (auto constant = value.getDefiningOp<graph::ConstantOp>())
    return llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  // Training never changes a non-trainable parameter: integer initializers
  // such as Reshape targets and axes are constants.
  if (auto param = value.getDefiningOp<graph::ParamOp>())
    if (!param.getTrainable() && param.getInit())
      return llvm::dyn_cast<DenseElementsAttr>(*param.getInit());
  return {};
}

FailureOr<SmallVector<int64_t>>
NodeContext::getConstantInts(Value value, llvm::StringRef what) {
  DenseElementsAttr constant = getConstant(value);
  if (!constant || !constant.getElementType().isSignlessInteger() ||
      constant.getElementType().isInteger(1))
    return fail("input '" + what +
                "' must be a constant integer tensor (computed from "
                "constants and static shapes)");
  SmallVector<int64_t> values;
  for (const APInt &v : constant.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

Value NodeContext::createConstant(DenseElementsAttr value) {
  return builder.create<graph::ConstantOp>(loc, value);
}

Value NodeContext::createScalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  return createConstant(
      DenseElementsAttr::get(type, FloatAttr::get(elementType, value)));
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              llvm::StringRef what) {
  if (axis < -rank || axis >= rank)
    return fail(llvm::formatv("{0} {1} is out of range for rank {2}", what,
                              axis, rank));
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normal = normalizeAxis(axis, rank);
    if (failed(normal))
      return failure();
    if (llvm::is_contained(out, *normal))
      return fail(llvm::formatv("axis {0} is repeated", axis));
    out.push_back(*normal);
  }
  return out;
}

FailureOr<Value> NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (type == resultType)
    return value;
  if (resultType.getNumElements() != type.getNumElements())
    return fail(llvm::formatv("cannot reshape {0} ({1} elements) to {2} ({3} "
                              "elements)",
                              type, type.getNumElements(), resultType,
                              resultType.getNumElements()));
  return createTyped<graph::ReshapeOp>(resultType, value);
}

FailureOr<Value> NodeContext::finish(Operation *op) {
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  return fold(op);
}

Value NodeContext::fold(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<Attribute> constants;
  for (Value operand : op->getOperands())
    constants.push_back(getConstant(operand));
  SmallVector<OpFoldResult> folded;
  if (failed(op->fold(constants, folded)) || folded.size() != 1)
    return result;
  if (auto value = llvm::dyn_cast<Value>(folded[0])) {
    // An in-place fold (reshape of a reshape) keeps the op.
    if (value != result)
      op->erase();
    return value;
  }
  auto constant = llvm::dyn_cast<DenseElementsAttr>(
      llvm::cast<Attribute>(folded[0]));
  if (!constant || constant.getType() != result.getType())
    return result;
  op->erase();
  return createConstant(constant);
}

//===----------------------------------------------------------------------===//
// Registry and legality
//===----------------------------------------------------------------------===//

void PatternRegistry::add(llvm::StringRef opType, int64_t sinceVersion,
                          PatternFn pattern) {
  auto &versions = patterns[opType];
  versions.emplace_back(sinceVersion, pattern);
  llvm::sort(versions, [](auto &a, auto &b) { return a.first < b.first; });
}

PatternFn PatternRegistry::lookup(llvm::StringRef opType,
                                  int64_t opset) const {
  auto found = patterns.find(opType);
  if (found == patterns.end())
    return nullptr;
  PatternFn best = nullptr;
  for (auto [since, pattern] : found->getValue())
    if (since <= opset)
      best = pattern;
  return best;
}

std::vector<std::string> PatternRegistry::opTypes() const {
  std::vector<std::string> names;
  for (const auto &entry : patterns)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

std::vector<std::string> PatternRegistry::describe() const {
  std::vector<std::string> out;
  for (const std::string &name : opTypes()) {
    std::string line = name + " (since ";
    for (auto [i, entry] : llvm::enumerate(patterns.find(name)->getValue()))
      line += (i ? ", " : "") + std::to_string(entry.first);
    out.push_back(line + ")");
  }
  return out;
}

const PatternRegistry &PatternRegistry::get() {
  static const PatternRegistry registry = [] {
    PatternRegistry r;
    populateElementwisePatterns(r);
    populateContractionPatterns(r);
    populateShapePatterns(r);
    populateReductionPatterns(r);
    populateLossPatterns(r);
    populateMathPatterns(r);
    populateSelectionPatterns(r);
    populateSlicingPatterns(r);
    populateNormalizationPatterns(r);
    populateConvolutionPatterns(r);
    populateActivationPatterns(r);
    populateLogLikelihoodPatterns(r);
    populateGatherNDPatterns(r);
    populateStaticShapePatterns(r);
    return r;
  }();
  return registry;
}

std::string pipecc::frontend::detail::getNodeName(const onnx::NodeProto &node,
                                                  int index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index);
}

std::string
pipecc::frontend::detail::findUnsupportedNodes(llvm::StringRef path,
                                               const onnx::ModelProto &model) {
  const PatternRegistry &registry = PatternRegistry::get();
  int64_t opset = getDefaultOpset(model);
  std::vector<std::string> unsupported;
  for (auto [index, node] : llvm::enumerate(model.graph().node())) {
    std::string where;
    if (isDefaultDomain(node.domain())) {
      if (registry.lookup(node.op_type(), opset))
        continue;
      where = "opset " + std::to_string(opset);
    } else {
      int64_t version = getOpset(model, node.domain());
      where = "domain " + quote(node.domain()) +
              (version >= 0 ? " opset " + std::to_string(version) : "");
    }
    // Names come from the file: escaped to keep the message one line.
    unsupported.push_back(quote(getNodeName(node, index)) + " (" +
                          escape(node.op_type()) + ", " + where + ")");
  }
  if (unsupported.empty())
    return "";
  std::string message =
      llvm::formatv("{0}: {1} unsupported ONNX node{2}: ", quote(path),
                    unsupported.size(), unsupported.size() == 1 ? "" : "s");
  message += llvm::join(unsupported, ", ");
  message += "; supported: " + llvm::join(registry.opTypes(), ", ");
  return message;
}
