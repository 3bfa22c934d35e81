//===- InputShapes.cpp - Static shapes for a model's inputs ---------------===//

#include "InputShapes.h"
#include "ModelLoader.h"

#include "pipecc/Support/Escape.h"

#include "onnx/shape_inference/implementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <exception>

using namespace pipecc::frontend::detail;
using llvm::StringRef;
using pipecc::support::escape;
using pipecc::support::quote;
using pipecc::support::toOneLine;

/// libonnx 1.12 knows IR versions up to 8 and opsets up to 17.
static constexpr int64_t kMaxKnownIRVersion = 8;
static constexpr int64_t kMaxKnownOpset = 17;

static llvm::Error makeError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 quote(path) + ": " + message);
}

static std::string formatDims(llvm::ArrayRef<int64_t> dims) {
  std::string out;
  for (auto [i, d] : llvm::enumerate(dims))
    out += (i ? "x" : "") + std::to_string(d);
  return out;
}

llvm::Error pipecc::frontend::detail::fixInputShapes(
    StringRef path, onnx::ModelProto &model,
    const llvm::StringMap<llvm::SmallVector<int64_t>> &overrides) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &init : graph->initializer())
    initializers.insert(init.name());

  llvm::StringSet<> inputs;
  std::string inputList;
  for (const onnx::ValueInfoProto &input : graph->input())
    if (!initializers.contains(input.name())) {
      inputs.insert(input.name());
      inputList += (inputList.empty() ? "" : ", ") + quote(input.name());
    }
  for (const auto &entry : overrides)
    if (!inputs.contains(entry.getKey()))
      return makeError(
          path, "--input-shape names " + quote(entry.getKey()) +
                    ", which is not a graph input (inputs: " + inputList + ")");

  for (onnx::ValueInfoProto &input : *graph->mutable_input()) {
    if (initializers.contains(input.name()))
      continue;
    StringRef name = input.name();
    if (!input.type().has_tensor_type())
      return makeError(path, "input " + quote(name) + " is not a tensor");
    onnx::TypeProto_Tensor *tensor =
        input.mutable_type()->mutable_tensor_type();
    auto found = overrides.find(name);
    if (found != overrides.end()) {
      llvm::ArrayRef<int64_t> dims = found->getValue();
      if (tensor->has_shape() &&
          tensor->shape().dim_size() != static_cast<int>(dims.size()))
        return makeError(
            path, llvm::formatv("--input-shape {0}={1} has rank {2}, but "
                                "input {4} has rank {3}",
                                escape(name), formatDims(dims), dims.size(),
                                tensor->shape().dim_size(), quote(name)));
      onnx::TensorShapeProto *shape = tensor->mutable_shape();
      shape->clear_dim();
      for (int64_t d : dims)
        shape->add_dim()->set_dim_value(d);
      continue;
    }
    std::string fixIt =
        "; fix it with --input-shape " + escape(name) + "=<dims>";
    if (!tensor->has_shape())
      return makeError(path, "input " + quote(name) + " has no shape" + fixIt);
    for (auto [i, dim] : llvm::enumerate(tensor->shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() >= 0)
        continue;
      std::string param =
          dim.has_dim_param() ? " (" + quote(dim.dim_param()) + ")" : "";
      return makeError(path, llvm::formatv("input {0} has a free dimension "
                                           "{1}{2}{3}",
                                           quote(name), i, param, fixIt));
    }
  }

  // The model's intermediate and output shapes may name the old sizes.
  if (!overrides.empty()) {
    graph->clear_value_info();
    for (onnx::ValueInfoProto &output : *graph->mutable_output())
      if (output.type().has_tensor_type())
        output.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return llvm::Error::success();
}

/// Names of initializers, graph inputs and outputs and nodes leave the
/// compiler: in weights files and pipeline.json (JSON, which holds UTF-8
/// only: other bytes would be replaced, and two names could become one), in
/// the rank executables (C strings) and in --cut-after. They must be UTF-8
/// without NUL bytes, so that what is written is what the runtime looks up.
static llvm::Error checkNames(StringRef path, const onnx::GraphProto &graph) {
  auto check = [&](StringRef what, StringRef name) -> llvm::Error {
    std::optional<size_t> bad = pipecc::support::findInvalidNameByte(name);
    if (!bad)
      return llvm::Error::success();
    return makeError(path, what + " " + quote(name) + " has a name that " +
                               (name[*bad] == 0 ? "holds a NUL byte"
                                                : "is not valid UTF-8") +
                               " (at byte " + llvm::Twine(*bad) +
                               "); names must be UTF-8 text without NUL bytes");
  };
  for (const onnx::TensorProto &init : graph.initializer())
    if (llvm::Error err = check("initializer", init.name()))
      return err;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (llvm::Error err = check("graph input", input.name()))
      return err;
  for (const onnx::ValueInfoProto &output : graph.output())
    if (llvm::Error err = check("graph output", output.name()))
      return err;
  for (const onnx::NodeProto &node : graph.node())
    if (llvm::Error err = check("node", node.name()))
      return err;
  return llvm::Error::success();
}

llvm::Error pipecc::frontend::detail::checkGraphStructure(
    StringRef path, const onnx::ModelProto &model) {
  const onnx::GraphProto &graph = model.graph();
  if (llvm::Error err = checkNames(path, graph))
    return err;
  llvm::StringSet<> initializers, defined;
  for (const onnx::TensorProto &init : graph.initializer())
    if (!initializers.insert(init.name()).second)
      return makeError(path, "initializer " + quote(init.name()) +
                                 " is defined twice");
  // Single assignment: every name is a graph input, an initializer or the
  // output of exactly one node.
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.contains(input.name()))
      continue;
    if (!defined.insert(input.name()).second)
      return makeError(path, "graph input " + quote(input.name()) +
                                 " is declared twice");
    const auto &dims = input.type().tensor_type().shape().dim();
    double elements = 1;
    for (auto [index, dim] : llvm::enumerate(dims)) {
      if (dim.has_dim_value() && dim.dim_value() == 0)
        return makeError(path, "input " + quote(input.name()) +
                                   " has dimension " + llvm::Twine(index) +
                                   " of size 0; it would hold no data");
      if (dim.has_dim_value())
        elements *= static_cast<double>(dim.dim_value());
    }
    if (elements > static_cast<double>(int64_t(1) << 62))
      return makeError(path, "input " + quote(input.name()) +
                                 " has more than 2^62 elements");
  }
  for (const onnx::TensorProto &init : graph.initializer())
    if (init.data_type() == onnx::TensorProto::FLOAT ||
        init.data_type() == onnx::TensorProto::FLOAT16 ||
        init.data_type() == onnx::TensorProto::DOUBLE ||
        init.data_type() == onnx::TensorProto::BFLOAT16)
      for (auto [index, dim] : llvm::enumerate(init.dims()))
        if (dim == 0)
          return makeError(path, "initializer " + quote(init.name()) +
                                     " has dimension " + llvm::Twine(index) +
                                     " of size 0; it would hold no data");
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      if (!output.empty() &&
          (initializers.contains(output) || !defined.insert(output).second))
        return makeError(path, "node " + quote(node.name()) + " (" +
                                   escape(node.op_type()) + ") assigns " +
                                   quote(output) +
                                   ", which is already defined");

  if (model.ir_version() > kMaxKnownIRVersion ||
      getDefaultOpset(model) > kMaxKnownOpset)
    return llvm::Error::success();
  for (const onnx::NodeProto &node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
        node.op_type(), getDefaultOpset(model), node.domain());
    if (!schema)
      continue; // the legality gate has named it already
    try {
      schema->Verify(node);
    } catch (const std::exception &e) {
      std::string what = toOneLine(StringRef(e.what()).trim());
      return makeError(path, "node " + quote(node.name()) + " (" +
                                 escape(node.op_type()) + "): " + what);
    }
  }
  return llvm::Error::success();
}

llvm::Error pipecc::frontend::detail::checkWithONNXShapeInference(
    StringRef path, onnx::ModelProto &model) {
  if (model.ir_version() > kMaxKnownIRVersion ||
      getDefaultOpset(model) > kMaxKnownOpset)
    return llvm::Error::success();
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/true,
                                        /*strict_mode_val=*/1);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    // ONNX's messages name the node ("(op_type:Gemm, node name: n1)") and
    // may span lines.
    return makeError(path, "ONNX shape inference failed: " +
                               toOneLine(StringRef(e.what()).trim()));
  }
  return llvm::Error::success();
}

llvm::Error pipecc::frontend::detail::checkFrozenNames(
    StringRef path, const onnx::ModelProto &model,
    llvm::ArrayRef<std::string> frozen) {
  for (const std::string &name : frozen) {
    const onnx::TensorProto *found = nullptr;
    for (const onnx::TensorProto &init : model.graph().initializer())
      if (init.name() == name)
        found = &init;
    if (found) {
      int32_t type = found->data_type();
      if (type == onnx::TensorProto::FLOAT ||
          type == onnx::TensorProto::FLOAT16 ||
          type == onnx::TensorProto::DOUBLE ||
          type == onnx::TensorProto::BFLOAT16)
        continue;
      return makeError(path, "--freeze " + quote(name) +
                                 ": the initializer is not floating point, "
                                 "so it is never trained");
    }
    // The closest names by edit distance, so a typo is easy to fix.
    std::vector<std::pair<unsigned, std::string>> close;
    for (const onnx::TensorProto &init : model.graph().initializer())
      close.push_back({StringRef(init.name()).edit_distance(name),
                       init.name()});
    llvm::sort(close);
    std::string hint;
    for (size_t i = 0; i < close.size() && i < 3; ++i)
      hint += (i ? ", " : "; initializers with close names: ") +
              quote(close[i].second);
    return makeError(path, "--freeze " + quote(name) +
                               ": the model has no initializer of that "
                               "name" + hint);
  }
  return llvm::Error::success();
}
