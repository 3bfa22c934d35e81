//===- Contraction.cpp - MatMul and Gemm ----------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// Y = alpha * op(A) op(B) + beta * C, C optional and broadcast to Y.
static LogicalResult convertGemm(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value a = ctx.getOperand(0), b = ctx.getOperand(1), c = ctx.getOperand(2);
  if (ctx.getOperandType(0).getRank() != 2 ||
      ctx.getOperandType(1).getRank() != 2)
    return ctx.fail(llvm::formatv("A and B must be matrices, got {0} and {1}",
                                  a.getType(), b.getType()));
  Type elementType = ctx.getOperandType(0).getElementType();
  if (!llvm::isa<FloatType>(elementType))
    return ctx.fail(llvm::formatv("Gemm of {0} is not supported: graph "
                                  "arithmetic is floating-point",
                                  a.getType()));
  float alpha = ctx.getFloat("alpha", 1.0f), beta = ctx.getFloat("beta", 1.0f);
  SmallVector<NamedAttribute> attrs;
  if (ctx.getInt("transA", 0))
    attrs.push_back(
        ctx.builder.getNamedAttr("transpose_lhs", ctx.builder.getUnitAttr()));
  if (ctx.getInt("transB", 0))
    attrs.push_back(
        ctx.builder.getNamedAttr("transpose_rhs", ctx.builder.getUnitAttr()));
  FailureOr<Value> y = ctx.create<graph::MatMulOp>({a, b}, attrs);
  if (failed(y))
    return failure();
  if (alpha != 1.0f) {
    y = ctx.create<graph::MulOp>({*y, ctx.createScalar(elementType, alpha)});
    if (failed(y))
      return failure();
  }
  if (c && beta != 0.0f) {
    Type productType = y->getType();
    FailureOr<Value> scaled = c;
    if (beta != 1.0f)
      scaled = ctx.create<graph::MulOp>({c, ctx.createScalar(elementType, beta)});
    if (failed(scaled))
      return failure();
    y = ctx.create<graph::AddOp>({*y, *scaled});
    if (failed(y))
      return failure();
    if (y->getType() != productType)
      return ctx.fail(llvm::formatv("C of type {0} does not broadcast to the "
                                    "product's type {1}",
                                    c.getType(), productType));
  }
  results.push_back(*y);
  return success();
}

/// numpy.matmul: 1-D operands become matrices and lose that dimension again.
static LogicalResult convertMatMul(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value lhs = ctx.getOperand(0), rhs = ctx.getOperand(1);
  RankedTensorType lhsType = ctx.getOperandType(0),
                   rhsType = ctx.getOperandType(1);
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return ctx.fail(llvm::formatv("operands must have rank 1 or more, got {0} "
                                  "and {1}",
                                  lhsType, rhsType));
  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  if (lhsVector) {
    FailureOr<Value> matrix = ctx.reshape(lhs, {1, lhsType.getDimSize(0)});
    if (failed(matrix))
      return failure();
    lhs = *matrix;
  }
  if (rhsVector) {
    FailureOr<Value> matrix = ctx.reshape(rhs, {rhsType.getDimSize(0), 1});
    if (failed(matrix))
      return failure();
    rhs = *matrix;
  }
  FailureOr<Value> y = ctx.create<graph::MatMulOp>({lhs, rhs});
  if (failed(y))
    return failure();
  if (lhsVector || rhsVector) {
    auto shape =
        llvm::to_vector(llvm::cast<RankedTensorType>(y->getType()).getShape());
    if (rhsVector)
      shape.pop_back();
    if (lhsVector)
      shape.erase(shape.end() - (rhsVector ? 1 : 2));
    y = ctx.reshape(*y, shape);
    if (failed(y))
      return failure();
  }
  results.push_back(*y);
  return success();
}

void pipecc::frontend::detail::populateContractionPatterns(
    PatternRegistry &registry) {
  // Gemm-7 broadcasts C; later versions make C optional (11) and add types.
  registry.add("Gemm", 7, convertGemm);
  registry.add("MatMul", 1, convertMatMul);
}
