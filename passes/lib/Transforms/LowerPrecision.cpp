//===- LowerPrecision.cpp - The pipecc-lower-precision pass ---------------===//
//
// Mixed precision on the stage functions, target-independent: the graph ops
// keep their meaning and only the element types change, with graph.cast
// where a value crosses between the precisions. Three kinds of op:
//   - compute ops (elementwise, matmul, data movement) run in bf16: each
//     result is rounded to bf16 once (matmul lowerings accumulate in f32);
//   - accumulating ops (reductions, normalisations, softmax, losses,
//     scatter-adds) run in f32 on operands extended exactly from bf16;
//   - convolutions round their operands to bf16 and accumulate in f32.
// Ops with scalar results (the loss and its scaling) stay f32.
// Tensor names keep one type across functions (a stashed activation is
// bf16 both where the forward returns it and where the backward reads it),
// so the host program's buffers agree.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Dialect/Pipeline/PipelineOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"
#include "pipecc/Passes/StageTable.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace pipecc {
#define GEN_PASS_DEF_LOWERPRECISION
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {

enum class OpPrecision {
  /// Float operands and results in bf16.
  Low,
  /// Float operands extended to f32, results f32.
  Accumulate,
  /// As Accumulate, with the operands rounded to bf16 first.
  RoundedOperands,
  /// Left alone (constants and parameters: their users cast them).
  Keep,
};

OpPrecision classify(Operation *op) {
  if (isa<ConstantOp, ParamOp>(op))
    return OpPrecision::Keep;
  if (isa<ReduceSumOp, ReduceMeanOp, CumSumOp, SoftmaxOp, LogSoftmaxOp,
          LayerNormOp, LayerNormGradOp, RmsNormOp, RmsNormGradOp,
          CrossEntropyOp, CrossEntropyGradOp, NLLLossOp, NLLLossGradOp,
          MSELossOp, GatherGradOp, GatherNDGradOp, MaxPoolGradOp, AvgPoolOp,
          AvgPoolGradOp, LabelCountOp, CastOp>(op))
    return OpPrecision::Accumulate;
  // Exact in any precision: an embedding table is read where it is (f32)
  // rather than copied to bf16 whole; the rows read are rounded once.
  if (isa<GatherOp, GatherNDOp>(op))
    return OpPrecision::Accumulate;
  if (isa<ConvOp, ConvInputGradOp, ConvWeightGradOp>(op))
    return OpPrecision::RoundedOperands;
  return OpPrecision::Low;
}

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

Type withElement(Type type, Type element) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !isa<FloatType>(tensor.getElementType()))
    return type;
  return RankedTensorType::get(tensor.getShape(), element);
}

/// The tensor names that stay f32 in every signature: master weights, data,
/// gradients, the loss and its count, and inference outputs.
llvm::StringSet<> keptTensorNames(ArrayRef<func::FuncOp> stageFunctions) {
  llvm::StringSet<> kept;
  for (func::FuncOp func : stageFunctions) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (func.getArgAttr(i, attrs::kBindParam) ||
          func.getArgAttr(i, attrs::kBindInput))
        if (auto name = func.getArgAttrOfType<StringAttr>(i, attrs::kTensor))
          kept.insert(name.getValue());
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (func.getResultAttr(i, attrs::kParamGrad) ||
          func.getResultAttr(i, attrs::kLoss) ||
          func.getResultAttr(i, attrs::kLossCount) ||
          func.getResultAttr(i, attrs::kGraphOutput))
        if (auto name =
                func.getResultAttrOfType<StringAttr>(i, attrs::kTensor))
          kept.insert(name.getValue());
  }
  return kept;
}

class FunctionRewriter {
public:
  FunctionRewriter(func::FuncOp func, const llvm::StringSet<> &kept,
                   uint64_t &numCasts)
      : func(func), kept(kept), numCasts(numCasts),
        bf16(BFloat16Type::get(func.getContext())),
        f32(Float32Type::get(func.getContext())) {}

  LogicalResult run() {
    Block &body = func.getBody().front();
    SmallVector<Type> argTypes;
    for (BlockArgument arg : body.getArguments()) {
      if (isF32Tensor(arg.getType()) &&
          !kept.contains(nameOf(func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), attrs::kTensor))))
        arg.setType(withElement(arg.getType(), bf16));
      argTypes.push_back(arg.getType());
    }
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (OpOperand &operand : ret->getOpOperands())
          operand.set(convert(operand.get(),
                              resultElement(operand.getOperandNumber())));
        continue;
      }
      if (op.getNumRegions() != 0)
        return op.emitOpError("has regions; pipecc-lower-precision handles "
                              "graph ops only");
      OpPrecision precision = classify(&op);
      // Scalars (the loss, its count and seed) cost nothing in f32.
      if (precision == OpPrecision::Low && op.getNumResults() != 0 &&
          llvm::all_of(op.getResultTypes(), [](Type type) {
            auto tensor = dyn_cast<RankedTensorType>(type);
            return tensor && tensor.getRank() == 0;
          }))
        precision = OpPrecision::Accumulate;
      if (precision == OpPrecision::Keep)
        continue;
      for (OpOperand &operand : op.getOpOperands()) {
        Value value = operand.get();
        if (!isFloatTensor(value.getType()))
          continue;
        if (precision == OpPrecision::Low)
          value = convert(value, bf16);
        else if (precision == OpPrecision::RoundedOperands)
          value = convert(convert(value, bf16), f32);
        else
          value = convert(value, f32);
        operand.set(value);
      }
      if (precision == OpPrecision::Low)
        for (OpResult result : op.getResults())
          if (isF32Tensor(result.getType()))
            result.setType(withElement(result.getType(), bf16));
    }
    SmallVector<Type> resultTypes(
        body.getTerminator()->getOperandTypes().begin(),
        body.getTerminator()->getOperandTypes().end());
    func.setFunctionType(
        FunctionType::get(func.getContext(), argTypes, resultTypes));
    return success();
  }

private:
  static StringRef nameOf(StringAttr name) {
    return name ? name.getValue() : StringRef();
  }

  static bool isFloatTensor(Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && (tensor.getElementType().isF32() ||
                      tensor.getElementType().isBF16());
  }

  /// The element type result `index` of the function has: f32 for kept
  /// names, bf16 for the other f32 tensors.
  Type resultElement(unsigned index) {
    Type original = func.getResultTypes()[index];
    if (!isF32Tensor(original) ||
        kept.contains(nameOf(
            func.getResultAttrOfType<StringAttr>(index, attrs::kTensor))))
      return cast<ShapedType>(original).getElementType();
    return bf16;
  }

  /// `value` with element type `element`, cast once per value and type
  /// right after its definition, so that every user can share the cast.
  Value convert(Value value, Type element) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == element)
      return value;
    auto key = std::make_pair(value, element);
    if (auto it = casts.find(key); it != casts.end())
      return it->second;
    OpBuilder builder(func.getContext());
    builder.setInsertionPointAfterValue(value);
    Value cast = builder.create<CastOp>(
        value.getLoc(), RankedTensorType::get(type.getShape(), element),
        value);
    ++numCasts;
    casts[key] = cast;
    return cast;
  }

  func::FuncOp func;
  const llvm::StringSet<> &kept;
  uint64_t &numCasts;
  Type bf16, f32;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

struct LowerPrecisionPass
    : pipecc::impl::LowerPrecisionBase<LowerPrecisionPass> {
  using LowerPrecisionBase::LowerPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (precision == "fp32")
      return;
    if (precision != "bf16") {
      module.emitError("pipecc-lower-precision: unknown precision '")
          << precision << "'; expected fp32 or bf16";
      return signalPassFailure();
    }
    // The stage functions, from the stage table split-stages wrote.
    FailureOr<StageTable> table = readStageTable(module);
    if (failed(table))
      return signalPassFailure();
    SmallVector<func::FuncOp> stageFunctions;
    for (const VirtualStage &stage : table->stages)
      for (func::FuncOp func :
           {stage.forward, stage.backwardInput, stage.backwardWeight})
        if (func)
          stageFunctions.push_back(func);
    llvm::StringSet<> kept = keptTensorNames(stageFunctions);
    uint64_t casts = 0;
    for (func::FuncOp func : stageFunctions) {
      if (func.isExternal())
        continue;
      if (failed(FunctionRewriter(func, kept, casts).run()))
        return signalPassFailure();
    }
    numCasts += casts;
  }
};

} // namespace
