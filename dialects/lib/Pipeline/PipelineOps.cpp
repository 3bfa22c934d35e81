#include "pipecc/Dialect/Pipeline/PipelineOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
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
// PipelineOp
//===----------------------------------------------------------------------===//

LogicalResult PipelineOp::verify() {
  if (getStages() < 1)
    return emitOpError("needs at least one stage, got ") << getStages();
  if (getChunks() < 1)
    return emitOpError("needs at least one chunk per stage, got ")
           << getChunks();
  if (getMicrobatches() < 1)
    return emitOpError("needs at least one micro-batch, got ")
           << getMicrobatches();
  return success();
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
  for (int64_t rank = 0, e = getStages(); rank < e; ++rank)
    if (!programs.count(rank))
      return emitOpError("has no program for rank ") << rank << " of "
                                                     << getStages();
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

LogicalResult ProgramOp::verify() {
  return checkInRange(*this, "rank", getRank(), getPipeline().getStages());
}

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

/// Checks a compute action's coordinates against its pipeline and program.
static LogicalResult verifyComputeAction(Operation *op, int64_t stage,
                                         int64_t chunk, int64_t microbatch) {
  auto program = op->getParentOfType<ProgramOp>();
  PipelineOp pipeline = program.getPipeline();
  if (failed(checkInRange(op, "stage", stage, pipeline.getStages())) ||
      failed(checkInRange(op, "chunk", chunk, pipeline.getChunks())) ||
      failed(checkInRange(op, "micro-batch", microbatch,
                          pipeline.getMicrobatches())))
    return failure();
  if (stage != program.getStage())
    return op->emitOpError("runs stage ")
           << stage << " but rank " << program.getRank() << " holds stage "
           << program.getStage();
  return success();
}

LogicalResult ForwardOp::verify() {
  return verifyComputeAction(*this, getStage(), getChunk(), getMicrobatch());
}
LogicalResult BackwardInputOp::verify() {
  return verifyComputeAction(*this, getStage(), getChunk(), getMicrobatch());
}
LogicalResult BackwardWeightOp::verify() {
  return verifyComputeAction(*this, getStage(), getChunk(), getMicrobatch());
}
LogicalResult BackwardOp::verify() {
  return verifyComputeAction(*this, getStage(), getChunk(), getMicrobatch());
}

/// Checks a send or receive against its pipeline and program.
static LogicalResult verifyTransfer(Operation *op, StringRef tensor,
                                    int64_t peer, int64_t microbatch) {
  auto program = op->getParentOfType<ProgramOp>();
  PipelineOp pipeline = program.getPipeline();
  if (tensor.empty())
    return op->emitOpError("needs a tensor name");
  if (failed(checkInRange(op, "peer rank", peer, pipeline.getStages())) ||
      failed(checkInRange(op, "micro-batch", microbatch,
                          pipeline.getMicrobatches())))
    return failure();
  if (peer == static_cast<int64_t>(program.getRank()))
    return op->emitOpError("names its own rank ")
           << peer << " as peer; a rank cannot message itself";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(*this, getTensor(), getPeer(), getMicrobatch());
}
LogicalResult RecvOp::verify() {
  return verifyTransfer(*this, getTensor(), getPeer(), getMicrobatch());
}

LogicalResult AllReduceOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  int64_t ranks = program.getPipeline().getStages();
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
