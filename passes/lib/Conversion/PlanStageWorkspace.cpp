//===- PlanStageWorkspace.cpp - Stage temporaries in a static workspace ---===//
//
// After bufferization and buffer deallocation, a stage function's
// temporaries are memref.alloc / memref.dealloc pairs: a malloc and a free
// (often an mmap and munmap, hence fresh zero pages) on every call. Their
// shapes are static, so their places are planned here once: each becomes a
// view at a fixed offset of one module-level workspace, and temporaries
// whose lifetimes do not overlap share bytes. It runs before MatmulToBlas,
// while a matmul still uses its operands directly (after it, a gemm call
// reads a pointer extracted from the memref, which use lists do not show).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"
#include "pipecc/Conversion/StageAbi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace pipecc {
#define GEN_PASS_DEF_PLANSTAGEWORKSPACE
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

using pipecc::attrs::kStageWorkspaceSymbol;
constexpr int64_t kAlignment = 64;

/// A temporary of one function: its op-order lifetime in the function body
/// (inclusive) and its place in the workspace.
struct Temporary {
  memref::AllocOp alloc;
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t offset = -1;
};

int64_t alignUp(int64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

/// Bytes of a static memref (an i1 takes a byte, as in the LLVM lowering).
int64_t bytesOf(MemRefType type) {
  int64_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
  return type.getNumElements() * elementBytes;
}

/// First-fit by decreasing size: each temporary takes the lowest aligned
/// offset free of every placed temporary whose lifetime it overlaps.
/// Returns the bytes used.
int64_t placeTemporaries(MutableArrayRef<Temporary> temps) {
  SmallVector<Temporary *> order;
  for (Temporary &temp : temps)
    order.push_back(&temp);
  llvm::stable_sort(order, [](Temporary *a, Temporary *b) {
    return a->bytes > b->bytes;
  });
  int64_t total = 0;
  SmallVector<Temporary *> placed;
  for (Temporary *temp : order) {
    SmallVector<std::pair<int64_t, int64_t>> busy; // [begin, end)
    for (Temporary *other : placed)
      if (other->first <= temp->last && temp->first <= other->last)
        busy.push_back({other->offset, other->offset + alignUp(other->bytes)});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + temp->bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    temp->offset = offset;
    total = std::max(total, offset + alignUp(temp->bytes));
    placed.push_back(temp);
  }
  return total;
}

struct PlanStageWorkspacePass
    : pipecc::impl::PlanStageWorkspaceBase<PlanStageWorkspacePass> {
  /// The temporaries of `func` it can place; the others stay allocations.
  SmallVector<Temporary> collect(func::FuncOp func) {
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    if (allocs.empty())
      return {};
    // Straight-line bodies only, with deallocations that free an
    // allocation itself (ownership-based deallocation's conditional frees
    // would free a view of the workspace).
    bool plain = func.getBody().hasOneBlock();
    func.walk([&](Operation *op) {
      if (isa<bufferization::DeallocOp>(op))
        plain = false;
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        if (!dealloc.getMemref().getDefiningOp<memref::AllocOp>())
          plain = false;
    });
    if (!plain) {
      numUnplanned += allocs.size();
      return {};
    }
    Block &body = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    for (auto [index, op] : llvm::enumerate(body))
      position[&op] = static_cast<int64_t>(index);
    BufferViewFlowAnalysis aliases(func);

    SmallVector<Temporary> temps;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace()) {
        ++numUnplanned;
        continue;
      }
      Temporary temp;
      temp.alloc = alloc;
      temp.bytes = bytesOf(type);
      temp.first = temp.last = position[body.findAncestorOpInBlock(*alloc)];
      bool escapes = false;
      for (Value alias : aliases.resolve(alloc.getResult()))
        for (Operation *user : alias.getUsers()) {
          // A buffer carried out of a region (a loop's iteration value)
          // would be live across its own reallocation.
          if (user->hasTrait<OpTrait::IsTerminator>())
            escapes = true;
          temp.last = std::max(temp.last,
                               position[body.findAncestorOpInBlock(*user)]);
        }
      if (escapes) {
        ++numUnplanned;
        continue;
      }
      temps.push_back(temp);
    }
    return temps;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<func::FuncOp, SmallVector<Temporary>>> plans;
    int64_t bytes = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      // Only stage functions: the host calls one at a time, and none calls
      // another (other functions may call each other and share nothing).
      if (func.isExternal() || !func->hasAttr(pipecc::attrs::kStageAbi))
        continue;
      SmallVector<Temporary> temps = collect(func);
      if (temps.empty())
        continue;
      bytes = std::max(bytes, placeTemporaries(temps));
      plans.push_back({func, std::move(temps)});
    }
    if (plans.empty())
      return;
    if (module.lookupSymbol(kStageWorkspaceSymbol)) {
      module.emitError("'") << kStageWorkspaceSymbol << "' is already defined";
      return signalPassFailure();
    }
    auto workspaceType =
        MemRefType::get({bytes}, IntegerType::get(ctx, 8));
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    b.create<memref::GlobalOp>(module.getLoc(), kStageWorkspaceSymbol,
                               b.getStringAttr("private"), workspaceType,
                               // Zeros: .bss, no bytes in the executable.
                               DenseElementsAttr::get(
                                   RankedTensorType::get(
                                       {bytes}, IntegerType::get(ctx, 8)),
                                   b.getI8IntegerAttr(0)),
                               /*constant=*/false,
                               b.getI64IntegerAttr(kAlignment));
    for (auto &[func, temps] : plans) {
      b.setInsertionPointToStart(&func.getBody().front());
      Value workspace = b.create<memref::GetGlobalOp>(
          func.getLoc(), workspaceType, kStageWorkspaceSymbol);
      for (Temporary &temp : temps) {
        b.setInsertionPoint(temp.alloc);
        Value offset =
            b.create<arith::ConstantIndexOp>(temp.alloc.getLoc(), temp.offset);
        Value view = b.create<memref::ViewOp>(temp.alloc.getLoc(),
                                              temp.alloc.getType(), workspace,
                                              offset, ValueRange{});
        for (Operation *user :
             llvm::make_early_inc_range(temp.alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        temp.alloc.replaceAllUsesWith(view);
        temp.alloc.erase();
        ++numPlanned;
      }
    }
    workspaceBytes = bytes;
    module->setAttr(pipecc::attrs::kWorkspaceBytes,
                    b.getI64IntegerAttr(bytes));
  }
};

} // namespace
