//===- StageTable.cpp - The one reader of the stage contract --------------===//

#include "pipecc/Passes/StageTable.h"
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace pipecc;

const VirtualStage *StageTable::stageOf(func::FuncOp func) const {
  for (const VirtualStage &stage : stages)
    if (stage.forward == func || stage.backwardInput == func ||
        stage.backwardWeight == func)
      return &stage;
  return nullptr;
}

SmallVector<int64_t> StageTable::rankOfStages() const {
  SmallVector<int64_t> ranks;
  for (const VirtualStage &stage : stages)
    ranks.push_back(stage.rank);
  return ranks;
}

FailureOr<StageTable> pipecc::readStageTable(ModuleOp module) {
  Attribute attr = module->getAttr(pipeline::kStageTableAttrName);
  if (!attr)
    return module.emitError("the module has no ")
           << pipeline::kStageTableAttrName
           << "; run pipecc-split-stages first";
  auto table = llvm::dyn_cast<pipeline::StageTableAttr>(attr);
  if (!table)
    return module.emitError() << pipeline::kStageTableAttrName
                              << " must be a #pipeline.stage_table";
  StageTable result;
  result.ranks = table.getRanks();
  result.chunks = table.getChunks();
  result.device = table.getDevice().str();
  bool knownPlacement = false;
  for (scheduling::PlacementKind kind :
       {scheduling::PlacementKind::Linear,
        scheduling::PlacementKind::Interleaved,
        scheduling::PlacementKind::VShape})
    if (table.getPlacement() == scheduling::placementName(kind)) {
      result.placement = kind;
      knownPlacement = true;
    }
  if (!knownPlacement)
    return module.emitError() << pipeline::kStageTableAttrName
                              << ": unknown placement '"
                              << table.getPlacement() << "'";
  auto lookup = [&](FlatSymbolRefAttr symbol, int64_t stage,
                    StringRef role) -> FailureOr<func::FuncOp> {
    if (!symbol)
      return func::FuncOp();
    auto func = SymbolTable::lookupSymbolIn(module, symbol.getAttr());
    auto funcOp = llvm::dyn_cast_or_null<func::FuncOp>(func);
    if (!funcOp)
      return module.emitError() << pipeline::kStageTableAttrName
                                << ": the " << role << " function " << symbol
                                << " of virtual stage " << stage
                                << " is not a func.func of the module";
    return funcOp;
  };
  for (Attribute entry : table.getStages()) {
    auto stage = llvm::dyn_cast<pipeline::VirtualStageAttr>(entry);
    if (!stage)
      return module.emitError() << pipeline::kStageTableAttrName
                                << " lists an entry that is not a "
                                   "#pipeline.virtual_stage";
    VirtualStage info{stage.getIndex(), stage.getRank(), stage.getChunk(),
                      {}, {}, {}, {}};
    FailureOr<func::FuncOp> forward =
        lookup(stage.getForward(), info.index, "forward");
    FailureOr<func::FuncOp> backwardInput =
        lookup(stage.getBackwardInput(), info.index, "backward_input");
    FailureOr<func::FuncOp> backwardWeight =
        lookup(stage.getBackwardWeight(), info.index, "backward_weight");
    if (failed(forward) || failed(backwardInput) || failed(backwardWeight))
      return failure();
    info.forward = *forward;
    info.backwardInput = *backwardInput;
    info.backwardWeight = *backwardWeight;
    pipeline::StageCostAttr cost = stage.getCost();
    info.cost = {cost.getForwardSeconds(), cost.getBackwardInputSeconds(),
                 cost.getBackwardWeightSeconds(), cost.getActivationBytes(),
                 cost.getStashBytes(), cost.getParameterBytes()};
    result.stages.push_back(info);
  }
  return result;
}
