//===- Indexing.cpp - slice, pad, gather and its scatter-add gradient -----===//
//
// Slices, pads and gathers are parallel generics over their results that
// read the input with tensor.extract. The gather's gradient is a
// scatter-add: one loop nest over the gradient's elements (O(N * D), not
// O(V * N * D)) adds each into the table row its index selects, so
// repeated indices accumulate in a fixed order (the index positions in
// row-major order: the same sum on every rank and every run).
// Indices are wrapped when negative and clamped into range, so a bad index
// in the data can never read or write outside the table.
//
//===----------------------------------------------------------------------===//
#include "GraphToLinalg.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
namespace graph = pipecc::graph;

namespace pipecc::conversion {

Value buildIndexed(
    OpBuilder &b, Location loc, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = type.getRank();
  Value init =
      b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
  auto generic = b.create<linalg::GenericOp>(
      loc, type, ValueRange(), init,
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
      getIterators(rank), [&](OpBuilder &nb, Location nloc, ValueRange) {
        SmallVector<Value> indices;
        for (unsigned d = 0; d < rank; ++d)
          indices.push_back(nb.create<linalg::IndexOp>(nloc, d));
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, indices));
      });
  return generic.getResult(0);
}

/// The index `raw` (i32 or i64) as an `index` in [0, size): negative
/// values count from the end, the rest is clamped.
Value normalizeIndex(OpBuilder &b, Location loc, Value raw, int64_t size) {
  Value index = b.create<arith::IndexCastOp>(loc, b.getIndexType(), raw);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value sizeValue = b.create<arith::ConstantIndexOp>(loc, size);
  Value last = b.create<arith::ConstantIndexOp>(loc, size - 1);
  Value negative =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index, zero);
  Value wrapped = b.create<arith::SelectOp>(
      loc, negative, b.create<arith::AddIOp>(loc, index, sizeValue), index);
  Value low = b.create<arith::MaxSIOp>(loc, wrapped, zero);
  return b.create<arith::MinSIOp>(loc, low, last);
}

namespace {

// Slices and pads are copies into fresh tensors rather than
// tensor.extract_slice / insert_slice: those bufferize to strided views
// whose copies need the MLIR runner-utils library at link time.
struct SliceLowering : OpConversionPattern<graph::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    ArrayRef<int64_t> offsets = op.getOffsets();
    rewriter.replaceOp(
        op,
        buildIndexed(rewriter, op.getLoc(), op.getType(),
                     [&](OpBuilder &b, Location loc, ValueRange indices) {
                       SmallVector<Value> source;
                       for (auto [index, offset] : llvm::zip(indices, offsets))
                         source.push_back(b.create<arith::AddIOp>(
                             loc, index,
                             b.create<arith::ConstantIndexOp>(loc, offset)));
                       return b.create<tensor::ExtractOp>(loc, input, source);
                     }));
    return success();
  }
};

struct PadLowering : OpConversionPattern<graph::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    ArrayRef<int64_t> low = op.getLow();
    ArrayRef<int64_t> sizes = op.getInput().getType().getShape();
    Type elementType = op.getType().getElementType();
    // Inside the box: the input at the clamped position; outside: zero.
    rewriter.replaceOp(
        op,
        buildIndexed(
            rewriter, op.getLoc(), op.getType(),
            [&](OpBuilder &b, Location loc, ValueRange indices) {
              Value inside;
              SmallVector<Value> source;
              for (auto [index, offset, size] :
                   llvm::zip(indices, low, sizes)) {
                Value lo = b.create<arith::ConstantIndexOp>(loc, offset);
                Value hi = b.create<arith::ConstantIndexOp>(loc, offset + size);
                Value last = b.create<arith::ConstantIndexOp>(loc, size - 1);
                Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
                Value in = b.create<arith::AndIOp>(
                    loc,
                    b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge,
                                            index, lo),
                    b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                            index, hi));
                inside = inside ? b.create<arith::AndIOp>(loc, inside, in) : in;
                Value shifted = b.create<arith::SubIOp>(loc, index, lo);
                source.push_back(b.create<arith::MinSIOp>(
                    loc, b.create<arith::MaxSIOp>(loc, shifted, zero), last));
              }
              Value element = b.create<tensor::ExtractOp>(loc, input, source);
              Value zero = b.create<arith::ConstantOp>(
                  loc, b.getZeroAttr(elementType));
              if (!inside)
                return element;
              return b.create<arith::SelectOp>(loc, inside, element, zero)
                  .getResult();
            }));
    return success();
  }
};

/// The projection of an iteration space of rank `rank` onto `dims`.
AffineMap dimRangeMap(unsigned rank, ArrayRef<unsigned> dims,
                      MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

struct GatherLowering : OpConversionPattern<graph::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    RankedTensorType dataType = op.getData().getType();
    unsigned axis = op.getAxis();
    unsigned indexRank = op.getIndices().getType().getRank();
    unsigned rank = type.getRank();
    int64_t size = dataType.getDimSize(axis);
    // Result dims: [0, axis) of data, then the index dims, then the rest.
    SmallVector<unsigned> indexDims;
    for (unsigned d = axis; d < axis + indexRank; ++d)
      indexDims.push_back(d);
    SmallVector<AffineMap> maps = {
        dimRangeMap(rank, indexDims, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                  type.getElementType());
    Value data = adaptor.getData();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{adaptor.getIndices()}, init, maps,
        getIterators(rank), [&](OpBuilder &b, Location nloc, ValueRange args) {
          SmallVector<Value> position;
          for (unsigned d = 0; d < axis; ++d)
            position.push_back(b.create<linalg::IndexOp>(nloc, d));
          position.push_back(normalizeIndex(b, nloc, args[0], size));
          for (unsigned d = axis + indexRank; d < rank; ++d)
            position.push_back(b.create<linalg::IndexOp>(nloc, d));
          Value element = b.create<tensor::ExtractOp>(nloc, data, position);
          b.create<linalg::YieldOp>(nloc, element);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct GatherGradLowering : OpConversionPattern<graph::GatherGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::GatherGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    unsigned axis = op.getAxis();
    unsigned indexRank = op.getIndices().getType().getRank();
    int64_t size = type.getDimSize(axis);
    Value indices = adaptor.getIndices(), grad = adaptor.getResultGrad();
    // One loop over the gradient's elements, [0, axis) then the index dims
    // then the rest: each adds into the table row its index selects.
    Value zero = createFloat(rewriter, loc, type.getElementType(), 0);
    Value table = createFilled(rewriter, loc, type, zero);
    Value result = buildLoopNest(
        rewriter, loc, cast<RankedTensorType>(grad.getType()).getShape(),
        table,
        [&](OpBuilder &b, Location nloc, ValueRange ivs, ValueRange acc) {
          Value raw = b.create<tensor::ExtractOp>(
              nloc, indices, ivs.slice(axis, indexRank));
          SmallVector<Value> position(ivs.take_front(axis));
          position.push_back(normalizeIndex(b, nloc, raw, size));
          position.append(ivs.begin() + axis + indexRank, ivs.end());
          Value term = b.create<tensor::ExtractOp>(nloc, grad, ivs);
          Value old = b.create<tensor::ExtractOp>(nloc, acc[0], position);
          Value sum = b.create<arith::AddFOp>(nloc, old, term);
          return SmallVector<Value>{
              b.create<tensor::InsertOp>(nloc, sum, acc[0], position)};
        })[0];
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateIndexingPatterns(RewritePatternSet &patterns) {
  patterns.add<SliceLowering, PadLowering, GatherLowering, GatherGradLowering>(
      patterns.getContext());
}

} // namespace pipecc::conversion
