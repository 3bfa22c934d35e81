//===- Elementwise.cpp - Add, Sub, Mul, Div, Relu, Tanh, Exp, Log, Neg ----===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// Numpy broadcasting of two shapes, or nothing.
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// The flat index into a tensor of `shape` that broadcasts to `outShape` at
/// the multi-index `index` of the output.
static int64_t broadcastIndex(ArrayRef<int64_t> index,
                              ArrayRef<int64_t> outShape,
                              ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + (shape[i] == 1 ? 0 : index[offset + i]);
  return flat;
}

namespace {
enum class BinaryKind { Add, Sub, Mul, Div };
} // namespace

/// Integer arithmetic on constants: the shape computations exporters emit.
static FailureOr<Value> foldIntegerBinary(NodeContext &ctx, BinaryKind kind,
                                          DenseElementsAttr lhs,
                                          DenseElementsAttr rhs) {
  auto lhsType = llvm::cast<RankedTensorType>(lhs.getType());
  auto rhsType = llvm::cast<RankedTensorType>(rhs.getType());
  if (lhsType.getElementType() != rhsType.getElementType())
    return ctx.fail(llvm::formatv("operand element types differ: {0} and {1}",
                                  lhsType, rhsType));
  auto shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (!shape)
    return ctx.fail(llvm::formatv("shapes do not broadcast: {0} and {1}",
                                  lhsType, rhsType));
  auto a = llvm::to_vector(lhs.getValues<APInt>());
  auto b = llvm::to_vector(rhs.getValues<APInt>());
  auto type = RankedTensorType::get(*shape, lhsType.getElementType());
  SmallVector<APInt> out;
  SmallVector<int64_t> index(shape->size(), 0);
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    const APInt &x = a[broadcastIndex(index, *shape, lhsType.getShape())];
    const APInt &y = b[broadcastIndex(index, *shape, rhsType.getShape())];
    switch (kind) {
    case BinaryKind::Add:
      out.push_back(x + y);
      break;
    case BinaryKind::Sub:
      out.push_back(x - y);
      break;
    case BinaryKind::Mul:
      out.push_back(x * y);
      break;
    case BinaryKind::Div:
      if (y.isZero())
        return ctx.fail("integer division by zero");
      out.push_back(x.sdiv(y));
      break;
    }
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < (*shape)[d])
        break;
      index[d] = 0;
    }
  }
  return ctx.createConstant(DenseElementsAttr::get(type, out));
}

template <typename OpTy, BinaryKind Kind>
static LogicalResult convertBinary(NodeContext &ctx,
                                   SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value lhs = ctx.getOperand(0), rhs = ctx.getOperand(1);
  if (!llvm::isa<FloatType>(ctx.getOperandType(0).getElementType())) {
    DenseElementsAttr a = ctx.getConstant(lhs), b = ctx.getConstant(rhs);
    if (!a || !b || !a.getElementType().isSignlessInteger())
      return ctx.fail(llvm::formatv(
          "{0} on {1} and {2} is not supported yet: graph arithmetic is "
          "floating-point, integer arithmetic only folds on constants",
          ctx.node.op_type(), lhs.getType(), rhs.getType()));
    FailureOr<Value> folded = foldIntegerBinary(ctx, Kind, a, b);
    if (failed(folded))
      return failure();
    results.push_back(*folded);
    return success();
  }
  FailureOr<Value> result = ctx.create<OpTy>({lhs, rhs});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateElementwisePatterns(
    PatternRegistry &registry) {
  // Opset 7 replaced the `broadcast`/`axis` attributes by numpy broadcasting;
  // later versions only add element types.
  registry.add("Add", 7, convertBinary<graph::AddOp, BinaryKind::Add>);
  registry.add("Sub", 7, convertBinary<graph::SubOp, BinaryKind::Sub>);
  registry.add("Mul", 7, convertBinary<graph::MulOp, BinaryKind::Mul>);
  registry.add("Div", 7, convertBinary<graph::DivOp, BinaryKind::Div>);
  // Opset 6 dropped `consumed_inputs`.
  registry.add("Relu", 6, convertFloatUnary<graph::ReluOp>);
  registry.add("Tanh", 6, convertFloatUnary<graph::TanhOp>);
  registry.add("Exp", 6, convertFloatUnary<graph::ExpOp>);
  registry.add("Log", 6, convertFloatUnary<graph::LogOp>);
  registry.add("Neg", 6, convertFloatUnary<graph::NegOp>);
}
