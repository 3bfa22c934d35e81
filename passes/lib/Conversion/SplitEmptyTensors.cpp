//===- SplitEmptyTensors.cpp - One tensor.empty per use -------------------===//
//
// CSE merges the `tensor.empty` inits of every same-shaped op into one value.
// One-shot bufferization then sees all those ops writing into aliases of one
// tensor and checks each in-place write against every other use: quadratic
// in the ops of a function (seconds at a few thousand ops). Each use gets its
// own `tensor.empty`; they bufferize to the same allocations as before.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

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
};
} // namespace
