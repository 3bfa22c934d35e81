//===- ReferenceEvaluator.h - Graph ops on host doubles, for tests --------===//
//
// A deliberately naive interpreter of a func.func of graph ops: every tensor
// is a shape and a row-major std::vector<double> (integer labels included),
// every op is a loop over index tuples written straight from the op's
// description. It is the oracle of the gradient tests, so it favours being
// obviously right over being fast.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_TEST_UNITTESTS_GRAPH_REFERENCEEVALUATOR_H
#define PIPECC_TEST_UNITTESTS_GRAPH_REFERENCEEVALUATOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::graph::testing {

using Shape = std::vector<int64_t>;

/// A dense row-major tensor of doubles.
struct HostTensor {
  Shape shape;
  std::vector<double> data;

  HostTensor() = default;
  HostTensor(Shape shape, std::vector<double> data)
      : shape(std::move(shape)), data(std::move(data)) {}
  /// A tensor of `shape` filled with `value`.
  static HostTensor filled(Shape shape, double value);

  int64_t size() const { return static_cast<int64_t>(data.size()); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// The element at a full multi-index.
  double at(const Shape &index) const;
};

/// The number of elements of `shape` (1 for a scalar).
int64_t numElements(const Shape &shape);
/// The row-major multi-index of flat position `flat` in `shape`.
Shape unflatten(int64_t flat, const Shape &shape);
/// The flat position of multi-index `index` in `shape`.
int64_t flatten(const Shape &index, const Shape &shape);
/// The numpy broadcast of two shapes; std::nullopt if they do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);
/// The flat position in `from` of the element that numpy broadcasting of
/// `from` to `to` places at multi-index `index` of `to`.
int64_t broadcastSource(const Shape &index, const Shape &from, const Shape &to);

/// Parameter values by `param_name`; they take precedence over `init`.
using ParamValues = std::map<std::string, HostTensor>;

/// Evaluates a single-block function of graph ops. Parameters read `params`,
/// else their `init` value; function arguments read `arguments`.
class ReferenceEvaluator {
public:
  /// The returned values, or std::nullopt with error() set when an op is
  /// unsupported or its input is invalid (a label out of range, say).
  std::optional<std::vector<HostTensor>>
  run(mlir::func::FuncOp func, const ParamValues &params = {},
      const std::vector<HostTensor> &arguments = {});

  const std::string &error() const { return errorMessage; }

private:
  std::optional<HostTensor> evaluate(mlir::Operation *op,
                                     const ParamValues &params);
  std::optional<HostTensor> fail(mlir::Operation *op, const std::string &why);

  llvm::DenseMap<mlir::Value, HostTensor> values;
  std::string errorMessage;
};

} // namespace pipecc::graph::testing

#endif // PIPECC_TEST_UNITTESTS_GRAPH_REFERENCEEVALUATOR_H
