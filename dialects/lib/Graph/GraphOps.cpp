#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace pipecc::graph;

//===----------------------------------------------------------------------===//
// Shared type inference
//===----------------------------------------------------------------------===//

LogicalResult pipecc::graph::detail::inferBroadcastType(
    std::optional<Location> loc, Type lhs, Type rhs,
    SmallVectorImpl<Type> &out) {
  auto lhsType = llvm::cast<RankedTensorType>(lhs);
  auto rhsType = llvm::cast<RankedTensorType>(rhs);
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitOptionalError(loc, "operand element types differ: ", lhs,
                             " and ", rhs);
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhsType.getShape(),
                                          rhsType.getShape(), shape))
    return emitOptionalError(loc, "shapes do not broadcast: ", lhs, " and ",
                             rhs);
  out.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

/// Checks that `axes` are distinct dimensions of a tensor of rank `rank`.
static LogicalResult verifyAxes(std::optional<Location> loc,
                                ArrayRef<int64_t> axes, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "axis ", axis,
                               " is out of range for rank ", rank);
    if (!seen.insert(axis).second)
      return emitOptionalError(loc, "axis ", axis, " is repeated");
  }
  return success();
}

LogicalResult pipecc::graph::detail::inferReduceType(
    std::optional<Location> loc, Type input, ArrayRef<int64_t> axes,
    bool keepDims, SmallVectorImpl<Type> &out) {
  auto type = llvm::cast<RankedTensorType>(input);
  if (failed(verifyAxes(loc, axes, type.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  out.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

// graph.param "name" [trainable] {attrs} : type [= value]
// The initial value is printed without its type, which is the result's.
ParseResult ParamOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  Type type;
  // A typed string ("w" : i32) is not a name: stop before the colon.
  if (parser.parseAttribute(name, parser.getBuilder().getNoneType(),
                            getParamNameAttrName(result.name),
                            result.attributes))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("trainable")))
    result.addAttribute(getTrainableAttrName(result.name),
                        parser.getBuilder().getUnitAttr());
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  result.addTypes(type);
  if (succeeded(parser.parseOptionalEqual())) {
    Attribute init;
    if (parser.parseAttribute(init, type))
      return failure();
    auto elements = llvm::dyn_cast<ElementsAttr>(init);
    if (!elements)
      return parser.emitError(parser.getCurrentLocation(),
                              "expected an elements attribute as initial "
                              "value");
    result.addAttribute(getInitAttrName(result.name), elements);
  }
  return success();
}

void ParamOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printAttribute(getParamNameAttr());
  if (getTrainable())
    p << " trainable";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {getParamNameAttrName(), getTrainableAttrName(),
                           getInitAttrName()});
  p << " : " << getType();
  if (auto init = getInitAttr()) {
    p << " = ";
    if (init.getType() == getType())
      p.printAttributeWithoutType(init);
    else
      p.printAttribute(init); // the verifier reports the mismatch
  }
}

LogicalResult ParamOp::verify() {
  if (getParamName().empty())
    return emitOpError("needs a non-empty parameter name");
  if (auto init = getInit(); init && init->getType() != getType())
    return emitOpError("initial value of type ")
           << init->getType() << " does not match the parameter's type "
           << getType();
  if (getTrainable() &&
      !llvm::isa<FloatType>(getType().getElementType()))
    return emitOpError("trainable parameter '")
           << getParamName() << "' must have a floating-point type, not "
           << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = llvm::cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = llvm::cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "operands must have rank 2 or more, got ",
                             lhs, " and ", rhs);
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "operand element types differ: ", lhs,
                             " and ", rhs);
  ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape();
  int64_t m = ls[ls.size() - 2], kl = ls.back();
  if (adaptor.getTransposeLhs())
    std::swap(m, kl);
  int64_t kr = rs[rs.size() - 2], n = rs.back();
  if (adaptor.getTransposeRhs())
    std::swap(kr, n);
  if (kl != kr)
    return emitOptionalError(loc, "contracting dimensions differ: ", kl,
                             " (lhs) and ", kr, " (rhs)");
  SmallVector<int64_t> batch;
  if (!OpTrait::util::getBroadcastedShape(ls.drop_back(2), rs.drop_back(2),
                                          batch))
    return emitOptionalError(loc, "batch dimensions do not broadcast: ", lhs,
                             " and ", rhs);
  batch.push_back(m);
  batch.push_back(n);
  types.push_back(RankedTensorType::get(batch, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element type changes from ")
           << in.getElementType() << " to " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in << " (" << in.getNumElements() << " elements) to " << out
           << " (" << out.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  // reshape(reshape(x)) is one reshape.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto in = getInput().getType(), out = getType();
  SmallVector<int64_t> shape;
  if (in.getElementType() != out.getElementType() ||
      !OpTrait::util::getBroadcastedShape(in.getShape(), out.getShape(),
                                          shape) ||
      ArrayRef<int64_t>(shape) != out.getShape())
    return emitOpError("cannot broadcast ") << in << " to " << out;
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto type = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries for a tensor of rank ", type.getRank());
  if (failed(verifyAxes(loc, perm, type.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t axis : perm)
    shape.push_back(type.getDimSize(axis));
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  auto logits = llvm::cast<RankedTensorType>(adaptor.getLogits().getType());
  auto labels = llvm::cast<RankedTensorType>(adaptor.getLabels().getType());
  if (logits.getRank() < 2)
    return emitOptionalError(loc, "logits must be [N, C, ...], got ", logits);
  SmallVector<int64_t> expected(logits.getShape());
  expected.erase(expected.begin() + 1);
  if (labels.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "labels of type ", labels,
                             " do not match logits of type ", logits,
                             ": expected the logits' shape without dimension 1");
  types.push_back(RankedTensorType::get({}, logits.getElementType()));
  return success();
}

LogicalResult MSELossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Type prediction = adaptor.getPrediction().getType();
  if (prediction != adaptor.getTarget().getType())
    return emitOptionalError(loc, "prediction of type ", prediction,
                             " and target of type ",
                             adaptor.getTarget().getType(), " differ");
  types.push_back(RankedTensorType::get(
      {}, llvm::cast<RankedTensorType>(prediction).getElementType()));
  return success();
}

#define GET_OP_CLASSES
#include "pipecc/Dialect/Graph/GraphOps.cpp.inc"
