//===- ReferenceEvaluator.cpp - Graph ops on host doubles, for tests ------===//

#include "ReferenceEvaluator.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace pipecc::graph;
using namespace pipecc::graph::testing;

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

HostTensor HostTensor::filled(Shape shape, double value) {
  int64_t count = numElements(shape);
  return HostTensor(std::move(shape), std::vector<double>(count, value));
}

double HostTensor::at(const Shape &index) const {
  return data[flatten(index, shape)];
}

int64_t pipecc::graph::testing::numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

Shape pipecc::graph::testing::unflatten(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

int64_t pipecc::graph::testing::flatten(const Shape &index,
                                        const Shape &shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + index[i];
  return flat;
}

std::optional<Shape> pipecc::graph::testing::broadcastShapes(const Shape &a,
                                                             const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Dimension i counted from the right; a missing one acts as size 1.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

int64_t pipecc::graph::testing::broadcastSource(const Shape &index,
                                                const Shape &from,
                                                const Shape &to) {
  size_t lead = to.size() - from.size();
  Shape source(from.size());
  for (size_t i = 0; i < from.size(); ++i)
    source[i] = from[i] == 1 ? 0 : index[lead + i];
  return flatten(source, from);
}

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

namespace {

Shape shapeOf(Type type) {
  auto ranked = llvm::cast<RankedTensorType>(type);
  return Shape(ranked.getShape().begin(), ranked.getShape().end());
}

/// Every element of a dense attribute as a double (integers exactly).
std::optional<HostTensor> fromAttr(Attribute attr) {
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  HostTensor result = HostTensor::filled(shapeOf(dense.getType()), 0);
  Type element = dense.getElementType();
  int64_t i = 0;
  if (llvm::isa<FloatType>(element)) {
    for (APFloat value : dense.getValues<APFloat>()) {
      bool lossy = false;
      value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &lossy);
      result.data[i++] = value.convertToDouble();
    }
  } else if (element.isInteger(1)) {
    for (bool value : dense.getValues<bool>())
      result.data[i++] = value ? 1 : 0;
  } else if (llvm::isa<IntegerType>(element)) {
    for (APInt value : dense.getValues<APInt>())
      result.data[i++] = static_cast<double>(value.getSExtValue());
  } else {
    return std::nullopt;
  }
  return result;
}

HostTensor binary(const HostTensor &lhs, const HostTensor &rhs,
                  const Shape &out, double (*fn)(double, double)) {
  HostTensor result = HostTensor::filled(out, 0);
  for (int64_t i = 0; i < result.size(); ++i) {
    Shape index = unflatten(i, out);
    result.data[i] = fn(lhs.data[broadcastSource(index, lhs.shape, out)],
                        rhs.data[broadcastSource(index, rhs.shape, out)]);
  }
  return result;
}

HostTensor unary(const HostTensor &input, double (*fn)(double)) {
  HostTensor result = input;
  for (double &value : result.data)
    value = fn(value);
  return result;
}

enum class ReduceKind { Sum, Mean, Max };

HostTensor reduce(const HostTensor &input, ArrayRef<int64_t> axes,
                  bool keepDims, ReduceKind kind) {
  auto reduced = [&](int64_t dim) { return llvm::is_contained(axes, dim); };
  Shape out;
  for (int64_t d = 0; d < input.rank(); ++d)
    if (!reduced(d))
      out.push_back(input.shape[d]);
    else if (keepDims)
      out.push_back(1);
  double start =
      kind == ReduceKind::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  HostTensor result = HostTensor::filled(out, start);
  for (int64_t i = 0; i < input.size(); ++i) {
    Shape index = unflatten(i, input.shape);
    Shape target;
    for (int64_t d = 0; d < input.rank(); ++d)
      if (!reduced(d))
        target.push_back(index[d]);
      else if (keepDims)
        target.push_back(0);
    double &slot = result.data[flatten(target, out)];
    slot = kind == ReduceKind::Max ? std::max(slot, input.data[i])
                                   : slot + input.data[i];
  }
  if (kind == ReduceKind::Mean) {
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= input.shape[axis];
    for (double &value : result.data)
      value /= count;
  }
  return result;
}

HostTensor matmul(const HostTensor &lhs, const HostTensor &rhs,
                  bool transposeLhs, bool transposeRhs) {
  int64_t lr = lhs.rank(), rr = rhs.rank();
  int64_t lhsRows = lhs.shape[lr - 2], lhsCols = lhs.shape[lr - 1];
  int64_t rhsRows = rhs.shape[rr - 2], rhsCols = rhs.shape[rr - 1];
  int64_t m = transposeLhs ? lhsCols : lhsRows;
  int64_t k = transposeLhs ? lhsRows : lhsCols;
  int64_t n = transposeRhs ? rhsRows : rhsCols;
  Shape lhsBatch(lhs.shape.begin(), lhs.shape.end() - 2);
  Shape rhsBatch(rhs.shape.begin(), rhs.shape.end() - 2);
  Shape batch = *broadcastShapes(lhsBatch, rhsBatch);
  Shape out = batch;
  out.push_back(m);
  out.push_back(n);
  HostTensor result = HostTensor::filled(out, 0);
  for (int64_t b = 0; b < numElements(batch); ++b) {
    Shape index = unflatten(b, batch);
    const double *a =
        &lhs.data[broadcastSource(index, lhsBatch, batch) * lhsRows * lhsCols];
    const double *c =
        &rhs.data[broadcastSource(index, rhsBatch, batch) * rhsRows * rhsCols];
    // op(A)[i][p] and op(B)[p][j] read the stored matrices row-major.
    auto opA = [&](int64_t i, int64_t p) {
      return transposeLhs ? a[p * lhsCols + i] : a[i * lhsCols + p];
    };
    auto opB = [&](int64_t p, int64_t j) {
      return transposeRhs ? c[j * rhsCols + p] : c[p * rhsCols + j];
    };
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += opA(i, p) * opB(p, j);
        result.data[(b * m + i) * n + j] = sum;
      }
  }
  return result;
}

HostTensor softmax(const HostTensor &input, int64_t axis) {
  HostTensor result = input;
  for (int64_t i = 0; i < input.size(); ++i) {
    Shape index = unflatten(i, input.shape);
    if (index[axis] != 0)
      continue; // visit each line along `axis` once, from its first element
    double max = -std::numeric_limits<double>::infinity();
    for (index[axis] = 0; index[axis] < input.shape[axis]; ++index[axis])
      max = std::max(max, input.at(index));
    double sum = 0;
    for (index[axis] = 0; index[axis] < input.shape[axis]; ++index[axis])
      sum += std::exp(input.at(index) - max);
    for (index[axis] = 0; index[axis] < input.shape[axis]; ++index[axis])
      result.data[flatten(index, input.shape)] =
          std::exp(input.at(index) - max) / sum;
  }
  return result;
}

/// The logits index of class `c` at label position `labelIndex`: the class
/// axis is 1, after the batch axis.
Shape logitIndex(const Shape &labelIndex, int64_t c) {
  Shape index = labelIndex;
  index.insert(index.begin() + 1, c);
  return index;
}

} // namespace

std::optional<HostTensor> ReferenceEvaluator::fail(Operation *op,
                                                   const std::string &why) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at " << op->getLoc() << ": " << why;
  errorMessage = os.str();
  return std::nullopt;
}

std::optional<std::vector<HostTensor>>
ReferenceEvaluator::run(func::FuncOp func, const ParamValues &params,
                        const std::vector<HostTensor> &arguments) {
  values.clear();
  errorMessage.clear();
  Block &body = func.front();
  if (arguments.size() != body.getNumArguments()) {
    errorMessage = "wrong number of function arguments";
    return std::nullopt;
  }
  for (auto [arg, value] : llvm::zip(body.getArguments(), arguments))
    values[arg] = value;
  for (Operation &op : body) {
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      std::vector<HostTensor> results;
      for (Value operand : ret.getOperands())
        results.push_back(values.lookup(operand));
      return results;
    }
    std::optional<HostTensor> result = evaluate(&op, params);
    if (!result)
      return std::nullopt;
    if (result->shape != shapeOf(op.getResult(0).getType())) {
      fail(&op, "evaluated shape differs from the result type");
      return std::nullopt;
    }
    values[op.getResult(0)] = std::move(*result);
  }
  errorMessage = "the function has no func.return";
  return std::nullopt;
}

std::optional<HostTensor>
ReferenceEvaluator::evaluate(Operation *op, const ParamValues &params) {
  if (op->getNumResults() != 1)
    return fail(op, "expected one result");
  // Operands are defined before use, so the lookup always finds them, and
  // nothing is inserted while an op runs: the references stay valid.
  auto in = [&](unsigned i) -> const HostTensor & {
    return values.find(op->getOperand(i))->second;
  };
  Shape resultShape = shapeOf(op->getResult(0).getType());

  return llvm::TypeSwitch<Operation *, std::optional<HostTensor>>(op)
      .Case([&](ConstantOp c) -> std::optional<HostTensor> {
        if (auto value = fromAttr(c.getValue()))
          return value;
        return fail(op, "unsupported constant");
      })
      .Case([&](ParamOp p) -> std::optional<HostTensor> {
        auto found = params.find(p.getParamName().str());
        if (found != params.end())
          return found->second;
        if (auto init = p.getInitAttr())
          if (auto value = fromAttr(init))
            return value;
        return fail(op,
                    "no value for parameter '" + p.getParamName().str() + "'");
      })
      .Case([&](AddOp) {
        return binary(in(0), in(1), resultShape,
                      [](double a, double b) { return a + b; });
      })
      .Case([&](SubOp) {
        return binary(in(0), in(1), resultShape,
                      [](double a, double b) { return a - b; });
      })
      .Case([&](MulOp) {
        return binary(in(0), in(1), resultShape,
                      [](double a, double b) { return a * b; });
      })
      .Case([&](DivOp) {
        return binary(in(0), in(1), resultShape,
                      [](double a, double b) { return a / b; });
      })
      .Case([&](ReluOp) {
        return unary(in(0), [](double x) { return x > 0 ? x : 0.0; });
      })
      .Case([&](NegOp) { return unary(in(0), [](double x) { return -x; }); })
      .Case([&](TanhOp) {
        return unary(in(0), [](double x) { return std::tanh(x); });
      })
      .Case([&](ExpOp) {
        return unary(in(0), [](double x) { return std::exp(x); });
      })
      .Case([&](LogOp) {
        return unary(in(0), [](double x) { return std::log(x); });
      })
      .Case([&](MatMulOp m) {
        return matmul(in(0), in(1), m.getTransposeLhs(), m.getTransposeRhs());
      })
      .Case([&](ReduceSumOp r) {
        return reduce(in(0), r.getAxes(), r.getKeepDims(), ReduceKind::Sum);
      })
      .Case([&](ReduceMeanOp r) {
        return reduce(in(0), r.getAxes(), r.getKeepDims(), ReduceKind::Mean);
      })
      .Case([&](ReduceMaxOp r) {
        return reduce(in(0), r.getAxes(), r.getKeepDims(), ReduceKind::Max);
      })
      .Case([&](ReshapeOp) -> std::optional<HostTensor> {
        if (numElements(resultShape) != in(0).size())
          return fail(op, "element counts differ");
        return HostTensor(resultShape, in(0).data);
      })
      .Case([&](TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPerm();
        const HostTensor &input = in(0);
        Shape out(perm.size());
        for (size_t i = 0; i < perm.size(); ++i)
          out[i] = input.shape[perm[i]];
        HostTensor result = HostTensor::filled(out, 0);
        for (int64_t i = 0; i < result.size(); ++i) {
          Shape index = unflatten(i, out);
          Shape source(perm.size());
          for (size_t d = 0; d < perm.size(); ++d)
            source[perm[d]] = index[d];
          result.data[i] = input.at(source);
        }
        return result;
      })
      .Case([&](BroadcastOp) -> std::optional<HostTensor> {
        const HostTensor &input = in(0);
        if (broadcastShapes(input.shape, resultShape) != resultShape)
          return fail(op, "input does not broadcast to the result");
        HostTensor result = HostTensor::filled(resultShape, 0);
        for (int64_t i = 0; i < result.size(); ++i)
          result.data[i] = input.data[broadcastSource(
              unflatten(i, resultShape), input.shape, resultShape)];
        return result;
      })
      .Case(
          [&](SoftmaxOp s) { return softmax(in(0), s.getAxisAttr().getInt()); })
      .Case([&](MSELossOp) {
        const HostTensor &p = in(0), &t = in(1);
        double sum = 0;
        for (int64_t i = 0; i < p.size(); ++i)
          sum += (p.data[i] - t.data[i]) * (p.data[i] - t.data[i]);
        return HostTensor({}, {sum / p.size()});
      })
      .Case([&](ReluGradOp) {
        HostTensor result = in(1);
        for (int64_t i = 0; i < result.size(); ++i)
          if (!(in(0).data[i] > 0))
            result.data[i] = 0;
        return result;
      })
      .Case<CrossEntropyOp, CrossEntropyGradOp>(
          [&](auto ce) -> std::optional<HostTensor> {
            constexpr bool isGrad =
                std::is_same_v<decltype(ce), CrossEntropyGradOp>;
            const HostTensor &logits = in(0), &labels = in(1);
            std::optional<int64_t> ignore;
            if (auto attr = ce.getIgnoreIndexAttr())
              ignore = attr.getInt();
            int64_t classes = logits.shape[1];
            // Per label position: the softmax over classes, then either
            // -log p[label] (the loss) or p - onehot (the gradient).
            HostTensor grad = HostTensor::filled(logits.shape, 0);
            double lossSum = 0;
            int64_t count = 0;
            for (int64_t i = 0; i < labels.size(); ++i) {
              auto label = static_cast<int64_t>(std::llround(labels.data[i]));
              if (ignore && label == *ignore)
                continue;
              if (label < 0 || label >= classes)
                return fail(op, "label out of range");
              ++count;
              Shape position = unflatten(i, labels.shape);
              double max = -std::numeric_limits<double>::infinity();
              for (int64_t c = 0; c < classes; ++c)
                max = std::max(max, logits.at(logitIndex(position, c)));
              double sum = 0;
              for (int64_t c = 0; c < classes; ++c)
                sum += std::exp(logits.at(logitIndex(position, c)) - max);
              lossSum +=
                  std::log(sum) + max - logits.at(logitIndex(position, label));
              for (int64_t c = 0; c < classes; ++c) {
                Shape index = logitIndex(position, c);
                double p = std::exp(logits.at(index) - max) / sum;
                grad.data[flatten(index, logits.shape)] =
                    p - (c == label ? 1.0 : 0.0);
              }
            }
            if constexpr (isGrad) {
              double scale = in(2).data[0] / count;
              for (double &value : grad.data)
                value *= scale;
              return grad;
            } else {
              return HostTensor({}, {lossSum / count});
            }
          })
      .Case([&](SqrtOp) {
        return unary(in(0), [](double x) { return std::sqrt(x); });
      })
      .Case([&](ErfOp) {
        return unary(in(0), [](double x) { return std::erf(x); });
      })
      .Case([&](WhereOp) {
        const HostTensor &c = in(0), &l = in(1), &r = in(2);
        HostTensor result = HostTensor::filled(resultShape, 0);
        for (int64_t i = 0; i < result.size(); ++i) {
          Shape index = unflatten(i, resultShape);
          result.data[i] =
              c.data[broadcastSource(index, c.shape, resultShape)] != 0
                  ? l.data[broadcastSource(index, l.shape, resultShape)]
                  : r.data[broadcastSource(index, r.shape, resultShape)];
        }
        return result;
      })
      .Case([&](SliceOp s) {
        const HostTensor &input = in(0);
        HostTensor result = HostTensor::filled(resultShape, 0);
        for (int64_t i = 0; i < result.size(); ++i) {
          Shape index = unflatten(i, resultShape);
          for (size_t d = 0; d < index.size(); ++d)
            index[d] += s.getOffsets()[d];
          result.data[i] = input.at(index);
        }
        return result;
      })
      .Case([&](PadOp p) {
        const HostTensor &input = in(0);
        HostTensor result = HostTensor::filled(resultShape, 0);
        for (int64_t i = 0; i < input.size(); ++i) {
          Shape index = unflatten(i, input.shape);
          for (size_t d = 0; d < index.size(); ++d)
            index[d] += p.getLow()[d];
          result.data[flatten(index, resultShape)] = input.data[i];
        }
        return result;
      })
      .Case<GatherOp, GatherGradOp>([&](auto g) -> std::optional<HostTensor> {
        // Both walk the gathered shape [outer, indices, inner]: gather reads
        // the table there, its gradient adds into it.
        constexpr bool isGrad = std::is_same_v<decltype(g), GatherGradOp>;
        const HostTensor &table = isGrad ? in(1) : in(0);
        const HostTensor &indices = isGrad ? in(0) : in(1);
        const Shape &tableShape = isGrad ? resultShape : table.shape;
        const Shape &gathered = isGrad ? table.shape : resultShape;
        int64_t axis = g.getAxis();
        int64_t size = tableShape[axis];
        size_t indexRank = indices.shape.size();
        HostTensor result = HostTensor::filled(resultShape, 0);
        for (int64_t i = 0; i < numElements(gathered); ++i) {
          Shape index = unflatten(i, gathered);
          Shape position(index.begin(), index.begin() + axis);
          Shape at(index.begin() + axis, index.begin() + axis + indexRank);
          auto row = static_cast<int64_t>(
              std::llround(indices.data[flatten(at, indices.shape)]));
          if (row < 0)
            row += size;
          if (row < 0 || row >= size)
            return fail(op, "index out of range");
          position.push_back(row);
          position.insert(position.end(), index.begin() + axis + indexRank,
                          index.end());
          if constexpr (isGrad)
            result.data[flatten(position, tableShape)] += table.data[i];
          else
            result.data[i] = table.at(position);
        }
        return result;
      })
      .Default([&](Operation *) { return fail(op, "unsupported op"); });
}
