//===- MapLoopsToGPU.cpp - Buffer loops to scf.parallel mapped to the GPU -===//
//
// Correctness first: every output element (or row) is one GPU thread, and a
// thread runs the reductions of its element sequentially. Collapsing the
// parallel dimensions into one before tiling makes consecutive threads of a
// block touch consecutive elements of a row-major output (coalesced
// stores), whatever the rank.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace pipecc {
#define GEN_PASS_DEF_MAPLOOPSTOGPU
#include "pipecc/Conversion/Passes.h.inc"
} // namespace pipecc

using namespace mlir;

namespace {

/// The buffer a view is taken of (through subviews, casts, reshapes).
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether the iterations of `loop` touch disjoint parts of every buffer
/// they write, ignoring the values it carries: see the pass description.
bool hasIndependentAccesses(scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  struct Access {
    Value memref;
    ValueRange indices;
    bool write;
  };
  SmallVector<Access> accesses;
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemref(), load.getIndices(), false});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({store.getMemref(), store.getIndices(), true});
      return WalkResult::advance();
    }
    // Region ops (scf.for, scf.if) are checked through their contents.
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    ok = false;
    return WalkResult::interrupt();
  });
  if (!ok)
    return false;

  // Each written buffer: one index position that is `iv` in every access,
  // and every access on the buffer itself (not a view of it).
  llvm::SmallDenseSet<Value> written;
  for (const Access &access : accesses)
    if (access.write)
      written.insert(rootBuffer(access.memref));
  for (Value buffer : written) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<bool> candidate(type.getRank(), true);
    for (const Access &access : accesses) {
      if (rootBuffer(access.memref) != buffer)
        continue;
      if (access.memref != buffer)
        return false;
      for (auto [position, index] : llvm::enumerate(access.indices))
        candidate[position] = candidate[position] && index == iv;
    }
    if (!llvm::is_contained(candidate, true))
      return false;
  }
  return true;
}

/// Whether the iterations of `loop` are independent: it carries no values
/// and its accesses are.
bool hasIndependentIterations(scf::ForOp loop) {
  return loop.getNumResults() == 0 && hasIndependentAccesses(loop);
}

/// One value a row sum carries: `yield(acc + term)` (or `term + acc`), the
/// add being the carried value's only use and yielded only.
struct RowSum {
  arith::AddFOp add;
  Value term;
  /// Where the term is stored by the parallel loop; null when it is defined
  /// outside the loop (a count adding 1.0 per row).
  Value buffer;
};

/// The sums of a loop over rows that carries nothing but sums of per-row
/// terms, each a row's worth of work (a nested loop: a cross-entropy's max
/// and sum of exponentials per row), with independent accesses otherwise.
/// Constant bounds. Empty when `loop` is not one.
SmallVector<RowSum> matchRowSums(scf::ForOp loop) {
  if (loop.getNumResults() == 0 || !loop.getInductionVar().getType().isIndex() ||
      !loop.getConstantStep() ||
      !getConstantIntValue(loop.getLowerBound()) ||
      !getConstantIntValue(loop.getUpperBound()) ||
      loop.getConstantStep()->isNonPositive())
    return {};
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<RowSum> sums;
  for (auto [position, carried] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (!carried.hasOneUse())
      return {};
    auto add = dyn_cast<arith::AddFOp>(*carried.getUsers().begin());
    if (!add || add->getBlock() != loop.getBody() || !add->hasOneUse() ||
        yield.getOperand(position) != add.getResult() ||
        add.getLhs() == add.getRhs())
      return {};
    sums.push_back({add, add.getLhs() == carried ? add.getRhs() : add.getLhs(),
                    Value()});
  }
  bool rowWork = false;
  loop.getBody()->walk([&](scf::ForOp) { rowWork = true; });
  if (!rowWork || !hasIndependentAccesses(loop))
    return {};
  return sums;
}

/// Splits a row-sum loop: an `scf.parallel` over the rows stores each row's
/// terms into a buffer of one element per row (one GPU thread per row),
/// then a sequential loop adds them in the original order, so the sums
/// round exactly as before. Only that short loop is left to one thread.
void splitRowSums(RewriterBase &rewriter, scf::ForOp loop,
                  MutableArrayRef<RowSum> sums) {
  Location loc = loop.getLoc();
  int64_t lower = *getConstantIntValue(loop.getLowerBound());
  int64_t upper = *getConstantIntValue(loop.getUpperBound());
  int64_t step = loop.getConstantStep()->getSExtValue();
  int64_t rows = upper > lower ? (upper - lower + step - 1) / step : 0;
  rewriter.setInsertionPoint(loop);
  for (RowSum &sum : sums)
    if (loop->isAncestor(sum.term.getParentRegion()->getParentOp()))
      sum.buffer = rewriter.create<memref::AllocOp>(
          loc, MemRefType::get({rows}, sum.term.getType()),
          rewriter.getI64IntegerAttr(64));

  // The row of iteration `iv`: (iv - lower) / step.
  auto rowOf = [&](OpBuilder &builder, Value iv) -> Value {
    if (lower == 0 && step == 1)
      return iv;
    Value offset = builder.create<arith::SubIOp>(loc, iv, loop.getLowerBound());
    return builder.create<arith::DivUIOp>(loc, offset, loop.getStep());
  };

  auto parallel = rewriter.create<scf::ParallelOp>(
      loc, ValueRange{loop.getLowerBound()}, ValueRange{loop.getUpperBound()},
      ValueRange{loop.getStep()});
  IRMapping terms;
  terms.map(loop.getInductionVar(), parallel.getInductionVars()[0]);
  rewriter.setInsertionPoint(parallel.getBody()->getTerminator());
  for (Operation &op : loop.getBody()->without_terminator())
    if (!llvm::any_of(sums, [&](const RowSum &sum) { return sum.add == &op; }))
      rewriter.clone(op, terms);
  Value row = rowOf(rewriter, parallel.getInductionVars()[0]);
  for (const RowSum &sum : sums)
    if (sum.buffer)
      rewriter.create<memref::StoreOp>(loc, terms.lookup(sum.term), sum.buffer,
                                       row);

  rewriter.setInsertionPointAfter(parallel);
  auto sequential = rewriter.create<scf::ForOp>(
      loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
      loop.getInitArgs(),
      [&](OpBuilder &builder, Location, Value iv, ValueRange carried) {
        Value at = rowOf(builder, iv);
        IRMapping adds;
        SmallVector<Value> next;
        for (auto [sum, value] : llvm::zip_equal(sums, carried)) {
          adds.map(loop.getRegionIterArgs()[next.size()], value);
          if (sum.buffer)
            adds.map(sum.term,
                     builder.create<memref::LoadOp>(loc, sum.buffer, at));
          // The same add (operand order, fastmath flags).
          next.push_back(builder.clone(*sum.add, adds)->getResult(0));
        }
        builder.create<scf::YieldOp>(loc, next);
      });
  for (const RowSum &sum : sums)
    if (sum.buffer)
      rewriter.create<memref::DeallocOp>(loc, sum.buffer);
  rewriter.replaceOp(loop, sequential.getResults());
}

/// A sum over the rows of a matrix into a vector, `out[p] += in[r, p]`
/// (a bias gradient), as linalg leaves it: two loops, the reduction first.
/// Null when `op` is not one, or too short to split into two chunks.
Value columnSumInput(linalg::GenericOp op, int64_t chunk) {
  if (chunk < 1 || op.getNumLoops() != 2 || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      op.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::reduction,
                                           utils::IteratorType::parallel})
    return {};
  MLIRContext *ctx = op.getContext();
  AffineExpr r = getAffineDimExpr(0, ctx), p = getAffineDimExpr(1, ctx);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != AffineMap::get(2, 0, {r, p}, ctx) ||
      maps[1] != AffineMap::get(2, 0, {p}, ctx))
    return {};
  Block &body = op.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(&body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!add || add->getNextNode() != yield ||
      yield.getOperand(0) != add.getResult() ||
      !((add.getLhs() == body.getArgument(0) &&
         add.getRhs() == body.getArgument(1)) ||
        (add.getLhs() == body.getArgument(1) &&
         add.getRhs() == body.getArgument(0))))
    return {};
  auto type = dyn_cast<MemRefType>(op.getDpsInputs()[0].getType());
  if (!type || !type.hasStaticShape() || type.getDimSize(0) < 2 * chunk ||
      !isa<FloatType>(type.getElementType()))
    return {};
  return op.getDpsInputs()[0];
}

/// Splits a column sum over R rows into chunks of `chunk` rows: one thread
/// per (chunk, column) sums its rows into a buffer of partial sums, then
/// one thread per column adds the partial sums into the output. With one
/// thread per column (the whole sum in a thread) a bias gradient of 4096
/// columns ran 4096 threads, far too few to hide the memory's latency.
/// The additions are reassociated (chunk by chunk), unlike the CPU
/// target's row-order sum: results differ by rounding.
void splitColumnSum(RewriterBase &rewriter, linalg::GenericOp op, Value input,
                    int64_t chunk) {
  Location loc = op.getLoc();
  auto type = cast<MemRefType>(input.getType());
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  int64_t chunks = (rows + chunk - 1) / chunk;
  Value output = op.getDpsInits()[0];
  Type element = type.getElementType();
  auto add = cast<arith::AddFOp>(op.getRegion().front().front());
  bool inputFirst = add.getLhs() == op.getRegion().front().getArgument(0);
  // The body's add, same flags, the running sum as its `out` operand.
  auto accumulate = [&](OpBuilder &builder, Value value, Value sum) -> Value {
    return builder.create<arith::AddFOp>(loc, inputFirst ? value : sum,
                                         inputFirst ? sum : value,
                                         add.getFastmathAttr());
  };
  rewriter.setInsertionPoint(op);
  auto index = [&](int64_t value) {
    return rewriter.create<arith::ConstantIndexOp>(loc, value).getResult();
  };
  Value zero = index(0), one = index(1), chunkSize = index(chunk),
        rowCount = index(rows), chunkCount = index(chunks),
        columnCount = index(columns);
  Value partial = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get({chunks, columns}, element),
      rewriter.getI64IntegerAttr(64));
  // -0.0, the identity of addition (+0.0 would turn a chunk of -0.0 into
  // +0.0).
  Value fillValue = rewriter.create<arith::ConstantOp>(
      loc, element, rewriter.getFloatAttr(element, -0.0));
  // sum = init; for i in [first, end): sum = sum (+) at(i), in order.
  auto sumLoop = [&](OpBuilder &builder, Value first, Value end, Value init,
                     function_ref<Value(OpBuilder &, Value)> at) {
    return builder
        .create<scf::ForOp>(
            loc, first, end, one, ValueRange{init},
            [&](OpBuilder &inner, Location, Value i, ValueRange carried) {
              inner.create<scf::YieldOp>(
                  loc, accumulate(inner, at(inner, i), carried[0]));
            })
        .getResult(0);
  };
  rewriter.create<scf::ParallelOp>(
      loc, ValueRange{zero, zero}, ValueRange{chunkCount, columnCount},
      ValueRange{one, one},
      [&](OpBuilder &builder, Location, ValueRange ivs) {
        Value first = builder.create<arith::MulIOp>(loc, ivs[0], chunkSize);
        Value end = builder.create<arith::MinSIOp>(
            loc, builder.create<arith::AddIOp>(loc, first, chunkSize),
            rowCount);
        Value sum = sumLoop(builder, first, end, fillValue,
                            [&](OpBuilder &inner, Value row) -> Value {
                              return inner.create<memref::LoadOp>(
                                  loc, input, ValueRange{row, ivs[1]});
                            });
        builder.create<memref::StoreOp>(loc, sum, partial, ivs);
      });
  rewriter.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{columnCount}, ValueRange{one},
      [&](OpBuilder &builder, Location, ValueRange ivs) {
        Value start = builder.create<memref::LoadOp>(loc, output, ivs[0]);
        Value sum = sumLoop(builder, zero, chunkCount, start,
                            [&](OpBuilder &inner, Value c) -> Value {
                              return inner.create<memref::LoadOp>(
                                  loc, partial, ValueRange{c, ivs[0]});
                            });
        builder.create<memref::StoreOp>(loc, sum, output, ivs[0]);
      });
  rewriter.create<memref::DeallocOp>(loc, partial);
  rewriter.eraseOp(op);
}

/// `scf.for` -> `scf.parallel` with the same bounds and body.
void makeParallel(RewriterBase &rewriter, scf::ForOp loop) {
  rewriter.setInsertionPoint(loop);
  auto parallel = rewriter.create<scf::ParallelOp>(
      loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = parallel.getBody();
  rewriter.eraseOp(loop.getBody()->getTerminator());
  rewriter.inlineBlockBefore(loop.getBody(), body->getTerminator(),
                             parallel.getInductionVars());
  rewriter.eraseOp(loop);
}

/// Reorders `op`'s loops so that its parallel dimensions come first (then
/// its reductions, in their order): linalg's loops follow the iterator
/// order, and a reduction before a parallel dimension (a sum over axis 0)
/// would leave a host loop launching one kernel per reduced element.
LogicalResult parallelDimensionsFirst(RewriterBase &rewriter,
                                      linalg::LinalgOp &op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type == utils::IteratorType::parallel)
      order.push_back(i);
  for (auto [i, type] : llvm::enumerate(iterators))
    if (type != utils::IteratorType::parallel)
      order.push_back(i);
  bool sorted = llvm::all_of(llvm::enumerate(order), [](auto pair) {
    return pair.index() == pair.value();
  });
  if (sorted)
    return success();
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op.emitError("cannot be generalized to reorder its loops");
    generic = *generalized;
  }
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, generic, order);
  if (failed(interchanged))
    return generic.emitError("cannot reorder its loops");
  op = *interchanged;
  return success();
}

bool isNestedInParallel(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() != nullptr;
}

struct MapLoopsToGPUPass : pipecc::impl::MapLoopsToGPUBase<MapLoopsToGPUPass> {
  using MapLoopsToGPUBase::MapLoopsToGPUBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (blockSize < 1) {
      func.emitError("pipecc-map-loops-to-gpu: block-size must be at least 1");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());

    // Copies between buffers are loops like the rest.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }

    // Column sums long enough to split: chunks of rows in parallel.
    SmallVector<std::pair<linalg::GenericOp, Value>> columnSums;
    func.walk([&](linalg::GenericOp op) {
      if (Value input = columnSumInput(op, reductionChunk))
        columnSums.emplace_back(op, input);
    });
    for (auto [op, input] : columnSums) {
      splitColumnSum(rewriter, op, input, reductionChunk);
      ++numColumnSums;
    }

    SmallVector<linalg::LinalgOp> linalgOps;
    func.walk([&](linalg::LinalgOp op) { linalgOps.push_back(op); });
    for (linalg::LinalgOp op : linalgOps) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError("expected a linalg op on buffers after bufferization");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      if (failed(parallelDimensionsFirst(rewriter, op)))
        return signalPassFailure();
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op.emitError("cannot be turned into parallel loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }

    // Outermost row sums: their rows in parallel, the sum after.
    SmallVector<std::pair<scf::ForOp, SmallVector<RowSum>>> rowSums;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp>(op))
        return WalkResult::skip();
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop)
        return WalkResult::advance();
      // Outermost only: a row sum nested in a loop (a spatial
      // cross-entropy's inner rows) yields to the loop around it, which
      // runs on one thread: its results may not come from a kernel.
      SmallVector<RowSum> sums = matchRowSums(loop);
      if (!sums.empty())
        rowSums.emplace_back(loop, std::move(sums));
      return WalkResult::skip();
    });
    for (auto &[loop, sums] : rowSums) {
      splitRowSums(rewriter, loop, sums);
      ++numRowSums;
    }

    // Outermost independent scf.for loops (pre-order: a parallel loop's
    // nested loops stay sequential within its thread).
    SmallVector<scf::ForOp> rowLoops;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp>(op))
        return WalkResult::skip();
      auto loop = dyn_cast<scf::ForOp>(op);
      if (loop && hasIndependentIterations(loop)) {
        rowLoops.push_back(loop);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (scf::ForOp loop : rowLoops) {
      makeParallel(rewriter, loop);
      ++numRowLoops;
    }

    // Collapse, tile by the block size, map to block x / thread x.
    SmallVector<scf::ParallelOp> outermost;
    func.walk([&](scf::ParallelOp op) {
      if (!isNestedInParallel(op))
        outermost.push_back(op);
    });
    for (scf::ParallelOp op : outermost) {
      if (op.getNumLoops() > 1) {
        std::vector<unsigned> all(op.getNumLoops());
        std::iota(all.begin(), all.end(), 0);
        Operation *before = op->getPrevNode();
        Block *block = op->getBlock();
        collapseParallelLoops(rewriter, op, {all});
        // The collapsed loop takes the old one's place.
        Operation *next = before ? before->getNextNode() : &block->front();
        while (!isa<scf::ParallelOp>(next))
          next = next->getNextNode();
        op = cast<scf::ParallelOp>(next);
      }
      int64_t tile = blockSize;
      std::optional<int64_t> lower = getConstantIntValue(op.getLowerBound()[0]);
      std::optional<int64_t> upper = getConstantIntValue(op.getUpperBound()[0]);
      std::optional<int64_t> step = getConstantIntValue(op.getStep()[0]);
      if (lower && upper && step && *step > 0)
        tile = std::max<int64_t>(
            1, std::min<int64_t>(tile, (*upper - *lower + *step - 1) / *step));
      auto [outer, inner] =
          scf::tileParallelLoop(op, {tile}, /*noMinMaxBounds=*/true);
      MLIRContext *ctx = &getContext();
      auto map = [&](gpu::Processor processor) {
        return gpu::ParallelLoopDimMappingAttr::get(
            ctx, processor, AffineMap::getMultiDimIdentityMap(1, ctx),
            AffineMap::getMultiDimIdentityMap(1, ctx));
      };
      if (failed(gpu::setMappingAttr(outer, {map(gpu::Processor::BlockX)})) ||
          failed(gpu::setMappingAttr(inner, {map(gpu::Processor::ThreadX)})))
        return signalPassFailure();
      // Loops nested in a thread run sequentially.
      inner.walk([&](scf::ParallelOp nested) {
        if (nested != inner)
          (void)gpu::setMappingAttr(
              nested,
              SmallVector<gpu::ParallelLoopDimMappingAttr>(
                  nested.getNumLoops(), map(gpu::Processor::Sequential)));
      });
      ++numMapped;
    }
  }
};

} // namespace
