//===- Contraction.cpp - graph.matmul to named linalg matmuls -------------===//
//
// Matmuls become the named ops (linalg.matmul, matmul_transpose_a/_b and
// the batch_ variants) so that pipecc-matmul-to-blas finds them after
// bufferization (graph.matmul's canonicalization has already turned
// transposes of an operand's two inner dims into its transpose flags).
// Transposes and batch broadcasts are materialised only where no named op
// expresses them:
//   - both operands transposed: lhs is transposed with linalg.transpose;
//   - a 2-D rhs under a batched lhs (x @ W): the lhs batch dims fold into
//     M and one plain matmul does it;
//   - otherwise the operands are broadcast (linalg.broadcast) to the
//     result's batch dims when they differ, which are collapsed into one.
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

RankedTensorType withShape(RankedTensorType type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

/// Swaps the two innermost dimensions.
Value transposeInner(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm, shape;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i < rank - 2 ? i : (i == rank - 2 ? rank - 1 : rank - 2));
  for (int64_t i : perm)
    shape.push_back(type.getDimSize(i));
  Value init = b.create<tensor::EmptyOp>(loc, shape, type.getElementType());
  return b.create<linalg::TransposeOp>(loc, value, init, perm)->getResult(0);
}

/// The named op for the transpose flags: plain, transpose_a, transpose_b.
template <typename Plain, typename TransA, typename TransB>
Value createContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        bool transposeLhs, bool transposeRhs,
                        RankedTensorType resultType) {
  if (transposeLhs && transposeRhs) {
    lhs = transposeInner(b, loc, lhs);
    transposeLhs = false;
  }
  // Floats narrower than f32 (bf16) accumulate in f32 and round once.
  RankedTensorType accumulatorType = resultType;
  if (resultType.getElementType().getIntOrFloatBitWidth() < 32)
    accumulatorType =
        RankedTensorType::get(resultType.getShape(), b.getF32Type());
  Value zero = createFloat(b, loc, accumulatorType.getElementType(), 0.0);
  Value init = createFilled(b, loc, accumulatorType, zero);
  SmallVector<Type> types = {accumulatorType};
  SmallVector<Value> inputs = {lhs, rhs};
  Operation *op;
  if (transposeLhs)
    op = b.create<TransA>(loc, types, inputs, init);
  else if (transposeRhs)
    op = b.create<TransB>(loc, types, inputs, init);
  else
    op = b.create<Plain>(loc, types, inputs, init);
  if (accumulatorType == resultType)
    return op->getResult(0);
  unsigned rank = resultType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Value rounded = b.create<tensor::EmptyOp>(loc, resultType.getShape(),
                                            resultType.getElementType());
  return b
      .create<linalg::GenericOp>(
          loc, resultType, op->getResult(0), rounded,
          SmallVector<AffineMap>{identity, identity}, getIterators(rank),
          [&](OpBuilder &nested, Location at, ValueRange args) {
            nested.create<linalg::YieldOp>(
                at, nested
                        .create<arith::TruncFOp>(
                            at, resultType.getElementType(), args[0])
                        .getResult());
          })
      .getResult(0);
}

/// Broadcasts the batch dims of a matrix operand to `batchShape` and
/// collapses them into one: [B, rows, cols].
Value toBatch(OpBuilder &b, Location loc, Value value,
              ArrayRef<int64_t> batchShape) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  int64_t batchRank = batchShape.size();
  int64_t offset = batchRank - (rank - 2);
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  // Batch dims the operand has at the result's size are kept; missing and
  // stretched size-1 dims are added by linalg.broadcast.
  SmallVector<int64_t> keptShape, added;
  for (int64_t i = 0; i < batchRank; ++i) {
    if (i >= offset && type.getDimSize(i - offset) == batchShape[i])
      keptShape.push_back(batchShape[i]);
    else
      added.push_back(i);
  }
  if (!added.empty()) {
    keptShape.append({rows, cols});
    Value kept = reshapeTo(b, loc, value, withShape(type, keptShape));
    SmallVector<int64_t> fullShape(batchShape);
    fullShape.append({rows, cols});
    Value init = b.create<tensor::EmptyOp>(loc, fullShape,
                                           type.getElementType());
    value = b.create<linalg::BroadcastOp>(loc, kept, init, added)
                ->getResult(0);
  }
  int64_t batch = 1;
  for (int64_t size : batchShape)
    batch *= size;
  return reshapeTo(b, loc, value, withShape(type, {batch, rows, cols}));
}

struct MatMulLowering : OpConversionPattern<graph::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(graph::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    int64_t m = resultType.getDimSize(rank - 2);
    int64_t n = resultType.getDimSize(rank - 1);

    if (lhsType.getRank() == 2 && rhsType.getRank() == 2) {
      rewriter.replaceOp(
          op, createContraction<linalg::MatmulOp, linalg::MatmulTransposeAOp,
                                linalg::MatmulTransposeBOp>(
                  rewriter, loc, lhs, rhs, transposeLhs, transposeRhs,
                  resultType));
      return success();
    }

    if (rhsType.getRank() == 2 && !transposeLhs) {
      // [b..., M, K] x [K, N]: the batch dims are rows of one matrix.
      int64_t rows = lhsType.getNumElements() / lhsType.getDimSize(rank - 1);
      Value flatLhs = reshapeTo(
          rewriter, loc, lhs,
          withShape(lhsType, {rows, lhsType.getDimSize(rank - 1)}));
      Value product =
          createContraction<linalg::MatmulOp, linalg::MatmulTransposeAOp,
                            linalg::MatmulTransposeBOp>(
              rewriter, loc, flatLhs, rhs, false, transposeRhs,
              withShape(resultType, {rows, n}));
      rewriter.replaceOp(op, reshapeTo(rewriter, loc, product, resultType));
      return success();
    }

    ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
    int64_t batch = 1;
    for (int64_t size : batchShape)
      batch *= size;
    Value batchLhs = toBatch(rewriter, loc, lhs, batchShape);
    Value batchRhs = toBatch(rewriter, loc, rhs, batchShape);
    Value product =
        createContraction<linalg::BatchMatmulOp,
                          linalg::BatchMatmulTransposeAOp,
                          linalg::BatchMatmulTransposeBOp>(
            rewriter, loc, batchLhs, batchRhs, transposeLhs, transposeRhs,
            withShape(resultType, {batch, m, n}));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, product, resultType));
    return success();
  }
};

} // namespace

void populateContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulLowering>(patterns.getContext());
}

} // namespace pipecc::conversion
