// The static memory plan of every rank: records derived from the rank's
// program and stage functions, planned by pipecc/MemoryPlan, reported in
// the manifest and by --memory-plan.
#include "pipecc/Compiler/MemoryPlanning.h"

#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Conversion/MessageWaits.h"

#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc;
using namespace pipecc::codegen;
using memory::BufferKind;

std::optional<MemoryPlanSettings>
codegen::memoryPlanSettingsFor(StringRef precision) {
  MemoryPlanSettings settings;
  if (precision == "fp32")
    return settings;
  if (precision != "bf16")
    return std::nullopt;
  settings.precision = "bf16";
  settings.activationElementBytes = 2;
  settings.weightCopies = true;
  return settings;
}

MemoryPlanSettings
codegen::memoryPlanSettingsFor(const RankSettings &settings) {
  // The executables' plan sizes every buffer as its type says: under
  // --precision bf16 the activations already are bf16 tensors and the f32
  // ones (losses, statistics) must keep 4 bytes, so the what-if scaling of
  // memoryPlanSettingsFor("bf16") would misplace them.
  MemoryPlanSettings planned;
  planned.precision = settings.precision;
  planned.asCompiled = true;
  planned.postReceivesEarly = settings.target.name == "cpu";
  return planned;
}

namespace {

class RecordCollector {
public:
  RecordCollector(const MemoryPlanSettings &settings, ArrayAttr parameters)
      : settings(settings), parameters(parameters) {}

  LogicalResult collect(pipeline::ProgramOp program,
                        ArrayRef<Operation *> stageFunctions);

  std::vector<memory::BufferRecord> buffers;
  std::vector<memory::ActionRecord> actions;
  size_t tableBuffers = 0;
  /// Per program action: how the message wait rule sees it, and its first
  /// record in `actions` (for the waits the step adds).
  std::vector<MessageWaitAction> messageView;
  std::vector<size_t> firstRecordOf;

private:
  struct Call {
    SmallVector<int64_t> reads, writes;
    /// Per read: which of the call's micro-batches it belongs to (a grouped
    /// weight-gradient function reads several; pipeline::kMicrobatchOffset).
    SmallVector<int64_t> readOffsets;
    /// The data inputs it reads, each with its offset.
    SmallVector<std::pair<int64_t, int64_t>> dataInputs;
  };

  int64_t add(StringRef name, BufferKind kind, int64_t bytes,
              bool perMicrobatch) {
    buffers.push_back({name.str(), kind, bytes, perMicrobatch});
    return static_cast<int64_t>(buffers.size() - 1);
  }
  /// Bytes of `type` as the plan holds it: floating-point tensors at the
  /// activation element size, others as they are.
  int64_t activationBytes(RankedTensorType type) const {
    Type element = type.getElementType();
    int64_t elementBytes = element.isF32() ? settings.activationElementBytes
                                           : (element.getIntOrFloatBitWidth() +
                                              7) / 8;
    return type.getNumElements() * elementBytes;
  }
  int64_t tensorBuffer(StringRef name, RankedTensorType type) {
    if (auto it = bufferOfTensor.find(name); it != bufferOfTensor.end())
      return it->second;
    BufferKind kind = messageTensors.contains(name) ? BufferKind::Transfer
                                                    : BufferKind::Activation;
    int64_t id = add(name, kind, activationBytes(type), true);
    bufferOfTensor[name] = id;
    return id;
  }
  bool trainable(StringRef param) const {
    for (Attribute attr : parameters) {
      auto dict = llvm::cast<DictionaryAttr>(attr);
      if (dict.getAs<StringAttr>("name").getValue() == param)
        return dict.getAs<BoolAttr>("trainable").getValue();
    }
    return false;
  }
  /// Parameters are f32 master copies (4 bytes an element).
  int64_t parameterBuffer(StringRef name, RankedTensorType type,
                          bool isTrainable) {
    if (auto it = bufferOfParam.find(name); it != bufferOfParam.end())
      return it->second;
    int64_t id = add(name, BufferKind::Weight, type.getNumElements() * 4,
                     false);
    bufferOfParam[name] = id;
    parameterElements.push_back({id, type.getNumElements()});
    if (isTrainable)
      gradientOfParam[name] =
          add(("grad." + name).str(), BufferKind::Gradient,
              type.getNumElements() * 4, false);
    return id;
  }
  LogicalResult collectFunction(func::FuncOp func);
  /// A call of stage function `callee` (by symbol).
  void addCall(int microbatch, StringRef callee, std::string label,
               ArrayRef<int64_t> extraWrites = {});

  const MemoryPlanSettings &settings;
  ArrayAttr parameters;
  llvm::StringMap<int64_t> bufferOfTensor, bufferOfInput, bufferOfParam,
      gradientOfParam;
  SmallVector<std::pair<int64_t, int64_t>> parameterElements;
  llvm::StringSet<> readTensors, messageTensors;
  SmallVector<int64_t> dataBuffers;
  llvm::StringMap<Call> calls; // by symbol
};

LogicalResult RecordCollector::collectFunction(func::FuncOp func) {
  Call call;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = llvm::cast<RankedTensorType>(func.getArgument(i).getType());
    auto offset =
        func.getArgAttrOfType<IntegerAttr>(i, pipeline::kMicrobatchOffset);
    call.readOffsets.push_back(offset ? offset.getInt() : 0);
    if (auto input = func.getArgAttrOfType<StringAttr>(i, attrs::kBindInput)) {
      auto it = bufferOfInput.find(input.getValue());
      if (it == bufferOfInput.end()) {
        int64_t id = add(input.getValue(), BufferKind::DataInput,
                         activationBytes(type), true);
        it = bufferOfInput.try_emplace(input.getValue(), id).first;
        dataBuffers.push_back(id);
      }
      call.dataInputs.push_back({it->second, call.readOffsets.back()});
      call.reads.push_back(it->second);
      continue;
    }
    if (auto param = func.getArgAttrOfType<StringAttr>(i, attrs::kBindParam)) {
      call.reads.push_back(parameterBuffer(param.getValue(), type,
                                           trainable(param.getValue())));
      continue;
    }
    auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kTensor);
    if (!name)
      return func.emitError("argument ") << i << " has no tensor name";
    // A block of several micro-batches' copies (a grouped weight
    // gradient): read for each of them, and kept side by side.
    auto group = func.getArgAttrOfType<IntegerAttr>(i, pipeline::kMicrobatchGroup);
    if (group && group.getInt() > 1) {
      FailureOr<RankedTensorType> copy = pipeline::argumentMicrobatchCopyType(
          func, i, type, group.getInt());
      if (failed(copy))
        return failure();
      int64_t id = tensorBuffer(name.getValue(), *copy);
      buffers[id].slotMultiple =
          std::max<int64_t>(buffers[id].slotMultiple, group.getInt());
      call.readOffsets.pop_back();
      for (int64_t m = 0; m < group.getInt(); ++m) {
        call.reads.push_back(id);
        call.readOffsets.push_back(m);
      }
      continue;
    }
    call.reads.push_back(tensorBuffer(name.getValue(), type));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto type = llvm::cast<RankedTensorType>(func.getResultTypes()[i]);
    auto name = func.getResultAttrOfType<StringAttr>(i, attrs::kTensor);
    if (!name)
      return func.emitError("result ") << i << " has no tensor name";
    if (auto output =
            func.getResultAttrOfType<StringAttr>(i, attrs::kGraphOutput)) {
      call.writes.push_back(add(output.getValue(), BufferKind::Output,
                                activationBytes(type), true));
      continue;
    }
    bool accumulated = false;
    auto params = func.getResultAttrOfType<ArrayAttr>(i, attrs::kParamGrad);
    if (params)
      for (auto param : params.getAsValueRange<StringAttr>()) {
        parameterBuffer(param, type, /*isTrainable=*/true);
        call.writes.push_back(gradientOfParam.find(param)->second);
        accumulated = true;
      }
    bool read = readTensors.contains(name.getValue());
    if (accumulated && accumulatesInPlace(params.size(), read))
      continue; // The function adds into the accumulator itself.
    if (accumulated && !read)
      call.writes.push_back(add(name.getValue(), BufferKind::Workspace,
                                activationBytes(type), false));
    else
      call.writes.push_back(tensorBuffer(name.getValue(), type));
  }
  calls[func.getSymName()] = std::move(call);
  return success();
}

void RecordCollector::addCall(int microbatch, StringRef callee,
                              std::string label,
                              ArrayRef<int64_t> extraWrites) {
  auto it = calls.find(callee);
  const Call *call = it != calls.end() ? &it->second : nullptr;
  // One record per micro-batch the call reads (several for a grouped
  // weight gradient), the first with what it writes.
  int64_t last = 0;
  if (call)
    for (int64_t offset : call->readOffsets)
      last = std::max(last, offset);
  for (int64_t offset = 0; offset <= last; ++offset) {
    memory::ActionRecord record;
    record.microbatch = microbatch + static_cast<int>(offset);
    record.label = offset ? label + "+" + std::to_string(offset) : label;
    if (!offset)
      record.defines.assign(extraWrites.begin(), extraWrites.end());
    if (call) {
      // The runtime loads the data inputs a function reads right before it.
      for (auto [buffer, at] : call->dataInputs)
        if (at == offset)
          record.defines.push_back(buffer);
      for (auto [buffer, at] : llvm::zip(call->reads, call->readOffsets))
        if (at == offset)
          record.uses.push_back(buffer);
      if (!offset)
        record.defines.insert(record.defines.end(), call->writes.begin(),
                              call->writes.end());
    }
    actions.push_back(std::move(record));
  }
}

LogicalResult RecordCollector::collect(pipeline::ProgramOp program,
                                       ArrayRef<Operation *> stageFunctions) {
  for (Operation *op : stageFunctions) {
    auto func = llvm::cast<func::FuncOp>(op);
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kTensor))
        readTensors.insert(name.getValue());
  }
  program.walk([&](Operation *op) {
    if (auto send = llvm::dyn_cast<pipeline::SendOp>(op)) {
      readTensors.insert(send.getTensor());
      messageTensors.insert(send.getTensor());
    }
    if (auto recv = llvm::dyn_cast<pipeline::RecvOp>(op))
      messageTensors.insert(recv.getTensor());
  });
  for (Operation *op : stageFunctions)
    if (failed(collectFunction(llvm::cast<func::FuncOp>(op))))
      return failure();

  auto mbLabel = [](StringRef what, int64_t mb) {
    return (what + "(m" + Twine(mb) + ")").str();
  };
  for (Operation &op : program.getBody().front()) {
    firstRecordOf.push_back(actions.size());
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&op)
            .Case([&](pipeline::ForwardOp f) {
              addCall(f.getMicrobatch(), f.getCallee(),
                      mbLabel("F", f.getMicrobatch()));
              return success();
            })
            .Case([&](pipeline::BackwardInputOp b) {
              addCall(b.getMicrobatch(), b.getCallee(),
                      mbLabel("B", b.getMicrobatch()));
              return success();
            })
            .Case([&](pipeline::BackwardWeightOp w) {
              // A grouped W records each of its micro-batches.
              addCall(w.getMicrobatch(), w.getCallee(),
                      mbLabel("W", w.getMicrobatch()));
              return success();
            })
            .Case([&](pipeline::BackwardOp b) {
              addCall(b.getMicrobatch(), b.getCallee(),
                      mbLabel("B", b.getMicrobatch()));
              if (std::optional<StringRef> weight = b.getWeight())
                addCall(b.getMicrobatch(), *weight,
                        mbLabel("W", b.getMicrobatch()));
              return success();
            })
            .Case([&](pipeline::SendOp s) {
              int64_t id = tensorBuffer(
                  s.getTensor(), llvm::cast<RankedTensorType>(s.getType()));
              actions.push_back({static_cast<int>(s.getMicrobatch()),
                                 {},
                                 {id},
                                 mbLabel("send " + s.getTensor().str(),
                                         s.getMicrobatch())});
              return success();
            })
            .Case([&](pipeline::RecvOp r) {
              int64_t id = tensorBuffer(
                  r.getTensor(), llvm::cast<RankedTensorType>(r.getType()));
              actions.push_back({static_cast<int>(r.getMicrobatch()),
                                 {id},
                                 {},
                                 mbLabel("recv " + r.getTensor().str(),
                                         r.getMicrobatch())});
              return success();
            })
            .Case([&](pipeline::AllReduceOp a) {
              memory::ActionRecord record;
              record.label = ("all_reduce " + a.getTensor()).str();
              for (auto [id, buffer] : llvm::enumerate(buffers))
                if (buffer.kind == BufferKind::Gradient &&
                    buffer.name == a.getTensor())
                  record.uses.push_back(id);
              actions.push_back(std::move(record));
              return success();
            })
            .Case([&](pipeline::OptimizerStepOp) {
              actions.push_back({-1, {}, {}, "optimizer_step"});
              return success();
            })
            .Default([&](Operation *other) {
              return other->emitError("the memory plan does not know '")
                     << other->getName() << "'";
            });
    if (failed(result))
      return failure();
    MessageWaitAction &view = messageView.emplace_back();
    view.kind = llvm::isa<pipeline::SendOp>(op)   ? MessageWaitAction::Send
                : llvm::isa<pipeline::RecvOp>(op) ? MessageWaitAction::Recv
                                                  : MessageWaitAction::Other;
    for (size_t r = firstRecordOf.back(); r < actions.size(); ++r) {
      // A grouped W's records cover consecutive micro-batches.
      if (r == firstRecordOf.back() || actions[r].microbatch < 0)
        view.microbatch = actions[r].microbatch;
      else
        view.microbatchCount = std::max<int64_t>(
            view.microbatchCount,
            actions[r].microbatch - view.microbatch + 1);
      for (int64_t id : actions[r].uses)
        view.reads.push_back(buffers[id].name);
      for (int64_t id : actions[r].defines)
        view.writes.push_back(buffers[id].name);
    }
  }
  firstRecordOf.push_back(actions.size());
  tableBuffers = buffers.size();

  // Memory beyond the buffer table: bf16 copies and optimizer state.
  for (auto [id, elements] : parameterElements) {
    std::string name = buffers[id].name;
    if (settings.weightCopies)
      add("bf16." + name, BufferKind::WeightCopy, elements * 2, false);
    if (gradientOfParam.count(name))
      for (int64_t copy = 0; copy < settings.optimizerStateCopies; ++copy)
        add("state" + std::to_string(copy) + "." + name,
            BufferKind::OptimizerState, elements * 4, false);
  }
  return success();
}

} // namespace

FailureOr<SmallVector<Operation *>>
codegen::stageFunctionsOf(pipeline::ProgramOp program) {
  SmallVector<Operation *> functions;
  llvm::SmallPtrSet<Operation *, 8> seen;
  WalkResult walk = program.walk([&](Operation *op) {
    SmallVector<FlatSymbolRefAttr, 2> callees;
    if (auto f = llvm::dyn_cast<pipeline::ForwardOp>(op))
      callees.push_back(f.getCalleeAttr());
    else if (auto b = llvm::dyn_cast<pipeline::BackwardInputOp>(op))
      callees.push_back(b.getCalleeAttr());
    else if (auto w = llvm::dyn_cast<pipeline::BackwardWeightOp>(op))
      callees.push_back(w.getCalleeAttr());
    else if (auto bw = llvm::dyn_cast<pipeline::BackwardOp>(op)) {
      callees.push_back(bw.getCalleeAttr());
      if (FlatSymbolRefAttr weight = bw.getWeightAttr())
        callees.push_back(weight);
    }
    for (FlatSymbolRefAttr callee : callees) {
      auto func = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          program, callee.getAttr());
      if (!func) {
        op->emitOpError("calls @")
            << callee.getValue() << ", which is not a function of the module";
        return WalkResult::interrupt();
      }
      seen.insert(func);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // In module order: the order the rank module holds them in, which fixes
  // the buffer table's order.
  for (Operation &op :
       program->getParentOfType<ModuleOp>().getBody()->getOperations())
    if (seen.contains(&op))
      functions.push_back(&op);
  if (functions.empty())
    return program.emitError("rank ")
           << program.getRank() << " runs no stage function";
  return functions;
}

namespace {
/// Adds records where the step posts a receive early and where it waits
/// for each message (MessageWaits.h), touching the message's buffer, so
/// that it lives from its post to its wait; whether there were any.
bool addMessageWaits(RecordCollector &collector, const memory::MemoryPlan &plan,
                     int64_t microbatches, bool postReceivesEarly) {
  auto slots = [&](StringRef name) -> int64_t {
    for (size_t id = 0; id < collector.tableBuffers; ++id)
      if (collector.buffers[id].name == name)
        return plan.buffers[id].slots;
    return 0;
  };
  MessagePlan messages = planMessages(collector.messageView, slots,
                                     microbatches, postReceivesEarly);
  std::vector<memory::ActionRecord> withWaits;
  bool any = false;
  auto touch = [&](size_t message, StringRef what) {
    const memory::ActionRecord &posted =
        collector.actions[collector.firstRecordOf[message]];
    memory::ActionRecord record;
    record.microbatch = posted.microbatch;
    record.uses = posted.uses;
    record.uses.insert(record.uses.end(), posted.defines.begin(),
                       posted.defines.end());
    record.label = (what + " " + posted.label).str();
    withWaits.push_back(std::move(record));
    any = true;
  };
  for (size_t at = 0; at < messages.waitsBefore.size(); ++at) {
    for (size_t message : messages.postsBefore[at])
      touch(message, "post");
    for (size_t message : messages.waitsBefore[at])
      touch(message, "wait");
    if (at + 1 < messages.waitsBefore.size())
      for (size_t r = collector.firstRecordOf[at];
           r < collector.firstRecordOf[at + 1]; ++r)
        withWaits.push_back(collector.actions[r]);
  }
  if (any)
    collector.actions = std::move(withWaits);
  return any;
}
} // namespace

FailureOr<RankMemoryPlan>
codegen::planRankMemory(pipeline::ProgramOp program,
                        ArrayRef<Operation *> stageFunctions,
                        ArrayAttr parameters, int64_t microbatches,
                        const MemoryPlanSettings &settings) {
  RecordCollector collector(settings, parameters);
  if (failed(collector.collect(program, stageFunctions)))
    return failure();
  memory::PlanOptions options;
  options.microbatches = static_cast<int>(microbatches);
  options.alignment = settings.alignment;
  memory::Result<memory::MemoryPlan> plan =
      memory::planMemory(collector.buffers, collector.actions, options);
  // A posted message holds its buffer from its post to its wait, which
  // depend on the slots (MessageWaits.h), which depend on the lifetimes:
  // more slots only move posts earlier and waits later, so the slots grow
  // to a fixed point within M rounds. The host program places the messages
  // by the final slots, so the plan must be that fixed point.
  std::vector<memory::ActionRecord> programActions = collector.actions;
  for (int64_t round = 0; plan && round <= microbatches; ++round) {
    collector.actions = programActions;
    if (!addMessageWaits(collector, *plan, microbatches,
                         settings.postReceivesEarly))
      break;
    memory::Result<memory::MemoryPlan> next =
        memory::planMemory(collector.buffers, collector.actions, options);
    bool settled =
        next && llvm::all_of(llvm::seq<size_t>(0, collector.tableBuffers),
                             [&](size_t id) {
                               return next->buffers[id].slots ==
                                      plan->buffers[id].slots;
                             });
    plan = std::move(next);
    if (settled)
      break;
    if (round == microbatches)
      return program.emitError("rank ")
             << program.getRank()
             << ": the memory plan's slots do not settle with the step's "
                "message posts and waits";
  }
  if (!plan)
    return program.emitError("rank ")
           << program.getRank() << ": " << plan.message();
  RankMemoryPlan result;
  result.rank = program.getRank();
  for (int64_t stage :
       program.getPipeline().getVirtualStagesOf(program.getRank()))
    result.stages.push_back(stage);
  result.buffers = std::move(collector.buffers);
  result.tableBuffers = collector.tableBuffers;
  result.actions = std::move(collector.actions);
  result.plan = std::move(*plan);
  return result;
}

FailureOr<std::vector<RankMemoryPlan>>
codegen::planPipelineMemory(ModuleOp pipelineModule,
                            const MemoryPlanSettings &settings) {
  auto pipelines = pipelineModule.getOps<pipeline::PipelineOp>();
  if (pipelines.empty())
    return pipelineModule.emitError(
        "no pipeline.pipeline to plan the memory of; run the schedule phase "
        "first");
  pipeline::PipelineOp pipe = *pipelines.begin();
  auto parameters =
      pipelineModule->getAttrOfType<ArrayAttr>(attrs::kParameters);
  if (!parameters)
    return pipelineModule.emitError("the module has no stage functions; run "
                                    "the partition phase first");
  std::vector<RankMemoryPlan> ranks;
  for (auto program : pipe.getBody().getOps<pipeline::ProgramOp>()) {
    FailureOr<SmallVector<Operation *>> stageFunctions =
        stageFunctionsOf(program);
    if (failed(stageFunctions))
      return failure();
    FailureOr<RankMemoryPlan> rank =
        planRankMemory(program, *stageFunctions, parameters,
                       pipe.getMicrobatches(), settings);
    if (failed(rank))
      return failure();
    ranks.push_back(std::move(*rank));
  }
  return ranks;
}

void codegen::attachMemoryPlan(ModuleOp rankModule,
                               const RankMemoryPlan &plan) {
  Builder b(rankModule.getContext());
  SmallVector<Attribute> buffers;
  for (size_t i = 0; i < plan.tableBuffers; ++i)
    buffers.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(plan.buffers[i].name)),
         b.getNamedAttr("slots",
                        b.getI64IntegerAttr(plan.plan.buffers[i].slots)),
         b.getNamedAttr("offset",
                        b.getI64IntegerAttr(plan.plan.buffers[i].offset))}));
  rankModule->setAttr(
      attrs::kMemoryPlan,
      b.getDictionaryAttr(
          {b.getNamedAttr("arena_bytes",
                          b.getI64IntegerAttr(plan.plan.arenaBytes)),
           b.getNamedAttr("buffers", b.getArrayAttr(buffers))}));
}

std::optional<TablePlan> codegen::readMemoryPlan(ModuleOp rankModule) {
  auto dict = rankModule->getAttrOfType<DictionaryAttr>(attrs::kMemoryPlan);
  if (!dict)
    return std::nullopt;
  auto arena = dict.getAs<IntegerAttr>("arena_bytes");
  auto buffers = dict.getAs<ArrayAttr>("buffers");
  if (!arena || !buffers)
    return std::nullopt;
  TablePlan plan;
  plan.arenaBytes = arena.getInt();
  for (Attribute attr : buffers) {
    auto entry = llvm::dyn_cast<DictionaryAttr>(attr);
    auto name = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    auto slots = entry ? entry.getAs<IntegerAttr>("slots") : IntegerAttr();
    auto offset = entry ? entry.getAs<IntegerAttr>("offset") : IntegerAttr();
    if (!name || !slots || !offset)
      return std::nullopt;
    plan.buffers.push_back({name.str(), slots.getInt(), offset.getInt()});
  }
  return plan;
}

namespace {

/// The report's categories: each a sum of buffer kinds.
struct Category {
  const char *key;
  const char *heading;
  std::initializer_list<BufferKind> kinds;
};
const Category kCategories[] = {
    {"weights", "weights", {BufferKind::Weight, BufferKind::WeightCopy}},
    {"gradients", "gradients", {BufferKind::Gradient}},
    {"optimizer_state", "optimizer", {BufferKind::OptimizerState}},
    {"activations", "activations", {BufferKind::Activation}},
    {"transfers", "transfers", {BufferKind::Transfer}},
    {"data", "data", {BufferKind::DataInput, BufferKind::Output}},
    {"workspace", "workspace", {BufferKind::Workspace}},
};

int64_t categoryBytes(const memory::MemoryPlan &plan,
                      const Category &category) {
  int64_t sum = 0;
  for (BufferKind kind : category.kinds)
    sum += plan.bytesOf(kind);
  return sum;
}

/// The most copies of any activation the rank keeps: its micro-batches in
/// flight.
/// The most micro-batches of one activation live at once. Its slots may be
/// more: a modulo conflict, or a grouped weight gradient that reads its
/// copies as one block (a multiple of the group).
int64_t activationsInFlight(const RankMemoryPlan &rank) {
  int64_t most = 0;
  for (auto [record, placement] :
       llvm::zip(rank.buffers, rank.plan.buffers))
    if (record.kind == BufferKind::Activation)
      most = std::max(most, placement.peakLive);
  return most;
}

} // namespace

llvm::json::Value codegen::memoryPlanToJSON(ArrayRef<RankMemoryPlan> ranks,
                                            const MemoryPlanSettings &settings) {
  llvm::json::Array perRank;
  for (const RankMemoryPlan &rank : ranks) {
    llvm::json::Object bytes;
    int64_t total = 0;
    for (const Category &category : kCategories) {
      int64_t value = categoryBytes(rank.plan, category);
      bytes[category.key] = value;
      total += value;
    }
    bytes["total"] = total;
    llvm::json::Array buffers;
    for (size_t i = 0; i < rank.buffers.size(); ++i) {
      const memory::BufferPlacement &placement = rank.plan.buffers[i];
      buffers.push_back(llvm::json::Object{
          {"name", rank.buffers[i].name},
          {"kind", memory::kindName(rank.buffers[i].kind)},
          {"bytes", rank.buffers[i].bytes},
          {"slots", placement.slots},
          {"offset", placement.offset},
          {"in_table", i < rank.tableBuffers}});
    }
    perRank.push_back(llvm::json::Object{
        {"rank", rank.rank},
        {"stages", llvm::json::Array(rank.stages)},
        {"microbatches_in_flight", activationsInFlight(rank)},
        {"bytes", std::move(bytes)},
        {"arena_bytes", rank.plan.arenaBytes},
        {"stage_workspace_bytes", rank.stageWorkspaceBytes},
        {"buffers", std::move(buffers)}});
  }
  return llvm::json::Object{
      {"precision", settings.precision},
      {"activation_element_bytes", settings.activationElementBytes},
      {"optimizer_state_copies", settings.optimizerStateCopies},
      {"alignment", settings.alignment},
      {"ranks", std::move(perRank)}};
}

void codegen::printMemoryPlan(ArrayRef<RankMemoryPlan> ranks,
                              const MemoryPlanSettings &settings,
                              StringRef schedule, int64_t microbatches,
                              llvm::raw_ostream &os) {
  // One unit for the whole table, chosen by the largest arena.
  int64_t largest = 0;
  for (const RankMemoryPlan &rank : ranks)
    largest = std::max(largest, rank.plan.arenaBytes);
  auto [unitName, unitBytes] =
      largest < (int64_t{1} << 20)   ? std::pair{"KiB", int64_t{1} << 10}
      : largest < (int64_t{16} << 30) ? std::pair{"MiB", int64_t{1} << 20}
                                      : std::pair{"GiB", int64_t{1} << 30};
  auto mib = [unitBytes = unitBytes](int64_t bytes) {
    return llvm::formatv("{0:F1}", static_cast<double>(bytes) / unitBytes)
        .str();
  };
  os << "memory plan: " << ranks.size() << " ranks, schedule " << schedule
     << ", " << microbatches << " micro-batches, " << settings.precision;
  if (settings.asCompiled)
    os << " as compiled (each buffer at its type's size; weights f32";
  else
    os << " (activations " << settings.activationElementBytes
       << " bytes an element; weights f32";
  os << (settings.weightCopies ? " + a bf16 copy" : "") << "; optimizer state "
     << settings.optimizerStateCopies << " f32 copies), " << unitName << "\n";
  os << llvm::formatv("{0,4} {1,6} {2,9}", "rank", "stages", "in-flight");
  for (const Category &category : kCategories)
    os << llvm::formatv(" {0,11}", category.heading);
  os << llvm::formatv(" {0,11} {1,11}\n", "total", "arena");
  for (const RankMemoryPlan &rank : ranks) {
    std::string stages;
    llvm::raw_string_ostream stagesOs(stages);
    llvm::interleave(rank.stages, stagesOs, ",");
    os << llvm::formatv("{0,4} {1,6} {2,9}", rank.rank, stages,
                        activationsInFlight(rank));
    int64_t total = 0;
    for (const Category &category : kCategories) {
      int64_t value = categoryBytes(rank.plan, category);
      total += value;
      os << llvm::formatv(" {0,11}", mib(value));
    }
    os << llvm::formatv(" {0,11} {1,11}\n", mib(total),
                        mib(rank.plan.arenaBytes));
  }
}
