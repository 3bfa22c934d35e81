//===- LowerRankProgram.cpp - The host program of a rank ------------------===//
//
// Host code of a rank executable, in the LLVM dialect: the step function that
// runs the rank's pipeline program through the runtime's C API, the buffer
// table and program constant the runtime reads, and main(). The ABI (version,
// buffer roles, element types, flags) is the runtime's C header's.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/MessageWaits.h"
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Runtime/Runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <set>

namespace pipecc {
#define GEN_PASS_DEF_LOWERRANKPROGRAM
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;

namespace {

/// One entry of a rank's buffer table (pipecc_rt_buffer_desc).
struct Buffer {
  std::string name;
  pipecc_rt_buffer_role role;
  pipecc_rt_dtype dtype;
  bool perMicrobatch = false;
  SmallVector<int64_t> shape;
  int64_t bytes = 0;
  int64_t parameterId = -1;
  int64_t numClasses = 0;
};

/// What the program constant says beyond the buffers and the step.
struct RankSettings {
  int32_t rank = 0;
  int32_t numRanks = 1;
  int32_t microbatches = 1;
  int64_t microbatchSize = 0;
  double learningRate = 0.1;
  bool inference = false;
  bool countedMeanLoss = false;
  std::string target;
};

/// A stage function as the host calls it: one buffer per argument, then one
/// per result.
struct StageCall {
  std::string symbol;
  /// The data inputs it reads: loaded for the micro-batch before the call.
  SmallVector<int64_t> dataInputs;
  SmallVector<int64_t> argBuffers;
  /// Per data input and per argument: which of the call's micro-batches it
  /// belongs to, counted from the action's first (a grouped weight-gradient
  /// function reads several; pipeline::kMicrobatchOffset).
  SmallVector<int64_t> dataInputOffsets, argOffsets;
  /// The largest group an argument reads as one block of copies
  /// (pipeline::kMicrobatchGroup; 1 for none): each call must start at a
  /// multiple of it, or the block would wrap around the buffer's copies.
  int64_t jointGroup = 1;
  SmallVector<int64_t> resultBuffers;
  /// For each result: the gradient buffers it is added into (one value can
  /// be the gradient of several parameters).
  SmallVector<SmallVector<int64_t, 1>> accumulateInto;
  /// Gradient accumulators the function adds into itself; the step checks
  /// each once its last contribution is in.
  SmallVector<int64_t, 4> checkGradients;
  int lossResult = -1;
  /// The label count of a counted-mean loss (the loss result is then a sum).
  int lossCountResult = -1;
};

class RankHostBuilder {
public:
  RankHostBuilder(ModuleOp module, const RankSettings &settings,
                  const llvm::StringMap<int32_t> &tags)
      : module(module), ctx(module.getContext()), b(ctx),
        loc(module.getLoc()), settings(settings), tags(tags) {
    ptrType = LLVM::LLVMPointerType::get(ctx);
    i64 = IntegerType::get(ctx, 64);
    i32 = IntegerType::get(ctx, 32);
    f32 = Float32Type::get(ctx);
    voidType = LLVM::LLVMVoidType::get(ctx);
  }

  LogicalResult build(pipeline::ProgramOp program,
                      ArrayRef<LLVM::LLVMFuncOp> stageFunctions,
                      ArrayAttr parameters);

private:
  FailureOr<pipecc_rt_dtype> dtypeOf(Type element, Location where);
  FailureOr<int64_t> addBuffer(StringRef name, pipecc_rt_buffer_role role,
                               RankedTensorType type, bool perMicrobatch,
                               Location where);
  FailureOr<int64_t> tensorBuffer(StringRef name, RankedTensorType type,
                                  Location where);
  /// The buffer of parameter `name`, made on first use together with its
  /// gradient accumulator when trainable.
  FailureOr<int64_t> parameterBuffers(StringRef name, RankedTensorType type,
                                      bool trainable, Location where);
  LogicalResult collect(LLVM::LLVMFuncOp func, ArrayAttr parameters);
  void declareRuntime();
  LLVM::LLVMFuncOp declare(StringRef name, Type result,
                           ArrayRef<Type> params);
  Value constI64(OpBuilder &ob, int64_t v) {
    return ob.create<LLVM::ConstantOp>(loc, i64, ob.getI64IntegerAttr(v));
  }
  Value constI32(OpBuilder &ob, int32_t v) {
    return ob.create<LLVM::ConstantOp>(loc, i32, ob.getI32IntegerAttr(v));
  }
  Value call(OpBuilder &ob, StringRef callee, ArrayRef<Value> args);
  /// In-place gradient accumulators by the action adding into them last
  /// in the step: the runtime checks them for inf and nan there.
  DenseMap<Operation *, SmallVector<int64_t>>
  lastGradientContributions(pipeline::ProgramOp program);
  LogicalResult buildStep(pipeline::ProgramOp program);
  LogicalResult emitStageCall(OpBuilder &ob, Value context,
                              const StageCall &stage, int64_t microbatch);
  LogicalResult emitAllReduce(OpBuilder &ob, Value context,
                              pipeline::AllReduceOp op);
  /// Where the step posts and waits for each message of the program
  /// (MessageWaits.h; receives posted early on the CPU target only).
  MessagePlan messagePlan(ArrayRef<Operation *> actions);
  /// Copies of tensor `name`'s buffer in the static memory plan (0: one
  /// per micro-batch, also without a plan).
  int64_t plannedSlots(StringRef name);
  void buildProgramConstant();
  LogicalResult readMemoryPlan();

  ModuleOp module;
  MLIRContext *ctx;
  OpBuilder b;
  Location loc;
  const RankSettings &settings;
  const llvm::StringMap<int32_t> &tags;
  Type ptrType, i64, i32, f32, voidType;

  SmallVector<Buffer> buffers;
  llvm::StringMap<int64_t> bufferOfTensor;
  llvm::StringMap<int64_t> bufferOfInput;
  /// Tensor names some action reads after the function producing them:
  /// arguments of the rank's functions and tensors it sends.
  llvm::StringSet<> readTensors;
  llvm::StringMap<int64_t> bufferOfParam;
  llvm::StringMap<int64_t> gradientOfParam;
  SmallVector<int64_t> dataBuffers;
  /// Data inputs a loss indexes with, and the label it ignores: checked
  /// after every load, since an out-of-range id would read past the logits.
  llvm::DenseMap<int64_t, std::optional<int64_t>> classIdChecks;
  llvm::StringMap<StageCall> stageCalls; // by symbol
  /// From the static memory plan, by buffer id; empty without one.
  struct Placement {
    int64_t slots, offset;
  };
  SmallVector<Placement> placement;
  int64_t arenaBytes = 0;
};

FailureOr<pipecc_rt_dtype> RankHostBuilder::dtypeOf(Type element,
                                                    Location where) {
  if (element.isF32())
    return PIPECC_RT_F32;
  if (element.isBF16())
    return PIPECC_RT_BF16;
  if (element.isInteger(64))
    return PIPECC_RT_I64;
  if (element.isInteger(32))
    return PIPECC_RT_I32;
  if (element.isInteger(1))
    return PIPECC_RT_BOOL;
  return emitError(where) << "the runtime has no buffers of element type "
                          << element;
}

FailureOr<int64_t> RankHostBuilder::addBuffer(StringRef name,
                                              pipecc_rt_buffer_role role,
                                              RankedTensorType type,
                                              bool perMicrobatch,
                                              Location where) {
  FailureOr<pipecc_rt_dtype> dtype = dtypeOf(type.getElementType(), where);
  if (failed(dtype))
    return failure();
  Buffer buffer;
  buffer.name = name.str();
  buffer.role = role;
  buffer.dtype = *dtype;
  buffer.perMicrobatch = perMicrobatch;
  buffer.shape.assign(type.getShape().begin(), type.getShape().end());
  int64_t elementBytes = *dtype == PIPECC_RT_I64    ? 8
                         : *dtype == PIPECC_RT_BF16 ? 2
                         : *dtype == PIPECC_RT_BOOL ? 1
                                                    : 4;
  buffer.bytes = type.getNumElements() * elementBytes;
  buffers.push_back(std::move(buffer));
  return static_cast<int64_t>(buffers.size() - 1);
}

FailureOr<int64_t> RankHostBuilder::tensorBuffer(StringRef name,
                                                 RankedTensorType type,
                                                 Location where) {
  if (auto it = bufferOfTensor.find(name); it != bufferOfTensor.end())
    return it->second;
  FailureOr<int64_t> id =
      addBuffer(name, PIPECC_RT_ROLE_ACTIVATION, type, /*perMicrobatch=*/true,
                where);
  if (succeeded(id))
    bufferOfTensor[name] = *id;
  return id;
}

FailureOr<int64_t> RankHostBuilder::parameterBuffers(StringRef name,
                                                     RankedTensorType type,
                                                     bool trainable,
                                                     Location where) {
  if (auto it = bufferOfParam.find(name); it != bufferOfParam.end())
    return it->second;
  if (!type.getElementType().isF32())
    return emitError(where)
           << "parameter '" << name << "' is " << type.getElementType()
           << "; the runtime holds f32 parameters only";
  FailureOr<int64_t> id = addBuffer(name, PIPECC_RT_ROLE_PARAMETER, type,
                                    /*perMicrobatch=*/false, where);
  if (failed(id))
    return failure();
  bufferOfParam[name] = *id;
  if (trainable) {
    FailureOr<int64_t> grad = addBuffer(("grad." + name).str(),
                                        PIPECC_RT_ROLE_GRADIENT, type, false,
                                        where);
    if (failed(grad))
      return failure();
    buffers[*grad].parameterId = *id;
    gradientOfParam[name] = *grad;
  }
  return *id;
}

/// The bindings pipecc-record-stage-abi wrote on a stage function.
struct StageAbi {
  StringAttr kind;
  SmallVector<DictionaryAttr> args, results;

  static FailureOr<StageAbi> read(LLVM::LLVMFuncOp func) {
    auto abi = func->getAttrOfType<DictionaryAttr>(attrs::kStageAbi);
    StageAbi result;
    auto bindings = [&](StringRef key, SmallVector<DictionaryAttr> &out) {
      auto list = abi.getAs<ArrayAttr>(key);
      if (!list)
        return false;
      for (Attribute entry : list) {
        auto dict = llvm::dyn_cast<DictionaryAttr>(entry);
        if (!dict || !dict.getAs<TypeAttr>(attrs::kAbiType) ||
            !llvm::isa<RankedTensorType>(
                dict.getAs<TypeAttr>(attrs::kAbiType).getValue()))
          return false;
        out.push_back(dict);
      }
      return true;
    };
    result.kind = abi.getAs<StringAttr>(attrs::kAbiKind);
    if (!result.kind || !bindings(attrs::kAbiArgs, result.args) ||
        !bindings(attrs::kAbiResults, result.results))
      return func.emitError("malformed '")
             << attrs::kStageAbi << "': expected {" << attrs::kAbiKind
             << " = string, " << attrs::kAbiArgs << " = [...], "
             << attrs::kAbiResults
             << " = [...]} with a ranked tensor type per binding";
    return result;
  }
};

RankedTensorType bindingType(DictionaryAttr binding) {
  return llvm::cast<RankedTensorType>(
      binding.getAs<TypeAttr>(attrs::kAbiType).getValue());
}

LogicalResult RankHostBuilder::collect(LLVM::LLVMFuncOp func,
                                       ArrayAttr parameters) {
  FailureOr<StageAbi> abi = StageAbi::read(func);
  if (failed(abi))
    return failure();
  StageCall stage;
  stage.symbol = func.getSymName().str();
  auto trainable = [&](StringRef param) {
    for (Attribute attr : parameters) {
      auto dict = llvm::cast<DictionaryAttr>(attr);
      if (dict.getAs<StringAttr>("name").getValue() == param)
        return dict.getAs<BoolAttr>("trainable").getValue();
    }
    return false;
  };
  Location where = func.getLoc();
  for (auto [i, binding] : llvm::enumerate(abi->args)) {
    RankedTensorType type = bindingType(binding);
    auto offsetAttr = binding.getAs<IntegerAttr>(pipeline::kMicrobatchOffset);
    int64_t offset = offsetAttr ? offsetAttr.getInt() : 0;
    stage.argOffsets.push_back(offset);
    if (auto input = binding.getAs<StringAttr>(attrs::kBindInput)) {
      auto it = bufferOfInput.find(input.getValue());
      if (it == bufferOfInput.end()) {
        FailureOr<int64_t> id =
            addBuffer(input.getValue(), PIPECC_RT_ROLE_DATA_INPUT, type,
                      /*perMicrobatch=*/true, where);
        if (failed(id))
          return failure();
        // Class ids for --synthetic and the range check after each load.
        if (auto classes = binding.getAs<IntegerAttr>(attrs::kAbiNumClasses)) {
          buffers[*id].numClasses = classes.getInt();
          std::optional<int64_t> ignore;
          if (auto ignoreIndex =
                  binding.getAs<IntegerAttr>(attrs::kAbiIgnoreIndex))
            ignore = ignoreIndex.getInt();
          classIdChecks[*id] = ignore;
        }
        it = bufferOfInput.try_emplace(input.getValue(), *id).first;
        dataBuffers.push_back(*id);
      }
      stage.dataInputs.push_back(it->second);
      stage.dataInputOffsets.push_back(offset);
      stage.argBuffers.push_back(it->second);
      continue;
    }
    if (auto param = binding.getAs<StringAttr>(attrs::kBindParam)) {
      FailureOr<int64_t> id = parameterBuffers(
          param.getValue(), type, trainable(param.getValue()), where);
      if (failed(id))
        return failure();
      stage.argBuffers.push_back(*id);
      continue;
    }
    auto name = binding.getAs<StringAttr>(attrs::kTensor);
    if (!name)
      return func.emitError("argument ") << i << " has no tensor name";
    // A block of several micro-batches' copies: the buffer holds one.
    if (auto group = binding.getAs<IntegerAttr>(pipeline::kMicrobatchGroup)) {
      FailureOr<RankedTensorType> copy = pipeline::argumentMicrobatchCopyType(
          func, i, type, group.getInt());
      if (failed(copy))
        return failure();
      type = *copy;
      stage.jointGroup = std::max(stage.jointGroup, group.getInt());
      // They must lie side by side: a multiple of the group's copies (or
      // one per micro-batch), one copy apart.
      int64_t slots = plannedSlots(name.getValue());
      if (slots > 0 && slots < settings.microbatches &&
          slots % group.getInt() != 0)
        return func.emitError("argument ")
               << i << " reads " << group.getInt()
               << " micro-batches of '" << name.getValue()
               << "' as one block, but the memory plan keeps " << slots
               << " copies of it";
    }
    FailureOr<int64_t> id = tensorBuffer(name.getValue(), type, where);
    if (failed(id))
      return failure();
    stage.argBuffers.push_back(*id);
  }
  for (auto [i, binding] : llvm::enumerate(abi->results)) {
    RankedTensorType type = bindingType(binding);
    auto name = binding.getAs<StringAttr>(attrs::kTensor);
    if (!name)
      return func.emitError("result ") << i << " has no tensor name";
    if (auto output = binding.getAs<StringAttr>(attrs::kGraphOutput)) {
      // A graph output of an inference program: the runtime writes it.
      FailureOr<int64_t> id =
          addBuffer(output.getValue(), PIPECC_RT_ROLE_OUTPUT, type,
                    /*perMicrobatch=*/true, where);
      if (failed(id))
        return failure();
      stage.resultBuffers.push_back(*id);
      stage.accumulateInto.emplace_back();
      continue;
    }
    SmallVector<int64_t, 1> accumulate;
    if (auto params = binding.getAs<ArrayAttr>(attrs::kParamGrad))
      for (auto param : params.getAsValueRange<StringAttr>()) {
        // The gradient of a parameter no function of this rank reads
        // still needs the parameter and its accumulator.
        if (failed(parameterBuffers(param, type, /*trainable=*/true, where)))
          return failure();
        auto grad = gradientOfParam.find(param);
        accumulate.push_back(grad->second);
      }
    FailureOr<int64_t> id;
    if (binding.get(attrs::kAbiAccumulate)) {
      // The function adds into the accumulator itself (one parameter, see
      // pipecc::accumulatesInPlace): its out-param is the accumulator.
      if (accumulate.size() != 1 || readTensors.contains(name.getValue()))
        return func.emitError("result ")
               << i << " accumulates in place but is not the unread "
               << "gradient of exactly one parameter";
      stage.resultBuffers.push_back(accumulate.front());
      stage.accumulateInto.emplace_back();
      stage.checkGradients.push_back(accumulate.front());
      continue;
    }
    if (!accumulate.empty() && !readTensors.contains(name.getValue()))
      // Only added into the accumulators: one scratch copy suffices.
      id = addBuffer(name.getValue(), PIPECC_RT_ROLE_SCRATCH, type, false,
                     where);
    else
      id = tensorBuffer(name.getValue(), type, where);
    if (failed(id))
      return failure();
    stage.resultBuffers.push_back(*id);
    stage.accumulateInto.push_back(std::move(accumulate));
    if (binding.get(attrs::kLoss))
      stage.lossResult = i;
    if (binding.get(attrs::kLossCount))
      stage.lossCountResult = i;
  }
  stageCalls[stage.symbol] = std::move(stage);
  return success();
}

LLVM::LLVMFuncOp RankHostBuilder::declare(StringRef name, Type result,
                                          ArrayRef<Type> params) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  return b.create<LLVM::LLVMFuncOp>(
      loc, name, LLVM::LLVMFunctionType::get(result, params));
}

void RankHostBuilder::declareRuntime() {
  declare("pipecc_rt_buffer_microbatch", ptrType, {ptrType, i64, i64});
  declare("pipecc_rt_load_microbatch", voidType, {ptrType, i64, i64});
  declare("pipecc_rt_check_class_ids", voidType,
          {ptrType, i64, i64, i64, i32, i64});
  declare("pipecc_rt_isend", i64, {ptrType, i64, i64, i32, i32});
  declare("pipecc_rt_irecv", i64, {ptrType, i64, i64, i32, i32});
  declare("pipecc_rt_wait", voidType, {ptrType, i64});
  declare("pipecc_rt_accumulate_gradient", voidType,
          {ptrType, i64, i64, ptrType});
  declare("pipecc_rt_check_gradient", voidType, {ptrType, i64});
  declare("pipecc_rt_report_loss_at", voidType, {ptrType, i64, ptrType});
  declare("pipecc_rt_report_loss_count_at", voidType, {ptrType, i64, ptrType});
  declare("pipecc_rt_allreduce_sum_f32", voidType,
          {ptrType, ptrType, i64, ptrType, i32});
  declare("pipecc_rt_trace_begin", voidType, {ptrType, i32, i64, i64, i64});
  declare("pipecc_rt_trace_end", voidType, {ptrType});
  declare("pipecc_rt_trace_microbatches", voidType, {ptrType, i64});
  declare("pipecc_rt_main", i32, {i32, ptrType, ptrType});
}

Value RankHostBuilder::call(OpBuilder &ob, StringRef callee,
                            ArrayRef<Value> args) {
  auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(callee);
  auto op = ob.create<LLVM::CallOp>(loc, func, args);
  return op.getNumResults() ? op.getResult() : Value();
}

LogicalResult RankHostBuilder::emitStageCall(OpBuilder &ob, Value context,
                                             const StageCall &stage,
                                             int64_t microbatch) {
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(stage.symbol);
  if (!callee)
    return module.emitError("lowered stage function '")
           << stage.symbol << "' is missing";
  size_t expected = stage.argBuffers.size() + stage.resultBuffers.size();
  if (callee.getNumArguments() != expected)
    return callee.emitError("expected ")
           << expected << " pointer arguments (bare-pointer memrefs: inputs, "
           << "then outputs), found " << callee.getNumArguments();
  Value mb = constI64(ob, microbatch);
  auto pointer = [&](int64_t buffer, int64_t offset) {
    return call(ob, "pipecc_rt_buffer_microbatch",
                {context, constI64(ob, buffer),
                 offset ? constI64(ob, microbatch + offset) : mb});
  };
  SmallVector<Value> operands;
  for (auto [buffer, offset] : llvm::zip(stage.argBuffers, stage.argOffsets))
    operands.push_back(pointer(buffer, offset));
  SmallVector<Value> results;
  for (int64_t buffer : stage.resultBuffers)
    results.push_back(pointer(buffer, 0));
  operands.append(results);
  ob.create<LLVM::CallOp>(loc, callee, operands);
  for (auto [index, targets] : llvm::enumerate(stage.accumulateInto))
    for (int64_t target : targets)
      // The runtime checks each micro-batch's gradient as it adds it.
      call(ob, "pipecc_rt_accumulate_gradient",
           {context, constI64(ob, target), mb, results[index]});
  // The runtime reads the values where the target keeps them (device
  // memory on CUDA); host code never dereferences a buffer.
  if (stage.lossResult >= 0)
    call(ob, "pipecc_rt_report_loss_at",
         {context, mb, results[stage.lossResult]});
  if (stage.lossCountResult >= 0)
    call(ob, "pipecc_rt_report_loss_count_at",
         {context, mb, results[stage.lossCountResult]});
  return success();
}

/// Sums a gradient accumulator over the ranks holding its parameter; the
/// runtime adds in rank order and broadcasts, so every copy gets the same
/// bits.
LogicalResult RankHostBuilder::emitAllReduce(OpBuilder &ob, Value context,
                                             pipeline::AllReduceOp op) {
  int64_t buffer = -1;
  for (auto [id, candidate] : llvm::enumerate(buffers))
    if (candidate.role == PIPECC_RT_ROLE_GRADIENT &&
        candidate.name == op.getTensor())
      buffer = id;
  if (buffer < 0)
    return op.emitOpError("names '")
           << op.getTensor()
           << "', which is not a parameter gradient of this rank";
  auto type = llvm::cast<RankedTensorType>(op.getType());
  if (type.getNumElements() * 4 != buffers[buffer].bytes)
    return op.emitOpError("has type ")
           << type << ", which does not match gradient buffer '"
           << op.getTensor() << "'";
  std::string symbol = "pipecc_group_" + std::to_string(buffer);
  if (!module.lookupSymbol(symbol)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<int32_t> ranks(op.getGroup().begin(), op.getGroup().end());
    auto arrayType = LLVM::LLVMArrayType::get(i32, ranks.size());
    b.create<LLVM::GlobalOp>(
        loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal, symbol,
        DenseElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(ranks.size())}, i32),
            ArrayRef<int32_t>(ranks)));
  }
  Value data = call(ob, "pipecc_rt_buffer_microbatch",
                    {context, constI64(ob, buffer), constI64(ob, 0)});
  Value group = ob.create<LLVM::AddressOfOp>(loc, ptrType, symbol);
  call(ob, "pipecc_rt_allreduce_sum_f32",
       {context, data, constI64(ob, type.getNumElements()), group,
        constI32(ob, static_cast<int32_t>(op.getGroup().size()))});
  return success();
}

/// A compute action as --trace records it (pipecc_rt_trace_begin's
/// arguments).
struct TracedCompute {
  pipecc_rt_trace_kind kind;
  int64_t virtualStage, chunk, microbatch;
  /// Micro-batches from `microbatch` it runs (a grouped W: several).
  int64_t microbatches = 1;
};

/// The trace record of `action`, or nothing for an action that is
/// not compute (the runtime times messages, all-reduces and the optimizer
/// itself).
std::optional<TracedCompute> tracedCompute(Operation *action) {
  auto traced = [&](pipecc_rt_trace_kind kind, auto op) {
    return std::optional<TracedCompute>(
        TracedCompute{kind, static_cast<int64_t>(op.getVirtualStage()),
                      static_cast<int64_t>(op.getChunk()),
                      static_cast<int64_t>(op.getMicrobatch())});
  };
  return llvm::TypeSwitch<Operation *, std::optional<TracedCompute>>(action)
      .Case([&](pipeline::ForwardOp op) {
        return traced(PIPECC_RT_TRACE_FORWARD, op);
      })
      .Case([&](pipeline::BackwardInputOp op) {
        return traced(PIPECC_RT_TRACE_BACKWARD_INPUT, op);
      })
      .Case([&](pipeline::BackwardWeightOp op) {
        std::optional<TracedCompute> record =
            traced(PIPECC_RT_TRACE_BACKWARD_WEIGHT, op);
        record->microbatches = op.getCount();
        return record;
      })
      .Case([&](pipeline::BackwardOp op) {
        return traced(PIPECC_RT_TRACE_BACKWARD, op);
      })
      .Default([](Operation *) { return std::nullopt; });
}

DenseMap<Operation *, SmallVector<int64_t>>
RankHostBuilder::lastGradientContributions(pipeline::ProgramOp program) {
  DenseMap<int64_t, Operation *> last;
  for (Operation &action : program.getBody().front()) {
    SmallVector<StringRef, 2> callees;
    llvm::TypeSwitch<Operation *>(&action)
        .Case<pipeline::ForwardOp, pipeline::BackwardInputOp,
              pipeline::BackwardWeightOp>(
            [&](auto op) { callees.push_back(op.getCallee()); })
        .Case([&](pipeline::BackwardOp op) {
          callees.push_back(op.getCallee());
          if (std::optional<StringRef> weight = op.getWeight())
            callees.push_back(*weight);
        });
    for (StringRef callee : callees)
      if (auto it = stageCalls.find(callee); it != stageCalls.end())
        for (int64_t gradient : it->second.checkGradients)
          last[gradient] = &action;
  }
  DenseMap<Operation *, SmallVector<int64_t>> checks;
  for (auto [gradient, action] : last)
    checks[action].push_back(gradient);
  for (auto &entry : checks)
    llvm::sort(entry.second);
  return checks;
}

int64_t RankHostBuilder::plannedSlots(StringRef name) {
  auto plan = module->getAttrOfType<DictionaryAttr>(attrs::kMemoryPlan);
  auto entries = plan ? plan.getAs<ArrayAttr>("buffers") : ArrayAttr();
  if (!entries)
    return 0;
  for (Attribute attr : entries) {
    auto entry = llvm::dyn_cast<DictionaryAttr>(attr);
    auto entryName = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    auto slots = entry ? entry.getAs<IntegerAttr>("slots") : IntegerAttr();
    if (entryName && slots && entryName.getValue() == name)
      return slots.getInt();
  }
  return 0;
}

MessagePlan RankHostBuilder::messagePlan(ArrayRef<Operation *> actions) {
  std::vector<MessageWaitAction> described;
  for (Operation *action : actions) {
    MessageWaitAction &d = described.emplace_back();
    auto touchesCall = [&](StringRef callee) {
      auto it = stageCalls.find(callee);
      if (it == stageCalls.end())
        return; // reported when the step calls it
      for (int64_t buffer : it->second.argBuffers)
        d.reads.push_back(buffers[buffer].name);
      for (int64_t buffer : it->second.resultBuffers)
        d.writes.push_back(buffers[buffer].name);
    };
    llvm::TypeSwitch<Operation *>(action)
        .Case([&](pipeline::ForwardOp op) {
          d.microbatch = op.getMicrobatch();
          touchesCall(op.getCallee());
        })
        .Case([&](pipeline::BackwardInputOp op) {
          d.microbatch = op.getMicrobatch();
          touchesCall(op.getCallee());
        })
        .Case([&](pipeline::BackwardWeightOp op) {
          d.microbatch = op.getMicrobatch();
          d.microbatchCount = op.getCount();
          touchesCall(op.getCallee());
        })
        .Case([&](pipeline::BackwardOp op) {
          d.microbatch = op.getMicrobatch();
          touchesCall(op.getCallee());
          if (std::optional<StringRef> weight = op.getWeight())
            touchesCall(*weight);
        })
        .Case([&](pipeline::SendOp op) {
          d.kind = MessageWaitAction::Send;
          d.microbatch = op.getMicrobatch();
          d.reads.push_back(op.getTensor().str());
        })
        .Case([&](pipeline::RecvOp op) {
          d.kind = MessageWaitAction::Recv;
          d.microbatch = op.getMicrobatch();
          d.writes.push_back(op.getTensor().str());
        });
  }
  return planMessages(
      described, [&](StringRef name) { return plannedSlots(name); },
      settings.microbatches, /*postReceivesEarly=*/settings.target == "cpu");
}

LogicalResult RankHostBuilder::buildStep(pipeline::ProgramOp program) {
  b.setInsertionPointToEnd(module.getBody());
  auto step = b.create<LLVM::LLVMFuncOp>(
      loc, "pipecc_step", LLVM::LLVMFunctionType::get(voidType, {ptrType}));
  Block *entry = step.addEntryBlock(b);
  OpBuilder ob = OpBuilder::atBlockEnd(entry);
  Value context = entry->getArgument(0);
  // A compute action calls the stage function it names; the first and the
  // last virtual stage may share a rank (a V), so each call loads the data
  // inputs its own function reads.
  auto runStage = [&](Operation *action, StringRef callee, int64_t mb) {
    auto it = stageCalls.find(callee);
    if (it == stageCalls.end())
      return action->emitError("rank has no stage function @") << callee,
             failure();
    const StageCall &call = it->second;
    if (mb % call.jointGroup != 0)
      return action->emitError("calls @")
             << callee << " on micro-batch " << mb
             << ", but it reads groups of " << call.jointGroup
             << " micro-batches as one block, which must start at a "
                "multiple of that",
             failure();
    for (auto [buffer, offset] :
         llvm::zip(call.dataInputs, call.dataInputOffsets)) {
      this->call(ob, "pipecc_rt_load_microbatch",
                 {context, constI64(ob, buffer), constI64(ob, mb + offset)});
      auto check = classIdChecks.find(buffer);
      if (check == classIdChecks.end())
        continue;
      this->call(ob, "pipecc_rt_check_class_ids",
                 {context, constI64(ob, buffer), constI64(ob, mb + offset),
                  constI64(ob, buffers[buffer].numClasses),
                  constI32(ob, check->second ? 1 : 0),
                  constI64(ob, check->second.value_or(0))});
    }
    return emitStageCall(ob, context, call, mb);
  };
  // Sends are posted where the program has them, receives (on the CPU
  // target) as soon as their copy is free, and both waited for where their
  // buffer is next used (MessageWaits.h): the handle of each posted
  // message, by action index.
  SmallVector<Operation *> actions = llvm::to_vector(llvm::map_range(
      program.getBody().front(), [](Operation &op) { return &op; }));
  MessagePlan messages = messagePlan(actions);
  DenseMap<size_t, Value> handles;
  size_t actionIndex = 0;
  auto transfer = [&](Operation *action, StringRef callee, StringRef tensor,
                      int64_t peer, int64_t mb, Type type,
                      size_t index) -> LogicalResult {
    FailureOr<int64_t> buffer =
        tensorBuffer(tensor, llvm::cast<RankedTensorType>(type),
                     action->getLoc());
    if (failed(buffer))
      return failure();
    auto tag = tags.find(tensor);
    if (tag == tags.end())
      return action->emitError("no message tag for tensor '") << tensor << "'";
    handles[index] = call(ob, callee,
                          {context, constI64(ob, *buffer), constI64(ob, mb),
                           constI32(ob, static_cast<int32_t>(peer)),
                           constI32(ob, tag->second)});
    return success();
  };
  auto postRecv = [&](pipeline::RecvOp op, size_t index) {
    return transfer(op, "pipecc_rt_irecv", op.getTensor(), op.getPeer(),
                    op.getMicrobatch(), op.getType(), index);
  };
  // Before action `at`: the receives posted there, then the waits.
  auto messagesBefore = [&](size_t at) -> LogicalResult {
    for (size_t message : messages.postsBefore[at])
      if (failed(postRecv(llvm::cast<pipeline::RecvOp>(actions[message]),
                          message)))
        return failure();
    for (size_t message : messages.waitsBefore[at])
      call(ob, "pipecc_rt_wait", {context, handles.lookup(message)});
    return success();
  };
  DenseMap<Operation *, SmallVector<int64_t>> gradientChecks =
      lastGradientContributions(program);
  for (Operation &action : program.getBody().front()) {
    if (failed(messagesBefore(actionIndex)))
      return failure();
    std::optional<TracedCompute> traced =
        tracedCompute(&action);
    if (traced)
      call(ob, "pipecc_rt_trace_begin",
           {context, constI32(ob, traced->kind),
            constI64(ob, traced->virtualStage), constI64(ob, traced->chunk),
            constI64(ob, traced->microbatch)});
    if (traced && traced->microbatches > 1)
      call(ob, "pipecc_rt_trace_microbatches",
           {context, constI64(ob, traced->microbatches)});
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(&action)
            .Case([&](pipeline::ForwardOp op) {
              return runStage(op, op.getCallee(), op.getMicrobatch());
            })
            .Case([&](pipeline::BackwardInputOp op) {
              return runStage(op, op.getCallee(), op.getMicrobatch());
            })
            .Case([&](pipeline::BackwardWeightOp op) {
              return runStage(op, op.getCallee(), op.getMicrobatch());
            })
            .Case([&](pipeline::BackwardOp op) {
              if (failed(runStage(op, op.getCallee(), op.getMicrobatch())))
                return failure();
              if (std::optional<StringRef> weight = op.getWeight())
                return runStage(op, *weight, op.getMicrobatch());
              return success();
            })
            .Case([&](pipeline::SendOp op) {
              return transfer(op, "pipecc_rt_isend", op.getTensor(),
                              op.getPeer(), op.getMicrobatch(), op.getType(),
                              actionIndex);
            })
            // Posted by messagesBefore, at or before this point.
            .Case([&](pipeline::RecvOp) { return success(); })
            .Case([&](pipeline::AllReduceOp op) {
              return emitAllReduce(ob, context, op);
            })
            // The runtime applies the optimizer after each step.
            .Case([&](pipeline::OptimizerStepOp) { return success(); })
            .Default([&](Operation *op) {
              return op->emitError("the host program cannot run '")
                     << op->getName() << "' yet";
            });
    if (failed(result))
      return failure();
    if (traced)
      call(ob, "pipecc_rt_trace_end", {context});
    for (int64_t gradient : gradientChecks.lookup(&action))
      call(ob, "pipecc_rt_check_gradient", {context, constI64(ob, gradient)});
    ++actionIndex;
  }
  if (failed(messagesBefore(actionIndex)))
    return failure();
  ob.create<LLVM::ReturnOp>(loc, ValueRange());
  return success();
}

void RankHostBuilder::buildProgramConstant() {
  b.setInsertionPointToEnd(module.getBody());
  auto i8 = IntegerType::get(ctx, 8);
  std::string targetText = settings.target;
  targetText.push_back('\0');
  b.create<LLVM::GlobalOp>(loc, LLVM::LLVMArrayType::get(i8, targetText.size()),
                           /*isConstant=*/true, LLVM::Linkage::Internal,
                           "pipecc_target", b.getStringAttr(targetText));
  auto descType = LLVM::LLVMStructType::getLiteral(
      ctx, {ptrType, i32, i32, i32, i32, ptrType, i64, i64, i64, i64, i64});
  // Names and shapes as separate constants the table points to.
  SmallVector<std::string> nameSymbols, shapeSymbols;
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    std::string name = "pipecc_buffer_name_" + std::to_string(index);
    std::string text = buffer.name;
    text.push_back('\0');
    b.create<LLVM::GlobalOp>(loc, LLVM::LLVMArrayType::get(i8, text.size()),
                             /*isConstant=*/true, LLVM::Linkage::Internal,
                             name, b.getStringAttr(text));
    nameSymbols.push_back(name);
    std::string shape = "pipecc_buffer_shape_" + std::to_string(index);
    if (!buffer.shape.empty()) {
      auto type = RankedTensorType::get(
          {static_cast<int64_t>(buffer.shape.size())}, i64);
      b.create<LLVM::GlobalOp>(
          loc, LLVM::LLVMArrayType::get(i64, buffer.shape.size()),
          /*isConstant=*/true, LLVM::Linkage::Internal, shape,
          DenseElementsAttr::get(type, ArrayRef<int64_t>(buffer.shape)));
    }
    shapeSymbols.push_back(buffer.shape.empty() ? "" : shape);
  }
  auto tableType = LLVM::LLVMArrayType::get(descType, buffers.size());
  auto table = b.create<LLVM::GlobalOp>(loc, tableType, /*isConstant=*/true,
                                        LLVM::Linkage::Internal,
                                        "pipecc_buffers", Attribute());
  {
    Block *init = b.createBlock(&table.getInitializerRegion());
    OpBuilder ib = OpBuilder::atBlockEnd(init);
    Value array = ib.create<LLVM::UndefOp>(loc, tableType);
    for (auto [index, buffer] : llvm::enumerate(buffers)) {
      Value desc = ib.create<LLVM::UndefOp>(loc, descType);
      auto insert = [&](Value v, int64_t pos) {
        desc = ib.create<LLVM::InsertValueOp>(loc, desc, v, pos);
      };
      insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, nameSymbols[index]), 0);
      insert(constI32(ib, static_cast<int32_t>(buffer.role)), 1);
      insert(constI32(ib, static_cast<int32_t>(buffer.dtype)), 2);
      insert(constI32(ib, buffer.perMicrobatch ? 1 : 0), 3);
      insert(constI32(ib, static_cast<int32_t>(buffer.shape.size())), 4);
      if (shapeSymbols[index].empty())
        insert(ib.create<LLVM::ZeroOp>(loc, ptrType), 5);
      else
        insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, shapeSymbols[index]),
               5);
      insert(constI64(ib, buffer.bytes), 6);
      insert(constI64(ib, buffer.parameterId), 7);
      insert(constI64(ib, buffer.numClasses), 8);
      // Without a static memory plan the runtime chooses the copies and
      // places the buffer.
      insert(constI64(ib, placement.empty() ? 0 : placement[index].slots), 9);
      insert(constI64(ib, placement.empty() ? -1 : placement[index].offset),
             10);
      array = ib.create<LLVM::InsertValueOp>(loc, array, desc, index);
    }
    ib.create<LLVM::ReturnOp>(loc, array);
  }

  // {abi_version, rank, num_ranks, microbatches, microbatch_size, default_lr,
  //  gradient_scale, flags, num_buffers, buffers, step, arena_bytes, target,
  //  stage_workspace_bytes, stage_workspace}; LLVM pads it like C.
  b.setInsertionPointToEnd(module.getBody());
  auto programType = LLVM::LLVMStructType::getLiteral(
      ctx, {i32, i32, i32, i32, i64, f32, f32, i32, i64, ptrType, ptrType, i64,
            ptrType, i64, ptrType});
  auto programGlobal = b.create<LLVM::GlobalOp>(
      loc, programType, /*isConstant=*/true, LLVM::Linkage::Internal,
      "pipecc_program", Attribute());
  Block *init = b.createBlock(&programGlobal.getInitializerRegion());
  OpBuilder ib = OpBuilder::atBlockEnd(init);
  Value program = ib.create<LLVM::UndefOp>(loc, programType);
  auto insert = [&](Value v, int64_t pos) {
    program = ib.create<LLVM::InsertValueOp>(loc, program, v, pos);
  };
  auto constF32 = [&](float v) {
    return ib.create<LLVM::ConstantOp>(loc, f32, ib.getF32FloatAttr(v));
  };
  insert(constI32(ib, PIPECC_RT_ABI_VERSION), 0);
  insert(constI32(ib, settings.rank), 1);
  insert(constI32(ib, settings.numRanks), 2);
  insert(constI32(ib, settings.microbatches), 3);
  insert(constI64(ib, settings.microbatchSize), 4);
  insert(constF32(static_cast<float>(settings.learningRate)), 5);
  // 0: the runtime's default, 1 / microbatches (losses are means) or, for a
  // counted-mean loss, 1 / the step's label count.
  insert(constF32(0.0f), 6);
  insert(constI32(ib, (settings.inference ? PIPECC_RT_PROGRAM_INFERENCE : 0) |
                          (settings.countedMeanLoss
                               ? PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS
                               : 0)),
         7);
  insert(constI64(ib, buffers.size()), 8);
  insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, "pipecc_buffers"), 9);
  insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, "pipecc_step"), 10);
  // 0: the runtime sizes the arena.
  insert(constI64(ib, placement.empty() ? 0 : arenaBytes), 11);
  insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, "pipecc_target"), 12);
  // The stage functions' static workspace (pipecc-plan-stage-workspace).
  auto workspace = module->getAttrOfType<IntegerAttr>(attrs::kWorkspaceBytes);
  insert(constI64(ib, workspace ? workspace.getInt() : 0), 13);
  if (module.lookupSymbol<LLVM::GlobalOp>(attrs::kStageWorkspaceSymbol))
    insert(ib.create<LLVM::AddressOfOp>(loc, ptrType, attrs::kStageWorkspaceSymbol),
           14);
  else
    insert(ib.create<LLVM::ZeroOp>(loc, ptrType), 14);
  ib.create<LLVM::ReturnOp>(loc, program);

  b.setInsertionPointToEnd(module.getBody());
  auto main = b.create<LLVM::LLVMFuncOp>(
      loc, "main", LLVM::LLVMFunctionType::get(i32, {i32, ptrType}));
  Block *entry = main.addEntryBlock(b);
  OpBuilder mb = OpBuilder::atBlockEnd(entry);
  Value programPtr = mb.create<LLVM::AddressOfOp>(loc, ptrType,
                                                  "pipecc_program");
  Value status = call(mb, "pipecc_rt_main",
                      {entry->getArgument(0), entry->getArgument(1),
                       programPtr});
  mb.create<LLVM::ReturnOp>(loc, status);
}

LogicalResult RankHostBuilder::build(pipeline::ProgramOp program,
                                     ArrayRef<LLVM::LLVMFuncOp> stageFunctions,
                                     ArrayAttr parameters) {
  for (LLVM::LLVMFuncOp func : stageFunctions) {
    FailureOr<StageAbi> abi = StageAbi::read(func);
    if (failed(abi))
      return failure();
    for (DictionaryAttr binding : abi->args)
      if (auto name = binding.getAs<StringAttr>(attrs::kTensor))
        readTensors.insert(name.getValue());
  }
  program.walk(
      [&](pipeline::SendOp send) { readTensors.insert(send.getTensor()); });
  for (LLVM::LLVMFuncOp func : stageFunctions)
    if (failed(collect(func, parameters)))
      return failure();
  declareRuntime();
  if (failed(buildStep(program)) || failed(readMemoryPlan()))
    return failure();
  buildProgramConstant();
  return success();
}

/// The rank's static memory plan (`pipeline.memory_plan`, written by the
/// lower phase from the same buffer rules): entry i places buffer-table
/// entry i, whose name it must carry. A plan that does not describe this
/// table is an error, not something to guess around.
LogicalResult RankHostBuilder::readMemoryPlan() {
  auto plan = module->getAttrOfType<DictionaryAttr>(attrs::kMemoryPlan);
  if (!plan)
    return success();
  auto arena = plan.getAs<IntegerAttr>("arena_bytes");
  auto entries = plan.getAs<ArrayAttr>("buffers");
  if (!arena || !entries)
    return module.emitError("'")
           << attrs::kMemoryPlan << "' needs 'arena_bytes' and 'buffers'";
  if (entries.size() != buffers.size())
    return module.emitError("'")
           << attrs::kMemoryPlan << "' places " << entries.size()
           << " buffers, the rank's buffer table has " << buffers.size();
  for (auto [index, attr] : llvm::enumerate(entries)) {
    auto entry = llvm::dyn_cast<DictionaryAttr>(attr);
    auto name = entry ? entry.getAs<StringAttr>("name") : StringAttr();
    auto slots = entry ? entry.getAs<IntegerAttr>("slots") : IntegerAttr();
    auto offset = entry ? entry.getAs<IntegerAttr>("offset") : IntegerAttr();
    if (!name || !slots || !offset)
      return module.emitError("'") << attrs::kMemoryPlan << "' entry "
                                   << index << " needs name, slots and offset";
    if (name.getValue() != buffers[index].name)
      return module.emitError("'")
             << attrs::kMemoryPlan << "' entry " << index << " is '"
             << name.getValue() << "', buffer " << index << " is '"
             << buffers[index].name << "'";
    placement.push_back({slots.getInt(), offset.getInt()});
  }
  arenaBytes = arena.getInt();
  return success();
}

/// `pipeline.parameters` entries must name each parameter and say whether
/// it trains.
LogicalResult verifyParameters(ModuleOp module, ArrayAttr parameters) {
  for (Attribute attr : parameters) {
    auto dict = llvm::dyn_cast<DictionaryAttr>(attr);
    if (!dict || !dict.getAs<StringAttr>("name") ||
        !dict.getAs<BoolAttr>("trainable"))
      return module.emitError("'")
             << attrs::kParameters
             << "' entries must be dictionaries with a string 'name' and a "
                "bool 'trainable', found "
             << attr;
  }
  return success();
}

struct LowerRankProgramPass
    : public pipecc::impl::LowerRankProgramBase<LowerRankProgramPass> {
  using LowerRankProgramBase::LowerRankProgramBase;

  void runOnOperation() override {
    if (failed(lower()))
      signalPassFailure();
  }

  LogicalResult lower() {
    ModuleOp module = getOperation();
    auto rankAttr = module->getAttrOfType<IntegerAttr>(attrs::kRank);
    if (!rankAttr)
      return module.emitError("a rank module needs '")
             << attrs::kRank << "', the rank whose program it holds";
    auto parameters = module->getAttrOfType<ArrayAttr>(attrs::kParameters);
    if (!parameters)
      return module.emitError("a rank module needs '")
             << attrs::kParameters << "', the parameters of the pipeline";
    if (failed(verifyParameters(module, parameters)))
      return failure();
    auto pipelines = llvm::to_vector(module.getOps<pipeline::PipelineOp>());
    if (pipelines.size() != 1)
      return module.emitError("a rank module holds one pipeline.pipeline, "
                              "found ")
             << pipelines.size();
    pipeline::PipelineOp pipe = pipelines.front();
    pipeline::ProgramOp program;
    for (auto candidate : pipe.getBody().getOps<pipeline::ProgramOp>())
      if (static_cast<int64_t>(candidate.getRank()) == rankAttr.getInt())
        program = candidate;
    if (!program)
      return pipe.emitOpError("has no program for rank ") << rankAttr.getInt();

    // Every rank numbers the message tensors the same way: by name over the
    // whole pipeline.
    std::set<std::string> messageNames;
    pipe.walk([&](Operation *op) {
      if (auto send = llvm::dyn_cast<pipeline::SendOp>(op))
        messageNames.insert(send.getTensor().str());
      if (auto recv = llvm::dyn_cast<pipeline::RecvOp>(op))
        messageNames.insert(recv.getTensor().str());
    });
    llvm::StringMap<int32_t> tags;
    for (const std::string &name : messageNames)
      tags[name] = static_cast<int32_t>(tags.size());

    SmallVector<LLVM::LLVMFuncOp> stageFunctions;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(attrs::kStageAbi))
        stageFunctions.push_back(func);
    for (auto func : module.getOps<FunctionOpInterface>())
      if (func->hasAttr(attrs::kStageAbi) &&
          !llvm::isa<LLVM::LLVMFuncOp>(func.getOperation()))
        return func.emitError("stage function '")
               << func.getName()
               << "' is not lowered to the LLVM dialect; run the target's "
                  "stage lowering first";
    if (stageFunctions.empty())
      return module.emitError("no stage functions for rank ")
             << rankAttr.getInt() << " (functions with '"
             << attrs::kStageAbi << "'; see pipecc-record-stage-abi)";

    RankSettings settings;
    settings.rank = static_cast<int32_t>(rankAttr.getInt());
    settings.numRanks = static_cast<int32_t>(
        llvm::range_size(pipe.getBody().getOps<pipeline::ProgramOp>()));
    settings.microbatches = static_cast<int32_t>(pipe.getMicrobatches());
    settings.microbatchSize = microbatchSize;
    settings.learningRate = learningRate;
    settings.inference = inference;
    settings.countedMeanLoss = countedMeanLoss;
    settings.target = target;
    RankHostBuilder builder(module, settings, tags);
    if (failed(builder.build(program, stageFunctions, parameters)))
      return failure();
    // Consumed: the module keeps only its rank.
    pipe.erase();
    module->removeAttr(attrs::kParameters);
    for (LLVM::LLVMFuncOp func : stageFunctions)
      func->removeAttr(attrs::kStageAbi);
    return success();
  }
};

} // namespace
