//===- StageTable.cpp - The one reader of the stage contract --------------===//

#include "pipecc/Passes/StageTable.h"
#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"

#include "mlir/IR/SymbolTable.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"

using namespace mlir;
using namespace pipecc;
namespace sched = pipecc::scheduling;

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

/// Reads the placement keys of the partition dictionary.
static LogicalResult readPlacement(ModuleOp module, DictionaryAttr partition,
                                   StageTable &table) {
  if (!partition)
    return success();
  if (Attribute chunks = partition.get("chunks")) {
    auto value = llvm::dyn_cast<IntegerAttr>(chunks);
    if (!value || value.getInt() < 1)
      return module.emitError("'")
             << attrs::kPartition << "' has chunks = " << chunks
             << "; expected a positive integer";
    table.chunks = value.getInt();
  }
  if (Attribute placement = partition.get("placement")) {
    auto name = llvm::dyn_cast<StringAttr>(placement);
    std::optional<sched::PlacementKind> kind;
    for (sched::PlacementKind candidate :
         {sched::PlacementKind::Linear, sched::PlacementKind::Interleaved,
          sched::PlacementKind::VShape})
      if (name && name.getValue() == sched::placementName(candidate))
        kind = candidate;
    if (!kind)
      return module.emitError("'")
             << attrs::kPartition << "' has placement = " << placement
             << "; expected \"linear\", \"interleaved\" or \"v\"";
    table.placement = *kind;
  }
  return success();
}

/// The stage table of hand-written IR that predates the typed contract:
/// stage functions marked with pipeline.stage / pipeline.kind, costs and
/// placement from the pipeline.partition dictionary (unit costs, linear
/// placement without one). Only read when the module has no typed table.
static FailureOr<StageTable> readLegacyStageTable(ModuleOp module) {
  StageTable table;
  auto partition = module->getAttrOfType<DictionaryAttr>(attrs::kPartition);
  if (failed(readPlacement(module, partition, table)))
    return failure();

  for (auto func : module.getOps<func::FuncOp>()) {
    std::optional<pipeline::StageFunctionRole> role =
        pipeline::getStageFunctionRole(func);
    if (!role)
      continue;
    int64_t q = role->virtualStage;
    if (q < 0)
      return func.emitError("stage function has negative stage "), failure();
    if (static_cast<int64_t>(table.stages.size()) <= q)
      table.stages.resize(q + 1, VirtualStage{0, 0, 0, {}, {}, {}, {}});
    VirtualStage &stage = table.stages[q];
    func::FuncOp *slot = nullptr;
    switch (role->kind) {
    case pipeline::StageFunctionKind::Forward:
      slot = &stage.forward;
      break;
    case pipeline::StageFunctionKind::BackwardInput:
      slot = &stage.backwardInput;
      break;
    case pipeline::StageFunctionKind::BackwardWeight:
      slot = &stage.backwardWeight;
      break;
    }
    if (*slot) {
      InFlightDiagnostic diag = func.emitError("virtual stage ")
                                << q << " has two "
                                << pipeline::stageFunctionKindName(role->kind)
                                << " functions";
      diag.attachNote(slot->getLoc()) << "the other one";
      return failure();
    }
    *slot = func;
  }
  if (table.stages.empty())
    return module.emitError("no stage functions; run pipecc-split-stages "
                            "first"),
           failure();

  int64_t numStages = table.stages.size();
  for (auto [q, stage] : llvm::enumerate(table.stages)) {
    stage.index = q;
    if (!stage.forward)
      return module.emitError("virtual stage ")
             << q << " has no forward function", failure();
  }
  if (numStages % table.chunks != 0)
    return module.emitError("the module has ")
           << numStages << " virtual stages, not a multiple of "
           << table.chunks << " chunks per rank", failure();
  table.ranks = numStages / table.chunks;
  using sched::PlacementKind;
  if ((table.placement == PlacementKind::Linear && table.chunks != 1) ||
      (table.placement == PlacementKind::VShape && table.chunks != 2))
    return module.emitError("the ")
           << sched::placementName(table.placement) << " placement cannot "
           << "hold " << table.chunks << " chunks per rank", failure();
  sched::ScheduleProblem shape = sched::ScheduleProblem::withPlacement(
      table.placement, table.ranks, table.chunks, 1, false);
  for (auto [q, stage] : llvm::enumerate(table.stages)) {
    stage.rank = shape.placement[q].first;
    stage.chunk = shape.placement[q].second;
  }

  if (!partition)
    return table;
  if (auto device = partition.getAs<StringAttr>("device"))
    table.device = device.str();
  auto costs = partition.getAs<ArrayAttr>("stage_costs");
  if (!costs)
    return table;
  if (static_cast<int64_t>(costs.size()) != numStages)
    return module.emitError("the partition lists ")
           << costs.size() << " stage costs but the module has " << numStages
           << " virtual stages", failure();
  for (auto [stage, attr] : llvm::zip(table.stages, costs)) {
    auto cost = llvm::dyn_cast<DictionaryAttr>(attr);
    if (!cost)
      return module.emitError("'")
             << attrs::kPartition << "' stage cost " << attr
             << " is not a dictionary", failure();
    auto seconds = [&](StringRef key, double &out) {
      if (auto value = cost.getAs<FloatAttr>(key))
        out = value.getValueAsDouble();
    };
    auto bytes = [&](StringRef key, int64_t &out) {
      if (auto value = cost.getAs<IntegerAttr>(key))
        out = value.getInt();
    };
    seconds("forward_s", stage.cost.forwardSeconds);
    seconds("backward_input_s", stage.cost.backwardInputSeconds);
    seconds("backward_weight_s", stage.cost.backwardWeightSeconds);
    bytes("activation_bytes", stage.cost.activationBytes);
    bytes("parameter_bytes", stage.cost.parameterBytes);
  }
  return table;
}

FailureOr<StageTable> pipecc::readStageTable(ModuleOp module) {
  Attribute attr = module->getAttr(pipeline::kStageTableAttrName);
  if (!attr && llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
        return f->hasAttr(attrs::kFunctionStage);
      }))
    return readLegacyStageTable(module);
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
