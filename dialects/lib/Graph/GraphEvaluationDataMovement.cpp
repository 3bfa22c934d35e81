//===- GraphEvaluationDataMovement.cpp - Slices, pads, gathers, concat ----===//
//
// Ops that move elements without computing new ones: each result element
// copies one input element (or is zero), found from the result's
// multi-index. A splat input moved anywhere stays a splat.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace pipecc::graph;

/// Calls `fn(flat, index)` for each element of a tensor of `shape`, in
/// row-major order, with its multi-index.
static void forEachIndex(ArrayRef<int64_t> shape,
                         function_ref<void(int64_t, ArrayRef<int64_t>)> fn) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    fn(n, index);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// The row-major flat position of `index` in `shape`.
static int64_t flatten(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + index[d];
  return flat;
}

static RankedTensorType resultType(Operation *op) {
  return llvm::cast<RankedTensorType>(op->getResult(0).getType());
}

/// A result each of whose elements copies the input element at
/// `source(index)`: a splat input gives a splat.
static Literal gatherElements(
    Operation *op, const Literal &input,
    function_ref<void(ArrayRef<int64_t>, SmallVectorImpl<int64_t> &)> source) {
  RankedTensorType type = resultType(op);
  if (input.isSplat())
    return Literal::splat(type, input, 0);
  Literal result(type);
  SmallVector<int64_t> from;
  forEachIndex(type.getShape(), [&](int64_t n, ArrayRef<int64_t> index) {
    from.clear();
    source(index, from);
    result.copy(n, input, flatten(from, input.getShape()));
  });
  return result;
}

static Literal evaluateStrided(Operation *op, const Literal &input,
                               ArrayRef<int64_t> offsets,
                               ArrayRef<int64_t> strides) {
  return gatherElements(op, input, [&](ArrayRef<int64_t> index,
                                       SmallVectorImpl<int64_t> &from) {
    for (size_t d = 0; d < index.size(); ++d)
      from.push_back(offsets[d] + index[d] * strides[d]);
  });
}

static FailureOr<Literal> evaluatePad(PadOp op, const Literal &input) {
  RankedTensorType type = op.getType();
  if (type.getNumElements() > kMaxFoldedElements)
    return failure();
  ArrayRef<int64_t> low = op.getLow(), sizes = input.getShape();
  Literal result(type);
  forEachIndex(type.getShape(), [&](int64_t n, ArrayRef<int64_t> index) {
    SmallVector<int64_t> from;
    for (size_t d = 0; d < index.size(); ++d) {
      int64_t at = index[d] - low[d];
      if (at < 0 || at >= sizes[d])
        return; // stays zero
      from.push_back(at);
    }
    result.copy(n, input, input.isSplat() ? 0 : flatten(from, sizes));
  });
  return result;
}

static FailureOr<Literal> evaluateConcat(ConcatOp op,
                                         ArrayRef<Literal> inputs) {
  RankedTensorType type = op.getType();
  if (type.getNumElements() > kMaxFoldedElements)
    return failure();
  int64_t axis = op.getAxis();
  // Which input, and where in it, each position along `axis` reads.
  SmallVector<std::pair<unsigned, int64_t>> along;
  for (auto [i, input] : llvm::enumerate(inputs))
    for (int64_t j = 0; j < input.getShape()[axis]; ++j)
      along.emplace_back(i, j);
  Literal result(type);
  forEachIndex(type.getShape(), [&](int64_t n, ArrayRef<int64_t> index) {
    auto [which, at] = along[index[axis]];
    const Literal &input = inputs[which];
    SmallVector<int64_t> from(index);
    from[axis] = at;
    result.copy(n, input, input.isSplat() ? 0 : flatten(from, input.getShape()));
  });
  return result;
}

static FailureOr<Literal> evaluateGather(GatherOp op, const Literal &data,
                                         const Literal &indices) {
  int64_t axis = op.getAxis(), size = data.getShape()[axis];
  int64_t indexRank = indices.getShape().size();
  // Out-of-range indices are an error at run time; do not fold them.
  for (int64_t i = 0, e = indices.isSplat() ? 1 : indices.getNumElements();
       i < e; ++i)
    if (indices.getInt(i) < -size || indices.getInt(i) >= size)
      return failure();
  return gatherElements(op, data, [&](ArrayRef<int64_t> index,
                                      SmallVectorImpl<int64_t> &from) {
    from.append(index.begin(), index.begin() + axis);
    int64_t position = indices.isSplat()
                           ? 0
                           : flatten(index.slice(axis, indexRank),
                                     indices.getShape());
    int64_t selected = indices.getInt(position);
    from.push_back(selected < 0 ? selected + size : selected);
    from.append(index.begin() + axis + indexRank, index.end());
  });
}

FailureOr<Literal>
pipecc::graph::detail::evaluateDataMovement(Operation *op,
                                            ArrayRef<Literal> operands) {
  return llvm::TypeSwitch<Operation *, FailureOr<Literal>>(op)
      .Case([&](ReshapeOp) {
        // Row-major order is unchanged: the same elements, a new shape.
        return gatherElements(op, operands[0],
                              [&](ArrayRef<int64_t> index,
                                  SmallVectorImpl<int64_t> &from) {
                                int64_t flat =
                                    flatten(index, resultType(op).getShape());
                                ArrayRef<int64_t> dims =
                                    operands[0].getShape();
                                from.assign(dims.size(), 0);
                                for (int64_t d = dims.size() - 1; d >= 0;
                                     --d) {
                                  from[d] = flat % dims[d];
                                  flat /= dims[d];
                                }
                              });
      })
      .Case([&](TransposeOp transpose) {
        ArrayRef<int64_t> perm = transpose.getPerm();
        return gatherElements(op, operands[0],
                              [&](ArrayRef<int64_t> index,
                                  SmallVectorImpl<int64_t> &from) {
                                from.assign(index.size(), 0);
                                for (size_t d = 0; d < perm.size(); ++d)
                                  from[perm[d]] = index[d];
                              });
      })
      .Case([&](SliceOp slice) {
        SmallVector<int64_t> ones(slice.getOffsets().size(), 1);
        return evaluateStrided(op, operands[0], slice.getOffsets(), ones);
      })
      .Case([&](StridedSliceOp slice) {
        return evaluateStrided(op, operands[0], slice.getOffsets(),
                               slice.getStrides());
      })
      .Case([&](PadOp pad) { return evaluatePad(pad, operands[0]); })
      .Case([&](ConcatOp concat) { return evaluateConcat(concat, operands); })
      .Case([&](GatherOp gather) {
        return evaluateGather(gather, operands[0], operands[1]);
      })
      .Default([](Operation *) { return failure(); });
}
