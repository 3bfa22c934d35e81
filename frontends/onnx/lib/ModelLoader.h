//===- ModelLoader.h - Reading ONNX files -----------------------*- C++ -*-===//
//
// The first step of the import: bytes to a ModelProto whose tensors hold
// their data inline, but for large float32 initializers, whose external
// data stays mapped. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_FRONTEND_ONNX_MODELLOADER_H
#define PIPECC_FRONTEND_ONNX_MODELLOADER_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace pipecc::frontend::detail {

/// Float32 initializers at least this large stay in their external data
/// file, mapped: a model too big to hold twice in memory (GPT-2-XL: 6 GB)
/// imports without reading its weights, which only codegen writes out.
inline constexpr size_t kMappedInitializerBytes = size_t(1) << 20;

/// By initializer name: the mapped external data of large float32
/// initializers, whose TensorProto keeps data_location EXTERNAL.
using MappedInitializers =
    llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>>;

/// Reads and parses the model at `path` and loads the external data of its
/// initializers and Constant nodes, which must lie in the model's folder;
/// that of large float32 initializers is mapped into `mapped` instead of
/// copied. Errors are one line and name `path`.
llvm::Error loadModel(llvm::StringRef path, onnx::ModelProto &model,
                      MappedInitializers &mapped);

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
