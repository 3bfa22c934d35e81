//===- StageTable.h - The one reader of the stage contract ------*- C++ -*-===//
//
// Everything downstream of split-stages (schedule, verify, codegen, memory
// planning, precision, inference) reads the virtual stages, their functions,
// placement and costs through readStageTable, from the module's typed
// `pipeline.stage_table` attribute (PipelineAttrs.td).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PASSES_STAGETABLE_H
#define PIPECC_PASSES_STAGETABLE_H

#include "pipecc/Scheduling/Problem.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace pipecc {
struct StageCostInfo {
  double forwardSeconds = 1, backwardInputSeconds = 1, backwardWeightSeconds = 1;
  int64_t activationBytes = 0; // kept from F to B, per micro-batch
  int64_t stashBytes = 0;      // kept from B to W, per micro-batch
  int64_t parameterBytes = 0;  // parameters (gradients are the same size)
};
struct VirtualStage {
  int64_t index;                      // model order, 0..V-1
  int64_t rank;                       // from the placement
  int64_t chunk;                      // position among the rank's stages
  mlir::func::FuncOp forward, backwardInput, backwardWeight; // W may be null
  StageCostInfo cost;                 // unit costs without a partition
};
struct StageTable {
  int64_t ranks = 1, chunks = 1;
  scheduling::PlacementKind placement = scheduling::PlacementKind::Linear;
  llvm::SmallVector<VirtualStage> stages; // by index
  std::string device;                     // device profile, for link timing
  const VirtualStage *stageOf(mlir::func::FuncOp) const;
  /// The rank of each virtual stage, by index (the placement).
  llvm::SmallVector<int64_t> rankOfStages() const;
};
/// Reads and checks the module's stage table; emits an error naming the
/// function/attribute on a broken contract. Works on the output of
/// pipecc-split-stages (training) and of the inference split.
mlir::FailureOr<StageTable> readStageTable(mlir::ModuleOp module);
} // namespace pipecc

#endif // PIPECC_PASSES_STAGETABLE_H
