// graph.matmul canonicalization: a transpose of an operand's two innermost
// dims becomes the operand's transpose flag. PyTorch exports a Linear on
// 3-D input as `Transpose(weight) -> MatMul`; read through the flag, BLAS
// takes the weight as it is, and the gradient rule produces the weight's
// gradient in the weight's layout (no transpose back).
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace pipecc::graph;

namespace {

/// The input of `value`'s defining transpose when that swaps only the two
/// innermost dims.
Value innerTransposeSource(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = perm.size();
  if (rank < 2)
    return {};
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return {};
  if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return {};
  return transpose.getInput();
}

struct FoldInnerTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    bool transposeLhs = op.getTransposeLhs();
    bool transposeRhs = op.getTransposeRhs();
    Value lhsSource = innerTransposeSource(lhs);
    Value rhsSource = innerTransposeSource(rhs);
    if (!lhsSource && !rhsSource)
      return failure();
    if (lhsSource) {
      lhs = lhsSource;
      transposeLhs = !transposeLhs;
    }
    if (rhsSource) {
      rhs = rhsSource;
      transposeRhs = !transposeRhs;
    }
    auto folded = rewriter.create<MatMulOp>(op.getLoc(), lhs, rhs,
                                            transposeLhs, transposeRhs);
    folded->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.replaceOp(op, folded.getResult());
    return success();
  }
};

} // namespace

void MatMulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldInnerTranspose>(context);
}
