//===- FuseColumnSums.cpp - An elementwise loop adds its column sums ------===//
//
// The backward of `Linear -> ReLU` (or GELU) computes dL/dz elementwise,
// stores it for the two GEMMs and sums it over the rows for the bias
// gradient. Elementwise fusion cannot join them (the stored matrix has other
// users), so the sum was a second pass over the whole matrix; here the loop
// storing dL/dz also adds it into the bias gradient.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace pipecc {
#define GEN_PASS_DEF_FUSECOLUMNSUMS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
/// `out[j] += in[i, j]` on buffers: [reduction, parallel], one addf.
bool isColumnSum(linalg::GenericOp sum) {
  if (!sum.hasPureBufferSemantics() || sum.getNumDpsInputs() != 1 ||
      sum.getNumDpsInits() != 1 || sum.getNumLoops() != 2)
    return false;
  auto iterators = sum.getIteratorTypesArray();
  if (iterators[0] != utils::IteratorType::reduction ||
      iterators[1] != utils::IteratorType::parallel)
    return false;
  MLIRContext *ctx = sum.getContext();
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  AffineMap column = AffineMap::get(2, 0, getAffineDimExpr(1, ctx));
  if (!maps[0].isIdentity() || maps[1] != column)
    return false;
  Block *body = sum.getBody();
  if (body->getOperations().size() != 2)
    return false;
  auto add = dyn_cast<arith::AddFOp>(body->front());
  if (!add)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return yield.getValues() == ValueRange{add.getResult()} &&
         llvm::is_contained(add->getOperands(), body->getArgument(0)) &&
         llvm::is_contained(add->getOperands(), body->getArgument(1));
}

/// An all-parallel 2-D generic on buffers with one output, stored through
/// the identity map.
bool isElementwise2D(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == 2 &&
         op.getNumParallelLoops() == op.getNumLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
}

void fuseInto(linalg::GenericOp producer, linalg::FillOp fill,
              linalg::GenericOp sum) {
  Value stored = producer.getDpsInitOperand(0)->get();
  Value total = sum.getDpsInitOperand(0)->get();
  // The zeroing goes first; the producer neither reads nor writes `total`.
  if (!fill->isBeforeInBlock(producer))
    fill->moveBefore(producer);

  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.push_back(sum.getIndexingMapsArray()[1]);
  SmallVector<utils::IteratorType> iterators = sum.getIteratorTypesArray();
  OpBuilder builder(sum);
  auto fused = builder.create<linalg::GenericOp>(
      producer.getLoc(), TypeRange(), producer.getDpsInputs(),
      ValueRange{stored, total}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IRMapping mapping;
        Block *body = producer.getBody();
        mapping.map(body->getArguments(), args.drop_back());
        for (Operation &op : body->without_terminator())
          b.clone(op, mapping);
        Value element = mapping.lookupOrDefault(
            cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
        Block *sumBody = sum.getBody();
        mapping.map(sumBody->getArgument(0), element);
        mapping.map(sumBody->getArgument(1), args.back());
        Operation *add = b.clone(sumBody->front(), mapping);
        b.create<linalg::YieldOp>(loc,
                                  ValueRange{element, add->getResult(0)});
      });
  (void)fused;
  sum.erase();
  producer.erase();
}

struct FuseColumnSumsPass
    : pipecc::impl::FuseColumnSumsBase<FuseColumnSumsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> sums;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isColumnSum(op))
        sums.push_back(op);
    });
    for (linalg::GenericOp sum : sums) {
      // Expected order: producer, fill, sum, or fill, producer, sum; nothing
      // else in between, so no other access to either buffer is crossed.
      Operation *before = sum->getPrevNode();
      Operation *first = before ? before->getPrevNode() : nullptr;
      if (!first)
        continue;
      auto fill = dyn_cast<linalg::FillOp>(before);
      auto producer = dyn_cast<linalg::GenericOp>(first);
      if (!fill) {
        fill = dyn_cast<linalg::FillOp>(first);
        producer = dyn_cast<linalg::GenericOp>(before);
      }
      if (!fill || !producer || !isElementwise2D(producer))
        continue;
      Value stored = producer.getDpsInitOperand(0)->get();
      Value total = sum.getDpsInitOperand(0)->get();
      if (sum.getDpsInputOperand(0)->get() != stored ||
          fill.getDpsInitOperand(0)->get() != total || stored == total ||
          llvm::is_contained(producer.getDpsInputs(), total))
        continue;
      fuseInto(producer, fill, sum);
    }
  }
};
} // namespace
