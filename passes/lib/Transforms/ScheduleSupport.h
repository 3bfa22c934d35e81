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
#include "pipecc/Scheduling/Program.h"

#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace pipecc {

/// A pipeline op as the scheduling library sees it. Sends and receives are
/// named by the boundary they cross; the IR's own tensor name stays on the
/// op in `ops`.
struct LibraryPrograms {
  scheduling::ScheduleProblem problem;
  std::vector<scheduling::Program> programs;
  /// By rank: the program op, and the op behind each program action.
  std::vector<pipeline::ProgramOp> programOps;
  std::vector<std::vector<mlir::Operation *>> ops;
};

/// Converts `pipeline` (unit durations; split backward when any B or W op
/// occurs). Emits an error on the offending op and fails when the pipeline
/// cannot be expressed: more than one chunk per stage (the op does not
/// record the virtual-stage placement), a message between ranks that are
/// not neighbours, or an op that is not a pipeline action.
mlir::FailureOr<LibraryPrograms>
toLibraryPrograms(pipeline::PipelineOp pipeline);

/// Bytes of a statically shaped tensor.
int64_t tensorBytes(mlir::Type type);

/// The action as written, without its type: `pipeline.recv "a4" from 0 mb 1`.
std::string describeAction(mlir::Operation *op);

} // namespace pipecc

#endif // PIPECC_PASSES_LIB_TRANSFORMS_SCHEDULESUPPORT_H
