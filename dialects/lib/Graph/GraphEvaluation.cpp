//===- GraphEvaluation.cpp - Literals, the fold hook and Range ------------===//
//
// The evaluator's values (Literal) and its entry point: `evaluate` turns
// constant operands into literals, asks each family of ops in turn
// (GraphEvaluation{Elementwise,DataMovement,Scan}.cpp) and turns the result
// back into an attribute. The graph dialect's DialectFoldInterface calls it,
// so every fold of a graph op on constants goes through here.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Interfaces/FoldInterfaces.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// Literal
//===----------------------------------------------------------------------===//

Literal::Literal(RankedTensorType type) : type(type) {
  if (isFloat())
    floats.assign(type.getNumElements(), 0.0);
  else
    ints.assign(type.getNumElements(), 0);
}

Literal Literal::splat(RankedTensorType type, const Literal &source,
                       int64_t from) {
  Literal result(RankedTensorType::get({}, type.getElementType()));
  result.copy(0, source, from);
  result.type = type;
  result.splatValue = true;
  return result;
}

std::optional<Literal> Literal::fromAttr(Attribute value) {
  auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(value);
  if (!dense)
    return std::nullopt;
  auto type = llvm::dyn_cast<RankedTensorType>(dense.getType());
  if (!type)
    return std::nullopt;
  Type elementType = type.getElementType();
  bool isFloatType = llvm::isa<FloatType>(elementType);
  if (!isFloatType && !elementType.isSignlessInteger(1) &&
      !elementType.isSignlessInteger(32) && !elementType.isSignlessInteger(64))
    return std::nullopt;
  Literal result(RankedTensorType::get(
      dense.isSplat() ? ArrayRef<int64_t>() : type.getShape(), elementType));
  if (dense.isSplat()) {
    if (isFloatType)
      result.floats[0] =
          dense.getSplatValue<APFloat>().convertToDouble();
    else if (elementType.isInteger(1))
      result.ints[0] = dense.getSplatValue<bool>();
    else
      result.ints[0] = dense.getSplatValue<APInt>().getSExtValue();
    result.type = type;
    result.splatValue = true;
    return result;
  }
  if (elementType.isF32()) {
    auto values = dense.getValues<float>();
    result.floats.assign(values.begin(), values.end());
  } else if (elementType.isF64()) {
    auto values = dense.getValues<double>();
    result.floats.assign(values.begin(), values.end());
  } else if (isFloatType) {
    size_t i = 0;
    for (const APFloat &v : dense.getValues<APFloat>())
      result.floats[i++] = v.convertToDouble();
  } else if (elementType.isInteger(1)) {
    size_t i = 0;
    for (bool v : dense.getValues<bool>())
      result.ints[i++] = v;
  } else if (elementType.isInteger(32)) {
    auto values = dense.getValues<int32_t>();
    result.ints.assign(values.begin(), values.end());
  } else {
    auto values = dense.getValues<int64_t>();
    result.ints.assign(values.begin(), values.end());
  }
  return result;
}

/// `value` rounded to the float type `type`.
static double roundTo(Type type, double value) {
  if (type.isF64())
    return value;
  if (type.isF32())
    return static_cast<float>(value);
  APFloat rounded(value);
  bool losesInfo;
  rounded.convert(llvm::cast<FloatType>(type).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
  return rounded.convertToDouble();
}

/// `value` wrapped to the integer type `type` (booleans: not zero).
static int64_t wrapTo(Type type, int64_t value) {
  if (type.isInteger(1))
    return value != 0;
  if (type.isInteger(32))
    return static_cast<int32_t>(static_cast<uint32_t>(value));
  return value;
}

double Literal::getAsFloat(int64_t i) const {
  return isFloat() ? getFloat(i) : static_cast<double>(getInt(i));
}

int64_t Literal::getAsInt(int64_t i) const {
  if (!isFloat())
    return getInt(i);
  double value = std::trunc(getFloat(i));
  if (std::isnan(value))
    return 0;
  if (value <= -0x1p63)
    return std::numeric_limits<int64_t>::min();
  if (value >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(value);
}

void Literal::setFloat(int64_t i, double value) {
  Type elementType = getElementType();
  if (isFloat()) {
    floats[i] = roundTo(elementType, value);
    return;
  }
  if (elementType.isInteger(1)) {
    ints[i] = value != 0;
    return;
  }
  // Float to integer: toward zero, saturating at the type's range.
  double low = elementType.isInteger(32) ? -0x1p31 : -0x1p63;
  double high = -low;
  value = std::trunc(value);
  if (std::isnan(value))
    ints[i] = 0;
  else if (value <= low)
    ints[i] = elementType.isInteger(32) ? std::numeric_limits<int32_t>::min()
                                        : std::numeric_limits<int64_t>::min();
  else if (value >= high)
    ints[i] = elementType.isInteger(32) ? std::numeric_limits<int32_t>::max()
                                        : std::numeric_limits<int64_t>::max();
  else
    ints[i] = static_cast<int64_t>(value);
}

void Literal::setInt(int64_t i, int64_t value) {
  if (isFloat())
    floats[i] = roundTo(getElementType(), static_cast<double>(value));
  else
    ints[i] = wrapTo(getElementType(), value);
}

void Literal::copy(int64_t to, const Literal &source, int64_t from) {
  if (isFloat())
    floats[to] = source.getFloat(from);
  else
    ints[to] = source.getInt(from);
}

DenseElementsAttr Literal::toAttr() const {
  Type elementType = getElementType();
  size_t count = splatValue ? 1 : (isFloat() ? floats.size() : ints.size());
  bool allEqual = true;
  for (size_t i = 1; allEqual && i < count; ++i)
    allEqual = isFloat() ? (floats[i] == floats[0] &&
                            std::signbit(floats[i]) == std::signbit(floats[0]))
                         : ints[i] == ints[0];
  if (count > 0 && (allEqual || splatValue)) {
    Attribute element;
    if (isFloat())
      element = FloatAttr::get(elementType, floats[0]);
    else
      element = IntegerAttr::get(
          elementType, elementType.isInteger(1)
                           ? APInt(1, ints[0] != 0)
                           : APInt(elementType.getIntOrFloatBitWidth(),
                                   static_cast<uint64_t>(ints[0]),
                                   /*isSigned=*/true));
    return DenseElementsAttr::get(type, element);
  }
  if (elementType.isF32()) {
    std::vector<float> values(floats.begin(), floats.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  if (elementType.isF64())
    return DenseElementsAttr::get(type, llvm::ArrayRef(floats));
  if (isFloat()) {
    SmallVector<APFloat> values;
    for (double v : floats) {
      APFloat value(v);
      bool losesInfo;
      value.convert(llvm::cast<FloatType>(elementType).getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(value);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (elementType.isInteger(1)) {
    SmallVector<bool> values(ints.begin(), ints.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  if (elementType.isInteger(32)) {
    std::vector<int32_t> values(ints.begin(), ints.end());
    return DenseElementsAttr::get(type, llvm::ArrayRef(values));
  }
  return DenseElementsAttr::get(type, llvm::ArrayRef(ints));
}

//===----------------------------------------------------------------------===//
// evaluate and the fold hook
//===----------------------------------------------------------------------===//

FailureOr<DenseElementsAttr>
pipecc::graph::evaluate(Operation *op, ArrayRef<Attribute> operands) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      !llvm::isa_and_nonnull<GraphDialect>(op->getDialect()))
    return failure();
  auto resultType = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape())
    return failure();
  SmallVector<Literal> literals;
  bool allSplat = true;
  for (Attribute operand : operands) {
    std::optional<Literal> literal = Literal::fromAttr(operand);
    if (!literal)
      return failure();
    allSplat &= literal->isSplat();
    literals.push_back(std::move(*literal));
  }
  // A large result folds only as a splat: elementwise ops and moves of
  // splats give one without visiting every element; the rest would have to.
  bool large = resultType.getNumElements() > kMaxFoldedElements;
  if (large && !allSplat)
    return failure();
  FailureOr<Literal> result = detail::evaluateElementwise(op, literals);
  if (failed(result))
    result = detail::evaluateDataMovement(op, literals);
  if (failed(result) && !large)
    result = detail::evaluateScan(op, literals);
  if (failed(result) || result->getType() != resultType ||
      (large && !result->isSplat()))
    return failure();
  return result->toAttr();
}

namespace {
struct GraphFoldInterface : public DialectFoldInterface {
  using DialectFoldInterface::DialectFoldInterface;

  LogicalResult fold(Operation *op, ArrayRef<Attribute> operands,
                     SmallVectorImpl<OpFoldResult> &results) const final {
    FailureOr<DenseElementsAttr> value = evaluate(op, operands);
    if (failed(value))
      return failure();
    results.push_back(*value);
    return success();
  }
};
} // namespace

void pipecc::graph::detail::addGraphFoldInterface(Dialect *dialect) {
  dialect->addInterface(std::make_unique<GraphFoldInterface>(dialect));
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

DenseElementsAttr pipecc::graph::evaluateRange(DenseElementsAttr start,
                                               DenseElementsAttr limit,
                                               DenseElementsAttr delta,
                                               std::string &error) {
  std::optional<Literal> s = Literal::fromAttr(start),
                         l = Literal::fromAttr(limit),
                         d = Literal::fromAttr(delta);
  if (!s || !l || !d || s->getNumElements() != 1 ||
      l->getNumElements() != 1 || d->getNumElements() != 1) {
    error = "start, limit and delta must be constant scalars";
    return {};
  }
  Type elementType = s->getElementType();
  if (l->getElementType() != elementType ||
      d->getElementType() != elementType || elementType.isInteger(1)) {
    error = "start, limit and delta must have one numeric element type";
    return {};
  }
  // ONNX: max(ceil((limit - start) / delta), 0) elements.
  double count;
  if (s->isFloat()) {
    if (d->getFloat(0) == 0) {
      error = "delta is zero";
      return {};
    }
    count = std::ceil((l->getFloat(0) - s->getFloat(0)) / d->getFloat(0));
  } else {
    if (d->getInt(0) == 0) {
      error = "delta is zero";
      return {};
    }
    count = std::ceil(static_cast<double>(l->getInt(0) - s->getInt(0)) /
                      static_cast<double>(d->getInt(0)));
  }
  count = std::max(count, 0.0);
  if (!(count <= static_cast<double>(kMaxFoldedElements))) {
    error = llvm::formatv("has {0} elements, more than the {1} a constant may "
                          "hold",
                          count, kMaxFoldedElements)
                .str();
    return {};
  }
  Literal result(RankedTensorType::get({static_cast<int64_t>(count)},
                                       elementType));
  for (int64_t i = 0; i < result.getNumElements(); ++i) {
    if (result.isFloat())
      result.setFloat(i, s->getFloat(0) + i * d->getFloat(0));
    else
      result.setInt(i, s->getInt(0) + i * d->getInt(0));
  }
  return result.toAttr();
}
