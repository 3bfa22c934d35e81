//===- BackwardSplit.cpp - Which backward ops are B and which W -----------===//

#include "pipecc/Analysis/BackwardSplit.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Partition/Problem.h"
#include "pipecc/Passes/Attributes.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace pipecc;

BackwardSplit::BackwardSplit(
    func::FuncOp main,
    llvm::function_ref<std::optional<int>(Operation *)> positionOf)
    : main(main) {
  Block &body = main.front();
  DenseMap<int64_t, Operation *> opById;
  DenseMap<StringRef, Operation *> paramByName;
  for (Operation &op : body.without_terminator()) {
    if (auto id = op.getAttrOfType<IntegerAttr>(attrs::kOpId))
      opById[id.getInt()] = &op;
    if (auto param = llvm::dyn_cast<graph::ParamOp>(op))
      paramByName[param.getParamName()] = param;
  }
  SmallVector<Operation *> backward;
  for (Operation &op : body.without_terminator()) {
    auto gradOf = op.getAttrOfType<IntegerAttr>(attrs::kGradOf);
    if (!gradOf)
      continue;
    backward.push_back(&op);
    if (Operation *forward = opById.lookup(gradOf.getInt()))
      if (std::optional<int> position = positionOf(forward))
        positions[&op] = *position;
  }
  // A parameter gradient @main returns is accumulated where its parameter
  // is: a use at the parameter's position.
  DenseMap<Value, int> returnedTo;
  auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    auto grad = main.getResultAttrOfType<StringAttr>(i, attrs::kGrad);
    Operation *param = grad ? paramByName.lookup(grad.getValue()) : nullptr;
    std::optional<int> position = param ? positionOf(param) : std::nullopt;
    if (!position)
      continue;
    auto [it, inserted] = returnedTo.try_emplace(ret.getOperand(i), *position);
    if (!inserted)
      it->second = std::min(it->second, *position);
  }
  // Users follow their operands in the block, so one backward sweep sees
  // every user's reach before its operands'.
  for (Operation *op : llvm::reverse(backward)) {
    int reached = kNowhere;
    for (Value result : op->getResults())
      if (auto it = returnedTo.find(result); it != returnedTo.end())
        reached = std::min(reached, it->second);
    for (Operation *user : op->getUsers()) {
      if (!user->hasAttr(attrs::kGradOf))
        continue;
      if (auto position = positions.find(user); position != positions.end())
        reached = std::min(reached, position->second);
      if (auto userReach = reaches.find(user); userReach != reaches.end())
        reached = std::min(reached, userReach->second);
    }
    reaches[op] = reached;
  }
}

std::optional<int> BackwardSplit::positionOf(Operation *backwardOp) const {
  if (auto it = positions.find(backwardOp); it != positions.end())
    return it->second;
  return std::nullopt;
}

int BackwardSplit::reach(Operation *backwardOp) const {
  auto it = reaches.find(backwardOp);
  return it == reaches.end() ? kNowhere : it->second;
}

bool BackwardSplit::isBackwardInput(Operation *backwardOp,
                                    int stageStart) const {
  return partition::isBackwardInput(reach(backwardOp), stageStart);
}

int64_t
BackwardSplit::stashBytes(int first, int last,
                          llvm::function_ref<int(int)> stageStartOf) const {
  auto isB = [&](Operation *op) {
    std::optional<int> position = positionOf(op);
    return position && isBackwardInput(op, stageStartOf(*position));
  };
  llvm::DenseSet<Value> stashed;
  int64_t bytes = 0;
  for (Operation &op : main.front().without_terminator()) {
    std::optional<int> position = positionOf(&op);
    if (!position || *position < first || *position > last || isB(&op))
      continue;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !isB(def) || !stashed.insert(operand).second)
        continue;
      auto shaped = llvm::cast<ShapedType>(operand.getType());
      bytes += shaped.getNumElements() *
               ((shaped.getElementTypeBitWidth() + 7) / 8);
    }
  }
  return bytes;
}
