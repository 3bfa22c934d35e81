//===- Importer.cpp - The ONNX frontend's entry points --------------------===//
//
// The import is a pipeline of separate steps: load the file (ModelLoader),
// fix input shapes (InputShapes), the legality gate and ONNX's shape checks,
// then the conversion (GraphImporter + the patterns).
//
//===----------------------------------------------------------------------===//

#include "pipecc/Frontend/ONNX/Importer.h"

#include "GraphImporter.h"
#include "InputShapes.h"
#include "ModelLoader.h"
#include "Patterns.h"

#include "pipecc/Dialect/Graph/GraphDialect.h"
#include "pipecc/Support/Escape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

#include <exception>

using namespace mlir;
using namespace pipecc::frontend;
using namespace pipecc::frontend::detail;

LogicalResult pipecc::frontend::parseInputShape(llvm::StringRef spec,
                                                ImportOptions &options,
                                                std::string &error) {
  auto [name, dimsText] = spec.rsplit('=');
  auto fail = [&](const llvm::Twine &why) {
    error = ("invalid --input-shape '" + spec + "': " + why).str();
    return failure();
  };
  if (name.empty() || name.size() == spec.size())
    return fail("expected NAME=DIMS, e.g. x=16x64");
  if (dimsText.empty())
    return fail("no dimensions after '='");
  SmallVector<llvm::StringRef> parts;
  dimsText.split(parts, dimsText.contains(',') ? ',' : 'x');
  SmallVector<int64_t> dims;
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim <= 0)
      return fail("'" + part + "' is not a positive dimension size");
    dims.push_back(dim);
  }
  options.inputShapes[name] = std::move(dims);
  return success();
}

std::vector<std::string> pipecc::frontend::supportedOps() {
  return PatternRegistry::get().describe();
}

OwningOpRef<ModuleOp>
pipecc::frontend::importONNXFile(llvm::StringRef path,
                                 const ImportOptions &options,
                                 MLIRContext *context) {
  context->loadDialect<pipecc::graph::GraphDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  auto report = [&](llvm::Error error) -> OwningOpRef<ModuleOp> {
    emitError(fileLoc) << llvm::toString(std::move(error));
    return nullptr;
  };
  // libonnx and protobuf report some failures by throwing.
  try {
    onnx::ModelProto model;
    MappedInitializers mapped;
    if (llvm::Error error = loadModel(path, model, mapped))
      return report(std::move(error));
    if (llvm::Error error =
            fixInputShapes(path, model, options.inputShapes))
      return report(std::move(error));
    // The gate runs before ONNX's shape inference, which would stop at the
    // first node it has no schema for instead of naming them all.
    std::string unsupported = findUnsupportedNodes(path, model);
    if (!unsupported.empty()) {
      emitError(fileLoc) << unsupported;
      return nullptr;
    }
    if (llvm::Error error = checkGraphStructure(path, model))
      return report(std::move(error));
    if (llvm::Error error = checkWithONNXShapeInference(path, model))
      return report(std::move(error));
    if (llvm::Error error = checkFrozenNames(path, model, options.frozen))
      return report(std::move(error));
    return convertModel(path, model, options.frozen, mapped, context);
  } catch (const std::exception &e) {
    emitError(fileLoc) << support::quote(path)
                       << ": internal error: " << support::toOneLine(e.what());
    return nullptr;
  }
}
