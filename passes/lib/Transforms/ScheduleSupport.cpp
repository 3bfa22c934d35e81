#include "ScheduleSupport.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace pipecc;
using namespace pipecc::pipeline;
namespace sched = pipecc::scheduling;

int64_t pipecc::tensorBytes(Type type) {
  auto shaped = llvm::cast<ShapedType>(type);
  return shaped.getNumElements() *
         ((shaped.getElementTypeBitWidth() + 7) / 8);
}

std::string pipecc::describeAction(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  auto compute = [&](auto action) {
    os << " stage " << action.getStage() << " chunk " << action.getChunk()
       << " mb " << action.getMicrobatch();
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<ForwardOp, BackwardInputOp, BackwardWeightOp, BackwardOp>(compute)
      .Case<SendOp>([&](SendOp send) {
        os << " \"" << send.getTensor() << "\" to " << send.getPeer()
           << " mb " << send.getMicrobatch();
      })
      .Case<RecvOp>([&](RecvOp recv) {
        os << " \"" << recv.getTensor() << "\" from " << recv.getPeer()
           << " mb " << recv.getMicrobatch();
      })
      .Case<AllReduceOp>([&](AllReduceOp reduce) {
        os << " \"" << reduce.getTensor() << "\" over [";
        llvm::interleaveComma(reduce.getGroup(), os);
        os << "]";
      });
  return text;
}

namespace {
template <typename OpTy>
sched::ComputeAction computeOf(OpTy op, sched::ComputeKind kind) {
  return sched::ComputeAction{kind, static_cast<int>(op.getStage()),
                              static_cast<int>(op.getChunk()),
                              static_cast<int>(op.getMicrobatch())};
}

/// The boundary a message between `from` and `to` crosses, by the library's
/// name; empty when the ranks are not neighbours. With one chunk per stage,
/// activations flow up the ranks and gradients down.
std::string boundaryName(int from, int to) {
  if (to == from + 1)
    return sched::activationName(from);
  if (to == from - 1)
    return sched::gradientName(to);
  return "";
}
} // namespace

FailureOr<LibraryPrograms> pipecc::toLibraryPrograms(PipelineOp pipeline) {
  if (pipeline.getChunks() != 1) {
    pipeline.emitOpError("has ")
        << pipeline.getChunks()
        << " chunks per stage; only one chunk per stage can be checked, "
           "because the op does not record which chunk holds which virtual "
           "stage";
    return failure();
  }
  int stages = static_cast<int>(pipeline.getStages());
  LibraryPrograms result;
  result.programOps.resize(stages);
  result.programs.resize(stages);
  result.ops.resize(stages);
  for (auto program : pipeline.getBody().getOps<ProgramOp>())
    result.programOps[program.getRank()] = program;

  bool split = false;
  bool ok = true;
  for (int rank = 0; rank < stages; ++rank) {
    for (Operation &op : result.programOps[rank].getBody().front()) {
      std::optional<sched::ProgramAction> action =
          llvm::TypeSwitch<Operation *, std::optional<sched::ProgramAction>>(
              &op)
              .Case<ForwardOp>([&](ForwardOp f) {
                return sched::ProgramAction::computeOf(
                    computeOf(f, sched::ComputeKind::Forward));
              })
              .Case<BackwardInputOp>([&](BackwardInputOp b) {
                split = true;
                return sched::ProgramAction::computeOf(
                    computeOf(b, sched::ComputeKind::BackwardInput));
              })
              .Case<BackwardWeightOp>([&](BackwardWeightOp w) {
                split = true;
                return sched::ProgramAction::computeOf(
                    computeOf(w, sched::ComputeKind::BackwardWeight));
              })
              .Case<BackwardOp>([&](BackwardOp bw) {
                return sched::ProgramAction::computeOf(
                    computeOf(bw, sched::ComputeKind::Backward));
              })
              .Case<SendOp, RecvOp>([&](auto transfer)
                                        -> std::optional<sched::ProgramAction> {
                bool isSend = llvm::isa<SendOp>(transfer.getOperation());
                int peer = static_cast<int>(transfer.getPeer());
                std::string boundary = isSend ? boundaryName(rank, peer)
                                              : boundaryName(peer, rank);
                if (boundary.empty()) {
                  transfer.emitOpError("messages rank ")
                      << peer << " from rank " << rank
                      << "; with one chunk per stage, ranks only exchange "
                         "tensors with their neighbours";
                  return std::nullopt;
                }
                return sched::ProgramAction::message(
                    isSend ? sched::ProgramActionKind::Send
                           : sched::ProgramActionKind::Recv,
                    peer, boundary, static_cast<int>(transfer.getMicrobatch()),
                    tensorBytes(transfer.getType()));
              })
              .Case<AllReduceOp>([&](AllReduceOp reduce) {
                return sched::ProgramAction::message(
                    sched::ProgramActionKind::AllReduce, -1,
                    reduce.getTensor().str(), -1,
                    tensorBytes(reduce.getType()));
              })
              .Case<OptimizerStepOp>([&](OptimizerStepOp) {
                return sched::ProgramAction::optimizerStep();
              })
              .Default([&](Operation *other) {
                other->emitOpError("is not a pipeline action");
                return std::nullopt;
              });
      if (!action) {
        ok = false;
        continue;
      }
      result.programs[rank].push_back(std::move(*action));
      result.ops[rank].push_back(&op);
    }
  }
  if (!ok)
    return failure();
  result.problem = sched::ScheduleProblem::linear(
      stages, static_cast<int>(pipeline.getMicrobatches()), split);
  return result;
}
