#include "ScheduleSupport.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Passes/StageTable.h"
#include "pipecc/Runtime/CorePlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

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
    os << " " << action.getCalleeAttr() << " stage "
       << action.getVirtualStage() << " mb " << action.getMicrobatch();
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<ForwardOp, BackwardInputOp, BackwardWeightOp, BackwardOp>(compute)
      .Case<SendOp>([&](SendOp send) {
        os << " \"" << send.getTensor() << "\" to " << send.getPeer()
           << " mb " << send.getMicrobatch() << " stages "
           << send.getFromStage() << " -> " << send.getToStage();
      })
      .Case<RecvOp>([&](RecvOp recv) {
        os << " \"" << recv.getTensor() << "\" from " << recv.getPeer()
           << " mb " << recv.getMicrobatch() << " stages "
           << recv.getFromStage() << " -> " << recv.getToStage();
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
  return sched::ComputeAction{kind, static_cast<int>(op.getRank()),
                              static_cast<int>(op.getChunk()),
                              static_cast<int>(op.getMicrobatch())};
}

/// The library's name of what a send or receive carries.
template <typename OpTy> std::string boundaryName(OpTy transfer) {
  int boundary = static_cast<int>(transfer.getBoundary());
  return transfer.isGradient() ? sched::gradientName(boundary)
                               : sched::activationName(boundary);
}

/// Whether the module still holds stage functions (before the lowering
/// strips their roles).
bool hasStageFunctions(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (getStageFunctionRole(func))
      return true;
  return false;
}

/// Durations and link timing from the stage table; checks that the op's
/// placement is the table's.
LogicalResult readCosts(PipelineOp pipeline, LibraryPrograms &result) {
  auto module = pipeline->getParentOfType<ModuleOp>();
  if (!module || !hasStageFunctions(module))
    return success();
  FailureOr<StageTable> table = readStageTable(module);
  if (failed(table))
    return failure();
  SmallVector<int64_t> placement = table->rankOfStages();
  if (ArrayRef<int64_t>(placement) != pipeline.getPlacement()) {
    InFlightDiagnostic diag = pipeline.emitOpError("places its virtual "
                                                   "stages on ranks [");
    llvm::interleaveComma(pipeline.getPlacement(), diag);
    diag << "] but the stage table places them on [";
    llvm::interleaveComma(placement, diag);
    diag << "]";
    return failure();
  }
  // Blocking rendezvous, the stricter check: a program free of deadlock
  // under it stays so with posted messages (the predicted timeline asks
  // for posted messages itself).
  setStageTableCosts(*table, result.problem, result.timing);
  return success();
}
} // namespace

void pipecc::setStageTableCosts(const StageTable &table,
                                sched::ScheduleProblem &problem,
                                sched::TimingModel &timing) {
  problem.durations.assign(table.stages.size(), {});
  for (const VirtualStage &stage : table.stages)
    problem.durations[stage.rank * table.chunks + stage.chunk] = {
        stage.cost.forwardSeconds, stage.cost.backwardInputSeconds,
        stage.cost.backwardWeightSeconds};
  const cost::DeviceProfile *profile = cost::lookupDeviceProfile(table.device);
  if (!profile)
    return;
  timing.bandwidthBytesPerSecond = profile->linkBytesPerSecond;
  timing.latencySeconds = profile->linkLatencySeconds;
  // What a measured profile knows beyond the links (the built-in rows
  // leave these at zero, as before).
  if (profile->cores == 0)
    return;
  timing.cores = profile->cores;
  // out/launch's socket ranks beyond the cores are pinned, consecutive
  // ranks on one core (the runtime's rule; docs/design.md, "Ranks beyond
  // the cores are pinned"), so each shares only its own core.
  timing.coreOfRank.clear();
  if (timing.sharesCores(int(table.ranks)))
    for (int rank = 0; rank < int(table.ranks); ++rank)
      timing.coreOfRank.push_back(
          rt::cpuSlotOfRank(rank, int(table.ranks), profile->cores));
  if (!profile->links.empty()) {
    const cost::LinkMeasurement &link = profile->links.front();
    timing.busyLatencySeconds = link.busyLatencySeconds;
    timing.sendPostSeconds = {link.postBytes, link.sendPostSeconds};
    timing.lateReceiveSeconds = {link.postBytes, link.lateReceivePostSeconds};
  }
  std::vector<int64_t> parameterBytes(table.ranks, 0);
  for (const VirtualStage &stage : table.stages)
    parameterBytes[stage.rank] += stage.cost.parameterBytes;
  timing.optimizerStepSecondsByRank.clear();
  for (int64_t bytes : parameterBytes)
    timing.optimizerStepSecondsByRank.push_back(
        cost::optimizerSeconds(bytes, /*tensors=*/1, *profile));
  // The loss is summed over the ranks (the lowest rank gathers and sends
  // back the sum): two messages per other rank, one after another.
  timing.lossReductionSeconds =
      2.0 * double(table.ranks - 1) *
      (profile->linkLatencySeconds + profile->runtimeCallSeconds);
}

FailureOr<LibraryPrograms> pipecc::toLibraryPrograms(PipelineOp pipeline) {
  int ranks = static_cast<int>(pipeline.getRanks());
  LibraryPrograms result;
  result.programOps.resize(ranks);
  result.programs.resize(ranks);
  result.ops.resize(ranks);
  for (auto program : pipeline.getBody().getOps<ProgramOp>())
    result.programOps[program.getRank()] = program;

  bool split = false;
  bool ok = true;
  std::set<std::string> crossed;
  for (int rank = 0; rank < ranks; ++rank) {
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
              .Case<SendOp, RecvOp>([&](auto transfer) {
                bool isSend = llvm::isa<SendOp>(transfer.getOperation());
                std::string boundary = boundaryName(transfer);
                if (isSend)
                  crossed.insert(boundary);
                return sched::ProgramAction::message(
                    isSend ? sched::ProgramActionKind::Send
                           : sched::ProgramActionKind::Recv,
                    static_cast<int>(transfer.getPeer()), boundary,
                    static_cast<int>(transfer.getMicrobatch()),
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
      // The tensors of one boundary message follow each other: one
      // library message.
      sched::Program &program = result.programs[rank];
      bool isMessage = action->kind == sched::ProgramActionKind::Send ||
                       action->kind == sched::ProgramActionKind::Recv;
      if (isMessage && !program.empty() &&
          program.back().kind == action->kind &&
          program.back().peer == action->peer &&
          program.back().tensor == action->tensor &&
          program.back().microbatch == action->microbatch) {
        program.back().bytes += action->bytes;
        continue;
      }
      // A grouped W (count > 1) is the W of each of its micro-batches, run
      // back to back.
      auto weight = llvm::dyn_cast<BackwardWeightOp>(op);
      int64_t count = weight ? weight.getCount() : 1;
      for (int64_t i = 0; i < count; ++i) {
        program.push_back(*action);
        program.back().compute.microbatch += static_cast<int>(i);
        result.ops[rank].push_back(&op);
      }
    }
  }
  if (!ok)
    return failure();
  int chunks = static_cast<int>(pipeline.getChunks());
  sched::ScheduleProblem &problem = result.problem;
  problem.stages = ranks;
  problem.chunks = chunks;
  problem.microbatches = static_cast<int>(pipeline.getMicrobatches());
  problem.splitBackward = split;
  for (int64_t q = 0, e = pipeline.getNumVirtualStages(); q < e; ++q) {
    problem.placement.push_back({static_cast<int>(pipeline.getRankOf(q)),
                                 static_cast<int>(pipeline.getChunkOf(q))});
    if (q + 1 < e && pipeline.getRankOf(q) != pipeline.getRankOf(q + 1))
      for (std::string name : {sched::activationName(static_cast<int>(q)),
                               sched::gradientName(static_cast<int>(q))})
        if (!crossed.count(name))
          result.silentBoundaries.push_back(name);
  }
  if (failed(readCosts(pipeline, result)))
    return failure();
  return result;
}
