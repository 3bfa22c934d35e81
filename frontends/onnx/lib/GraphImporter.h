//===- GraphImporter.h - ModelProto to graph dialect ------------*- C++ -*-===//

#ifndef PIPECC_FRONTEND_ONNX_GRAPHIMPORTER_H
#define PIPECC_FRONTEND_ONNX_GRAPHIMPORTER_H

#include "ModelLoader.h"

#include "onnx/onnx_pb.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace pipecc::frontend::detail {

/// Builds the module for a model whose inputs have static shapes and whose
/// nodes all have patterns. Initializers named in `frozen` import as
/// non-trainable. A trainable parameter whose data `mapped` holds gets it
/// as a dense_resource that owns the mapping (no copy); other mapped
/// initializers are copied. Reports one error and returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
convertModel(llvm::StringRef path, const onnx::ModelProto &model,
             llvm::ArrayRef<std::string> frozen, MappedInitializers &mapped,
             mlir::MLIRContext *context);

} // namespace pipecc::frontend::detail

#endif // PIPECC_FRONTEND_ONNX_GRAPHIMPORTER_H
