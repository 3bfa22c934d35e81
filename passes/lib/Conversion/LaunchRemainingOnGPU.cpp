//===- LaunchRemainingOnGPU.cpp - Leftover device code as 1-thread kernels ===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

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
    if (failed(processBlock(getOperation().getBody().front())))
      signalPassFailure();
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

  /// Moves the device ops of `run` (and the pure ops only they use) into a
  /// one-thread gpu.launch placed before `end`.
  LogicalResult launch(SmallVectorImpl<Operation *> &run, Operation *end) {
    if (run.empty())
      return success();
    llvm::SmallPtrSet<Operation *, 16> inside(run.begin(), run.end());
    // Pure ops used outside the run stay (and everything they need).
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *op : run) {
        if (!inside.contains(op) || !isMemoryEffectFree(op))
          continue;
        bool usedOutside = llvm::any_of(op->getUsers(), [&](Operation *user) {
          Operation *top = end->getBlock()->findAncestorOpInBlock(*user);
          return !top || !inside.contains(top);
        });
        if (usedOutside) {
          inside.erase(op);
          changed = true;
        }
      }
    }
    for (Operation *op : run) {
      if (inside.contains(op)) {
        for (Operation *user : op->getUsers()) {
          Operation *top = end->getBlock()->findAncestorOpInBlock(*user);
          if (!top || !inside.contains(top))
            return user->emitError(
                "uses a value computed from device memory on the host");
        }
        continue;
      }
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          if (inside.contains(def))
            return op->emitError(
                "uses a value computed from device memory on the host");
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
    run.clear();
    ++numSequential;
    return success();
  }
};

} // namespace
