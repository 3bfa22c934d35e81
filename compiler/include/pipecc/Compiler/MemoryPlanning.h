#ifndef PIPECC_COMPILER_MEMORYPLANNING_H
#define PIPECC_COMPILER_MEMORYPLANNING_H

#include "pipecc/Compiler/Codegen.h"
#include "pipecc/MemoryPlan/MemoryPlan.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace pipecc::pipeline {
class ProgramOp;
}

namespace pipecc::codegen {

/// What the plan assumes about element sizes and optimizer state.
struct MemoryPlanSettings {
  /// "fp32" or "bf16", for the report.
  std::string precision = "fp32";
  /// Bytes of a floating-point activation element (f32 tensors of the stage
  /// functions: activations, transfers, data inputs, workspace, outputs).
  int64_t activationElementBytes = 4;
  /// Parameters stay f32 master copies; under bf16 the stage functions read
  /// a bf16 copy of each, which the plan adds (kind weight-copy).
  bool weightCopies = false;
  /// f32 copies of each trainable parameter the optimizer keeps (the
  /// runtime's SGD: none; Adam would keep two).
  int64_t optimizerStateCopies = 0;
  /// The plan of the program as compiled: every buffer at its type's size
  /// (no what-if scaling), as the rank executables are built with.
  bool asCompiled = false;
  int64_t alignment = 64;
  /// The step posts receives before they stand in the program (the CPU
  /// target; pipecc/Conversion/MessageWaits.h).
  bool postReceivesEarly = true;
};

/// The settings for a precision ("fp32" or "bf16"); nullopt for another.
std::optional<MemoryPlanSettings> memoryPlanSettingsFor(llvm::StringRef
                                                            precision);
/// The settings the rank executables of `settings` are built with.
MemoryPlanSettings memoryPlanSettingsFor(const RankSettings &settings);

/// One rank's records and plan. The first `tableBuffers` records are the
/// rank's buffer table (pipecc_rt_buffer_desc), in its order and with its
/// names, so that entry i takes `plan.buffers[i].slots` and `.offset`; the
/// records after them (bf16 weight copies, optimizer state) are memory the
/// arena holds beyond the table.
struct RankMemoryPlan {
  int64_t rank = 0;
  /// The virtual stages the rank runs, in model order.
  std::vector<int64_t> stages;
  std::vector<memory::BufferRecord> buffers;
  size_t tableBuffers = 0;
  std::vector<memory::ActionRecord> actions;
  memory::MemoryPlan plan;
  /// Bytes of the static workspace of the rank's stage-function
  /// temporaries (pipecc-plan-stage-workspace; a global of the executable,
  /// beside the arena); known once the rank is lowered, else 0.
  int64_t stageWorkspaceBytes = 0;
};

/// The stage functions `program`'s compute actions call, by symbol, in
/// module order; an error on an action whose callee is missing.
mlir::FailureOr<llvm::SmallVector<mlir::Operation *>>
stageFunctionsOf(pipeline::ProgramOp program);

/// Derives the records of one rank from its program and the stage functions
/// it calls (as the partition phase wrote them, with their
/// pipeline.* argument and result attributes), by the buffer table's rules
/// (RankProgram.cpp): a parameter and, when trainable, its gradient
/// accumulator; one buffer per data input, per tensor name an action reads
/// or transfers (kind transfer when sent or received, else activation), per
/// graph output; a result only added into gradient accumulators is a single
/// workspace buffer. Each compute action reads its function's arguments and
/// writes its results (a forward also loads the data inputs); sends read and
/// receives write their tensor.
mlir::FailureOr<RankMemoryPlan>
planRankMemory(pipeline::ProgramOp program,
               llvm::ArrayRef<mlir::Operation *> stageFunctions,
               mlir::ArrayAttr parameters, int64_t microbatches,
               const MemoryPlanSettings &settings);

/// Plans every rank of a scheduled module (after the schedule phase).
mlir::FailureOr<std::vector<RankMemoryPlan>>
planPipelineMemory(mlir::ModuleOp pipelineModule,
                   const MemoryPlanSettings &settings);

/// Where the host program places one entry of the buffer table.
struct TablePlacement {
  std::string name;
  int64_t slots = 0;
  int64_t offset = -1;
};
struct TablePlan {
  int64_t arenaBytes = 0;
  std::vector<TablePlacement> buffers;
};

/// Writes `plan`'s buffer-table part on `rankModule` as
/// `pipeline.memory_plan`, for the host program: entry i of the buffer
/// table takes slots and offset from buffers[i] (whose name must match),
/// and the program constant takes arena_bytes.
void attachMemoryPlan(mlir::ModuleOp rankModule, const RankMemoryPlan &plan);
/// Reads what attachMemoryPlan wrote; nullopt when absent or malformed.
std::optional<TablePlan> readMemoryPlan(mlir::ModuleOp rankModule);

/// The manifest's "memory_plan": per rank, the bytes per category, the
/// arena size and every buffer's slots and offset.
llvm::json::Value memoryPlanToJSON(llvm::ArrayRef<RankMemoryPlan> ranks,
                                   const MemoryPlanSettings &settings);

/// A table of the plan, one line per rank (--memory-plan).
void printMemoryPlan(llvm::ArrayRef<RankMemoryPlan> ranks,
                     const MemoryPlanSettings &settings,
                     llvm::StringRef schedule, int64_t microbatches,
                     llvm::raw_ostream &os);

} // namespace pipecc::codegen

#endif // PIPECC_COMPILER_MEMORYPLANNING_H
