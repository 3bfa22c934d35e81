//===- PipelineTimeline.h - The predicted timeline of a pipeline op -------===//
//
// What `--emit=timeline` writes: the scheduling library's simulation of a
// pipeline.pipeline op's programs, with the stage table's durations, as a
// Timeline (pipecc/Timeline/Timeline.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_PASSES_PIPELINETIMELINE_H
#define PIPECC_PASSES_PIPELINETIMELINE_H

#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Timeline/Timeline.h"

#include "mlir/Support/LogicalResult.h"

namespace pipecc {

/// Simulates `pipeline` as compiled; emits an error on the op and fails when
/// its programs cannot be simulated.
mlir::FailureOr<timeline::Timeline>
predictPipelineTimeline(pipeline::PipelineOp pipeline);

} // namespace pipecc

#endif // PIPECC_PASSES_PIPELINETIMELINE_H
