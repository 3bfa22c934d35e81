//===- LowerReductionsToLoops.cpp - Reductions carried in registers -------===//
//
// Upstream's linalg-to-loops turns a reduction on buffers into
// `out[i] = out[i] + f(in[i, k])` with a load and a store of `out[i]` in
// every iteration of the k loop. LLVM can keep `out[i]` in a register (and
// then vectorize the sum, see ReassociateReductions.cpp) only if it proves
// that no load of an input reads what the store writes, and the stage
// functions' buffers are pointers into one workspace it knows nothing about:
// the row reductions of LayerNorm, softmax and their backward stayed scalar
// and went through memory. This pass lowers those generics itself: the
// parallel loops outside, one load of each output before the reduction
// loops, the running values carried by `scf.for` (iter_args), one store
// after. It takes a `linalg.generic` on buffers with static loop ranges,
// whose reduction iterators come after its parallel ones, whose outputs
// are indexed by parallel loops only, and whose outputs are not also its
// inputs; the rest is left to linalg-to-loops. Bufferization never gives
// a reduction an output that overlaps an input it reads (the write would
// be a conflict), and the stage workspace places buffers that are live
// together apart, so the values are the ones linalg-to-loops computes, in
// the same order.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace pipecc {
#define GEN_PASS_DEF_LOWERREDUCTIONSTOLOOPS
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {
/// The number of leading parallel loops of `generic`.
unsigned leadingParallelLoops(linalg::GenericOp generic) {
  SmallVector<utils::IteratorType> iterators =
      generic.getIteratorTypesArray();
  unsigned parallel = 0;
  while (parallel < iterators.size() &&
         iterators[parallel] == utils::IteratorType::parallel)
    ++parallel;
  return parallel;
}

/// Whether `generic` is a reduction this pass lowers (see the file comment).
bool isRowReduction(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() == 0)
    return false;
  SmallVector<utils::IteratorType> iterators =
      generic.getIteratorTypesArray();
  unsigned parallel = leadingParallelLoops(generic);
  if (parallel == iterators.size())
    return false;
  for (unsigned d = parallel; d < iterators.size(); ++d)
    if (iterators[d] != utils::IteratorType::reduction)
      return false;
  if (llvm::any_of(generic.getStaticLoopRanges(),
                   [](int64_t size) { return ShapedType::isDynamic(size); }))
    return false;
  for (OpOperand &init : generic.getDpsInitsMutable()) {
    AffineMap map = generic.getMatchingIndexingMap(&init);
    for (unsigned d = parallel; d < iterators.size(); ++d)
      if (map.isFunctionOfDim(d))
        return false;
    for (OpOperand *input : generic.getDpsInputOperands())
      if (input->get() == init.get())
        return false;
  }
  return true;
}

/// The indices of `map` applied to the loop variables `ivs`.
SmallVector<Value> indicesOf(OpBuilder &b, Location loc, AffineMap map,
                             ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      indices.push_back(ivs[dim.getPosition()]);
      continue;
    }
    indices.push_back(b.create<affine::AffineApplyOp>(
        loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return indices;
}

struct Lowering {
  linalg::GenericOp generic;
  SmallVector<int64_t> ranges;
  unsigned parallel;
  SmallVector<Value> ivs;

  /// The loop over dimension `d` carrying `carried`; `inner` builds its
  /// body (ivs[d] set) and returns what it yields.
  scf::ForOp loopOver(
      OpBuilder &b, unsigned d, ValueRange carried,
      function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> inner) {
    Location loc = generic.getLoc();
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value size = b.create<arith::ConstantIndexOp>(loc, ranges[d]);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    return b.create<scf::ForOp>(
        loc, zero, size, one, carried,
        [&](OpBuilder &nested, Location, Value iv, ValueRange values) {
          ivs[d] = iv;
          nested.create<scf::YieldOp>(loc, inner(nested, values));
        });
  }

  /// The reduction loops from dimension `d` on, carrying `running`;
  /// returns the values after the last iteration.
  SmallVector<Value> reduce(OpBuilder &b, unsigned d, ValueRange running) {
    if (d == ranges.size())
      return body(b, running);
    return loopOver(b, d, running, [&](OpBuilder &nested, ValueRange values) {
             return reduce(nested, d + 1, values);
           })
        .getResults();
  }

  /// One iteration: the inputs loaded, the body cloned with the outputs'
  /// running values; returns what it yields.
  SmallVector<Value> body(OpBuilder &b, ValueRange running) {
    Location loc = generic.getLoc();
    Block &block = generic.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      BlockArgument arg = generic.getMatchingBlockArgument(input);
      Value value = input->get();
      if (isa<MemRefType>(value.getType()))
        value = b.create<memref::LoadOp>(
            loc, value,
            indicesOf(b, loc, generic.getMatchingIndexingMap(input), ivs));
      mapping.map(arg, value);
    }
    for (auto [init, value] :
         llvm::zip(generic.getDpsInitsMutable(), running))
      mapping.map(generic.getMatchingBlockArgument(&init), value);
    for (Operation &op : block.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    SmallVector<Value> results;
    for (Value yielded : block.getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(yielded));
    return results;
  }

  /// The parallel loops from dimension `d` on; innermost, the outputs
  /// loaded, reduced and stored.
  void outer(OpBuilder &b, unsigned d) {
    Location loc = generic.getLoc();
    if (d == parallel) {
      SmallVector<Value> running;
      for (OpOperand &init : generic.getDpsInitsMutable())
        running.push_back(b.create<memref::LoadOp>(
            loc, init.get(),
            indicesOf(b, loc, generic.getMatchingIndexingMap(&init), ivs)));
      SmallVector<Value> results = reduce(b, parallel, running);
      for (auto [init, value] : llvm::zip(generic.getDpsInitsMutable(), results))
        b.create<memref::StoreOp>(
            loc, value, init.get(),
            indicesOf(b, loc, generic.getMatchingIndexingMap(&init), ivs));
      return;
    }
    loopOver(b, d, ValueRange{}, [&](OpBuilder &nested, ValueRange) {
      outer(nested, d + 1);
      return SmallVector<Value>{};
    });
  }
};

struct LowerReductionsToLoopsPass
    : pipecc::impl::LowerReductionsToLoopsBase<LowerReductionsToLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp generic) {
      if (isRowReduction(generic))
        reductions.push_back(generic);
    });
    for (linalg::GenericOp generic : reductions) {
      SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
      Lowering lowering{generic, ranges, leadingParallelLoops(generic),
                        SmallVector<Value>(ranges.size())};
      OpBuilder b(generic);
      lowering.outer(b, 0);
      generic.erase();
      ++numLowered;
    }
  }
};
} // namespace
