// The pipeline verifier. Every check that can point at an op runs here, on
// the IR, so that its diagnostic sits on the offending action with notes on
// the other ranks' actions:
//   1. each (stage, chunk, micro-batch) runs F once and its backward once
//      (fused, or B then W), in that order;
//   2. sends from each rank to each peer match the peer's receives one to
//      one, in order, with the same types;
//   3. every compute has received each tensor its boundary carries;
//   4. with blocking sends and receives, no rank waits forever.
// Then the scheduling library's Schedule::verify and simulate() judge the
// same programs; they must agree, and a disagreement is reported on the
// pipeline op with the library's message.
#include "ScheduleSupport.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Scheduling/Simulator.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <map>
#include <set>
#include <tuple>

namespace pipecc {
#define GEN_PASS_DEF_VERIFYPIPELINE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::pipeline;
namespace sched = pipecc::scheduling;

namespace {

/// "the forward of stage 1 chunk 0 mb 2"
std::string describeWork(StringRef what, int stage, int chunk, int mb) {
  return ("the " + what + " of stage " + Twine(stage) + " chunk " +
          Twine(chunk) + " mb " + Twine(mb))
      .str();
}

std::string quoted(Operation *op) { return "'" + describeAction(op) + "'"; }

/// The IR view of a send or receive.
struct Transfer {
  Operation *op;
  StringRef tensor;
  int peer;
  int microbatch;
  Type type;
};

std::optional<Transfer> asTransfer(Operation *op) {
  if (auto send = llvm::dyn_cast<SendOp>(op))
    return Transfer{op, send.getTensor(), static_cast<int>(send.getPeer()),
                    static_cast<int>(send.getMicrobatch()), send.getType()};
  if (auto recv = llvm::dyn_cast<RecvOp>(op))
    return Transfer{op, recv.getTensor(), static_cast<int>(recv.getPeer()),
                    static_cast<int>(recv.getMicrobatch()), recv.getType()};
  return std::nullopt;
}

class PipelineChecker {
public:
  PipelineChecker(PipelineOp pipeline, LibraryPrograms &form)
      : pipeline(pipeline), form(form), stages(form.problem.stages) {}

  LogicalResult check() {
    if (failed(checkComputes()) || failed(checkPairing()) ||
        failed(checkInputs()) || failed(checkDeadlock()))
      return failure();
    return checkWithLibrary();
  }

private:
  using WorkKey = std::tuple<int, int, int>; // stage, chunk, micro-batch

  struct Work {
    Operation *forward = nullptr, *backwardInput = nullptr,
              *backwardWeight = nullptr, *backward = nullptr;
    // Positions in the rank's program.
    size_t forwardAt = 0, backwardInputAt = 0, backwardWeightAt = 0,
           backwardAt = 0;
  };

  /// Check 1: every F and every backward exactly once, in order.
  LogicalResult checkComputes() {
    bool ok = true;
    for (int rank = 0; rank < stages; ++rank) {
      std::map<WorkKey, Work> work;
      for (auto [at, action] : llvm::enumerate(form.programs[rank])) {
        if (action.kind != sched::ProgramActionKind::Compute)
          continue;
        const sched::ComputeAction &c = action.compute;
        Work &w = work[{c.stage, c.chunk, c.microbatch}];
        Operation *op = form.ops[rank][at];
        auto record = [&](Operation *&slot, size_t &slotAt) {
          if (slot) {
            op->emitError("rank ")
                    .append(rank, " repeats ", quoted(op))
                    .attachNote(slot->getLoc())
                << "first run here";
            ok = false;
            return;
          }
          slot = op;
          slotAt = at;
        };
        switch (c.kind) {
        case sched::ComputeKind::Forward:
          record(w.forward, w.forwardAt);
          break;
        case sched::ComputeKind::BackwardInput:
          record(w.backwardInput, w.backwardInputAt);
          break;
        case sched::ComputeKind::BackwardWeight:
          record(w.backwardWeight, w.backwardWeightAt);
          break;
        case sched::ComputeKind::Backward:
          record(w.backward, w.backwardAt);
          break;
        }
      }
      ProgramOp program = form.programOps[rank];
      for (int chunk = 0; chunk < form.problem.chunks; ++chunk)
        for (int mb = 0; mb < form.problem.microbatches; ++mb)
          ok &= succeeded(checkWork(program, rank, chunk, mb,
                                    work[{rank, chunk, mb}]));
    }
    return success(ok);
  }

  LogicalResult checkWork(ProgramOp program, int rank, int chunk, int mb,
                          const Work &w) {
    auto missing = [&](StringRef what) {
      return program.emitError("rank ")
             << rank << " never runs " << describeWork(what, rank, chunk, mb);
    };
    auto before = [&](Operation *late, Operation *early, StringRef what) {
      late->emitError("rank ")
              .append(rank, " runs ", quoted(late), " before ", what)
              .attachNote(early->getLoc())
          << "which only runs here";
      return failure();
    };
    bool ok = true;
    if (!w.forward) {
      (void)missing("forward");
      ok = false;
    }
    if (w.backward && (w.backwardInput || w.backwardWeight)) {
      Operation *other = w.backwardInput ? w.backwardInput : w.backwardWeight;
      w.backward->emitError("rank ")
              .append(rank, " runs ", quoted(w.backward),
                      " and also a split B/W of the same micro-batch")
              .attachNote(other->getLoc())
          << "split half here";
      return failure();
    }
    if (!w.backward && !w.backwardInput && !w.backwardWeight)
      return missing("backward");
    if (w.backwardInput && !w.backwardWeight)
      return w.backwardInput->emitError("rank ")
             << rank << " runs " << quoted(w.backwardInput)
             << " but never its weight gradient (W)";
    if (w.backwardWeight && !w.backwardInput)
      return w.backwardWeight->emitError("rank ")
             << rank << " runs " << quoted(w.backwardWeight)
             << " but never its input gradient (B)";
    if (!ok)
      return failure();
    Operation *b = w.backward ? w.backward : w.backwardInput;
    size_t bAt = w.backward ? w.backwardAt : w.backwardInputAt;
    if (bAt < w.forwardAt)
      return before(b, w.forward, "its forward");
    if (w.backwardWeight && w.backwardWeightAt < w.backwardInputAt)
      return before(w.backwardWeight, w.backwardInput,
                    "its input gradient (B)");
    return success();
  }

  /// Check 2: per directed pair of ranks, sends and receives match one to
  /// one, in order, with the same type.
  LogicalResult checkPairing() {
    bool ok = true;
    for (int from = 0; from < stages; ++from)
      for (int to = 0; to < stages; ++to)
        if (from != to)
          ok &= succeeded(checkPairing(from, to));
    return success(ok);
  }

  SmallVector<Transfer> transfers(int rank, int peer, bool sends) {
    SmallVector<Transfer> result;
    for (Operation *op : form.ops[rank]) {
      std::optional<Transfer> t = asTransfer(op);
      if (t && t->peer == peer && llvm::isa<SendOp>(op) == sends)
        result.push_back(*t);
    }
    return result;
  }

  LogicalResult checkPairing(int from, int to) {
    SmallVector<Transfer> sends = transfers(from, to, /*sends=*/true);
    SmallVector<Transfer> recvs = transfers(to, from, /*sends=*/false);
    using Key = std::pair<std::string, int>;
    std::multiset<Key> sent, received;
    for (const Transfer &t : sends)
      sent.insert({t.tensor.str(), t.microbatch});
    for (const Transfer &t : recvs)
      received.insert({t.tensor.str(), t.microbatch});

    bool ok = true;
    std::multiset<Key> unmatched = received;
    for (const Transfer &send : sends) {
      auto it = unmatched.find({send.tensor.str(), send.microbatch});
      if (it != unmatched.end()) {
        unmatched.erase(it);
        continue;
      }
      send.op->emitError("unmatched send: rank ")
          << from << " sends '" << send.tensor << "' mb " << send.microbatch
          << " to rank " << to << ", but rank " << to
          << " never receives it from rank " << from;
      ok = false;
    }
    unmatched = sent;
    for (const Transfer &recv : recvs) {
      auto it = unmatched.find({recv.tensor.str(), recv.microbatch});
      if (it != unmatched.end()) {
        unmatched.erase(it);
        continue;
      }
      recv.op->emitError("unmatched receive: rank ")
          << to << " receives '" << recv.tensor << "' mb " << recv.microbatch
          << " from rank " << from << ", but rank " << from
          << " never sends it to rank " << to;
      ok = false;
    }
    if (!ok)
      return failure();

    for (auto [send, recv] : llvm::zip_equal(sends, recvs)) {
      if (send.tensor != recv.tensor || send.microbatch != recv.microbatch) {
        recv.op->emitError("out-of-order messages: rank ")
                .append(to, " receives '", recv.tensor, "' mb ",
                        recv.microbatch, " from rank ", from, " where rank ",
                        from, " sends '", send.tensor, "' mb ",
                        send.microbatch,
                        "; messages between two ranks match in order")
                .attachNote(send.op->getLoc())
            << "rank " << from << " sends '" << send.tensor << "' here";
        return failure();
      }
      if (send.type != recv.type) {
        recv.op->emitError("rank ")
                .append(to, " receives '", recv.tensor, "' mb ",
                        recv.microbatch, " as ", recv.type, " but rank ", from,
                        " sends it as ", send.type)
                .attachNote(send.op->getLoc())
            << "sent here";
        return failure();
      }
    }
    return success();
  }

  /// Check 3: each compute has received, earlier in its own program, every
  /// tensor that crosses its incoming boundary (for any micro-batch).
  LogicalResult checkInputs() {
    // The tensors on each boundary, by (from, to) rank.
    std::map<std::pair<int, int>, llvm::SetVector<StringRef>> names;
    for (int rank = 0; rank < stages; ++rank)
      for (Operation *op : form.ops[rank])
        if (llvm::isa<SendOp>(op)) {
          Transfer t = *asTransfer(op);
          names[{rank, t.peer}].insert(t.tensor);
        }

    bool ok = true;
    for (int rank = 0; rank < stages; ++rank) {
      std::set<std::tuple<int, std::string, int>> received;
      for (auto [at, action] : llvm::enumerate(form.programs[rank])) {
        Operation *op = form.ops[rank][at];
        if (llvm::isa<RecvOp>(op)) {
          Transfer t = *asTransfer(op);
          received.insert({t.peer, t.tensor.str(), t.microbatch});
          continue;
        }
        if (action.kind != sched::ProgramActionKind::Compute)
          continue;
        const sched::ComputeAction &c = action.compute;
        int from = -1;
        if (c.kind == sched::ComputeKind::Forward)
          from = rank - 1;
        else if (c.kind == sched::ComputeKind::BackwardInput ||
                 c.kind == sched::ComputeKind::Backward)
          from = rank + 1;
        if (from < 0 || from >= stages)
          continue;
        for (StringRef name : names[{from, rank}]) {
          if (received.count({from, name.str(), c.microbatch}))
            continue;
          InFlightDiagnostic diag =
              op->emitError("rank ")
              << rank << " runs " << quoted(op) << " before receiving '"
              << name << "' mb " << c.microbatch << " from rank " << from;
          if (Operation *later = laterRecv(rank, at, from, name, c.microbatch))
            diag.attachNote(later->getLoc()) << "received only here";
          ok = false;
          break;
        }
      }
    }
    return success(ok);
  }

  Operation *laterRecv(int rank, size_t after, int from, StringRef name,
                       int mb) {
    for (size_t i = after + 1; i < form.ops[rank].size(); ++i)
      if (auto recv = llvm::dyn_cast<RecvOp>(form.ops[rank][i]))
        if (recv.getPeer() == static_cast<uint64_t>(from) &&
            recv.getTensor() == name && recv.getMicrobatch() == uint64_t(mb))
          return recv;
    return nullptr;
  }

  /// Check 4: run the programs with blocking rendezvous sends and receives
  /// (and all-reduces that wait for their whole group) until no rank can
  /// move; any rank left short of its end waits forever.
  LogicalResult checkDeadlock() {
    std::vector<size_t> next(stages, 0);
    auto done = [&](int rank) { return next[rank] >= form.ops[rank].size(); };
    auto at = [&](int rank) { return form.ops[rank][next[rank]]; };

    bool progressed = true;
    while (progressed) {
      progressed = false;
      for (int rank = 0; rank < stages; ++rank) {
        while (!done(rank)) {
          Operation *op = at(rank);
          if (std::optional<Transfer> t = asTransfer(op)) {
            if (done(t->peer))
              break;
            std::optional<Transfer> facing = asTransfer(at(t->peer));
            if (!facing || facing->peer != rank ||
                llvm::isa<SendOp>(facing->op) == llvm::isa<SendOp>(op))
              break;
            // Pairing was checked: facing messages are the same one.
            ++next[t->peer];
          } else if (auto reduce = llvm::dyn_cast<AllReduceOp>(op)) {
            if (!groupReady(reduce, next))
              break;
            for (int64_t member : reduce.getGroup())
              if (member != rank)
                ++next[member];
          }
          ++next[rank];
          progressed = true;
        }
      }
    }

    SmallVector<int> blocked;
    for (int rank = 0; rank < stages; ++rank)
      if (!done(rank))
        blocked.push_back(rank);
    if (blocked.empty())
      return success();

    int first = blocked.front();
    InFlightDiagnostic diag = at(first)->emitError("deadlock: rank ")
                              << first << " waits at " << quoted(at(first));
    for (auto [i, rank] : llvm::enumerate(llvm::drop_begin(blocked)))
      diag << (i == 0 ? " while rank " : ", rank ") << rank << " waits at "
           << quoted(at(rank));
    if (blocked.size() == 1)
      if (std::optional<Transfer> t = asTransfer(at(first)))
        diag << ", but rank " << t->peer << " has finished its program";
    for (int rank : llvm::drop_begin(blocked))
      diag.attachNote(at(rank)->getLoc()) << "rank " << rank << " waits here";
    return failure();
  }

  bool groupReady(AllReduceOp reduce, const std::vector<size_t> &next) {
    for (int64_t member : reduce.getGroup()) {
      if (next[member] >= form.ops[member].size())
        return false;
      auto other = llvm::dyn_cast<AllReduceOp>(form.ops[member][next[member]]);
      if (!other || other.getTensor() != reduce.getTensor() ||
          other.getGroup() != reduce.getGroup())
        return false;
    }
    return true;
  }

  /// The library's verdict on the same programs. The checks above cover
  /// what it checks, so a failure here means the two disagree.
  LogicalResult checkWithLibrary() {
    sched::Schedule schedule;
    schedule.name = pipeline.getSchedule().str();
    schedule.perRank.resize(stages);
    for (int rank = 0; rank < stages; ++rank)
      for (const sched::ProgramAction &action : form.programs[rank])
        if (action.kind == sched::ProgramActionKind::Compute)
          schedule.perRank[rank].push_back(action.compute);
    if (sched::Status status = schedule.verify(form.problem); !status)
      return pipeline.emitOpError("fails the scheduling library's schedule "
                                  "check: ")
             << status.message();

    // The library's dependency chain needs a message across every boundary;
    // a pipeline whose stage functions exchange nothing across one (so the
    // schedule pass emitted no message there) is beyond its model, and the
    // checks above are the whole verdict.
    std::set<std::pair<int, int>> linked;
    for (int rank = 0; rank < stages; ++rank)
      for (Operation *op : form.ops[rank])
        if (llvm::isa<SendOp>(op))
          linked.insert({rank, asTransfer(op)->peer});
    for (int k = 0; k + 1 < stages; ++k)
      if (!linked.count({k, k + 1}) || !linked.count({k + 1, k}))
        return success();
    sched::Result<sched::SimulationResult> simulation =
        sched::simulate(form.problem, form.programs);
    if (!simulation)
      return pipeline.emitOpError("fails the scheduling library's "
                                  "simulation: ")
             << simulation.message();
    return success();
  }

  PipelineOp pipeline;
  LibraryPrograms &form;
  int stages;
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
