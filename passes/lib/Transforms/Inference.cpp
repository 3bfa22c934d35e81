// The partition and schedule of an inference compile: one stage, one rank,
// forward functions only. The stage functions themselves come from
// pipecc-split-stages{inference}, the same outlining training uses.
#include "PassUtils.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Passes/StageTable.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <limits>

namespace pipecc {
#define GEN_PASS_DEF_PLACEINFERENCE
#define GEN_PASS_DEF_SCHEDULEINFERENCE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {

constexpr llvm::StringLiteral kInferencePipelineName = "infer";

struct PlaceInferencePass
    : pipecc::impl::PlaceInferenceBase<PlaceInferencePass> {
  void runOnOperation() override {
    func::FuncOp main = getModelFunction(getOperation());
    if (!main)
      return signalPassFailure();
    for (unsigned i = 0; i < main.getNumResults(); ++i)
      if (main.getResultAttr(i, attrs::kGrad)) {
        main.emitError("@main is differentiated (result ")
            << i << " is a gradient); an inference compile skips autodiff";
        return signalPassFailure();
      }
    Builder b(&getContext());
    for (Operation &op : main.front().without_terminator())
      if (!llvm::isa<graph::ParamOp, graph::ConstantOp>(op))
        op.setAttr(attrs::kStage, b.getI64IntegerAttr(0));
  }
};

struct ScheduleInferencePass
    : pipecc::impl::ScheduleInferenceBase<ScheduleInferencePass> {
  using ScheduleInferenceBase::ScheduleInferenceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (microbatches < 1 || microbatches > std::numeric_limits<int>::max()) {
      module.emitError("--microbatches must be a positive int, got ")
          << microbatches.getValue();
      return signalPassFailure();
    }
    if (SymbolTable::lookupSymbolIn(module, kInferencePipelineName)) {
      module.emitError("the module already has a symbol @")
          << kInferencePipelineName << "; schedule it only once";
      return signalPassFailure();
    }
    FailureOr<StageTable> table = readStageTable(module);
    if (failed(table))
      return signalPassFailure();
    for (const VirtualStage &stage : table->stages)
      for (func::FuncOp func : {stage.backwardInput, stage.backwardWeight})
        if (func) {
          func.emitError("an inference pipeline runs forward functions "
                         "only, found @")
              << func.getSymName();
          return signalPassFailure();
        }
    if (table->stages.size() != 1) {
      module.emitError("an inference pipeline runs one virtual stage, found ")
          << table->stages.size();
      return signalPassFailure();
    }

    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto pipeline = builder.create<pipeline::PipelineOp>(
        loc, kInferencePipelineName, /*ranks=*/1, /*chunks=*/1,
        microbatches.getValue(), "inference",
        /*placement=*/ArrayRef<int64_t>{0});
    builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());
    auto program = builder.create<pipeline::ProgramOp>(loc, /*rank=*/0);
    builder.setInsertionPointToStart(&program.getBody().emplaceBlock());
    for (int64_t mb = 0; mb < microbatches; ++mb)
      builder.create<pipeline::ForwardOp>(
          loc, table->stages[0].forward.getSymName(), /*virtual_stage=*/0,
          static_cast<uint64_t>(mb));
  }
};

} // namespace
