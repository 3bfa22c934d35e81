//===- ModelLoader.h - Reading ONNX files -----------------------*- C++ -*-===//
//
// The first step of the import: bytes to a ModelProto whose tensors all
// hold their data inline. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_FRONTEND_ONNX_MODELLOADER_H
#define PIPECC_FRONTEND_ONNX_MODELLOADER_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace pipecc::frontend::detail {

/// Reads and parses the model at `path` and loads the external data of its
/// initializers and Constant nodes, which must lie in the model's folder.
/// Errors are one line and name `path`.
llvm::Error loadModel(llvm::StringRef path, onnx::ModelProto &model);

/// The version of the default ("" or "ai.onnx") domain the model imports.
int64_t getDefaultOpset(const onnx::ModelProto &model);

/// The version the model imports for `domain`, or -1.
int64_t getOpset(const onnx::ModelProto &model, llvm::StringRef domain);

/// Whether `domain` names the default ONNX operator set.
inline bool isDefaultDomain(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

} // namespace pipecc::frontend::detail

#endif // PIPECC_FRONTEND_ONNX_MODELLOADER_H
