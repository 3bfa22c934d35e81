//===- PipelineAttrs.cpp - The typed stage contract ------------------------===//

#include "pipecc/Dialect/Pipeline/PipelineAttrs.h"
#include "pipecc/Scheduling/Problem.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace pipecc::pipeline;

#define GET_ATTRDEF_CLASSES
#include "pipecc/Dialect/Pipeline/PipelineAttrs.cpp.inc"

void PipelineDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "pipecc/Dialect/Pipeline/PipelineAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// StageCostAttr
//===----------------------------------------------------------------------===//

StageCostAttr StageCostAttr::get(MLIRContext *ctx, double forward,
                                 double backwardInput, double backwardWeight,
                                 int64_t activationBytes, int64_t stashBytes,
                                 int64_t parameterBytes,
                                 int64_t boundaryBytes) {
  Type f64 = Float64Type::get(ctx);
  return get(ctx, FloatAttr::get(f64, forward),
             FloatAttr::get(f64, backwardInput),
             FloatAttr::get(f64, backwardWeight), activationBytes, stashBytes,
             parameterBytes, boundaryBytes);
}

double StageCostAttr::getForwardSeconds() const {
  return getForward().getValueAsDouble();
}
double StageCostAttr::getBackwardInputSeconds() const {
  return getBackwardInput().getValueAsDouble();
}
double StageCostAttr::getBackwardWeightSeconds() const {
  return getBackwardWeight().getValueAsDouble();
}

LogicalResult
StageCostAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      FloatAttr forward, FloatAttr backwardInput,
                      FloatAttr backwardWeight, int64_t activationBytes,
                      int64_t stashBytes, int64_t parameterBytes,
                      int64_t boundaryBytes) {
  for (auto [name, value] : {std::pair<StringRef, FloatAttr>{"forward", forward},
                             {"backward_input", backwardInput},
                             {"backward_weight", backwardWeight}}) {
    if (!value)
      return emitError() << "stage cost needs " << name << " seconds";
    double seconds = value.getValueAsDouble();
    if (!std::isfinite(seconds) || seconds < 0)
      return emitError() << "stage cost " << name
                         << " must be finite and non-negative seconds, got "
                         << seconds;
  }
  for (auto [name, bytes] :
       {std::pair<StringRef, int64_t>{"activation_bytes", activationBytes},
        {"stash_bytes", stashBytes},
        {"parameter_bytes", parameterBytes},
        {"boundary_bytes", boundaryBytes}})
    if (bytes < 0)
      return emitError() << "stage cost " << name
                         << " must be non-negative, got " << bytes;
  return success();
}

//===----------------------------------------------------------------------===//
// VirtualStageAttr, ParameterAttr
//===----------------------------------------------------------------------===//

LogicalResult
VirtualStageAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t index, int64_t rank, int64_t chunk,
                         FlatSymbolRefAttr forward,
                         FlatSymbolRefAttr backwardInput,
                         FlatSymbolRefAttr backwardWeight,
                         StageCostAttr cost) {
  if (index < 0 || rank < 0 || chunk < 0)
    return emitError() << "virtual stage " << index
                       << " needs a non-negative index, rank and chunk";
  if (!forward || !cost)
    return emitError() << "virtual stage " << index
                       << " needs a forward function and a cost";
  if (backwardWeight && !backwardInput)
    return emitError() << "virtual stage " << index
                       << " names a backward_weight function but no "
                          "backward_input";
  return success();
}

LogicalResult ParameterAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                    StringRef name, DenseI64ArrayAttr stages,
                                    Type type, BoolAttr trainable) {
  if (name.empty())
    return emitError() << "a parameter needs a name";
  if (!stages || !trainable || !type)
    return emitError() << "parameter '" << name
                       << "' needs stages, a type and trainable";
  for (auto [i, stage] : llvm::enumerate(stages.asArrayRef()))
    if (stage < 0 || (i > 0 && stage <= stages[i - 1]))
      return emitError() << "parameter '" << name
                         << "' must list its virtual stages ascending";
  return success();
}

//===----------------------------------------------------------------------===//
// StageTableAttr
//===----------------------------------------------------------------------===//

/// The placement kind called `name`, if any.
static std::optional<pipecc::scheduling::PlacementKind>
placementKindNamed(StringRef name) {
  using pipecc::scheduling::PlacementKind;
  for (PlacementKind kind : {PlacementKind::Linear, PlacementKind::Interleaved,
                             PlacementKind::VShape})
    if (name == pipecc::scheduling::placementName(kind))
      return kind;
  return std::nullopt;
}

LogicalResult
StageTableAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t ranks, int64_t chunks, StringRef placement,
                       StringRef device, ArrayAttr stages) {
  using pipecc::scheduling::PlacementKind;
  if (ranks < 1 || chunks < 1 || ranks > 4096 || chunks > 64)
    return emitError() << "stage table needs ranks in [1, 4096] and chunks "
                          "in [1, 64], got ranks = "
                       << ranks << ", chunks = " << chunks;
  std::optional<PlacementKind> kind = placementKindNamed(placement);
  if (!kind)
    return emitError() << "stage table placement '" << placement
                       << "' is not linear, interleaved or v";
  if ((*kind == PlacementKind::Linear && chunks != 1) ||
      (*kind == PlacementKind::VShape && chunks != 2))
    return emitError() << "stage table placement '" << placement
                       << "' does not take " << chunks << " chunks";
  if (!stages || static_cast<int64_t>(stages.size()) != ranks * chunks)
    return emitError() << "stage table lists "
                       << (stages ? stages.size() : 0)
                       << " virtual stages, expected ranks * chunks = "
                       << ranks * chunks;
  auto expected = pipecc::scheduling::ScheduleProblem::withPlacement(
      *kind, static_cast<int>(ranks), static_cast<int>(chunks), 1, false);
  for (auto [q, attr] : llvm::enumerate(stages)) {
    auto stage = llvm::dyn_cast<VirtualStageAttr>(attr);
    if (!stage)
      return emitError() << "stage table entry " << q
                         << " is not a #pipeline.virtual_stage";
    if (stage.getIndex() != static_cast<int64_t>(q))
      return emitError() << "stage table entry " << q << " has index "
                         << stage.getIndex();
    auto [rank, chunk] = expected.placement[q];
    if (stage.getRank() != rank || stage.getChunk() != chunk)
      return emitError() << "virtual stage " << q << " is on rank "
                         << stage.getRank() << " chunk " << stage.getChunk()
                         << ", but the " << placement
                         << " placement puts it on rank " << rank
                         << " chunk " << chunk;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Module attributes
//===----------------------------------------------------------------------===//

LogicalResult PipelineDialect::verifyOperationAttribute(Operation *op,
                                                        NamedAttribute attr) {
  if (attr.getName() != kStageTableAttrName)
    return success();
  auto table = llvm::dyn_cast<StageTableAttr>(attr.getValue());
  if (!table)
    return op->emitError() << kStageTableAttrName
                           << " must be a #pipeline.stage_table";
  if (!llvm::isa<ModuleOp>(op))
    return op->emitError() << kStageTableAttrName
                           << " belongs on a module";
  for (Attribute entry : table.getStages()) {
    auto stage = llvm::cast<VirtualStageAttr>(entry);
    for (FlatSymbolRefAttr symbol :
         {stage.getForward(), stage.getBackwardInput(),
          stage.getBackwardWeight()})
      if (symbol && !SymbolTable::lookupSymbolIn(op, symbol.getAttr()))
        return op->emitError()
               << kStageTableAttrName << ": virtual stage "
               << stage.getIndex() << " names " << symbol
               << ", which is not a function of the module";
  }
  return success();
}
