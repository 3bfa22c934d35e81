// The schedule pass: mechanism only. It states the problem the stage
// functions pose, takes the schedule by name from the scheduling library,
// lets the library place the communication, and writes the result as a
// pipeline.pipeline op, expanding each boundary message into the named
// tensors the stage functions exchange.
#include "ScheduleSupport.h"
#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

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

struct StageFunctions {
  func::FuncOp forward, backwardInput;
};

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
    if (SymbolTable::lookupSymbolIn(module, kPipelineName))
      return module.emitError("the module already has a symbol @")
             << kPipelineName << "; schedule it only once";

    SmallVector<StageFunctions> stages;
    if (failed(collectStages(module, stages)))
      return failure();
    int numStages = stages.size();

    sched::ScheduleProblem problem = sched::ScheduleProblem::linear(
        numStages, static_cast<int>(microbatches), *split);
    sched::TimingModel timing;
    if (failed(readCosts(module, problem, timing)))
      return failure();

    // Boundary k lies between stage k and stage k + 1.
    SmallVector<BoundaryTensors> activations, gradients;
    sched::TensorSizes sizes;
    for (int k = 0; k + 1 < numStages; ++k) {
      FailureOr<BoundaryTensors> act = boundaryTensors(
          stages[k].forward, stages[k + 1].forward, "forward");
      FailureOr<BoundaryTensors> grad = boundaryTensors(
          stages[k + 1].backwardInput, stages[k].backwardInput,
          "backward_input");
      if (failed(act) || failed(grad))
        return failure();
      sizes.activationBytes.push_back(totalBytes(*act));
      sizes.gradientBytes.push_back(totalBytes(*grad));
      activations.push_back(std::move(*act));
      gradients.push_back(std::move(*grad));
    }

    sched::Result<sched::Schedule> schedule =
        sched::generateSchedule(scheduleName, problem);
    if (!schedule)
      return module.emitError("cannot schedule ")
             << numStages << " stages (one chunk each) on "
             << microbatches.getValue() << " micro-batches with '"
             << scheduleName << "': " << schedule.message();
    sched::Result<std::vector<sched::Program>> programs =
        sched::materializeCommunication(problem, *schedule, sizes, timing);
    if (!programs)
      return module.emitError("cannot place the communication of '")
             << scheduleName << "': " << programs.message();
    sched::Result<sched::SimulationResult> simulation =
        sched::simulate(problem, *programs, timing);
    if (!simulation)
      return module.emitError("the scheduling library rejects its own '")
             << scheduleName << "' programs: " << simulation.message();

    // Library message names back to boundaries.
    llvm::StringMap<const BoundaryTensors *> tensorsOf;
    for (int k = 0; k + 1 < numStages; ++k) {
      tensorsOf[sched::activationName(k)] = &activations[k];
      tensorsOf[sched::gradientName(k)] = &gradients[k];
    }
    return emitPipeline(module, problem, *programs, tensorsOf, *simulation);
  }

  /// The split-backward choice: explicit, or by the schedule family (the
  /// zero-bubble schedules need B and W apart).
  FailureOr<bool> splitBackwardFor(StringRef name) {
    if (splitBackward == "auto")
      return StringRef(name).starts_with("zb-");
    if (splitBackward == "true" || splitBackward == "1")
      return true;
    if (splitBackward == "false" || splitBackward == "0")
      return false;
    return failure();
  }

  LogicalResult collectStages(ModuleOp module,
                              SmallVectorImpl<StageFunctions> &stages) {
    for (auto func : module.getOps<func::FuncOp>()) {
      auto stage = func->getAttrOfType<IntegerAttr>(attrs::kFunctionStage);
      auto kind = func->getAttrOfType<StringAttr>(attrs::kFunctionKind);
      if (!stage || !kind)
        continue;
      int64_t s = stage.getInt();
      if (s < 0)
        return func.emitError("stage function has negative stage ") << s;
      if (static_cast<int64_t>(stages.size()) <= s)
        stages.resize(s + 1);
      stageFunctions.push_back(func);
      if (kind.getValue() == "forward")
        stages[s].forward = func;
      else if (kind.getValue() == "backward_input")
        stages[s].backwardInput = func;
    }
    if (stages.empty())
      return module.emitError("no stage functions to schedule; run "
                              "pipecc-split-stages first");
    for (auto [s, functions] : llvm::enumerate(stages)) {
      if (!functions.forward)
        return module.emitError("stage ") << s << " has no forward function";
      if (!functions.backwardInput)
        return module.emitError("stage ")
               << s << " has no backward_input function";
    }
    return success();
  }

  /// Durations from the partition's stage costs, the link from its device
  /// profile; unit durations and a free link without a partition.
  LogicalResult readCosts(ModuleOp module, sched::ScheduleProblem &problem,
                          sched::TimingModel &timing) {
    auto partition =
        module->getAttrOfType<DictionaryAttr>(attrs::kPartition);
    if (!partition)
      return success();
    auto costs = partition.getAs<ArrayAttr>("stage_costs");
    if (!costs)
      return success();
    if (static_cast<int>(costs.size()) != problem.stages)
      return module.emitError("the partition lists ")
             << costs.size() << " stage costs but the module has "
             << problem.stages << " stages";
    auto seconds = [](DictionaryAttr cost, StringRef key) -> double {
      auto value = cost ? cost.getAs<FloatAttr>(key) : FloatAttr();
      return value ? value.getValueAsDouble() : 1.0;
    };
    for (Attribute attr : costs) {
      auto cost = llvm::dyn_cast<DictionaryAttr>(attr);
      problem.durations.push_back({seconds(cost, "forward_s"),
                                   seconds(cost, "backward_input_s"),
                                   seconds(cost, "backward_weight_s")});
    }
    if (auto device = partition.getAs<StringAttr>("device"))
      if (const cost::DeviceProfile *profile =
              cost::lookupDeviceProfile(device.getValue())) {
        timing.bandwidthBytesPerSecond = profile->linkBytesPerSecond;
        timing.latencySeconds = profile->linkLatencySeconds;
      }
    return success();
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
      for (func::FuncOp func : stageFunctions) {
        if (type)
          break;
        type = typeOfTensor(func, name);
      }
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

  /// Every stage function, in module order.
  SmallVector<func::FuncOp> stageFunctions;

  LogicalResult
  emitPipeline(ModuleOp module, const sched::ScheduleProblem &problem,
               const std::vector<sched::Program> &programs,
               const llvm::StringMap<const BoundaryTensors *> &tensorsOf,
               const sched::SimulationResult &simulation) {
    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto pipeline = builder.create<PipelineOp>(
        loc, kPipelineName, problem.stages, problem.chunks,
        problem.microbatches, scheduleName);
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
          emitCompute(builder, loc, action.compute);
          break;
        case sched::ProgramActionKind::Send:
        case sched::ProgramActionKind::Recv: {
          auto it = tensorsOf.find(action.tensor);
          if (it == tensorsOf.end())
            return module.emitError("the scheduling library sends '")
                   << action.tensor << "', which crosses no stage boundary";
          // An empty boundary carries no message.
          for (const BoundaryTensor &tensor : *it->second) {
            if (action.kind == sched::ProgramActionKind::Send)
              builder.create<SendOp>(loc, tensor.name, action.peer,
                                     action.microbatch, tensor.type);
            else
              builder.create<RecvOp>(loc, tensor.name, action.peer,
                                     action.microbatch, tensor.type);
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

    pipeline->setAttr(attrs::kPredictedStep,
                      builder.getF64FloatAttr(simulation.makespan));
    pipeline->setAttr(attrs::kBubble,
                      builder.getF64FloatAttr(simulation.bubbleFraction));
    pipeline->setAttr(attrs::kRankBusy,
                      builder.getDenseF64ArrayAttr(simulation.busySeconds));
    SmallVector<int64_t> peak(simulation.peakLiveUntilWeightGradient.begin(),
                              simulation.peakLiveUntilWeightGradient.end());
    pipeline->setAttr(attrs::kPeakLiveMicrobatches,
                      builder.getDenseI64ArrayAttr(peak));
    return success();
  }

  /// The gradient of a trainable parameter that several stages hold (tied
  /// weights): its accumulator is summed over their ranks.
  struct SharedGradient {
    std::string tensor;
    SmallVector<int64_t> ranks;
    RankedTensorType type;
  };

  static SmallVector<SharedGradient> sharedGradients(ModuleOp module) {
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
      if (!stages || stages.size() < 2 || !trainable ||
          !trainable.getValue() || !type)
        continue;
      // One chunk per stage: rank k runs stage k.
      shared.push_back(
          {("grad." + dict.getAs<StringAttr>("name").getValue()).str(),
           SmallVector<int64_t>(stages.asArrayRef()),
           llvm::cast<RankedTensorType>(type.getValue())});
    }
    return shared;
  }

  static void emitCompute(OpBuilder &builder, Location loc,
                          const sched::ComputeAction &action) {
    switch (action.kind) {
    case sched::ComputeKind::Forward:
      builder.create<ForwardOp>(loc, action.stage, action.chunk,
                                action.microbatch);
      break;
    case sched::ComputeKind::BackwardInput:
      builder.create<BackwardInputOp>(loc, action.stage, action.chunk,
                                      action.microbatch);
      break;
    case sched::ComputeKind::BackwardWeight:
      builder.create<BackwardWeightOp>(loc, action.stage, action.chunk,
                                       action.microbatch);
      break;
    case sched::ComputeKind::Backward:
      builder.create<BackwardOp>(loc, action.stage, action.chunk,
                                 action.microbatch);
      break;
    }
  }
};

} // namespace
