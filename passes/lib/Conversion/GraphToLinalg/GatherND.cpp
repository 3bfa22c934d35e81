//===- GatherND.cpp - gather_nd and its scatter-add gradient --------------===//
//
// As for gather: the forward pass is a parallel generic over the result
// that reads the index tuple and the data with tensor.extract; the gradient
// is a generic over `data` with the non-batch index positions as reduction
// loops, so repeated tuples accumulate in a fixed order. Indices wrap when
// negative and are clamped into range, so no index reads or writes outside
// the tensor.
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
namespace {

/// Entry `j` of the index tuple at `position` (the leading dims of indices).
Value tupleEntry(OpBuilder &b, Location loc, Value indices,
                 ArrayRef<Value> position, int64_t j) {
  SmallVector<Value> at(position);
  at.push_back(b.create<arith::ConstantIndexOp>(loc, j));
  return b.create<tensor::ExtractOp>(loc, indices, at);
}

struct GatherNDLowering : OpConversionPattern<graph::GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    RankedTensorType type = op.getType(), dataType = op.getData().getType();
    auto indicesType = op.getIndices().getType();
    int64_t rank = type.getRank(), q = indicesType.getRank();
    int64_t batch = op.getBatchDimsAttr().getInt();
    int64_t k = indicesType.getShape().back();
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(),
                                                  type.getElementType());
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange(), init,
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
        getIterators(rank), [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> loops;
          for (int64_t d = 0; d < rank; ++d)
            loops.push_back(b.create<linalg::IndexOp>(l, d));
          ArrayRef<Value> position = ArrayRef<Value>(loops).take_front(q - 1);
          SmallVector<Value> at(position.take_front(batch));
          for (int64_t j = 0; j < k; ++j)
            at.push_back(normalizeIndex(
                b, l, tupleEntry(b, l, indices, position, j),
                dataType.getDimSize(batch + j)));
          at.append(loops.begin() + (q - 1), loops.end());
          b.create<linalg::YieldOp>(
              l, b.create<tensor::ExtractOp>(l, data, at).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct GatherNDGradLowering : OpConversionPattern<graph::GatherNDGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(graph::GatherNDGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = getContext();
    RankedTensorType type = op.getType();
    auto indicesType = op.getIndices().getType();
    int64_t r = type.getRank(), q = indicesType.getRank();
    int64_t batch = op.getBatchDimsAttr().getInt();
    int64_t k = indicesType.getShape().back();
    // Loops: data's dims [0, r), then the non-batch index positions as
    // reductions [r, r + q - 1 - batch).
    int64_t positions = q - 1 - batch;
    int64_t loops = r + positions;
    SmallVector<AffineExpr> gradExprs, dataExprs;
    for (int64_t d = 0; d < batch; ++d)
      gradExprs.push_back(getAffineDimExpr(d, ctx));
    for (int64_t d = 0; d < positions; ++d)
      gradExprs.push_back(getAffineDimExpr(r + d, ctx));
    for (int64_t d = batch + k; d < r; ++d)
      gradExprs.push_back(getAffineDimExpr(d, ctx));
    for (int64_t d = 0; d < r; ++d)
      dataExprs.push_back(getAffineDimExpr(d, ctx));
    SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, gradExprs, ctx),
                                   AffineMap::get(loops, 0, dataExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(r,
                                               utils::IteratorType::parallel);
    iterators.append(positions, utils::IteratorType::reduction);
    Value zero = createFloat(rewriter, loc, type.getElementType(), 0);
    Value indices = adaptor.getIndices();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{adaptor.getResultGrad()},
        createFilled(rewriter, loc, type, zero), maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          SmallVector<Value> position;
          for (int64_t d = 0; d < batch; ++d)
            position.push_back(b.create<linalg::IndexOp>(l, d));
          for (int64_t d = 0; d < positions; ++d)
            position.push_back(b.create<linalg::IndexOp>(l, r + d));
          Value hit;
          for (int64_t j = 0; j < k; ++j) {
            Value index =
                normalizeIndex(b, l, tupleEntry(b, l, indices, position, j),
                             type.getDimSize(batch + j));
            Value same = b.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::eq, index,
                b.create<linalg::IndexOp>(l, batch + j));
            hit = hit ? b.create<arith::AndIOp>(l, hit, same).getResult()
                      : same;
          }
          Value zeroElement = createFloat(b, l, type.getElementType(), 0);
          Value term = b.create<arith::SelectOp>(l, hit, args[0], zeroElement);
          b.create<linalg::YieldOp>(
              l, b.create<arith::AddFOp>(l, args[1], term).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateGatherNDPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherNDLowering, GatherNDGradLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
