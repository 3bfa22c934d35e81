#ifndef PIPECC_COMPILER_CODEGEN_H
#define PIPECC_COMPILER_CODEGEN_H

#include "pipecc/Compiler/OutputDirectory.h"
#include "pipecc/Compiler/TargetBackend.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/MapVector.h"

namespace pipecc::codegen {

/// Settings baked into every rank executable.
struct RankSettings {
  /// Samples per micro-batch, for the runtime's samples/s (0: from the data).
  int64_t microbatchSize = 0;
  double learningRate = 0.1;
  /// A forward-only program (--inference): no loss, no optimizer; the
  /// runtime writes the graph outputs.
  bool inference = false;
  /// --precision: "fp32" or "bf16" (recorded in the manifest).
  std::string precision = "fp32";
  /// The target, its GPU architecture and the LLVM optimisation level.
  target::TargetOptions target;
};

/// Initial parameter values by name, taken from the imported graph.
using ParameterValues = llvm::MapVector<llvm::StringRef, mlir::ElementsAttr>;
ParameterValues collectParameterValues(mlir::ModuleOp graphModule);

/// The `lower` phase: one module per rank, holding the rank's stage
/// functions and the scheduled pipeline, lowered by one pass manager (under
/// the command line's pass-manager options): pipecc-record-stage-abi, the
/// target's stage lowering, then its host lowering
/// (pipecc-lower-rank-program).
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
