// Prints pipeline programs one line per rank, and the predicted step, so
// that FileCheck sees schedules and numbers compactly.
#include "ScheduleSupport.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Scheduling/Simulator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace pipecc {
#define GEN_PASS_DEF_TESTPRINTSCHEDULE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::pipeline;

namespace {

void printAction(raw_ostream &os, Operation *op) {
  auto compute = [&](StringRef kind, auto action) {
    os << kind << action.getMicrobatch();
    if (action.getChunk() != 0)
      os << "." << action.getChunk();
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<ForwardOp>([&](auto a) { compute("F", a); })
      .Case<BackwardInputOp>([&](auto a) { compute("B", a); })
      .Case<BackwardWeightOp>([&](auto a) { compute("W", a); })
      .Case<BackwardOp>([&](auto a) { compute("BW", a); })
      .Case<SendOp>([&](SendOp s) {
        os << ">" << s.getPeer() << ":" << s.getTensor() << "@"
           << s.getMicrobatch();
      })
      .Case<RecvOp>([&](RecvOp r) {
        os << "<" << r.getPeer() << ":" << r.getTensor() << "@"
           << r.getMicrobatch();
      })
      .Case<AllReduceOp>([&](AllReduceOp a) { os << "AR:" << a.getTensor(); })
      .Case<OptimizerStepOp>([&](auto) { os << "OPT"; })
      .Default([&](Operation *other) { os << other->getName(); });
}

void printPrediction(raw_ostream &os, PipelineOp pipeline) {
  std::optional<APFloat> step = pipeline.getPredictedStepS();
  std::optional<APFloat> bubble = pipeline.getBubble();
  if (step && bubble) {
    os << "predicted step " << llvm::format("%.4g", step->convertToDouble())
       << " s, bubble " << llvm::format("%.4f", bubble->convertToDouble())
       << "\n";
  }
  FailureOr<LibraryPrograms> form = toLibraryPrograms(pipeline);
  if (failed(form))
    return;
  if (!form->silentBoundaries.empty())
    return;
  scheduling::Result<scheduling::SimulationResult> simulation =
      scheduling::simulate(form->problem, form->programs, form->timing);
  if (!simulation) {
    os << "simulation failed: " << simulation.message() << "\n";
    return;
  }
  // From the op alone: what pipecc-verify-pipeline and the timeline see.
  os << "simulated: step "
     << llvm::format("%.4g", simulation->makespan) << ", bubble "
     << llvm::format("%.4f", simulation->bubbleFraction) << "\n";
}

struct TestPrintSchedulePass
    : pipecc::impl::TestPrintScheduleBase<TestPrintSchedulePass> {
  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    for (auto pipeline : getOperation().getOps<PipelineOp>()) {
      os << "pipeline @" << pipeline.getSymName() << " schedule '"
         << pipeline.getSchedule() << "': " << pipeline.getRanks()
         << " ranks, " << pipeline.getChunks() << " chunks, "
         << pipeline.getMicrobatches() << " micro-batches, placement [";
      llvm::interleaveComma(pipeline.getPlacement(), os);
      os << "]\n";
      for (auto program : pipeline.getBody().getOps<ProgramOp>()) {
        os << "rank " << program.getRank() << ":";
        for (Operation &op : program.getBody().front()) {
          os << " ";
          printAction(os, &op);
        }
        os << "\n";
      }
      printPrediction(os, pipeline);
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
