//===- PipelineTimeline.cpp - The predicted timeline of a pipeline op -----===//

#include "pipecc/Passes/PipelineTimeline.h"

#include "ScheduleSupport.h"
#include "pipecc/Scheduling/Simulator.h"

using namespace mlir;
using namespace pipecc;
namespace sched = pipecc::scheduling;

FailureOr<timeline::Timeline>
pipecc::predictPipelineTimeline(pipeline::PipelineOp pipeline) {
  FailureOr<LibraryPrograms> form = toLibraryPrograms(pipeline);
  if (failed(form))
    return failure();
  // As the schedule phase predicts: the runtime's posted sends, receives
  // waited for where their tensor is read.
  sched::TimingModel timing = form->timing;
  timing.overlapSends = true;
  sched::Result<sched::SimulationResult> simulation =
      sched::simulate(form->problem, form->programs, timing);
  if (!simulation)
    return pipeline.emitOpError("cannot be simulated for its timeline: ")
           << simulation.message();
  return timeline::buildTimeline(form->problem, form->programs, *simulation,
                                 pipeline.getSchedule());
}
