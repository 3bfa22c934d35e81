//===- GraphImporter.cpp - ModelProto to graph dialect --------------------===//
//
// The mechanical part of the import: arguments for graph inputs, params for
// initializers, one pattern call per node in graph order, results for graph
// outputs. Everything an op means lives in the patterns.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "ModelLoader.h"
#include "Patterns.h"

#include "pipecc/Support/Escape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;
using pipecc::support::escape;
using pipecc::support::quote;

namespace {

/// Collects the first error reported while it lives, instead of letting it
/// reach the user; the importer re-reports it with the file and node.
class ErrorCollector {
public:
  explicit ErrorCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return failure();
          if (first.empty())
            first = diag.str();
          return success();
        }) {}
  const std::string &getFirst() const { return first; }

private:
  std::string first;
  ScopedDiagnosticHandler handler;
};

class GraphImporter {
public:
  GraphImporter(llvm::StringRef path, const onnx::ModelProto &model,
                llvm::ArrayRef<std::string> frozen, MappedInitializers &mapped,
                MLIRContext *context)
      : path(path), model(model), mapped(mapped), context(context),
        builder(context),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)),
        opset(getDefaultOpset(model)) {
    for (const std::string &name : frozen)
      this->frozen.insert(name);
  }

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult fail(Location loc, const llvm::Twine &message) {
    emitError(loc) << quote(path) << ": " << message;
    return failure();
  }
  Location nameLoc(llvm::StringRef name) {
    return NameLoc::get(builder.getStringAttr(name), fileLoc);
  }
  /// A node's location: its name, and its position in the graph, which
  /// tells apart nodes that share a name.
  Location nodeLoc(llvm::StringRef name, int index) {
    return NameLoc::get(
        builder.getStringAttr(name),
        FusedLoc::get(context, {fileLoc}, builder.getI64IntegerAttr(index)));
  }

  LogicalResult importInputs();
  LogicalResult importParams();
  /// A trainable float32 parameter's value, backed by its mapped external
  /// data.
  ElementsAttr mappedParameter(const onnx::TensorProto &init,
                               std::unique_ptr<llvm::MemoryBuffer> data);
  LogicalResult importNode(const onnx::NodeProto &node, int index);
  LogicalResult importOutputs();
  void eraseDeadOps();
  LogicalResult verifyModule();

  llvm::StringRef path;
  const onnx::ModelProto &model;
  MappedInitializers &mapped;
  /// Initializers the user froze (`--freeze`): imported as non-trainable.
  llvm::StringSet<> frozen;
  MLIRContext *context;
  OpBuilder builder;
  Location fileLoc;
  int64_t opset;

  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// The value of every ONNX tensor name defined so far.
  llvm::StringMap<Value> values;
  /// The ONNX sequences defined so far (SplitToSequence of a static split).
  SequenceTable sequences;
  /// Names read by a node or returned by the graph.
  llvm::StringSet<> used;
};

} // namespace

LogicalResult GraphImporter::importInputs() {
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &init : model.graph().initializer())
    initializers.insert(init.name());
  SmallVector<Type> types;
  SmallVector<llvm::StringRef> names;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    if (initializers.contains(input.name()))
      continue;
    const onnx::TypeProto_Tensor &tensor = input.type().tensor_type();
    Type elementType = convertElementType(tensor.elem_type(), context);
    if (!elementType)
      return fail(fileLoc, "input " + quote(input.name()) +
                               " has element type " +
                               dataTypeName(tensor.elem_type()) +
                               ", which pipecc does not support");
    SmallVector<int64_t> shape;
    for (const onnx::TensorShapeProto_Dimension &dim : tensor.shape().dim())
      shape.push_back(dim.dim_value());
    types.push_back(RankedTensorType::get(shape, elementType));
    names.push_back(input.name());
  }

  func = builder.create<func::FuncOp>(fileLoc, "main",
                                      builder.getFunctionType(types, {}));
  module->push_back(func);
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(names)) {
    func.setArgAttr(i, "graph.input", builder.getStringAttr(name));
    entry->getArgument(i).setLoc(nameLoc(name));
    values[name] = entry->getArgument(i);
  }
  builder.setInsertionPointToEnd(entry);
  return success();
}

LogicalResult GraphImporter::importParams() {
  llvm::StringSet<> buffers = findBuffers(model.graph());
  for (const onnx::TensorProto &init : model.graph().initializer()) {
    const std::string &name = init.name();
    if (name.empty())
      return fail(fileLoc, "an initializer has no name");
    if (values.count(name))
      return fail(nameLoc(name),
                  "initializer " + quote(name) + " is defined more than once");
    bool trainable = !buffers.contains(name) && !frozen.contains(name);
    std::string error;
    ElementsAttr value;
    if (auto it = mapped.find(name); it != mapped.end()) {
      std::unique_ptr<llvm::MemoryBuffer> data = std::move(it->second);
      mapped.erase(it);
      if (trainable) {
        value = mappedParameter(init, std::move(data));
      } else {
        // A constant's value is read at import: copy it.
        onnx::TensorProto copy = init;
        copy.clear_external_data();
        copy.clear_data_location();
        copy.set_raw_data(data->getBufferStart(), data->getBufferSize());
        value = convertTensor(copy, context, error);
      }
    } else {
      value = convertTensor(init, context, error);
    }
    if (!value)
      return fail(nameLoc(name), "initializer " + quote(name) + " " + error);
    trainable = trainable && llvm::isa<FloatType>(value.getElementType());
    values[name] = builder.create<graph::ParamOp>(
        nameLoc(name), value.getType(), builder.getStringAttr(name),
        trainable ? builder.getUnitAttr() : UnitAttr(), value);
  }
  return success();
}

ElementsAttr
GraphImporter::mappedParameter(const onnx::TensorProto &init,
                               std::unique_ptr<llvm::MemoryBuffer> data) {
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(init.dims().begin(), init.dims().end()),
      builder.getF32Type());
  ArrayRef<char> bytes(data->getBufferStart(), data->getBufferSize());
  // The blob owns the mapping; alignment 1: a slice need not start on a
  // float boundary, and the bytes are only ever copied out.
  AsmResourceBlob blob(
      bytes, /*dataAlignment=*/1,
      [data = std::move(data)](void *, size_t, size_t) mutable {
        data.reset();
      },
      /*dataIsMutable=*/false);
  // The resource key only labels printed IR: keep it a plain identifier
  // (the parameter's own name, escaped, is on the op).
  std::string key = init.name();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_' && c != '.')
      c = '_';
  return DenseResourceElementsAttr::get(type, key, std::move(blob));
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        int index) {
  std::string name = getNodeName(node, index);
  Location loc = nodeLoc(name, index);
  std::string what =
      "node " + quote(name) + " (" + escape(node.op_type()) + "): ";
  PatternFn pattern = PatternRegistry::get().lookup(node.op_type(), opset);
  if (!pattern || !isDefaultDomain(node.domain()))
    return fail(loc, what + "no pattern for opset " + std::to_string(opset));
  // Every op has an output; ONNX's schema check, which would say so, does not
  // run on opsets newer than libonnx knows.
  if (node.output_size() == 0)
    return fail(loc, what + "the node has no outputs");

  SmallVector<Value> operands;
  for (const std::string &input : node.input()) {
    if (input.empty()) {
      operands.push_back(Value());
      continue;
    }
    auto found = values.find(input);
    // A sequence has no graph value; the pattern reads it by name.
    if (found == values.end() && sequences.count(input)) {
      operands.push_back(Value());
      continue;
    }
    if (found == values.end())
      return fail(loc, what + "input " + quote(input) +
                           " is not a graph input, an initializer or the "
                           "output of an earlier node");
    operands.push_back(found->getValue());
  }
  SmallVector<bool> outputUsed;
  for (const std::string &output : node.output())
    outputUsed.push_back(!output.empty() && used.contains(output));

  SmallVector<Value> results;
  LogicalResult converted = failure();
  std::string error;
  {
    ErrorCollector errors(context);
    NodeContext nodeContext(node, opset, operands, outputUsed, builder, loc,
                            &sequences);
    converted = pattern(nodeContext, results);
    error = errors.getFirst();
  }
  if (failed(converted) || !error.empty())
    return fail(loc, what + (error.empty() ? "conversion failed" : error));
  if (results.size() > static_cast<size_t>(node.output_size()))
    return fail(loc, what + "internal error: the pattern made too many "
                            "results");
  for (auto [i, output] : llvm::enumerate(node.output())) {
    if (output.empty())
      continue;
    if (i >= results.size() || !results[i]) {
      if (outputUsed[i] && !sequences.count(output))
        return fail(loc, what + "output " + std::to_string(i) + " (" +
                             quote(output) + ") is not supported");
      continue;
    }
    values[output] = results[i];
  }
  return success();
}

LogicalResult GraphImporter::importOutputs() {
  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    auto found = values.find(output.name());
    if (found == values.end())
      return fail(fileLoc, "graph output " + quote(output.name()) +
                               " is not produced by any node");
    results.push_back(found->getValue());
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setType(builder.getFunctionType(func.getArgumentTypes(),
                                       ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(model.graph().output()))
    func.setResultAttr(i, "graph.output",
                       builder.getStringAttr(output.name()));
  return success();
}

/// Folded shape computations leave constants (and the ops that fed them)
/// without users. Floating-point params stay, read or not: each is an
/// initializer of the checkpoint. One no op reads (a Gemm's C when beta is
/// 0, an initializer no node names) cannot be trained, so it is frozen.
/// Integer and boolean initializers are constants that patterns fold into
/// the ops reading them; unread ones go.
void GraphImporter::eraseDeadOps() {
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(func.front()))) {
    auto param = llvm::dyn_cast<graph::ParamOp>(op);
    if (param && param->use_empty()) {
      if (param.getTrainable())
        param.setTrainable(false);
      else
        param.erase();
      continue;
    }
    if (!param && isOpTriviallyDead(&op))
      op.erase();
  }
}

LogicalResult GraphImporter::verifyModule() {
  std::string error;
  {
    ErrorCollector errors(context);
    if (succeeded(mlir::verify(*module)))
      return success();
    error = errors.getFirst();
  }
  return fail(fileLoc, "internal error: the imported module does not "
                       "verify: " +
                           error);
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  module = ModuleOp::create(fileLoc);
  (*module)->setAttr("graph.model", builder.getStringAttr(
                                        llvm::sys::path::filename(path)));
  (*module)->setAttr("graph.opset", builder.getI64IntegerAttr(opset));

  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &input : node.input())
      used.insert(input);
  for (const onnx::ValueInfoProto &output : model.graph().output())
    used.insert(output.name());

  if (failed(importInputs()) || failed(importParams()))
    return nullptr;
  for (auto [index, node] : llvm::enumerate(model.graph().node()))
    if (failed(importNode(node, index)))
      return nullptr;
  if (failed(importOutputs()))
    return nullptr;
  eraseDeadOps();
  if (failed(verifyModule()))
    return nullptr;
  return std::move(module);
}

OwningOpRef<ModuleOp>
pipecc::frontend::detail::convertModel(llvm::StringRef path,
                                       const onnx::ModelProto &model,
                                       llvm::ArrayRef<std::string> frozen,
                                       MappedInitializers &mapped,
                                       MLIRContext *context) {
  return GraphImporter(path, model, frozen, mapped, context).run();
}
