//===- GraphEvaluationScan.cpp - Cumulative sums, triangles, reductions ---===//
//
// Ops whose elements depend on their position along an axis or in a
// matrix: evaluated in the order the lowered code computes them, so float
// sums round the same way.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace pipecc::graph;

/// The sizes of the dimensions before `axis`, at it and after it.
static std::tuple<int64_t, int64_t, int64_t> split(ArrayRef<int64_t> shape,
                                                   int64_t axis) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return {outer, shape[axis], inner};
}

static Literal evaluateCumSum(CumSumOp op, const Literal &input) {
  Literal result(op.getType());
  auto [outer, size, inner] = split(input.getShape(), op.getAxis());
  bool reverse = op.getReverse(), exclusive = op.getExclusive();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double floatSum = 0;
      int64_t intSum = 0;
      for (int64_t step = 0; step < size; ++step) {
        int64_t j = reverse ? size - 1 - step : step;
        int64_t at = (o * size + j) * inner + i;
        if (exclusive) {
          if (input.isFloat())
            result.setFloat(at, floatSum);
          else
            result.setInt(at, intSum);
        }
        if (input.isFloat()) {
          // Rounded to the element type after each addition.
          Literal one(RankedTensorType::get({}, input.getElementType()));
          one.setFloat(0, floatSum + input.getFloat(at));
          floatSum = one.getFloat(0);
        } else {
          intSum = static_cast<int64_t>(static_cast<uint64_t>(intSum) +
                                        static_cast<uint64_t>(input.getInt(at)));
        }
        if (!exclusive) {
          if (input.isFloat())
            result.setFloat(at, floatSum);
          else
            result.setInt(at, intSum);
        }
      }
    }
  return result;
}

static Literal evaluateTrilu(TriluOp op, const Literal &input) {
  RankedTensorType type = op.getType();
  Literal result(type);
  int64_t rank = type.getRank();
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  int64_t k = op.getK();
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    int64_t c = n % cols, r = (n / cols) % rows;
    bool keep = op.getUpper() ? c - r >= k : c - r <= k;
    if (keep)
      result.copy(n, input, input.isSplat() ? 0 : n);
  }
  return result;
}

namespace {
enum class Reduce { Sum, Mean, Max };
} // namespace

/// Sums (or maxima) over `axes` in row-major order of the input.
static Literal evaluateReduce(Operation *op, const Literal &input,
                              ArrayRef<int64_t> axes, Reduce kind) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  ArrayRef<int64_t> shape = input.getShape();
  Literal result(type);
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= shape[axis];
  std::vector<double> acc(type.getNumElements(),
                          kind == Reduce::Max
                              ? -std::numeric_limits<double>::infinity()
                              : 0.0);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0, e = input.getNumElements(); n < e; ++n) {
    int64_t out = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        out = out * shape[d] + index[d];
    double x = input.getFloat(n);
    if (kind == Reduce::Max) {
      acc[out] = std::isnan(x) || std::isnan(acc[out]) ? NAN
                                                        : std::max(acc[out], x);
    } else {
      Literal one(RankedTensorType::get({}, type.getElementType()));
      one.setFloat(0, acc[out] + x);
      acc[out] = one.getFloat(0);
    }
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    result.setFloat(i, kind == Reduce::Mean ? acc[i] / count : acc[i]);
  return result;
}

FailureOr<Literal>
pipecc::graph::detail::evaluateScan(Operation *op,
                                    ArrayRef<Literal> operands) {
  return llvm::TypeSwitch<Operation *, FailureOr<Literal>>(op)
      .Case([&](CumSumOp cumsum) {
        return evaluateCumSum(cumsum, operands[0]);
      })
      .Case([&](TriluOp trilu) { return evaluateTrilu(trilu, operands[0]); })
      .Case([&](ReduceSumOp reduce) {
        return evaluateReduce(op, operands[0], reduce.getAxes(), Reduce::Sum);
      })
      .Case([&](ReduceMeanOp reduce) {
        return evaluateReduce(op, operands[0], reduce.getAxes(),
                              Reduce::Mean);
      })
      .Case([&](ReduceMaxOp reduce) {
        return evaluateReduce(op, operands[0], reduce.getAxes(), Reduce::Max);
      })
      .Default([](Operation *) { return failure(); });
}
