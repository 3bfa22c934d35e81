//===- Selection.cpp - Equal and Where ------------------------------------===//
//
// Exporters build attention masks as Where(Equal(mask, 0), -inf, scores)
// over a constant mask buffer: Equal only ever sees constants and folds
// here, and Where becomes graph.where, or a constant when all its inputs are
// constants. Both fold through one broadcasting constant evaluator.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "mlir/Dialect/Traits.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

namespace {
using ElementFn = function_ref<Attribute(ArrayRef<Attribute>)>;
} // namespace

/// Evaluates an elementwise op on constants with numpy broadcasting: `fn`
/// maps one element of each operand to one result element of `elementType`.
static FailureOr<Value> foldBroadcast(NodeContext &ctx,
                                      ArrayRef<DenseElementsAttr> operands,
                                      Type elementType, ElementFn fn) {
  SmallVector<int64_t> shape;
  for (DenseElementsAttr operand : operands) {
    SmallVector<int64_t> next;
    auto type = llvm::cast<RankedTensorType>(operand.getType());
    if (!OpTrait::util::getBroadcastedShape(shape, type.getShape(), next))
      return ctx.fail(
          llvm::formatv("input shapes do not broadcast: {0}", type));
    shape = next;
  }
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr operand : operands)
    values.push_back(llvm::to_vector(operand.getValues<Attribute>()));
  auto type = RankedTensorType::get(shape, elementType);
  SmallVector<Attribute> out;
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<Attribute> args(operands.size());
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    for (auto [i, operand] : llvm::enumerate(operands)) {
      ArrayRef<int64_t> dims =
          llvm::cast<RankedTensorType>(operand.getType()).getShape();
      int64_t flat = 0;
      size_t lead = shape.size() - dims.size();
      for (size_t d = 0; d < dims.size(); ++d)
        flat = flat * dims[d] + (dims[d] == 1 ? 0 : index[lead + d]);
      args[i] = values[i][flat];
    }
    out.push_back(fn(args));
    for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return ctx.createConstant(DenseElementsAttr::get(type, out));
}

static bool elementsEqual(Attribute a, Attribute b) {
  if (auto fa = llvm::dyn_cast<FloatAttr>(a))
    return fa.getValue().compare(llvm::cast<FloatAttr>(b).getValue()) ==
           APFloat::cmpEqual;
  return llvm::cast<IntegerAttr>(a).getValue() ==
         llvm::cast<IntegerAttr>(b).getValue();
}

static LogicalResult convertEqual(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  DenseElementsAttr lhs = ctx.getConstant(ctx.getOperand(0));
  DenseElementsAttr rhs = ctx.getConstant(ctx.getOperand(1));
  if (!lhs || !rhs)
    return ctx.fail(llvm::formatv(
        "Equal of {0} and {1} is not supported yet: comparisons fold only "
        "when both inputs are constants (such as mask buffers)",
        ctx.getOperand(0).getType(), ctx.getOperand(1).getType()));
  if (lhs.getElementType() != rhs.getElementType())
    return ctx.fail(llvm::formatv("input element types differ: {0} and {1}",
                                  lhs.getType(), rhs.getType()));
  Type i1 = ctx.builder.getI1Type();
  FailureOr<Value> folded =
      foldBroadcast(ctx, {lhs, rhs}, i1, [&](ArrayRef<Attribute> args) {
        return IntegerAttr::get(i1, elementsEqual(args[0], args[1]));
      });
  if (failed(folded))
    return failure();
  results.push_back(*folded);
  return success();
}

static LogicalResult convertWhere(NodeContext &ctx,
                                  SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(3)))
    return failure();
  Value condition = ctx.getOperand(0), lhs = ctx.getOperand(1),
        rhs = ctx.getOperand(2);
  if (!ctx.getOperandType(0).getElementType().isInteger(1))
    return ctx.fail(llvm::formatv("the condition {0} is not a bool tensor",
                                  condition.getType()));
  Type elementType = ctx.getOperandType(1).getElementType();
  if (elementType != ctx.getOperandType(2).getElementType())
    return ctx.fail(llvm::formatv("input element types differ: {0} and {1}",
                                  lhs.getType(), rhs.getType()));
  DenseElementsAttr c = ctx.getConstant(condition), l = ctx.getConstant(lhs),
                    r = ctx.getConstant(rhs);
  if (c && l && r) {
    FailureOr<Value> folded = foldBroadcast(
        ctx, {c, l, r}, elementType, [](ArrayRef<Attribute> args) {
          return llvm::cast<IntegerAttr>(args[0]).getValue().isZero() ? args[2]
                                                                      : args[1];
        });
    if (failed(folded))
      return failure();
    results.push_back(*folded);
    return success();
  }
  if (!llvm::isa<FloatType>(elementType))
    return ctx.fail(llvm::formatv(
        "Where on {0} is not supported yet: graph selection is "
        "floating-point, integer selection only folds on constants",
        lhs.getType()));
  FailureOr<Value> result = ctx.create<graph::WhereOp>({condition, lhs, rhs});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateSelectionPatterns(
    PatternRegistry &registry) {
  // Equal-7 gained broadcasting; 11 and 13 add element types.
  registry.add("Equal", 7, convertEqual);
  // Where-16 adds element types only.
  registry.add("Where", 9, convertWhere);
}
