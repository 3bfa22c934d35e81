//===- LaunchRemainingOnGPU.cpp - Leftover device code as 1-thread kernels ===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace pipecc {
#define GEN_PASS_DEF_LAUNCHREMAININGONGPU
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

enum class Placement {
  Pure,   // no memory effects: stays where its users need it
  Host,   // allocation, runtime call, kernel launch, terminator
  Device, // reads or writes buffers: must run in a kernel
  Mixed,  // a region op holding host and device ops: processed inside
};

Placement place(Operation *op) {
  if (isa<gpu::LaunchOp, func::CallOp, memref::AllocOp, memref::DeallocOp>(
          op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return Placement::Host;
  if (isMemoryEffectFree(op))
    return Placement::Pure;
  if (op->getNumRegions() == 0)
    return Placement::Device;
  bool host = false, device = false;
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      switch (place(&nested)) {
      case Placement::Pure:
        break;
      case Placement::Host:
        // A nested terminator says nothing about the op.
        host |= !nested.hasTrait<OpTrait::IsTerminator>();
        break;
      case Placement::Device:
        device = true;
        break;
      case Placement::Mixed:
        host = device = true;
        break;
      }
  if (host && device)
    return Placement::Mixed;
  return host ? Placement::Host : Placement::Device;
}

struct LaunchRemainingOnGPUPass
    : pipecc::impl::LaunchRemainingOnGPUBase<LaunchRemainingOnGPUPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (failed(processBlock(func.getBody().front())))
      return signalPassFailure();
    sinkConstantGlobals(func);
  }

  /// A constant global (an index table, a mask) lives in host memory, so a
  /// kernel must not receive its host address: each launch that reads one
  /// gets its own `memref.get_global`, which kernel outlining then copies,
  /// global and all, into the kernel's module, where it is device memory.
  static void sinkConstantGlobals(func::FuncOp func) {
    func.walk([](gpu::LaunchOp launch) {
      llvm::SetVector<Value> captured;
      getUsedValuesDefinedAbove(launch.getBody(), captured);
      for (Value value : captured) {
        auto get = value.getDefiningOp<memref::GetGlobalOp>();
        if (!get)
          continue;
        OpBuilder builder = OpBuilder::atBlockBegin(&launch.getBody().front());
        auto inside = llvm::cast<memref::GetGlobalOp>(builder.clone(*get));
        if (memref::GlobalOp global = inlinedResourceGlobal(get))
          inside.setName(global.getSymName());
        replaceAllUsesInRegionWith(value, inside.getResult(),
                                   launch.getBody());
      }
    });
  }

  /// The kernel-side twin of a constant global whose value is a resource
  /// blob: the same value as plain dense elements, which the NVVM
  /// translation can emit (it cannot emit i1 resource blobs). Null when the
  /// global needs no twin or its blob cannot be read.
  static memref::GlobalOp inlinedResourceGlobal(memref::GetGlobalOp get) {
    auto module = get->getParentOfType<ModuleOp>();
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        get, get.getNameAttr());
    if (!module || !global || !global.getInitialValue())
      return {};
    auto resource =
        llvm::dyn_cast<DenseResourceElementsAttr>(*global.getInitialValue());
    AsmResourceBlob *blob =
        resource ? resource.getRawHandle().getBlob() : nullptr;
    if (!blob)
      return {};
    std::string name = (global.getSymName() + "_dense").str();
    if (auto existing = module.lookupSymbol<memref::GlobalOp>(name))
      return existing;
    auto type = llvm::cast<ShapedType>(resource.getType());
    ArrayRef<char> bytes = blob->getData();
    DenseElementsAttr dense;
    if (type.getElementType().isInteger(1)) {
      // One byte per element, as the importer stores booleans.
      if (bytes.size() != static_cast<size_t>(type.getNumElements()))
        return {};
      SmallVector<bool> values(bytes.begin(), bytes.end());
      dense = DenseElementsAttr::get(type, ArrayRef<bool>(values));
    } else {
      bool splat = false;
      if (!DenseElementsAttr::isValidRawBuffer(type, bytes, splat))
        return {};
      dense = DenseElementsAttr::getFromRawBuffer(type, bytes);
    }
    OpBuilder builder(global);
    auto twin = llvm::cast<memref::GlobalOp>(builder.clone(*global));
    twin.setSymName(name);
    twin.setInitialValueAttr(dense);
    return twin;
  }

  LogicalResult processBlock(Block &block) {
    SmallVector<Operation *> run;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      switch (place(&op)) {
      case Placement::Device:
        run.push_back(&op);
        break;
      case Placement::Pure:
        if (!run.empty())
          run.push_back(&op);
        break;
      case Placement::Host:
        // Allocations and deallocations do not split a run: those inside
        // it stay before its kernel, or move after it.
        if (!run.empty() && isa<memref::AllocOp, memref::DeallocOp>(op)) {
          run.push_back(&op);
          break;
        }
        if (failed(launch(run, &op)))
          return failure();
        break;
      case Placement::Mixed:
        if (failed(launch(run, &op)))
          return failure();
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(processBlock(nested)))
              return failure();
        break;
      }
    }
    return success();
  }

  /// Moves the device ops of `run` (and the pure ops that depend on them)
  /// into a one-thread gpu.launch placed before `end`. A scalar it computes
  /// that later kernels read travels through a one-element device buffer.
  LogicalResult launch(SmallVectorImpl<Operation *> &run, Operation *end) {
    if (run.empty())
      return success();
    Block *block = end->getBlock();
    llvm::SmallPtrSet<Operation *, 16> inside;
    SmallVector<Operation *> deallocs;
    auto fromInside = [&](Value value) {
      Operation *def = value.getDefiningOp();
      return def && inside.contains(def);
    };
    // Device ops and the pure ops that depend on them; pure ops the host
    // can compute stay where they are.
    for (Operation *op : run) {
      if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
      else if (!isa<memref::AllocOp>(op) &&
               (!isMemoryEffectFree(op) ||
                llvm::any_of(op->getOperands(), fromInside)))
        inside.insert(op);
    }
    auto outsideUsers = [&](Operation *op) {
      SmallVector<Operation *> users;
      for (Operation *user : op->getUsers()) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || !inside.contains(top))
          users.push_back(user);
      }
      return users;
    };
    // Other values used outside must be read by kernels.
    SmallVector<Value> spilled;
    for (Operation *op : run) {
      if (!inside.contains(op))
        continue;
      for (Operation *user : outsideUsers(op)) {
        Operation *top = block->findAncestorOpInBlock(*user);
        if (!top || !isa<gpu::LaunchOp>(top))
          return user->emitError(
              "uses a value computed from device memory on the host");
      }
      if (!outsideUsers(op).empty())
        for (Value result : op->getResults())
          if (!result.use_empty())
            spilled.push_back(result);
    }

    OpBuilder builder(end);
    Location loc = run.front()->getLoc();
    Value one = builder.create<arith::ConstantIndexOp>(loc, 1);
    auto launchOp =
        builder.create<gpu::LaunchOp>(loc, one, one, one, one, one, one);
    Block &body = launchOp.getBody().front();
    builder.setInsertionPointToEnd(&body);
    auto terminator = builder.create<gpu::TerminatorOp>(loc);
    for (Operation *op : run)
      if (inside.contains(op))
        op->moveBefore(terminator);
    for (Value value : spilled)
      if (failed(spill(value, launchOp, end)))
        return failure();
    for (Operation *dealloc : deallocs)
      dealloc->moveBefore(end);
    run.clear();
    ++numSequential;
    return success();
  }

  /// Stores `value` (computed in `producer`) into a device scalar allocated
  /// before it, and makes the other kernels of the block that use it load
  /// it instead; the buffer is freed before the block's terminator.
  LogicalResult spill(Value value, gpu::LaunchOp producer, Operation *end) {
    Location loc = value.getLoc();
    if (!value.getType().isIntOrIndexOrFloat())
      return value.getDefiningOp()->emitError(
          "a non-scalar value computed from device memory is used by "
          "another kernel");
    OpBuilder builder(producer);
    auto type = MemRefType::get({}, value.getType());
    Value buffer = builder.create<memref::AllocOp>(loc, type);
    builder.setInsertionPoint(producer.getBody().front().getTerminator());
    builder.create<memref::StoreOp>(loc, value, buffer);
    Block *block = producer->getBlock();
    llvm::SmallPtrSet<Operation *, 4> consumers;
    for (OpOperand &use : value.getUses()) {
      Operation *top = block->findAncestorOpInBlock(*use.getOwner());
      if (top && top != producer.getOperation())
        consumers.insert(top);
    }
    for (Operation *consumer : consumers) {
      auto launchOp = cast<gpu::LaunchOp>(consumer);
      builder.setInsertionPointToStart(&launchOp.getBody().front());
      Value loaded = builder.create<memref::LoadOp>(loc, buffer);
      value.replaceUsesWithIf(loaded, [&](OpOperand &use) {
        return launchOp->isProperAncestor(use.getOwner());
      });
    }
    builder.setInsertionPoint(block->getTerminator());
    builder.create<memref::DeallocOp>(loc, buffer);
    return success();
  }
};

} // namespace
