#include "pipecc/Dialect/Pipeline/PipelineOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace pipecc::pipeline;

/// Emits "<what> <value> is out of range [0, <bound>)" unless in range.
static LogicalResult checkInRange(Operation *op, StringRef what,
                                  int64_t value, int64_t bound) {
  if (value >= 0 && value < bound)
    return success();
  return op->emitOpError() << what << " " << value << " is out of range [0, "
                           << bound << ")";
}

//===----------------------------------------------------------------------===//
// Stage functions
//===----------------------------------------------------------------------===//

StringRef pipecc::pipeline::stageFunctionKindName(StageFunctionKind kind) {
  switch (kind) {
  case StageFunctionKind::Forward:
    return "forward";
  case StageFunctionKind::BackwardInput:
    return "backward_input";
  case StageFunctionKind::BackwardWeight:
    return "backward_weight";
  }
  return "?";
}

std::optional<StageFunctionRole>
pipecc::pipeline::getStageFunctionRole(Operation *func) {
  auto stage = func->getAttrOfType<IntegerAttr>("pipeline.stage");
  auto kind = func->getAttrOfType<StringAttr>("pipeline.kind");
  if (!stage || !kind)
    return std::nullopt;
  for (StageFunctionKind candidate :
       {StageFunctionKind::Forward, StageFunctionKind::BackwardInput,
        StageFunctionKind::BackwardWeight})
    if (kind.getValue() == stageFunctionKindName(candidate))
      return StageFunctionRole{stage.getInt(), candidate};
  return std::nullopt;
}

RankedTensorType pipecc::pipeline::microbatchCopyType(RankedTensorType block,
                                                      int64_t group) {
  if (group < 1 || block.getRank() == 0 || block.isDynamicDim(0) ||
      block.getDimSize(0) % group != 0)
    return {};
  SmallVector<int64_t> shape(block.getShape());
  shape[0] /= group;
  return block.clone(shape);
}

FailureOr<RankedTensorType>
pipecc::pipeline::argumentMicrobatchCopyType(Operation *func,
                                             unsigned argument,
                                             RankedTensorType block,
                                             int64_t group) {
  if (RankedTensorType copy = microbatchCopyType(block, group))
    return copy;
  return func->emitError("argument ")
         << argument << " of type " << block << " cannot hold " << group
         << " micro-batches";
}

//===----------------------------------------------------------------------===//
// PipelineOp
//===----------------------------------------------------------------------===//

LogicalResult PipelineOp::verify() {
  int64_t ranks = getRanks(), chunks = getChunks();
  if (getRanks() < 1)
    return emitOpError("needs at least one rank, got ") << getRanks();
  if (getChunks() < 1)
    return emitOpError("needs at least one chunk per rank, got ")
           << getChunks();
  if (getMicrobatches() < 1)
    return emitOpError("needs at least one micro-batch, got ")
           << getMicrobatches();
  ArrayRef<int64_t> placement = getPlacement();
  if (static_cast<int64_t>(placement.size()) != ranks * chunks)
    return emitOpError("places ")
           << placement.size() << " virtual stages; " << getRanks()
           << " ranks x " << getChunks() << " chunks need "
           << ranks * chunks;
  SmallVector<int64_t> held(ranks, 0);
  for (auto [stage, rank] : llvm::enumerate(placement)) {
    if (rank < 0 || rank >= ranks)
      return emitOpError("places virtual stage ")
             << stage << " on rank " << rank << ", out of range [0, "
             << getRanks() << ")";
    ++held[rank];
  }
  for (auto [rank, count] : llvm::enumerate(held))
    if (count != chunks)
      return emitOpError("places ")
             << count << " virtual stages on rank " << rank
             << "; every rank holds exactly " << getChunks();
  if (auto busy = getRankBusySAttr();
      busy && static_cast<int64_t>(busy.size()) != ranks)
    return emitOpError("lists ") << busy.size() << " rank busy times for "
                                 << getRanks() << " ranks";
  if (auto peak = getPeakLiveMicrobatchesAttr();
      peak && static_cast<int64_t>(peak.size()) != getNumVirtualStages())
    return emitOpError("lists ")
           << peak.size() << " peak live micro-batch counts for "
           << getNumVirtualStages() << " virtual stages";
  return success();
}

int64_t PipelineOp::getChunkOf(int64_t stage) {
  ArrayRef<int64_t> placement = getPlacement();
  return llvm::count(placement.take_front(stage), placement[stage]);
}

SmallVector<int64_t> PipelineOp::getVirtualStagesOf(int64_t rank) {
  SmallVector<int64_t> stages;
  for (auto [stage, holder] : llvm::enumerate(getPlacement()))
    if (holder == rank)
      stages.push_back(stage);
  return stages;
}

ProgramOp PipelineOp::getProgram(int64_t rank) {
  for (auto program : getBody().getOps<ProgramOp>())
    if (static_cast<int64_t>(program.getRank()) == rank)
      return program;
  return nullptr;
}

LogicalResult PipelineOp::verifyRegions() {
  llvm::SmallDenseMap<int64_t, ProgramOp> programs;
  for (Operation &op : getBody().front()) {
    auto program = llvm::dyn_cast<ProgramOp>(op);
    if (!program)
      return op.emitOpError("is not allowed directly in a pipeline; only "
                            "'pipeline.program' is");
    auto [it, inserted] = programs.try_emplace(program.getRank(), program);
    if (!inserted)
      return program.emitOpError("repeats rank ")
                 .append(program.getRank())
                 .attachNote(it->second.getLoc())
             << "first program of that rank";
  }
  for (int64_t rank = 0, e = getRanks(); rank < e; ++rank)
    if (!programs.count(rank))
      return emitOpError("has no program for rank ") << rank << " of "
                                                     << getRanks();
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

LogicalResult ProgramOp::verify() {
  return checkInRange(*this, "rank", getRank(), getPipeline().getRanks());
}

//===----------------------------------------------------------------------===//
// Compute actions
//===----------------------------------------------------------------------===//

/// Checks a compute action's coordinates against its pipeline and program:
/// the virtual stage exists and is placed on the program's rank.
static LogicalResult verifyComputeAction(Operation *op, int64_t stage,
                                         int64_t microbatch) {
  auto program = op->getParentOfType<ProgramOp>();
  PipelineOp pipeline = program.getPipeline();
  if (failed(checkInRange(op, "virtual stage", stage,
                          pipeline.getNumVirtualStages())) ||
      failed(checkInRange(op, "micro-batch", microbatch,
                          pipeline.getMicrobatches())))
    return failure();
  if (pipeline.getRankOf(stage) != static_cast<int64_t>(program.getRank()))
    return op->emitOpError("runs virtual stage ")
           << stage << " in the program of rank " << program.getRank()
           << ", but the placement puts it on rank "
           << pipeline.getRankOf(stage);
  return success();
}

/// Checks that `callee` names a function of the module with the `expected`
/// role for virtual stage `stage`. Functions the lowering has stripped of
/// their role (pipecc-record-stage-abi) are only checked to exist.
static LogicalResult verifyStageCallee(Operation *op,
                                       SymbolTableCollection &symbolTable,
                                       FlatSymbolRefAttr callee,
                                       StageFunctionKind expected,
                                       int64_t stage) {
  Operation *func = symbolTable.lookupNearestSymbolFrom(op, callee);
  if (!func)
    return op->emitOpError("calls @")
           << callee.getValue() << ", which is not a symbol of the module";
  if (!llvm::isa<FunctionOpInterface>(func))
    return op->emitOpError("calls @")
               .append(callee.getValue(), ", which is not a function")
               .attachNote(func->getLoc())
           << "symbol defined here";
  std::optional<StageFunctionRole> role = getStageFunctionRole(func);
  if (!role)
    return success();
  if (role->kind != expected || role->virtualStage != stage)
    return op->emitOpError("calls @")
               .append(callee.getValue(), " for the ",
                       stageFunctionKindName(expected), " of virtual stage ",
                       stage, ", but it is the ",
                       stageFunctionKindName(role->kind), " of virtual stage ",
                       role->virtualStage)
               .attachNote(func->getLoc())
           << "function defined here";
  return success();
}

template <typename OpTy>
static int64_t rankOf(OpTy op) {
  return op->template getParentOfType<ProgramOp>().getRank();
}
template <typename OpTy>
static int64_t chunkOf(OpTy op) {
  return op->template getParentOfType<ProgramOp>().getPipeline().getChunkOf(
      op.getVirtualStage());
}

#define PIPECC_COMPUTE_OP(OpTy, Kind)                                          \
  LogicalResult OpTy::verify() {                                               \
    return verifyComputeAction(*this, getVirtualStage(), getMicrobatch());     \
  }                                                                            \
  int64_t OpTy::getRank() { return rankOf(*this); }                            \
  int64_t OpTy::getChunk() { return chunkOf(*this); }
PIPECC_COMPUTE_OP(ForwardOp, Forward)
PIPECC_COMPUTE_OP(BackwardInputOp, BackwardInput)
PIPECC_COMPUTE_OP(BackwardOp, Backward)
#undef PIPECC_COMPUTE_OP

LogicalResult BackwardWeightOp::verify() {
  if (failed(verifyComputeAction(*this, getVirtualStage(), getMicrobatch())))
    return failure();
  int64_t microbatches = (*this)->getParentOfType<ProgramOp>()
                             .getPipeline()
                             .getMicrobatches();
  // The I64Attr's getter is unsigned: a negative count reads as a huge
  // one, so compare as signed, without forming microbatch + count.
  int64_t count = static_cast<int64_t>(getCount());
  if (count < 1 ||
      count > microbatches - static_cast<int64_t>(getMicrobatch()))
    return emitOpError("covers micro-batches ")
           << getMicrobatch() << " to "
           << static_cast<int64_t>(getMicrobatch() + getCount() - 1)
           << ", out of range [0, " << microbatches << ")";
  return success();
}
int64_t BackwardWeightOp::getRank() { return rankOf(*this); }
int64_t BackwardWeightOp::getChunk() { return chunkOf(*this); }

LogicalResult ForwardOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyStageCallee(*this, table, getCalleeAttr(),
                           StageFunctionKind::Forward, getVirtualStage());
}
LogicalResult BackwardInputOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyStageCallee(*this, table, getCalleeAttr(),
                           StageFunctionKind::BackwardInput,
                           getVirtualStage());
}
LogicalResult
BackwardWeightOp::verifySymbolUses(SymbolTableCollection &table) {
  if (failed(verifyStageCallee(*this, table, getCalleeAttr(),
                               StageFunctionKind::BackwardWeight,
                               getVirtualStage())))
    return failure();
  // A grouped function reads a fixed number of micro-batches (checked while
  // it is a stage function: the lowering keeps only its ABI).
  Operation *func = table.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!getStageFunctionRole(func))
    return success();
  auto perCall = func->getAttrOfType<IntegerAttr>(kMicrobatchesPerCall);
  int64_t expected = perCall ? perCall.getInt() : 1;
  if (expected != static_cast<int64_t>(getCount()))
    return emitOpError("runs ")
               .append(getCount(), " micro-batches in one call of @",
                       getCallee(), ", which takes ", expected)
               .attachNote(func->getLoc())
           << "function defined here";
  return success();
}
LogicalResult BackwardOp::verifySymbolUses(SymbolTableCollection &table) {
  if (failed(verifyStageCallee(*this, table, getCalleeAttr(),
                               StageFunctionKind::BackwardInput,
                               getVirtualStage())))
    return failure();
  if (FlatSymbolRefAttr weight = getWeightAttr())
    return verifyStageCallee(*this, table, weight,
                             StageFunctionKind::BackwardWeight,
                             getVirtualStage());
  return success();
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

/// Checks a send or receive against its pipeline and program: the virtual
/// stages are neighbours, the sending one on the sender's rank, the
/// receiving one on the receiver's, and the two ranks differ (a hand-off on
/// one rank is no message).
static LogicalResult verifyTransfer(Operation *op, StringRef tensor,
                                    int64_t peer, int64_t microbatch,
                                    int64_t fromStage, int64_t toStage,
                                    bool isSend) {
  auto program = op->getParentOfType<ProgramOp>();
  PipelineOp pipeline = program.getPipeline();
  int64_t rank = program.getRank();
  if (tensor.empty())
    return op->emitOpError("needs a tensor name");
  int64_t stages = pipeline.getNumVirtualStages();
  if (failed(checkInRange(op, "peer rank", peer, pipeline.getRanks())) ||
      failed(checkInRange(op, "micro-batch", microbatch,
                          pipeline.getMicrobatches())) ||
      failed(checkInRange(op, "virtual stage", fromStage, stages)) ||
      failed(checkInRange(op, "virtual stage", toStage, stages)))
    return failure();
  if (peer == rank)
    return op->emitOpError("names its own rank ")
           << peer << " as peer; a rank cannot message itself";
  if (std::abs(fromStage - toStage) != 1)
    return op->emitOpError("carries a tensor from virtual stage ")
           << fromStage << " to " << toStage
           << "; messages go between neighbouring virtual stages";
  int64_t sender = isSend ? rank : peer, receiver = isSend ? peer : rank;
  if (pipeline.getRankOf(fromStage) != sender ||
      pipeline.getRankOf(toStage) != receiver)
    return op->emitOpError("carries a tensor from virtual stage ")
           << fromStage << " (rank " << pipeline.getRankOf(fromStage)
           << ") to virtual stage " << toStage << " (rank "
           << pipeline.getRankOf(toStage) << ") as a message from rank "
           << sender << " to rank " << receiver;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(*this, getTensor(), getPeer(), getMicrobatch(),
                        getFromStage(), getToStage(), /*isSend=*/true);
}
LogicalResult RecvOp::verify() {
  return verifyTransfer(*this, getTensor(), getPeer(), getMicrobatch(),
                        getFromStage(), getToStage(), /*isSend=*/false);
}

LogicalResult AllReduceOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  int64_t ranks = program.getPipeline().getRanks();
  int64_t ownRank = program.getRank();
  if (getTensor().empty())
    return emitOpError("needs a tensor name");
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t rank : getGroup()) {
    if (failed(checkInRange(*this, "group rank", rank, ranks)))
      return failure();
    if (!seen.insert(rank).second)
      return emitOpError("repeats rank ") << rank << " in its group";
  }
  if (!seen.contains(ownRank))
    return emitOpError("group does not include the program's own rank ")
           << program.getRank();
  // The sum is taken once per step: every gradient contribution of the
  // rank must be accumulated before it.
  for (Operation *next = (*this)->getNextNode(); next;
       next = next->getNextNode())
    if (llvm::isa<BackwardWeightOp, BackwardOp>(next))
      return emitOpError("comes before '")
             << next->getName() << "' of micro-batch "
             << next->getAttrOfType<IntegerAttr>("microbatch").getInt()
             << "; it must follow the rank's last weight gradient";
  return success();
}

#define GET_OP_CLASSES
#include "pipecc/Dialect/Pipeline/PipelineOps.cpp.inc"
