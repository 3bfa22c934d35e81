#ifndef PIPECC_COMPILER_CODEGEN_H
#define PIPECC_COMPILER_CODEGEN_H

#include "pipecc/Compiler/OutputDirectory.h"
#include "pipecc/Compiler/RankProgram.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/MapVector.h"

namespace pipecc::codegen {

/// Initial parameter values by name, taken from the imported graph.
using ParameterValues = llvm::MapVector<llvm::StringRef, mlir::ElementsAttr>;
ParameterValues collectParameterValues(mlir::ModuleOp graphModule);

/// The `lower` phase: one module per rank, holding the rank's stage
/// functions lowered to the LLVM dialect and its host program.
mlir::LogicalResult
lowerRankModules(mlir::ModuleOp pipelineModule, const RankSettings &settings,
                 llvm::SmallVectorImpl<mlir::OwningOpRef<mlir::ModuleOp>> &out);

/// The `codegen` phase: writes rank<k> executables, rank<k>.safetensors,
/// pipeline.json and launch into `outputDir`.
mlir::LogicalResult
emitPipeline(mlir::ModuleOp pipelineModule,
             llvm::ArrayRef<mlir::OwningOpRef<mlir::ModuleOp>> rankModules,
             const ParameterValues &initialValues,
             const RankSettings &settings, OutputDirectory &outputDir);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_CODEGEN_H
