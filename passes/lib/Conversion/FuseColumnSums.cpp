//===- FuseColumnSums.cpp - An elementwise loop adds its column sums ------===//
//
// The backward of `Linear -> ReLU` (or GELU) computes dL/dz elementwise,
// stores it for the two GEMMs and sums it over the rows for the bias
// gradient. Elementwise fusion cannot join them (the stored matrix has other
// users), so the sum was a second pass over the whole matrix; here the loop
// storing dL/dz also adds it into the bias gradient. The sum starts from
// the gradient's value where the producer ran: zero where a fill between
// the two moves before it, the accumulator's value where the sum adds into
// one (pipecc-accumulate-gradients drops the zero fill).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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

/// The buffer a view of `value` (subview, cast, reshape) is a view of.
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether `op` may read or write `buffer` (`writesOnly`: write). Ops other
/// than allocations, deallocations, pure ops and linalg ops on whole
/// buffers are assumed to touch everything.
bool mayAccess(Operation *op, Value buffer, bool writesOnly) {
  if (isa<memref::AllocOp, memref::DeallocOp>(op) || isPure(op))
    return false;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() != 1 ||
      !linalgOp.hasPureBufferSemantics())
    return true;
  auto touches = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value value) {
      return rootBuffer(value) == buffer;
    });
  };
  if (touches(linalgOp.getDpsInits()))
    return true;
  return !writesOnly && touches(linalgOp.getDpsInputs());
}

/// Replaces `producer` by one generic writing its result and the column
/// sums, at the producer's place; a zeroing `fill` between them (or null)
/// moves before it.
void fuseInto(linalg::GenericOp producer, linalg::FillOp fill,
              linalg::GenericOp sum) {
  Value stored = producer.getDpsInitOperand(0)->get();
  Value total = sum.getDpsInitOperand(0)->get();
  if (fill)
    fill->moveBefore(producer);

  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.push_back(sum.getIndexingMapsArray()[1]);
  SmallVector<utils::IteratorType> iterators = sum.getIteratorTypesArray();
  OpBuilder builder(producer);
  builder.create<linalg::GenericOp>(
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
  sum.erase();
  producer.erase();
}

/// The generic in the same block before `sum` that last wrote its input,
/// and the fill zeroing its output between them (null if none), when the
/// sum can move into that generic: nothing else in between writes the
/// input or touches the output, so the output holds at the producer what
/// the sum would start from.
std::optional<std::pair<linalg::GenericOp, linalg::FillOp>>
findProducer(linalg::GenericOp sum) {
  Value stored = sum.getDpsInputOperand(0)->get();
  Value total = sum.getDpsInitOperand(0)->get();
  if (rootBuffer(stored) != stored || rootBuffer(total) != total ||
      stored == total)
    return std::nullopt;
  linalg::FillOp fill;
  for (Operation *op = sum->getPrevNode(); op; op = op->getPrevNode()) {
    auto fillOp = dyn_cast<linalg::FillOp>(op);
    if (fillOp && !fill && fillOp.getDpsInitOperand(0)->get() == total &&
        fillOp.hasPureBufferSemantics()) {
      fill = fillOp;
      continue;
    }
    auto producer = dyn_cast<linalg::GenericOp>(op);
    if (producer && producer.getNumDpsInits() == 1 &&
        producer.getDpsInitOperand(0)->get() == stored) {
      if (!isElementwise2D(producer) ||
          llvm::any_of(producer.getDpsInputs(),
                       [&](Value in) { return rootBuffer(in) == total; }))
        return std::nullopt;
      // The fused loop writes the sum where the producer stands: its
      // output must exist there. An allocation made in between (a sum
      // into a temporary, as a grouped weight gradient adds the
      // micro-batches' sums) moves up; anything else stays unfused.
      if (Operation *def = total.getDefiningOp();
          def && def->getBlock() == producer->getBlock() &&
          producer->isBeforeInBlock(def)) {
        if (!isa<memref::AllocOp, memref::AllocaOp>(def) ||
            def->getNumOperands() != 0)
          return std::nullopt;
        def->moveBefore(producer);
      }
      return std::make_pair(producer, fill);
    }
    if (mayAccess(op, stored, /*writesOnly=*/true) ||
        mayAccess(op, total, /*writesOnly=*/false))
      return std::nullopt;
  }
  return std::nullopt;
}

struct FuseColumnSumsPass
    : pipecc::impl::FuseColumnSumsBase<FuseColumnSumsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> sums;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isColumnSum(op))
        sums.push_back(op);
    });
    for (linalg::GenericOp sum : sums)
      if (auto found = findProducer(sum))
        fuseInto(found->first, found->second, sum);
  }
};
} // namespace
