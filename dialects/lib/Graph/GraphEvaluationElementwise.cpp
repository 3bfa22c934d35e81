//===- GraphEvaluationElementwise.cpp - Arithmetic, comparisons, casts ----===//
//
// Elementwise ops on constants with numpy broadcasting: every result
// element reads one element of each operand, so one loop (`forEachElement`)
// serves all of them and only the per-element function differs.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace pipecc::graph;

namespace {
/// The flat positions, in each operand, of one result element.
using Positions = ArrayRef<int64_t>;
} // namespace

/// Calls `fn(out, positions)` for every element of `result`, with the flat
/// position of the element that numpy broadcasting reads from each operand.
/// A result whose operands are all splats is computed once.
static void forEachElement(Literal &result, ArrayRef<Literal> operands,
                           function_ref<void(int64_t, Positions)> fn) {
  ArrayRef<int64_t> shape = result.getShape();
  int64_t rank = shape.size();
  // Per operand, the stride of each result dimension (0 where broadcast).
  SmallVector<SmallVector<int64_t>> strides;
  for (const Literal &operand : operands) {
    ArrayRef<int64_t> dims = operand.getShape();
    SmallVector<int64_t> s(rank, 0);
    int64_t stride = 1;
    for (int64_t d = dims.size() - 1; d >= 0; --d) {
      int64_t at = rank - dims.size() + d;
      s[at] = dims[d] == 1 ? 0 : stride;
      stride *= dims[d];
    }
    strides.push_back(std::move(s));
  }
  SmallVector<int64_t> index(rank, 0), positions(operands.size(), 0);
  for (int64_t n = 0, e = result.getNumElements(); n < e; ++n) {
    for (size_t i = 0; i < operands.size(); ++i) {
      int64_t flat = 0;
      for (int64_t d = 0; d < rank; ++d)
        flat += index[d] * strides[i][d];
      positions[i] = flat;
    }
    fn(n, positions);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// The result of an elementwise op: a splat when every operand is one.
static Literal makeResult(Operation *op, ArrayRef<Literal> operands,
                          function_ref<void(Literal &, int64_t, Positions)> fn) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  bool allSplat = llvm::all_of(operands, [](const Literal &l) {
    return l.isSplat();
  });
  if (allSplat) {
    Literal one(RankedTensorType::get({}, type.getElementType()));
    SmallVector<int64_t> zeros(operands.size(), 0);
    fn(one, 0, zeros);
    return Literal::splat(type, one, 0);
  }
  Literal result(type);
  forEachElement(result, operands,
                 [&](int64_t n, Positions p) { fn(result, n, p); });
  return result;
}

namespace {
enum class Arith { Add, Sub, Mul, Div };
} // namespace

static FailureOr<Literal> evaluateArith(Operation *op,
                                        ArrayRef<Literal> operands,
                                        Arith kind) {
  const Literal &a = operands[0], &b = operands[1];
  if (!a.isFloat()) {
    // Integer division by zero has no value: leave the op to fail at run
    // time rather than invent one.
    if (kind == Arith::Div)
      for (int64_t i = 0, e = b.isSplat() ? 1 : b.getNumElements(); i < e; ++i)
        if (b.getInt(i) == 0)
          return failure();
  }
  return makeResult(op, operands, [&](Literal &r, int64_t n, Positions p) {
    if (a.isFloat()) {
      double x = a.getFloat(p[0]), y = b.getFloat(p[1]);
      double v = kind == Arith::Add   ? x + y
                 : kind == Arith::Sub ? x - y
                 : kind == Arith::Mul ? x * y
                                      : x / y;
      r.setFloat(n, v);
      return;
    }
    // Two's-complement wrap-around, as the lowered code computes.
    uint64_t x = a.getInt(p[0]), y = b.getInt(p[1]);
    int64_t v = 0;
    switch (kind) {
    case Arith::Add:
      v = static_cast<int64_t>(x + y);
      break;
    case Arith::Sub:
      v = static_cast<int64_t>(x - y);
      break;
    case Arith::Mul:
      v = static_cast<int64_t>(x * y);
      break;
    case Arith::Div: {
      int64_t sx = a.getInt(p[0]), sy = b.getInt(p[1]);
      v = (sy == -1) ? static_cast<int64_t>(0 - x) : sx / sy;
      break;
    }
    }
    r.setInt(n, v);
  });
}

static FailureOr<Literal> evaluateFloatUnary(Operation *op,
                                             ArrayRef<Literal> operands,
                                             double (*fn)(double)) {
  return makeResult(op, operands, [&](Literal &r, int64_t n, Positions p) {
    r.setFloat(n, fn(operands[0].getFloat(p[0])));
  });
}

namespace {
enum class Compare { Eq, Lt, Le, Gt, Ge };
} // namespace

static FailureOr<Literal> evaluateCompare(Operation *op,
                                          ArrayRef<Literal> operands,
                                          Compare kind) {
  const Literal &a = operands[0], &b = operands[1];
  return makeResult(op, operands, [&](Literal &r, int64_t n, Positions p) {
    bool v;
    if (a.isFloat()) {
      double x = a.getFloat(p[0]), y = b.getFloat(p[1]);
      v = kind == Compare::Eq   ? x == y
          : kind == Compare::Lt ? x < y
          : kind == Compare::Le ? x <= y
          : kind == Compare::Gt ? x > y
                                : x >= y;
    } else {
      int64_t x = a.getInt(p[0]), y = b.getInt(p[1]);
      v = kind == Compare::Eq   ? x == y
          : kind == Compare::Lt ? x < y
          : kind == Compare::Le ? x <= y
          : kind == Compare::Gt ? x > y
                                : x >= y;
    }
    r.setInt(n, v);
  });
}

static double relu(double x) { return x > 0 ? x : 0.0; }
static double neg(double x) { return -x; }

FailureOr<Literal>
pipecc::graph::detail::evaluateElementwise(Operation *op,
                                           ArrayRef<Literal> operands) {
  auto logical = [&](auto fn) {
    return makeResult(op, operands, [&](Literal &r, int64_t n, Positions p) {
      r.setInt(n, fn(operands, p));
    });
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Literal>>(op)
      .Case([&](AddOp) { return evaluateArith(op, operands, Arith::Add); })
      .Case([&](SubOp) { return evaluateArith(op, operands, Arith::Sub); })
      .Case([&](MulOp) { return evaluateArith(op, operands, Arith::Mul); })
      .Case([&](DivOp) { return evaluateArith(op, operands, Arith::Div); })
      .Case([&](NegOp) { return evaluateFloatUnary(op, operands, neg); })
      .Case([&](ReluOp) { return evaluateFloatUnary(op, operands, relu); })
      .Case([&](SqrtOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::sqrt(x); });
      })
      .Case([&](ExpOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::exp(x); });
      })
      .Case([&](LogOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::log(x); });
      })
      .Case([&](TanhOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::tanh(x); });
      })
      .Case([&](ErfOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::erf(x); });
      })
      .Case([&](SinOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::sin(x); });
      })
      .Case([&](CosOp) {
        return evaluateFloatUnary(op, operands,
                                  [](double x) { return std::cos(x); });
      })
      .Case([&](SigmoidOp) {
        return evaluateFloatUnary(
            op, operands, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
      })
      .Case([&](EqualOp) { return evaluateCompare(op, operands, Compare::Eq); })
      .Case([&](LessOp) { return evaluateCompare(op, operands, Compare::Lt); })
      .Case([&](LessEqualOp) {
        return evaluateCompare(op, operands, Compare::Le);
      })
      .Case([&](GreaterOp) {
        return evaluateCompare(op, operands, Compare::Gt);
      })
      .Case([&](GreaterEqualOp) {
        return evaluateCompare(op, operands, Compare::Ge);
      })
      .Case([&](NotOp) {
        return logical([](ArrayRef<Literal> o, Positions p) {
          return !o[0].getInt(p[0]);
        });
      })
      .Case([&](AndOp) {
        return logical([](ArrayRef<Literal> o, Positions p) {
          return o[0].getInt(p[0]) && o[1].getInt(p[1]);
        });
      })
      .Case([&](OrOp) {
        return logical([](ArrayRef<Literal> o, Positions p) {
          return o[0].getInt(p[0]) || o[1].getInt(p[1]);
        });
      })
      .Case([&](IsNaNOp) {
        return makeResult(op, operands,
                          [&](Literal &r, int64_t n, Positions p) {
                            r.setInt(n, std::isnan(operands[0].getFloat(p[0])));
                          });
      })
      .Case<MaximumOp, MinimumOp>([&](Operation *) {
        bool max = isa<MaximumOp>(op);
        const Literal &a = operands[0], &b = operands[1];
        return makeResult(op, operands, [&](Literal &r, int64_t n,
                                            Positions p) {
          if (a.isFloat()) {
            double x = a.getFloat(p[0]), y = b.getFloat(p[1]);
            r.setFloat(n, std::isnan(x) || std::isnan(y) ? NAN
                          : max ? std::max(x, y) : std::min(x, y));
          } else {
            int64_t x = a.getInt(p[0]), y = b.getInt(p[1]);
            r.setInt(n, max ? std::max(x, y) : std::min(x, y));
          }
        });
      })
      .Case([&](WhereOp) {
        return makeResult(op, operands,
                          [&](Literal &r, int64_t n, Positions p) {
                            if (operands[0].getInt(p[0]))
                              r.copy(n, operands[1], p[1]);
                            else
                              r.copy(n, operands[2], p[2]);
                          });
      })
      .Case([&](CastOp) {
        const Literal &in = operands[0];
        return makeResult(op, operands,
                          [&](Literal &r, int64_t n, Positions p) {
                            if (in.isFloat())
                              r.setFloat(n, in.getFloat(p[0]));
                            else
                              r.setInt(n, in.getInt(p[0]));
                          });
      })
      .Case([&](BroadcastOp) {
        return makeResult(op, operands,
                          [&](Literal &r, int64_t n, Positions p) {
                            r.copy(n, operands[0], p[0]);
                          });
      })
      .Default([](Operation *) { return failure(); });
}
