//===- Rematerialize.cpp - The pipecc-rematerialize pass ------------------===//
//
// After autodiff, every forward value a backward op reads is an activation
// the stage keeps from F until its backward: it takes arena memory for every
// micro-batch in flight, is written once and read back once more. When such
// a value is a pointwise function of values the backward keeps anyway (or of
// constants and parameters) and every backward op that reads it is pointwise
// too, recomputing it inside those backward ops costs a few flops per
// element and no memory traffic: the recomputed chain fuses into the
// backward's elementwise loop (pipecc-fuse-elementwise), and the forward
// chain, no longer read elsewhere, fuses into one loop as well.
//
// GELU from erf is the case that motivated it: the backward of
// `x * 0.5 * (1 + erf(x / sqrt(2)))` reads x, x / sqrt(2) and
// 1 + erf(x / sqrt(2)); after this pass it reads x and 1 + erf(x / sqrt(2)).
// Transcendental ops are not recomputed: measured on the benchmark GPT
// (P = 1, M = 1), recomputing the erf too made the backward loop
// compute-bound and slower by more than the forward gained (GELU's loops
// 5.2 % of the step as kept, 4.9 % recomputing erf, 4.2 % recomputing
// only the division).
//
// Policy (what is recomputed) lives here; the mechanism is cloning graph
// ops, and the recomputed values are the same floats (same ops on the same
// operands), so results do not change.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace pipecc {
#define GEN_PASS_DEF_REMATERIALIZE
#include "pipecc/Passes/Passes.h.inc"
} // namespace pipecc

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;

namespace {

bool isBackward(Operation *op) { return op->hasAttr(attrs::kGradOf); }

bool isPointwise(Operation *op) {
  return op && op->hasTrait<graph::traits::Pointwise>();
}

/// A pointwise op worth recomputing: no transcendental function (exp, erf,
/// tanh, ... are polynomials of tens of instructions per element here,
/// dearer than reading the kept value back).
bool isCheapPointwise(Operation *op) {
  if (!isPointwise(op))
    return false;
  auto cost = dyn_cast<CostOpInterface>(op);
  return cost && cost.getCost().transcendentals == 0;
}

/// Constants and parameters: available on every stage without being kept.
bool isSource(Value value) {
  Operation *def = value.getDefiningOp();
  return def && isa<ConstantOp, ParamOp>(def);
}

struct RematerializePass
    : pipecc::impl::RematerializeBase<RematerializePass> {
  using RematerializeBase::RematerializeBase;

  void runOnOperation() override {
    func::FuncOp func = getModelFunction(getOperation());
    if (!func)
      return signalPassFailure();
    Block &body = func.front();

    // The activations: forward results (and model inputs) read by backward
    // ops.
    SmallVector<Value> kept;
    DenseSet<Value> keptSet;
    for (BlockArgument input : body.getArguments())
      if (llvm::any_of(input.getUsers(), isBackward))
        keptSet.insert(input);
    for (Operation &op : body.without_terminator()) {
      if (isBackward(&op))
        continue;
      for (Value result : op.getResults())
        if (llvm::any_of(result.getUsers(), isBackward) &&
            keptSet.insert(result).second)
          kept.push_back(result);
    }

    // In program order, so that an operand's fate is decided before its
    // users': a value is recomputed when its producer is pointwise, every
    // backward op reading it is pointwise (it then fuses into them), and
    // its operands are sources, activations still kept, or themselves
    // recomputable: at most `maxDepth` ops in all between kept values and
    // the read.
    for (Value value : kept) {
      Operation *def = value.getDefiningOp();
      if (!isCheapPointwise(def) ||
          !isa<FloatType>(getElementTypeOrSelf(value)))
        continue;
      if (!llvm::all_of(value.getUsers(), [](Operation *user) {
            return !isBackward(user) || isPointwise(user);
          }))
        continue;
      if (maxDepth > 0 && llvm::all_of(def->getOperands(), [&](Value operand) {
            return recomputable(operand, maxDepth - 1, keptSet);
          }))
        recomputed.insert(value);
    }
    if (recomputed.empty())
      return;

    // Every backward read of a recomputed value gets its own copy of the
    // chain, right before the reader: each copy then has one use and fuses
    // into its reader's loop. The copies run on the reader's stage (they
    // carry its graph.grad_of).
    SmallVector<OpOperand *> reads;
    for (Value value : recomputed)
      for (OpOperand &use : value.getUses())
        if (isBackward(use.getOwner()))
          reads.push_back(&use);
    for (OpOperand *read : reads) {
      Operation *reader = read->getOwner();
      OpBuilder builder(reader);
      read->set(
          recompute(read->get(), builder, reader->getAttr(attrs::kGradOf)));
      ++numRematerialized;
    }
  }

  /// Whether `value` can be produced in the backward from kept activations,
  /// sources and at most `depth` more pointwise ops.
  bool recomputable(Value value, unsigned depth,
                    const DenseSet<Value> &keptSet) const {
    if (isSource(value))
      return true;
    if (keptSet.contains(value) && !recomputed.contains(value))
      return true;
    Operation *def = value.getDefiningOp();
    if (depth == 0 || !isCheapPointwise(def) || isBackward(def))
      return false;
    return llvm::all_of(def->getOperands(), [&](Value operand) {
      return recomputable(operand, depth - 1, keptSet);
    });
  }

  /// A copy of the chain producing `value` at `builder`'s point, its ops
  /// tagged `gradOf`; kept activations and sources are used as they are.
  Value recompute(Value value, OpBuilder &builder, Attribute gradOf) {
    Operation *def = value.getDefiningOp();
    if (isSource(value) || isBackward(def) ||
        (!recomputed.contains(value) && !isChainLink(def)))
      return value;
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, recompute(operand, builder, gradOf));
    Operation *copy = builder.clone(*def, mapping);
    copy->removeAttr(attrs::kOpId);
    copy->setAttr(attrs::kGradOf, gradOf);
    return copy->getResult(cast<OpResult>(value).getResultNumber());
  }

  /// A forward value that is not kept (so recomputable() went through it).
  bool isChainLink(Operation *def) const {
    return isCheapPointwise(def) &&
           llvm::none_of(def->getResults(), [&](Value result) {
             return llvm::any_of(result.getUsers(), isBackward);
           });
  }

  DenseSet<Value> recomputed;
};
} // namespace
