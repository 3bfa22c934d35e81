// The schedule pass: mechanism only. It states the problem the stage table
// poses (virtual stages, their placement on ranks, their costs), takes the
// schedule by name from the scheduling library, lets the library place the
// communication, and writes the result as a pipeline.pipeline op, expanding
// each boundary message into the named tensors the stage functions
// exchange. A hand-off between virtual stages on one rank is no message
// (the library places none): the rank's buffer table holds the tensor.
#include "ScheduleSupport.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Passes/StageTable.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"
#include "pipecc/Scheduling/WeightGradientGroups.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <limits>

namespace pipecc {
#define GEN_PASS_DEF_SCHEDULE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::pipeline;
namespace sched = pipecc::scheduling;

namespace {

constexpr llvm::StringLiteral kPipelineName = "train";

/// One named tensor crossing a stage boundary.
struct BoundaryTensor {
  std::string name;
  RankedTensorType type;
};

/// What crosses one boundary in one direction, in the sender's order.
using BoundaryTensors = SmallVector<BoundaryTensor>;

SmallVector<std::string> stringList(func::FuncOp func, StringRef attr) {
  SmallVector<std::string> names;
  if (auto list = func->getAttrOfType<ArrayAttr>(attr))
    for (Attribute name : list)
      if (auto str = llvm::dyn_cast<StringAttr>(name))
        names.push_back(str.str());
  return names;
}

/// The type of the result (or else argument) of `func` named `name`.
RankedTensorType typeOfTensor(func::FuncOp func, StringRef name) {
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto tensor = func.getResultAttrOfType<StringAttr>(i, attrs::kTensor))
      if (tensor.getValue() == name)
        return llvm::dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto tensor = func.getArgAttrOfType<StringAttr>(i, attrs::kTensor))
      if (tensor.getValue() == name)
        return llvm::dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
  return {};
}

struct SchedulePass : pipecc::impl::ScheduleBase<SchedulePass> {
  using ScheduleBase::ScheduleBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run() {
    ModuleOp module = getOperation();
    if (microbatches < 1 || microbatches > std::numeric_limits<int>::max())
      return module.emitError("--microbatches must be a positive int, got ")
             << microbatches.getValue();
    FailureOr<bool> split = splitBackwardFor(scheduleName);
    if (failed(split))
      return module.emitError("--split-backward must be true, false or auto, "
                              "got '")
             << splitBackward << "'";
    if (!*split && splitBackward != "auto")
      if (const sched::ScheduleGenerator *generator =
              sched::lookupGenerator(scheduleName);
          generator && generator->needsSplitBackward())
        return module.emitError("--split-backward false: '")
               << scheduleName
               << "' needs the backward split into B and W (it runs W "
                  "apart from its B)";
    if (weightGradientGroup > 1 && !*split && splitBackward != "auto")
      return module.emitError("--weight-gradient-group ")
             << weightGradientGroup.getValue()
             << " runs W apart from its B, but --split-backward false keeps "
                "each backward one call";
    if (weightGradientGroup < 1)
      return module.emitError("--weight-gradient-group must be at least 1, "
                              "got ")
             << weightGradientGroup.getValue();
    // More than M forms no group: every W runs alone.
    bool grouping =
        weightGradientGroup > 1 && weightGradientGroup <= microbatches;
    if (SymbolTable::lookupSymbolIn(module, kPipelineName))
      return module.emitError("the module already has a symbol @")
             << kPipelineName << "; schedule it only once";

    FailureOr<StageTable> read = readStageTable(module);
    if (failed(read))
      return failure();
    table = std::move(*read);
    if (chunks != 0 && chunks != table.chunks)
      return module.emitError("--chunks ")
             << chunks.getValue() << " does not match the partition, which "
             << "cut " << table.chunks << " virtual stages per rank";
    int numStages = table.stages.size();
    // Grouping needs W apart from B: split where the schedule would not,
    // unless told not to or a stage has no W.
    bool everyStageHasW =
        llvm::all_of(table.stages, [](const VirtualStage &stage) {
          return static_cast<bool>(stage.backwardWeight);
        });
    if (grouping && splitBackward == "auto" && everyStageHasW)
      *split = true;
    for (const VirtualStage &stage : table.stages) {
      if (!stage.backwardInput)
        return module.emitError("virtual stage ")
               << stage.index << " has no backward_input function";
      if (*split && !stage.backwardWeight)
        return module.emitError("virtual stage ")
               << stage.index
               << " has no backward_weight function, but the backward is "
                  "split into B and W ("
               << (splitBackward == "auto"
                       ? "'" + scheduleName + "' needs it"
                       : std::string("--split-backward true"))
               << ")";
    }

    // The schedule must be able to use v chunks per rank; whether it can
    // order the partition's placement is the generator's call (GPipe takes
    // any, interleaved 1F1B only its own) and its refusal says why.
    if (const sched::ScheduleGenerator *generator =
            sched::lookupGenerator(scheduleName)) {
      sched::Result<sched::PlacementKind> wanted =
          generator->placementFor(static_cast<int>(table.chunks));
      if (!wanted)
        return module.emitError("cannot schedule ")
               << table.chunks << " chunks per rank with '" << scheduleName
               << "': " << wanted.message();
    }

    // The table's placement, whichever it is.
    sched::ScheduleProblem problem;
    problem.stages = static_cast<int>(table.ranks);
    problem.chunks = static_cast<int>(table.chunks);
    problem.microbatches = static_cast<int>(microbatches);
    problem.splitBackward = *split;
    for (const VirtualStage &stage : table.stages)
      problem.placement.push_back(
          {static_cast<int>(stage.rank), static_cast<int>(stage.chunk)});
    sched::TimingModel timing;
    // The CPU and CUDA steps post sends and wait for receives where their
    // tensor is read (pipecc-lower-rank-program): simulate that.
    timing.overlapSends = true;
    setCosts(problem, timing);

    // Boundary k lies between virtual stages k and k + 1.
    SmallVector<BoundaryTensors> activations, gradients;
    sched::TensorSizes sizes;
    for (int k = 0; k + 1 < numStages; ++k) {
      FailureOr<BoundaryTensors> act =
          boundaryTensors(table.stages[k].forward,
                          table.stages[k + 1].forward, "forward");
      FailureOr<BoundaryTensors> grad =
          boundaryTensors(table.stages[k + 1].backwardInput,
                          table.stages[k].backwardInput, "backward_input");
      if (failed(act) || failed(grad))
        return failure();
      sizes.activationBytes.push_back(totalBytes(*act));
      sizes.gradientBytes.push_back(totalBytes(*grad));
      activations.push_back(std::move(*act));
      gradients.push_back(std::move(*grad));
    }

    std::string why;
    FailureOr<Planned> planned = plan(problem, sizes, timing, grouping, why);
    if (failed(planned))
      return module.emitError(why);
    // `auto` on a schedule that runs B and W as one action: split them
    // where every stage has a W and the simulated step is shorter for it.
    // W still follows its B at once, so the order and the micro-batches
    // each rank holds stay the schedule's (its bytes may grow a little: W's
    // stash, the gradient's send buffer while W runs), but the input
    // gradient leaves between them instead of after both (on one rank
    // nothing leaves, and the step is the same).
    if (splitBackward == "auto" && !problem.splitBackward &&
        table.ranks > 1 && everyStageHasW) {
      sched::ScheduleProblem splitProblem = problem;
      splitProblem.splitBackward = true;
      std::string ignored;
      FailureOr<Planned> apart =
          plan(splitProblem, sizes, timing, grouping, ignored);
      if (succeeded(apart) && apart->simulation.makespan <
                                  planned->simulation.makespan * (1 - 1e-9)) {
        problem = std::move(splitProblem);
        planned = std::move(apart);
      }
    }

    // Library message names back to boundaries.
    llvm::StringMap<Boundary> boundaryOf;
    for (int k = 0; k + 1 < numStages; ++k) {
      boundaryOf[sched::activationName(k)] = {&activations[k], k, k + 1};
      boundaryOf[sched::gradientName(k)] = {&gradients[k], k + 1, k};
    }
    return emitPipeline(module, problem, planned->programs, boundaryOf,
                        planned->simulation);
  }

  /// A schedule of the problem as programs, and their simulation.
  struct Planned {
    std::vector<sched::Program> programs;
    sched::SimulationResult simulation;
  };

  /// The schedule `scheduleName` makes of `problem` (its weight gradients
  /// grouped when `grouping` and the backward is split), its communication
  /// placed and the step simulated; `why` says what failed otherwise.
  FailureOr<Planned> plan(const sched::ScheduleProblem &problem,
                          const sched::TensorSizes &sizes,
                          const sched::TimingModel &timing, bool grouping,
                          std::string &why) {
    sched::Result<sched::Schedule> schedule =
        sched::generateSchedule(scheduleName, problem);
    if (!schedule) {
      why = "cannot schedule " + std::to_string(table.stages.size()) +
            " virtual stages on " + std::to_string(table.ranks) + " ranks (" +
            sched::placementName(table.placement) + " placement) on " +
            std::to_string(microbatches.getValue()) +
            " micro-batches with '" + scheduleName +
            "': " + schedule.message();
      return failure();
    }
    if (grouping && problem.splitBackward) {
      schedule = sched::groupWeightGradientsInSlack(
          problem, *schedule, static_cast<int>(weightGradientGroup), sizes,
          timing);
      if (!schedule) {
        why = "cannot group the weight gradients of '" + scheduleName +
              "': " + schedule.message();
        return failure();
      }
    }
    sched::Result<std::vector<sched::Program>> programs =
        sched::materializeCommunication(problem, *schedule, sizes, timing);
    if (!programs) {
      why = "cannot place the communication of '" + scheduleName +
            "': " + programs.message();
      return failure();
    }
    sched::Result<sched::SimulationResult> simulation =
        sched::simulate(problem, *programs, timing);
    if (!simulation) {
      why = "the scheduling library rejects its own '" + scheduleName +
            "' programs: " + simulation.message();
      return failure();
    }
    return Planned{std::move(*programs), std::move(*simulation)};
  }

  /// The split-backward choice: explicit, or as the generator says (the
  /// zero-bubble schedules need B and W apart, `auto` can use them apart).
  FailureOr<bool> splitBackwardFor(StringRef name) {
    if (splitBackward == "auto") {
      const sched::ScheduleGenerator *generator =
          sched::lookupGenerator(name.str());
      return generator && generator->splitsBackwardByDefault();
    }
    if (splitBackward == "true" || splitBackward == "1")
      return true;
    if (splitBackward == "false" || splitBackward == "0")
      return false;
    return failure();
  }

  /// Durations from the stage table (indexed by rank and chunk in the
  /// library), the link from its device profile; a free link without one.
  void setCosts(sched::ScheduleProblem &problem, sched::TimingModel &timing) {
    setStageTableCosts(table, problem, timing);
  }

  /// The tensors `sender` sends to `receiver` (its pipeline.send list, with
  /// types); the receiver must list the same names in pipeline.recv.
  FailureOr<BoundaryTensors> boundaryTensors(func::FuncOp sender,
                                             func::FuncOp receiver,
                                             StringRef kind) {
    SmallVector<std::string> sent = stringList(sender, attrs::kSend);
    SmallVector<std::string> received = stringList(receiver, attrs::kRecv);
    SmallVector<std::string> sortedSent = sent, sortedReceived = received;
    llvm::sort(sortedSent);
    llvm::sort(sortedReceived);
    if (sortedSent != sortedReceived) {
      InFlightDiagnostic diag = sender.emitError("@")
                                << sender.getSymName() << " sends [";
      llvm::interleaveComma(sent, diag);
      diag << "] but @" << receiver.getSymName() << " receives [";
      llvm::interleaveComma(received, diag);
      diag << "]";
      diag.attachNote(receiver.getLoc()) << "the receiving " << kind
                                         << " function";
      return failure();
    }
    BoundaryTensors tensors;
    for (const std::string &name : sent) {
      // A stage that only forwards a tensor may neither take nor return it;
      // the stage that produces or consumes it does.
      RankedTensorType type = typeOfTensor(sender, name);
      if (!type)
        type = typeOfTensor(receiver, name);
      for (const VirtualStage &stage : table.stages)
        for (func::FuncOp func :
             {stage.forward, stage.backwardInput, stage.backwardWeight})
          if (!type && func)
            type = typeOfTensor(func, name);
      if (!type || !type.hasStaticShape())
        return sender.emitError("cannot find a statically shaped tensor "
                                "named '")
               << name << "' that @" << sender.getSymName() << " sends";
      tensors.push_back({name, type});
    }
    return tensors;
  }

  static int64_t totalBytes(const BoundaryTensors &tensors) {
    int64_t bytes = 0;
    for (const BoundaryTensor &tensor : tensors)
      bytes += tensorBytes(tensor.type);
    return bytes;
  }

  /// What a library message carries: the tensors of one boundary in one
  /// direction, from one virtual stage to the next.
  struct Boundary {
    const BoundaryTensors *tensors = nullptr;
    int64_t from = 0, to = 0;
  };

  StageTable table;

  LogicalResult emitPipeline(ModuleOp module,
                             const sched::ScheduleProblem &problem,
                             const std::vector<sched::Program> &programs,
                             const llvm::StringMap<Boundary> &boundaryOf,
                             const sched::SimulationResult &simulation) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    SmallVector<int64_t> placement = table.rankOfStages();
    auto pipeline = builder.create<PipelineOp>(
        loc, kPipelineName, table.ranks, table.chunks, problem.microbatches,
        scheduleName, placement);
    builder.setInsertionPointToStart(&pipeline.getBody().emplaceBlock());

    SmallVector<SharedGradient> shared = sharedGradients(module);
    for (int rank = 0; rank < problem.stages; ++rank) {
      OpBuilder::InsertionGuard guard(builder);
      auto program = builder.create<ProgramOp>(loc, rank);
      builder.setInsertionPointToStart(&program.getBody().emplaceBlock());
      // After every other action, in one order on all ranks: each rank's
      // gradients are complete, and the all-reduces cannot wait on a
      // message (so they add no deadlock).
      bool reduced = false;
      auto allReduce = [&] {
        for (const SharedGradient &gradient : shared)
          if (llvm::is_contained(gradient.ranks, rank))
            builder.create<AllReduceOp>(loc, gradient.tensor, gradient.ranks,
                                        gradient.type);
        reduced = true;
      };
      for (const sched::ProgramAction &action : programs[rank]) {
        if (action.kind == sched::ProgramActionKind::OptimizerStep &&
            !reduced)
          allReduce();
        switch (action.kind) {
        case sched::ProgramActionKind::Compute:
          emitCompute(builder, loc, problem, action.compute);
          break;
        case sched::ProgramActionKind::Send:
        case sched::ProgramActionKind::Recv: {
          auto it = boundaryOf.find(action.tensor);
          if (it == boundaryOf.end())
            return module.emitError("the scheduling library sends '")
                   << action.tensor << "', which crosses no stage boundary";
          const Boundary &boundary = it->second;
          // An empty boundary carries no message.
          for (const BoundaryTensor &tensor : *boundary.tensors) {
            if (action.kind == sched::ProgramActionKind::Send)
              builder.create<SendOp>(loc, tensor.name, action.peer,
                                     action.microbatch, boundary.from,
                                     boundary.to, tensor.type);
            else
              builder.create<RecvOp>(loc, tensor.name, action.peer,
                                     action.microbatch, boundary.from,
                                     boundary.to, tensor.type);
          }
          break;
        }
        case sched::ProgramActionKind::AllReduce:
          return module.emitError("the scheduling library emitted an "
                                  "all-reduce of '")
                 << action.tensor << "', which this pass cannot type";
        case sched::ProgramActionKind::OptimizerStep:
          builder.create<OptimizerStepOp>(loc);
          break;
        }
      }
      if (!reduced)
        allReduce();
    }

    pipeline.setPredictedStepSAttr(
        builder.getF64FloatAttr(simulation.makespan));
    pipeline.setBubbleAttr(builder.getF64FloatAttr(simulation.bubbleFraction));
    pipeline.setRankBusySAttr(
        builder.getDenseF64ArrayAttr(simulation.busySeconds));
    // The library counts by (rank, chunk); the op by virtual stage.
    SmallVector<int64_t> peak;
    for (const VirtualStage &stage : table.stages)
      peak.push_back(simulation.peakLiveUntilWeightGradient[
          stage.rank * table.chunks + stage.chunk]);
    pipeline.setPeakLiveMicrobatchesAttr(builder.getDenseI64ArrayAttr(peak));
    return success();
  }

  /// The gradient of a trainable parameter that several virtual stages
  /// hold (tied weights): its accumulator is summed over the ranks holding
  /// them. Two virtual stages on one rank share the rank's accumulator.
  struct SharedGradient {
    std::string tensor;
    SmallVector<int64_t> ranks;
    RankedTensorType type;
  };

  SmallVector<SharedGradient> sharedGradients(ModuleOp module) {
    SmallVector<SharedGradient> shared;
    auto parameters = module->getAttrOfType<ArrayAttr>(attrs::kParameters);
    if (!parameters)
      return shared;
    for (Attribute attr : parameters) {
      auto dict = llvm::dyn_cast<DictionaryAttr>(attr);
      auto stages = dict ? dict.getAs<DenseI64ArrayAttr>("stages")
                         : DenseI64ArrayAttr();
      auto trainable = dict ? dict.getAs<BoolAttr>("trainable") : BoolAttr();
      auto type = dict ? dict.getAs<TypeAttr>("type") : TypeAttr();
      if (!stages || !trainable || !trainable.getValue() || !type)
        continue;
      SmallVector<int64_t> ranks;
      for (int64_t stage : stages.asArrayRef())
        if (stage >= 0 && stage < static_cast<int64_t>(table.stages.size()))
          ranks.push_back(table.stages[stage].rank);
      llvm::sort(ranks);
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      if (ranks.size() < 2)
        continue;
      shared.push_back(
          {("grad." + dict.getAs<StringAttr>("name").getValue()).str(),
           std::move(ranks), llvm::cast<RankedTensorType>(type.getValue())});
    }
    return shared;
  }

  void emitCompute(OpBuilder &builder, Location loc,
                   const sched::ScheduleProblem &problem,
                   const sched::ComputeAction &action) {
    // The library's stage is the rank; its (rank, chunk) is a virtual stage.
    uint64_t q = problem.virtualStageOf(action.stage, action.chunk);
    uint64_t mb = action.microbatch;
    VirtualStage &stage = table.stages[q];
    auto symbol = [](func::FuncOp func) { return func.getSymName(); };
    switch (action.kind) {
    case sched::ComputeKind::Forward:
      builder.create<ForwardOp>(loc, symbol(stage.forward), q, mb);
      break;
    case sched::ComputeKind::BackwardInput:
      builder.create<BackwardInputOp>(loc, symbol(stage.backwardInput), q, mb);
      break;
    case sched::ComputeKind::BackwardWeight:
      builder.create<BackwardWeightOp>(loc, symbol(stage.backwardWeight), q, mb);
      break;
    case sched::ComputeKind::Backward:
      builder.create<BackwardOp>(
          loc, symbol(stage.backwardInput),
          stage.backwardWeight
              ? FlatSymbolRefAttr::get(stage.backwardWeight.getSymNameAttr())
              : FlatSymbolRefAttr(),
          q, mb);
      break;
    }
  }
};

} // namespace
