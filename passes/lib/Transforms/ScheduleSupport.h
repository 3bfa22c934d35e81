//===- ScheduleSupport.h - Pipeline ops in the scheduling library's terms -===//
//
// The schedule passes speak two languages: the pipeline dialect, where a
// message is one named tensor, and the scheduling library, where a message
// is everything crossing one boundary between virtual stages ("act.q<k>",
// "grad.q<k>"). This header converts a pipeline.pipeline op to the
// library's Program form, keeping the op behind every action so that
// diagnostics land on the IR.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PASSES_LIB_TRANSFORMS_SCHEDULESUPPORT_H
#define PIPECC_PASSES_LIB_TRANSFORMS_SCHEDULESUPPORT_H

#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/StageTable.h"
#include "pipecc/Scheduling/Program.h"

#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace pipecc {

/// A pipeline op as the scheduling library sees it. Sends and receives are
/// named by the boundary they cross; the consecutive IR messages of one
/// boundary and micro-batch (one per tensor) are one library message, as
/// the schedule pass's library programs had them. The IR's own tensor names
/// stay on the ops in `ops`.
struct LibraryPrograms {
  /// The op's placement, with the stage table's durations when the module
  /// still has its stage functions (unit durations otherwise).
  scheduling::ScheduleProblem problem;
  /// Links from the stage table's device profile (free without one).
  scheduling::TimingModel timing;
  std::vector<scheduling::Program> programs;
  /// By rank: the program op, and the (first) op behind each program
  /// action.
  std::vector<pipeline::ProgramOp> programOps;
  std::vector<std::vector<mlir::Operation *>> ops;
  /// Library names ("act.q<k>", "grad.q<k>") of the boundaries between
  /// virtual stages on two ranks that no IR message crosses (a stage
  /// function exchanging nothing there). The library's dependency model
  /// needs a message on each, so simulate() cannot judge such programs.
  std::vector<std::string> silentBoundaries;
};

/// Converts `pipeline` (split backward when any B or W op occurs). The
/// durations and link timing come from the stage table of the enclosing
/// module, so that simulate() on the result reproduces the prediction of
/// pipecc-schedule. Emits an error on the offending op and fails when the
/// pipeline cannot be expressed: a placement that differs from the stage
/// table's, or an op that is not a pipeline action.
mlir::FailureOr<LibraryPrograms>
toLibraryPrograms(pipeline::PipelineOp pipeline);

/// The costs the stage table gives a schedule: each virtual stage's F, B
/// and W durations, and from its device profile the links, the cores the
/// ranks share, each rank's optimizer step and the step's loss reduction.
/// Without a known profile the link is free and the rest costs nothing.
void setStageTableCosts(const StageTable &table,
                        scheduling::ScheduleProblem &problem,
                        scheduling::TimingModel &timing);

/// Bytes of a statically shaped tensor.
int64_t tensorBytes(mlir::Type type);

/// The action as written, without its type: `pipeline.recv "a4" from 0 mb 1`.
std::string describeAction(mlir::Operation *op);

} // namespace pipecc

#endif // PIPECC_PASSES_LIB_TRANSFORMS_SCHEDULESUPPORT_H
