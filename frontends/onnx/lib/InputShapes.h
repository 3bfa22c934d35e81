//===- InputShapes.h - Static shapes for a model's inputs -------*- C++ -*-===//
//
// The second step of the import: every graph input gets a static shape
// (from the model or from --input-shape), then ONNX's own shape inference
// checks the nodes where libonnx knows the opset. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_FRONTEND_ONNX_INPUTSHAPES_H
#define PIPECC_FRONTEND_ONNX_INPUTSHAPES_H

#include "onnx/onnx_pb.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace pipecc::frontend::detail {

/// Applies `overrides` to the graph inputs (names must be graph inputs that
/// are not initializers, ranks must agree, fixed sizes may change) and
/// rejects any dimension left free. Overriding drops the model's value_info,
/// which may describe the old shapes.
llvm::Error
fixInputShapes(llvm::StringRef path, onnx::ModelProto &model,
               const llvm::StringMap<llvm::SmallVector<int64_t>> &overrides);

/// Checks what the importer relies on and ONNX requires of every graph:
/// names of initializers, inputs, outputs and nodes that are UTF-8 without
/// NUL bytes, names assigned once, graph inputs with non-empty shapes of fewer
/// than 2^62 elements, and (where libonnx knows the opset) each node's inputs,
/// outputs and attributes against its schema.
llvm::Error checkGraphStructure(llvm::StringRef path,
                                const onnx::ModelProto &model);

/// Checks that every `--freeze` name is a floating-point initializer of the
/// model; an unknown name suggests the closest initializer names.
llvm::Error checkFrozenNames(llvm::StringRef path,
                             const onnx::ModelProto &model,
                             llvm::ArrayRef<std::string> frozen);

/// Runs ONNX shape inference in strict mode when libonnx knows the model's
/// IR version and default opset, and turns its exceptions into one-line
/// errors. Newer models are left alone: graph ops infer their own types.
llvm::Error checkWithONNXShapeInference(llvm::StringRef path,
                                        onnx::ModelProto &model);

} // namespace pipecc::frontend::detail

#endif // PIPECC_FRONTEND_ONNX_INPUTSHAPES_H
