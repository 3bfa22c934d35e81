// The pipeline verifier. Each pipeline.pipeline is converted to the
// scheduling library's programs (toLibraryPrograms, with the stage table's
// durations) and judged by the library, so that each rule has one
// implementation: Schedule::verify (every F and every backward once per
// virtual stage and micro-batch, in order, on the right rank) and
// simulate() (sends and receives matched one to one and in order, every
// compute's input received first, no deadlock under blocking rendezvous).
// The actions a simulation failure blames become the error, on the first
// one's op, and notes on the others'.
//
// What the library has no rule for stays here, on the IR: the tensors
// inside one boundary message (the library sees the message, not its
// tensors) must pair up by name and type, and the all-reduces two ranks
// share must come in one order (the library does not synchronise them).
#include "ScheduleSupport.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Scheduling/Simulator.h"

namespace pipecc {
#define GEN_PASS_DEF_VERIFYPIPELINE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::pipeline;
namespace sched = pipecc::scheduling;

namespace {

std::string quoted(Operation *op) { return "'" + describeAction(op) + "'"; }

class PipelineChecker {
public:
  PipelineChecker(PipelineOp pipeline, LibraryPrograms &form)
      : pipeline(pipeline), form(form), ranks(form.problem.stages) {}

  LogicalResult check() {
    if (failed(checkComputeOrder()) || failed(simulate()))
      return failure();
    return success(succeeded(checkTensors()) && succeeded(checkAllReduces()));
  }

private:
  /// The library's check of the compute actions alone.
  LogicalResult checkComputeOrder() {
    sched::Schedule schedule;
    schedule.name = pipeline.getSchedule().str();
    schedule.perRank.resize(ranks);
    for (int rank = 0; rank < ranks; ++rank)
      for (const sched::ProgramAction &action : form.programs[rank])
        if (action.kind == sched::ProgramActionKind::Compute)
          schedule.perRank[rank].push_back(action.compute);
    if (sched::Status status = schedule.verify(form.problem); !status)
      return pipeline.emitOpError("fails the schedule check: ")
             << status.message();
    return success();
  }

  /// The library's simulation of the whole programs; its failure lands on
  /// the blamed ops.
  LogicalResult simulate() {
    // The library's dependency chain needs a message across every boundary
    // between ranks; with a stage function that exchanges nothing across
    // one (so the schedule pass emitted no message there), the compute
    // order checked above is the whole verdict.
    if (!form.silentBoundaries.empty())
      return success();
    sched::SimulationFailure why;
    sched::Result<sched::SimulationResult> simulation =
        sched::simulate(form.problem, form.programs, form.timing, &why);
    if (simulation)
      return success();
    SmallVector<std::pair<Operation *, std::string>> blamed;
    for (auto &[ref, note] : why.blamed)
      if (ref.rank >= 0 && ref.rank < ranks && ref.index >= 0 &&
          ref.index < static_cast<int>(form.ops[ref.rank].size()))
        blamed.push_back({form.ops[ref.rank][ref.index], note});
    if (blamed.empty())
      return pipeline.emitOpError("fails the simulation: ")
             << why.message;
    InFlightDiagnostic diag = blamed.front().first->emitError()
                              << why.message << " at "
                              << quoted(blamed.front().first);
    for (auto &[op, note] : llvm::drop_begin(blamed))
      diag.attachNote(op->getLoc()) << note << ": " << quoted(op);
    return failure();
  }

  /// Per directed pair of ranks, the IR's sends and the peer's receives
  /// name the same tensors in the same order with the same types.
  LogicalResult checkTensors() {
    for (int from = 0; from < ranks; ++from)
      for (int to = 0; to < ranks; ++to) {
        if (from == to)
          continue;
        SmallVector<SendOp> sends;
        SmallVector<RecvOp> recvs;
        for (auto send : form.programOps[from].getBody().getOps<SendOp>())
          if (static_cast<int>(send.getPeer()) == to)
            sends.push_back(send);
        for (auto recv : form.programOps[to].getBody().getOps<RecvOp>())
          if (static_cast<int>(recv.getPeer()) == from)
            recvs.push_back(recv);
        // The simulation matched the messages; a count mismatch here means
        // one message carried different tensors on the two sides.
        for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
          if (i >= sends.size() || i >= recvs.size() ||
              sends[i].getTensor() != recvs[i].getTensor() ||
              sends[i].getMicrobatch() != recvs[i].getMicrobatch()) {
            Operation *at = i < recvs.size() ? recvs[i].getOperation()
                                             : sends[i].getOperation();
            InFlightDiagnostic diag =
                at->emitError("rank ")
                << (i < recvs.size() ? to : from) << " "
                << (i < recvs.size() ? "receives " : "sends ") << quoted(at)
                << " where rank "
                << (i < recvs.size() ? from : to) << " "
                << (i < recvs.size() ? "sends " : "receives ")
                << "another tensor; the tensors of a message pair up in "
                   "order";
            if (i < recvs.size() && i < sends.size())
              diag.attachNote(sends[i].getLoc())
                  << "rank " << from << " sends " << quoted(sends[i]);
            return failure();
          }
          if (sends[i].getType() != recvs[i].getType())
            return recvs[i].emitError("rank ")
                       .append(to, " receives '", recvs[i].getTensor(),
                               "' mb ", recvs[i].getMicrobatch(), " as ",
                               recvs[i].getType(), " but rank ", from,
                               " sends it as ", sends[i].getType())
                       .attachNote(sends[i].getLoc())
                   << "sent here";
        }
      }
    return success();
  }

  /// Every pair of ranks takes the all-reduces both belong to in one order,
  /// with the same group.
  LogicalResult checkAllReduces() {
    for (int rank = 0; rank < ranks; ++rank)
      for (int other = rank + 1; other < ranks; ++other) {
        auto shared = [&](int of) {
          SmallVector<AllReduceOp> list;
          for (auto reduce :
               form.programOps[of].getBody().getOps<AllReduceOp>())
            if (llvm::is_contained(reduce.getGroup(), rank) &&
                llvm::is_contained(reduce.getGroup(), other))
              list.push_back(reduce);
          return list;
        };
        SmallVector<AllReduceOp> mine = shared(rank), theirs = shared(other);
        for (size_t i = 0; i < std::max(mine.size(), theirs.size()); ++i) {
          if (i < mine.size() && i < theirs.size() &&
              mine[i].getTensor() == theirs[i].getTensor() &&
              mine[i].getGroup() == theirs[i].getGroup())
            continue;
          AllReduceOp at = i < mine.size() ? mine[i] : theirs[i];
          InFlightDiagnostic diag =
              at.emitError("deadlock: rank ")
              << (i < mine.size() ? rank : other) << " waits at "
              << quoted(at) << " but rank "
              << (i < mine.size() ? other : rank)
              << (i < mine.size() && i < theirs.size()
                      ? " reaches another all-reduce there"
                      : " never takes part");
          if (i < mine.size() && i < theirs.size())
            diag.attachNote(theirs[i].getLoc())
                << "rank " << other << " waits here";
          return failure();
        }
      }
    return success();
  }

  PipelineOp pipeline;
  LibraryPrograms &form;
  int ranks;
};

struct VerifyPipelinePass
    : pipecc::impl::VerifyPipelineBase<VerifyPipelinePass> {
  void runOnOperation() override {
    bool ok = true;
    for (auto pipeline : getOperation().getOps<PipelineOp>()) {
      FailureOr<LibraryPrograms> form = toLibraryPrograms(pipeline);
      if (failed(form) || failed(PipelineChecker(pipeline, *form).check()))
        ok = false;
    }
    if (!ok)
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
