//===- OutlineOpGroups.cpp - Bounded functions for LLVM's loop passes -----===//
//
// LLVM's IndVarSimplify asks ScalarEvolution, for each loop, whether the
// loop's entry is guarded by a condition; ScalarEvolution answers by walking
// the chain of dominating blocks, which passes every loop before it. A
// function of n loops in sequence (a stage function of n elementwise ops)
// costs O(n^2) there: 2 ranks of a 1,000-op chain spent minutes in it. A
// function of at most `max-ops` loops costs O(max-ops^2), so a module of n
// ops split into such functions costs O(n * max-ops).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace pipecc {
#define GEN_PASS_DEF_OUTLINEOPGROUPS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

/// Types a call passes unchanged under the bare-pointer convention.
bool isPassable(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.hasStaticShape() && memref.getLayout().isIdentity() &&
           !memref.getMemorySpace();
  return type.isIntOrIndexOrFloat() || isa<LLVM::LLVMPointerType>(type);
}

/// Pure, region-free producers (constants, views, metadata): a group clones
/// them rather than taking their values as arguments.
bool isClonable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// Ops a group may step over, left in place before its call: pure ones and
/// allocations.
bool staysBefore(Operation *op) {
  if (isClonable(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &effect) {
    return isa<MemoryEffects::Allocate>(effect.getEffect());
  });
}

/// Values an op (with its regions) reads from outside itself.
SmallVector<Value> externalValues(Operation *op) {
  SmallVector<Value> values;
  llvm::SmallPtrSet<Value, 8> seen;
  op->walk([&](Operation *nested) {
    for (Value value : nested->getOperands()) {
      Operation *owner = value.getParentRegion()->getParentOp();
      bool inside = owner == op || op->isProperAncestor(owner);
      if (Operation *def = value.getDefiningOp())
        inside = op->isAncestor(def);
      if (!inside && seen.insert(value).second)
        values.push_back(value);
    }
  });
  return values;
}

class GroupOutliner {
public:
  GroupOutliner(ModuleOp module, unsigned maxOps)
      : symbols(module), maxOps(maxOps) {}

  /// Outlines the groups of `func`; returns how many functions it made.
  unsigned run(func::FuncOp func);

private:
  /// Whether `value` can reach a group: cloned or passed.
  bool resolvable(Value value);
  /// Whether `op` can move into a group.
  bool outlinable(Operation *op);
  /// Outlines `group` into a function placed after `after`; returns it.
  func::FuncOp outline(func::FuncOp parent, Operation *after,
                       ArrayRef<Operation *> group,
                       ArrayRef<Operation *> deallocs, unsigned index);

  SymbolTable symbols;
  unsigned maxOps;
  DenseMap<Value, bool> resolvableCache;
};

bool GroupOutliner::resolvable(Value value) {
  if (auto it = resolvableCache.find(value); it != resolvableCache.end())
    return it->second;
  bool result = isPassable(value.getType());
  if (Operation *def = value.getDefiningOp(); def && isClonable(def))
    result = llvm::all_of(def->getOperands(),
                          [&](Value operand) { return resolvable(operand); });
  resolvableCache[value] = result;
  return result;
}

bool GroupOutliner::outlinable(Operation *op) {
  if (op->getNumResults() != 0 || op->hasTrait<OpTrait::IsTerminator>() ||
      isa<memref::DeallocOp>(op))
    return false;
  // A dealloc inside would free a bare pointer, not the allocation.
  if (op->walk([](memref::DeallocOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return false;
  return llvm::all_of(externalValues(op),
                      [&](Value value) { return resolvable(value); });
}

func::FuncOp GroupOutliner::outline(func::FuncOp parent, Operation *after,
                                    ArrayRef<Operation *> group,
                                    ArrayRef<Operation *> deallocs,
                                    unsigned index) {
  Location loc = group.front()->getLoc();
  OpBuilder b(parent);
  b.setInsertionPointAfter(after);
  auto func = b.create<func::FuncOp>(
      loc, (parent.getSymName() + "_part" + Twine(index)).str(),
      b.getFunctionType({}, {}));
  func.setPrivate();
  // LLVM's inliner would put the group back: one caller, small callee.
  func->setAttr("no_inline", b.getUnitAttr());
  symbols.insert(func); // renames on a clash
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);

  IRMapping mapping;
  SmallVector<Value> callOperands;
  // Clones pure producers (operands first); passes everything else.
  std::function<void(Value)> materialize = [&](Value value) {
    if (mapping.contains(value))
      return;
    Operation *def = value.getDefiningOp();
    if (def && isClonable(def) &&
        llvm::all_of(def->getOperands(),
                     [&](Value operand) { return resolvable(operand); })) {
      for (Value operand : def->getOperands())
        materialize(operand);
      b.clone(*def, mapping);
      return;
    }
    mapping.map(value, body->addArgument(value.getType(), value.getLoc()));
    callOperands.push_back(value);
  };
  for (Operation *op : group) {
    for (Value value : externalValues(op))
      materialize(value);
    b.clone(*op, mapping);
  }
  b.create<func::ReturnOp>(loc);
  func.setFunctionType(b.getFunctionType(body->getArgumentTypes(), {}));

  OpBuilder caller(group.back());
  auto call = caller.create<func::CallOp>(loc, func, callOperands);
  // Deallocations among the group's ops now follow it; later ones already
  // do.
  Operation *last = call;
  for (Operation *dealloc : deallocs) {
    if (!dealloc->isBeforeInBlock(group.back()))
      continue;
    dealloc->moveAfter(last);
    last = dealloc;
  }
  for (Operation *op : group)
    op->erase();
  return func;
}

unsigned GroupOutliner::run(func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return 0;
  Block &block = func.getBody().front();
  unsigned candidates = llvm::count_if(
      block, [&](Operation &op) { return outlinable(&op); });
  if (candidates <= maxOps)
    return 0;

  // Groups of consecutive outlinable ops, stepping over what stays before
  // the call and deallocations (moved after it).
  SmallVector<std::pair<SmallVector<Operation *>, SmallVector<Operation *>>>
      groups(1);
  for (Operation &op : block) {
    auto &[group, deallocs] = groups.back();
    if (outlinable(&op)) {
      group.push_back(&op);
      if (group.size() == maxOps)
        groups.emplace_back();
    } else if (isa<memref::DeallocOp>(op)) {
      if (!group.empty())
        deallocs.push_back(&op);
    } else if (!staysBefore(&op) && !group.empty()) {
      groups.emplace_back();
    }
  }
  unsigned made = 0;
  Operation *after = func;
  for (auto &[group, deallocs] : groups)
    if (!group.empty())
      after = outline(func, after, group, deallocs, made++);
  return made;
}

struct OutlineOpGroupsPass
    : pipecc::impl::OutlineOpGroupsBase<OutlineOpGroupsPass> {
  using OutlineOpGroupsBase::OutlineOpGroupsBase;

  void runOnOperation() override {
    if (maxOps == 0)
      return;
    ModuleOp module = getOperation();
    GroupOutliner outliner(module, maxOps);
    // The functions made here are bounded already.
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp func : functions)
      numGroups += outliner.run(func);
  }
};

} // namespace
