//===- HoistInvariantLoads.cpp - Per-row values out of the column loops ---===//
//
// A fused element-wise loop nest such as the layer norm's input gradient
// reads per-row values (mean, 1 / std, the row's sums) with indices of the
// outer loops only, and stores a full row in the inner loop. All of them
// are views of the one stage workspace global, and LLVM cannot tell the
// store from those loads: it reloads them in every iteration and, unable
// to order the accesses ("Unknown data dependence"), leaves the loop
// scalar. 160 loops of the benchmark GPT's backward stayed scalar that way.
//
// Here a `memref.load` in an `scf.for` body whose indices are defined
// outside the loop moves in front of it, when nothing in the loop may write
// what it reads: the loop writes only through `memref.store`, and each
// store's buffer is a view of the same global whose byte range does not
// overlap the load's (PlanStageWorkspace places buffers that are live
// together apart, and a view's range is a constant here), or of another
// global. A load or store whose buffer is anything else (a function
// argument, which an outlined part's caller may have cut from the same
// workspace) is assumed to overlap. Loops with constant bounds that run at
// least once only, so the hoisted load reads what the first iteration read.
// Innermost loops go first, so a value invariant in several loops climbs
// all of them. The values are the same.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <optional>

namespace pipecc {
#define GEN_PASS_DEF_HOISTINVARIANTLOADS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
/// The bytes of a global a buffer covers: [begin, end) of `global`.
struct GlobalRange {
  StringRef global;
  int64_t begin = 0, end = 0;
};

/// Which bytes of which global `buffer` may touch: a `memref.get_global`
/// itself, or a `memref.view` of one at a constant byte offset, through
/// reshapes that keep the bytes (expand_shape, collapse_shape, cast); none
/// for anything else.
std::optional<GlobalRange> globalRangeOf(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      buffer = expand.getSrc();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      buffer = collapse.getSrc();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      buffer = cast.getSource();
    else
      break;
  }
  auto bytesOf = [](Type type) -> std::optional<int64_t> {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || !memref.hasStaticShape() ||
        !memref.getLayout().isIdentity() ||
        !memref.getElementType().isIntOrFloat())
      return std::nullopt;
    int64_t bits = memref.getElementTypeBitWidth();
    if (bits % 8)
      return std::nullopt;
    return memref.getNumElements() * (bits / 8);
  };
  if (auto global = buffer.getDefiningOp<memref::GetGlobalOp>()) {
    std::optional<int64_t> bytes = bytesOf(global.getType());
    if (!bytes)
      return std::nullopt;
    return GlobalRange{global.getName(), 0, *bytes};
  }
  auto view = buffer.getDefiningOp<memref::ViewOp>();
  if (!view || !view.getSizes().empty())
    return std::nullopt;
  auto global = view.getSource().getDefiningOp<memref::GetGlobalOp>();
  std::optional<int64_t> offset =
      getConstantIntValue(view.getByteShift());
  std::optional<int64_t> bytes = bytesOf(view.getType());
  if (!global || !offset || !bytes || *offset < 0)
    return std::nullopt;
  return GlobalRange{global.getName(), *offset, *offset + *bytes};
}

/// Whether a store to `stored` can never write the bytes `loaded` (a
/// load's range, none where it is unknown) covers.
bool apart(const std::optional<GlobalRange> &loaded, Value stored) {
  std::optional<GlobalRange> b = globalRangeOf(stored);
  if (!loaded || !b)
    return false;
  if (loaded->global != b->global)
    return true;
  return loaded->end <= b->begin || b->end <= loaded->begin;
}

/// Whether `loop` has constant bounds and runs at least once.
bool runsAtLeastOnce(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  return lower && upper && step && *step > 0 && *lower < *upper;
}

/// Moves the loads of `loop` that it may hoist in front of it; how many.
unsigned hoistFrom(scf::ForOp loop) {
  if (!runsAtLeastOnce(loop))
    return 0;
  // What the loop writes, through stores only: anything else that may
  // write (a call, a copy) keeps every load where it is.
  SmallVector<Value> stored;
  bool onlyStores = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      stored.push_back(store.getMemRef());
      return;
    }
    if (isa<memref::LoadOp>(op) || op->hasTrait<OpTrait::IsTerminator>())
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Regions (an inner loop) are walked; their own effects are theirs.
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        onlyStores = false;
      return;
    }
    if (effects.hasEffect<MemoryEffects::Write>() ||
        effects.hasEffect<MemoryEffects::Free>() ||
        effects.hasEffect<MemoryEffects::Allocate>())
      onlyStores = false;
  });
  if (!onlyStores)
    return 0;
  unsigned hoisted = 0;
  for (Operation &op : llvm::make_early_inc_range(*loop.getBody())) {
    auto load = dyn_cast<memref::LoadOp>(&op);
    if (!load || !llvm::all_of(load->getOperands(), [&](Value operand) {
          return loop.isDefinedOutsideOfLoop(operand);
        }))
      continue;
    std::optional<GlobalRange> range = globalRangeOf(load.getMemRef());
    if (!llvm::all_of(stored,
                      [&](Value buffer) { return apart(range, buffer); }))
      continue;
    load->moveBefore(loop);
    ++hoisted;
  }
  return hoisted;
}

struct HoistInvariantLoadsPass
    : pipecc::impl::HoistInvariantLoadsBase<HoistInvariantLoadsPass> {
  void runOnOperation() override {
    // Post-order: inner loops before the loops around them.
    getOperation()->walk(
        [&](scf::ForOp loop) { numHoisted += hoistFrom(loop); });
  }
};
} // namespace
