//===- Importer.h - ONNX model to graph dialect ------------------*- C++ -*-===//
//
// The ONNX frontend: reads an ONNX ModelProto and builds a module holding one
// `func.func @main` of graph dialect operations. Parameters (initializers)
// become `graph.param`, graph inputs become function arguments and graph
// outputs function results, each tagged with its ONNX name.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_FRONTEND_ONNX_IMPORTER_H
#define PIPECC_FRONTEND_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace pipecc::frontend {

struct ImportOptions {
  /// Sizes that fix free (symbolic/unknown) dimensions of graph inputs, by
  /// input name.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Floating-point initializers to import as non-trainable buffers
  /// (`--freeze`): ONNX does not say which initializers are parameters, and
  /// some buffers reach the loss through differentiable ops (rotary
  /// embeddings' `inv_freq`). Each name must be an initializer.
  llvm::SmallVector<std::string> frozen;
};

/// Parses "name=16x64" (or "name=16,64") into `options`; on failure returns
/// failure with a one-line explanation in `error`.
llvm::LogicalResult parseInputShape(llvm::StringRef spec,
                                    ImportOptions &options,
                                    std::string &error);

/// Imports an ONNX model file. On failure reports one error through the
/// context's diagnostic engine, at a location naming the file (and the node
/// where there is one), and returns null. Loads the graph and func dialects.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXFile(llvm::StringRef path, const ImportOptions &options,
               mlir::MLIRContext *context);

/// The ONNX op types the frontend converts with the since-versions of their
/// patterns, e.g. "ReduceMean (since 1, 18)", sorted by op type.
std::vector<std::string> supportedOps();

} // namespace pipecc::frontend

#endif // PIPECC_FRONTEND_ONNX_IMPORTER_H
