//===- Utils.cpp - Helpers shared by the graph-to-linalg patterns ---------===//
#include "GraphToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace pipecc::conversion {

AffineMap getBroadcastMap(RankedTensorType type, ArrayRef<int64_t> loopShape,
                          MLIRContext *ctx) {
  int64_t loopRank = loopShape.size();
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t loopDim = loopRank - rank + i;
    if (type.getDimSize(i) == 1 && loopShape[loopDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(loopDim, ctx));
  }
  return AffineMap::get(loopRank, 0, exprs, ctx);
}

AffineMap getDropDimsMap(unsigned rank, ArrayRef<int64_t> axes,
                         MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

RankedTensorType dropDims(RankedTensorType type, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(type.getDimSize(i));
  return RankedTensorType::get(shape, type.getElementType());
}

SmallVector<utils::IteratorType> getIterators(unsigned rank,
                                              ArrayRef<int64_t> axes) {
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  for (int64_t axis : axes)
    iterators[axis] = utils::IteratorType::reduction;
  return iterators;
}

Value createFloat(OpBuilder &b, Location loc, Type type, double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value createNegInf(OpBuilder &b, Location loc, Type type) {
  auto floatType = cast<FloatType>(type);
  return b.create<arith::ConstantOp>(
      loc, b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                     /*Negative=*/true)));
}

Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   Value value) {
  Value empty = b.create<tensor::EmptyOp>(loc, type.getShape(),
                                          type.getElementType());
  return b.create<linalg::FillOp>(loc, value, empty).getResult(0);
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, ReduceKind kind) {
  auto inputType = cast<RankedTensorType>(input.getType());
  Type elementType = inputType.getElementType();
  unsigned rank = inputType.getRank();
  Value init = kind == ReduceKind::Sum ? createFloat(b, loc, elementType, 0.0)
                                       : createNegInf(b, loc, elementType);
  Value acc = createFilled(b, loc, dropDims(inputType, axes), init);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 getDropDimsMap(rank, axes, ctx)};
  auto generic = b.create<linalg::GenericOp>(
      loc, acc.getType(), input, acc, maps, getIterators(rank, axes),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result =
            kind == ReduceKind::Sum
                ? nb.create<arith::AddFOp>(nloc, args[0], args[1]).getResult()
                : nb.create<arith::MaximumFOp>(nloc, args[0], args[1])
                      .getResult();
        nb.create<linalg::YieldOp>(nloc, result);
      });
  return generic.getResult(0);
}

Value reshapeTo(OpBuilder &b, Location loc, Value value,
                RankedTensorType type) {
  auto sourceType = cast<RankedTensorType>(value.getType());
  if (sourceType == type)
    return value;
  // Rank 0 holds one element: every dim on the other side is 1 and the
  // reassociation is empty.
  if (sourceType.getRank() == 0)
    return b.create<tensor::ExpandShapeOp>(loc, type, value,
                                           ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, value,
                                             ArrayRef<ReassociationIndices>{});
  if (std::optional<SmallVector<ReassociationIndices>> reassociation =
          getReassociationIndicesForReshape(sourceType, type)) {
    if (sourceType.getRank() > type.getRank())
      return b.create<tensor::CollapseShapeOp>(loc, type, value,
                                               *reassociation);
    return b.create<tensor::ExpandShapeOp>(loc, type, value, *reassociation);
  }
  // Otherwise through the flat vector of elements.
  auto flatType = RankedTensorType::get({sourceType.getNumElements()},
                                        sourceType.getElementType());
  auto allDims = [](int64_t rank) {
    ReassociationIndices dims;
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return SmallVector<ReassociationIndices>{dims};
  };
  Value flat = value;
  if (sourceType.getRank() != 1)
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, value,
                                             allDims(sourceType.getRank()));
  if (type.getRank() == 1)
    return flat;
  return b.create<tensor::ExpandShapeOp>(loc, type, flat,
                                         allDims(type.getRank()));
}

SmallVector<Value> buildLoopNest(OpBuilder &b, Location loc,
                                 ArrayRef<int64_t> sizes, ValueRange carried,
                                 LoopBodyFn body) {
  SmallVector<Value> lower, upper, steps;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t size : sizes) {
    lower.push_back(zero);
    upper.push_back(b.create<arith::ConstantIndexOp>(loc, size));
    steps.push_back(one);
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lower, upper, steps, carried,
      [&](OpBuilder &nb, Location nloc, ValueRange ivs, ValueRange args) {
        return scf::ValueVector(body(nb, nloc, ivs, args));
      });
  return SmallVector<Value>(nest.results);
}

} // namespace pipecc::conversion
