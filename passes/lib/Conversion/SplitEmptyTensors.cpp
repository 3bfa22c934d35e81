//===- SplitEmptyTensors.cpp - One tensor.empty per use -------------------===//
//
// CSE merges the `tensor.empty` inits of every same-shaped op into one value.
// One-shot bufferization then sees all those ops writing into aliases of one
// tensor and checks each in-place write against every other use: quadratic
// in the ops of a function (seconds at a few thousand ops). Each use gets its
// own `tensor.empty`; they bufferize to the same allocations as before.
//
// CSE also merges the `linalg.fill`s of those inits (the zero inits of every
// same-shaped matmul and reduction). Bufferization then fills one buffer
// and copies it into a fresh one for every user; a fill per use writes the
// user's buffer directly, and pipecc-matmul-to-blas folds a zero fill right
// before a matmul into beta = 0.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace pipecc {
#define GEN_PASS_DEF_SPLITEMPTYTENSORS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
struct SplitEmptyTensorsPass
    : pipecc::impl::SplitEmptyTensorsBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    splitFills();
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    for (tensor::EmptyOp empty : empties) {
      // The first use keeps the original; the others get a copy right
      // before them (the sizes dominate the original, hence the user).
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      for (OpOperand *use : llvm::drop_begin(uses)) {
        OpBuilder b(use->getOwner());
        use->set(b.clone(*empty)->getResult(0));
      }
    }
  }

  /// Every use of a fill of a `tensor.empty` gets its own fill right before
  /// it, where pipecc-matmul-to-blas finds it (and, split afterwards, its
  /// own empty).
  void splitFills() {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() &&
          !fill->getResult(0).use_empty())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        // A user inside a loop body keeps the fill outside the loop.
        if (use->getOwner()->getBlock() != fill->getBlock())
          continue;
        OpBuilder b(use->getOwner());
        use->set(b.clone(*fill)->getResult(0));
      }
      if (fill->use_empty())
        fill->erase();
    }
  }
};
} // namespace
