//===- Math.cpp - Sqrt, Erf, Pow, Reciprocal, Gelu ------------------------===//
//
// Pow appears in exported LayerNorm and RMSNorm decompositions as x^2 with a
// constant exponent; constant small exponents become products, square roots
// and divisions, which differentiate exactly. Other exponents have no graph
// op yet.
//
//===----------------------------------------------------------------------===//

#include "../Patterns.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace pipecc::frontend::detail;
namespace graph = pipecc::graph;

/// The one value every element of `constant` holds, if they are all equal.
static std::optional<double> getSplatValue(DenseElementsAttr constant) {
  std::optional<double> value;
  for (Attribute element : constant.getValues<Attribute>()) {
    double v;
    if (auto f = llvm::dyn_cast<FloatAttr>(element))
      v = f.getValueAsDouble();
    else if (auto i = llvm::dyn_cast<IntegerAttr>(element))
      v = static_cast<double>(i.getValue().getSExtValue());
    else
      return std::nullopt;
    if (value && *value != v)
      return std::nullopt;
    value = v;
  }
  return value;
}

static LogicalResult convertPow(NodeContext &ctx,
                                SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(2)))
    return failure();
  Value base = ctx.getOperand(0);
  RankedTensorType baseType = ctx.getOperandType(0);
  if (!llvm::isa<FloatType>(baseType.getElementType()))
    return ctx.fail(llvm::formatv("Pow of {0} is not supported: graph "
                                  "arithmetic is floating-point",
                                  base.getType()));
  DenseElementsAttr exponentValue = ctx.getConstant(ctx.getOperand(1));
  std::optional<double> exponent =
      exponentValue ? getSplatValue(exponentValue) : std::nullopt;
  auto unsupported = [&] {
    return ctx.fail("Pow is supported only with a constant exponent of 1, 2, "
                    "3, 0.5, -0.5 or -1 (one value for every element)");
  };
  if (!exponent)
    return unsupported();
  // The exponent broadcasts too: the result has the broadcast shape.
  auto finish = [&](FailureOr<Value> value) -> LogicalResult {
    if (failed(value))
      return failure();
    Value result = *value;
    auto exponentType = llvm::cast<RankedTensorType>(exponentValue.getType());
    bool widens = exponentType.getRank() > baseType.getRank();
    for (int64_t i = 1; !widens && i <= exponentType.getRank(); ++i)
      widens = exponentType.getDimSize(exponentType.getRank() - i) >
               baseType.getDimSize(baseType.getRank() - i);
    if (widens) {
      FailureOr<Value> shaped = ctx.create<graph::MulOp>(
          {result, ctx.createConstant(DenseElementsAttr::get(
                       exponentType.clone(baseType.getElementType()),
                       FloatAttr::get(baseType.getElementType(), 1.0)))});
      if (failed(shaped))
        return failure();
      result = *shaped;
    }
    results.push_back(result);
    return success();
  };
  auto reciprocal = [&](FailureOr<Value> value) -> FailureOr<Value> {
    if (failed(value))
      return failure();
    return ctx.create<graph::DivOp>(
        {ctx.createScalar(baseType.getElementType(), 1.0), *value});
  };
  if (*exponent == 1)
    return finish(base);
  if (*exponent == 2)
    return finish(ctx.create<graph::MulOp>({base, base}));
  if (*exponent == 3) {
    FailureOr<Value> square = ctx.create<graph::MulOp>({base, base});
    if (failed(square))
      return failure();
    return finish(ctx.create<graph::MulOp>({*square, base}));
  }
  if (*exponent == 0.5)
    return finish(ctx.create<graph::SqrtOp>({base}));
  if (*exponent == -0.5)
    return finish(reciprocal(ctx.create<graph::SqrtOp>({base})));
  if (*exponent == -1)
    return finish(reciprocal(base));
  return unsupported();
}

static LogicalResult convertReciprocal(NodeContext &ctx,
                                       SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  Type elementType = ctx.getOperandType(0).getElementType();
  if (!llvm::isa<FloatType>(elementType))
    return ctx.fail(llvm::formatv("Reciprocal of {0} is not supported: graph "
                                  "arithmetic is floating-point",
                                  ctx.getOperand(0).getType()));
  FailureOr<Value> result = ctx.create<graph::DivOp>(
      {ctx.createScalar(elementType, 1.0), ctx.getOperand(0)});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

/// Gelu-20 as the formula PyTorch exports at lower opsets: exact,
/// x/2 (1 + erf(x / sqrt 2)), or with approximate = "tanh",
/// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
static LogicalResult convertGelu(NodeContext &ctx,
                                 SmallVectorImpl<Value> &results) {
  if (failed(ctx.requireOperands(1)))
    return failure();
  Value x = ctx.getOperand(0);
  Type elementType = ctx.getOperandType(0).getElementType();
  if (!llvm::isa<FloatType>(elementType))
    return ctx.fail(llvm::formatv("Gelu of {0} is not supported: graph "
                                  "arithmetic is floating-point",
                                  x.getType()));
  std::string approximate = ctx.getString("approximate").value_or("none");
  if (approximate != "none" && approximate != "tanh")
    return ctx.fail("attribute 'approximate' is '" + approximate +
                    "'; 'none' and 'tanh' are defined");
  auto scalar = [&](double v) { return ctx.createScalar(elementType, v); };
  FailureOr<Value> inner;
  if (approximate == "none") {
    FailureOr<Value> scaled =
        ctx.create<graph::MulOp>({x, scalar(0.70710678118654752)});
    if (failed(scaled))
      return failure();
    inner = ctx.create<graph::ErfOp>({*scaled});
  } else {
    FailureOr<Value> square = ctx.create<graph::MulOp>({x, x});
    if (failed(square))
      return failure();
    FailureOr<Value> cube = ctx.create<graph::MulOp>({*square, x});
    if (failed(cube))
      return failure();
    FailureOr<Value> term = ctx.create<graph::MulOp>({*cube, scalar(0.044715)});
    if (failed(term))
      return failure();
    FailureOr<Value> sum = ctx.create<graph::AddOp>({x, *term});
    if (failed(sum))
      return failure();
    FailureOr<Value> scaled =
        ctx.create<graph::MulOp>({*sum, scalar(0.79788456080286536)});
    if (failed(scaled))
      return failure();
    inner = ctx.create<graph::TanhOp>({*scaled});
  }
  if (failed(inner))
    return failure();
  FailureOr<Value> onePlus = ctx.create<graph::AddOp>({*inner, scalar(1.0)});
  if (failed(onePlus))
    return failure();
  FailureOr<Value> half = ctx.create<graph::MulOp>({x, scalar(0.5)});
  if (failed(half))
    return failure();
  FailureOr<Value> result = ctx.create<graph::MulOp>({*half, *onePlus});
  if (failed(result))
    return failure();
  results.push_back(*result);
  return success();
}

void pipecc::frontend::detail::populateMathPatterns(PatternRegistry &registry) {
  registry.add("Sqrt", 6, convertFloatUnary<graph::SqrtOp>);
  registry.add("Erf", 9, convertFloatUnary<graph::ErfOp>);
  // Pow-7 introduced numpy broadcasting; later versions add types only.
  registry.add("Pow", 7, convertPow);
  registry.add("Reciprocal", 6, convertReciprocal);
  registry.add("Gelu", 20, convertGelu);
}
