// Reverse-mode differentiation of @main's scalar loss. The mechanics live
// here; what each op contributes is its GradientOpInterface rule.
#include "PassUtils.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace pipecc {
#define GEN_PASS_DEF_AUTODIFF
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {

/// Finds the loss among the returned values: the output named `name`, or
/// else the only scalar floating-point one.
FailureOr<unsigned> findLoss(func::FuncOp func, func::ReturnOp ret,
                             StringRef name) {
  std::optional<unsigned> found;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    auto type = llvm::cast<RankedTensorType>(ret.getOperand(i).getType());
    auto output = func.getResultAttrOfType<StringAttr>(i, attrs::kOutput);
    if (!name.empty()) {
      if (output && output.getValue() == name)
        found = i;
      continue;
    }
    if (type.getRank() == 0 && llvm::isa<FloatType>(type.getElementType())) {
      if (found) {
        func.emitError("the model has several scalar outputs; name the loss "
                       "with --loss-output");
        return failure();
      }
      found = i;
    }
  }
  if (!found) {
    if (name.empty())
      func.emitError("the model has no scalar floating-point output to "
                     "differentiate; attach a loss with --loss");
    else
      func.emitError("the model has no output named '") << name << "'";
    return failure();
  }
  auto type = llvm::cast<RankedTensorType>(ret.getOperand(*found).getType());
  if (type.getRank() != 0 || !llvm::isa<FloatType>(type.getElementType())) {
    func.emitError("the loss output must be a floating-point scalar, not ")
        << type;
    return failure();
  }
  return *found;
}

/// A loss that is a mean over the labels not equal to an ignore_index has a
/// denominator that varies between micro-batches: adds the op counting it
/// right after the loss (same location, so the partition keeps them on one
/// stage) and returns its result; null for any other loss.
Value countLabels(Value loss) {
  auto crossEntropy = loss.getDefiningOp<CrossEntropyOp>();
  if (!crossEntropy || !crossEntropy.getIgnoreIndex())
    return Value();
  OpBuilder builder(crossEntropy);
  builder.setInsertionPointAfter(crossEntropy);
  return builder
      .create<LabelCountOp>(crossEntropy.getLoc(), crossEntropy.getType(),
                            crossEntropy.getLabels(),
                            crossEntropy.getIgnoreIndexAttr())
      .getResult();
}

/// `lhs + rhs` for two gradient contributions to one value. Two zero-pads
/// whose boxes lie side by side along one axis (and agree on every other)
/// add up to one pad of their concatenation: the gradient of a tensor split
/// into pieces (q, k and v of one projection) becomes the pieces joined,
/// which lowers to copies, instead of a sum of padded tensors selecting per
/// element. Null when the contributions are not such pads.
Value sumOfAdjacentPads(OpBuilder &builder, Location loc, Value lhs,
                        Value rhs) {
  auto first = lhs.getDefiningOp<PadOp>();
  auto second = rhs.getDefiningOp<PadOp>();
  // Contributions are summed before anything reads them.
  if (!first || !second || first.getType() != second.getType() ||
      !first->use_empty() || !second->use_empty())
    return Value();
  ArrayRef<int64_t> firstShape = first.getInput().getType().getShape();
  ArrayRef<int64_t> secondShape = second.getInput().getType().getShape();
  std::optional<int64_t> axis;
  for (int64_t d = 0, rank = firstShape.size(); d < rank; ++d) {
    if (first.getLow()[d] == second.getLow()[d] &&
        firstShape[d] == secondShape[d])
      continue;
    if (axis)
      return Value(); // the boxes differ along two axes
    axis = d;
  }
  if (!axis)
    return Value(); // the same box twice: a plain sum
  if (second.getLow()[*axis] < first.getLow()[*axis]) {
    std::swap(first, second);
    std::swap(firstShape, secondShape);
  }
  if (first.getLow()[*axis] + firstShape[*axis] != second.getLow()[*axis])
    return Value(); // apart or overlapping
  // A concatenation on the same axis that nothing else reads (an earlier
  // sum's) takes the new piece as one more input.
  SmallVector<Value> pieces;
  auto appendPieces = [&](Value piece) {
    auto concat = piece.getDefiningOp<ConcatOp>();
    if (concat && static_cast<int64_t>(concat.getAxis()) == *axis &&
        concat->hasOneUse())
      llvm::append_range(pieces, concat.getInputs());
    else
      pieces.push_back(piece);
  };
  appendPieces(first.getInput());
  appendPieces(second.getInput());
  Value joined = builder.create<ConcatOp>(loc, pieces, *axis).getResult();
  if (joined.getType() == first.getType())
    return joined;
  return builder.create<PadOp>(loc, first.getType(), joined, first.getLow())
      .getResult();
}

struct AutodiffPass : pipecc::impl::AutodiffBase<AutodiffPass> {
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    func::FuncOp func = getModelFunction(getOperation());
    if (!func || failed(differentiate(func)))
      return signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp func) {
    Block &body = func.front();
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    FailureOr<unsigned> lossIndex = findLoss(func, ret, lossOutput);
    if (failed(lossIndex))
      return failure();
    Value loss = ret.getOperand(*lossIndex);
    MLIRContext *ctx = &getContext();
    auto i64 = IntegerType::get(ctx, 64);
    Value lossCount = countLabels(loss);
    if (lossCount) {
      // Differentiate the micro-batch's sum (mean x count): the runtime
      // divides the step's sums by its total count, so micro-batches with
      // different numbers of ignored labels weigh exactly as in one batch.
      OpBuilder after(lossCount.getContext());
      after.setInsertionPointAfterValue(lossCount);
      loss = after.create<MulOp>(loss.getLoc(), loss, lossCount).getResult();
    }

    // Number the forward ops and find the values that depend on a
    // trainable parameter: only those carry gradients.
    DenseMap<Operation *, int64_t> opIds;
    DenseSet<Value> needsGrad;
    SmallVector<ParamOp> trainable;
    for (Operation &op : body.without_terminator()) {
      int64_t id = opIds.size();
      opIds[&op] = id;
      op.setAttr(attrs::kOpId, IntegerAttr::get(i64, id));
      if (auto param = llvm::dyn_cast<ParamOp>(op)) {
        if (param.getTrainable()) {
          trainable.push_back(param);
          needsGrad.insert(param.getResult());
        }
        continue;
      }
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return needsGrad.contains(v); }))
        for (Value result : op.getResults())
          if (llvm::isa<FloatType>(getElementTypeOrSelf(result.getType())))
            needsGrad.insert(result);
    }
    if (!needsGrad.contains(loss))
      return func.emitError("the loss does not depend on any trainable "
                            "parameter");

    OpBuilder builder(ret);
    DenseMap<Value, Value> grads;
    auto gradOfAttr = [&](Value value) -> IntegerAttr {
      Operation *def = value.getDefiningOp();
      return IntegerAttr::get(i64, def ? opIds.lookup(def) : -1);
    };
    // Runs `build` and tags every op it creates with `graph.grad_of`.
    auto tagged = [&](IntegerAttr gradOf, auto build) {
      Operation *last = ret->getPrevNode();
      auto result = build();
      for (Operation *op = last ? last->getNextNode() : &body.front();
           op != ret.getOperation(); op = op->getNextNode()) {
        op->setAttr(attrs::kGradOf, gradOf);
        ++numBackwardOps;
      }
      return result;
    };
    auto accumulate = [&](Value value, Value grad) {
      auto [it, inserted] = grads.try_emplace(value, grad);
      if (inserted)
        return;
      it->second = tagged(gradOfAttr(value), [&]() -> Value {
        if (Value joined =
                sumOfAdjacentPads(builder, value.getLoc(), it->second, grad))
          return joined;
        return builder.create<AddOp>(value.getLoc(), it->second, grad)
            .getResult();
      });
    };

    auto lossType = llvm::cast<RankedTensorType>(loss.getType());
    grads[loss] = tagged(gradOfAttr(loss), [&] {
      return builder
          .create<ConstantOp>(
              loss.getLoc(),
              DenseElementsAttr::get(
                  lossType, builder.getFloatAttr(lossType.getElementType(),
                                                 1.0)))
          .getResult();
    });

    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      if (opIds.contains(&op))
        forward.push_back(&op);
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value result : op->getResults()) {
        resultGrads.push_back(grads.lookup(result));
        any |= static_cast<bool>(resultGrads.back());
      }
      if (!any || llvm::isa<ParamOp>(op))
        continue;
      auto rule = llvm::dyn_cast<GradientOpInterface>(op);
      if (!rule)
        return op->emitError("cannot differentiate through '")
               << op->getName() << "': it has no gradient rule";
      SmallVector<Value> operandGrads;
      LogicalResult built = tagged(
          IntegerAttr::get(i64, opIds.lookup(op)),
          [&] { return rule.buildGradients(builder, resultGrads, operandGrads); });
      if (failed(built))
        return op->emitError("the gradient rule of '")
               << op->getName() << "' failed";
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
        if (grad && needsGrad.contains(operand))
          accumulate(operand, grad);
    }

    // Return the loss, then one gradient per trainable parameter.
    SmallVector<Value> results{loss};
    SmallVector<DictionaryAttr> resultAttrs{
        func.getResultAttrDict(*lossIndex)
            ? func.getResultAttrDict(*lossIndex)
            : DictionaryAttr::get(ctx)};
    for (ParamOp param : trainable) {
      Value grad = grads.lookup(param.getResult());
      if (!grad) {
        // The loss does not reach this parameter: its gradient is zero.
        auto type = param.getType();
        grad = tagged(IntegerAttr::get(i64, opIds.lookup(param)), [&] {
          return builder
              .create<ConstantOp>(
                  param.getLoc(),
                  DenseElementsAttr::get(
                      type, builder.getFloatAttr(type.getElementType(), 0.0)))
              .getResult();
        });
      }
      results.push_back(grad);
      resultAttrs.push_back(DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, attrs::kGrad),
                               param.getParamNameAttr())}));
    }
    if (lossCount) {
      results.push_back(lossCount);
      resultAttrs.push_back(DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, attrs::kLossCount),
                               UnitAttr::get(ctx))}));
    }
    auto newRet = builder.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();

    // Rules build gradients for every operand; drop those nobody needs.
    for (Operation *op = newRet->getPrevNode(); op && !opIds.contains(op);) {
      Operation *prev = op->getPrevNode();
      if (op->use_empty()) {
        op->erase();
        --numBackwardOps;
      }
      op = prev;
    }
    SmallVector<Type> resultTypes;
    for (Value v : results)
      resultTypes.push_back(v.getType());
    func.setType(FunctionType::get(ctx, func.getArgumentTypes(), resultTypes));
    func.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
