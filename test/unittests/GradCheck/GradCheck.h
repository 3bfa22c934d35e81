//===- GradCheck.h - Compiled gradients against finite differences --------===//
//
// A gradient-check case is one line of a table: the graph ops under test
// (a body of graph IR), the shapes and value ranges of its inputs and which
// of them are differentiable. The harness differentiates
// L = sum(y * R), R a fixed random tensor, with the real `pipecc-autodiff`
// pass, lowers the forward and the differentiated function in float64
// through the compiler's own CPU pipeline (graph -> linalg -> LLVM), runs
// both with MLIR's ExecutionEngine and compares every gradient element with
// a central finite difference of the compiled forward function.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_TEST_UNITTESTS_GRADCHECK_GRADCHECK_H
#define PIPECC_TEST_UNITTESTS_GRADCHECK_GRADCHECK_H

#include <cstdint>
#include <string>
#include <vector>

namespace pipecc::gradcheck {

using Shape = std::vector<int64_t>;

/// Where an input's random values are drawn: uniformly from [lo, hi], with
/// a random sign when `randomSign` (to keep clear of a kink or a pole at 0).
struct Domain {
  double lo = -1, hi = 1;
  bool randomSign = false;
};
inline Domain anywhere(double lo = -1, double hi = 1) { return {lo, hi}; }
inline Domain positive(double lo = 0.3, double hi = 3) { return {lo, hi}; }
inline Domain awayFromZero(double lo = 0.3, double hi = 1.5) {
  return {lo, hi, true};
}

/// A float64 input of the case, a `graph.param` named `name` (`%name` in the
/// body). Differentiable inputs are trainable: their gradients are checked.
/// Integer and boolean operands (labels, indices, masks) are constants
/// written in the body.
struct Input {
  std::string name;
  Shape shape;
  Domain domain = {};
  bool differentiable = true;
};
inline Input in(std::string name, Shape shape, Domain domain = {}) {
  return {std::move(name), std::move(shape), domain, true};
}
/// A float input that is not differentiated (an MSE target held fixed).
inline Input fixed(std::string name, Shape shape, Domain domain = {}) {
  return {std::move(name), std::move(shape), domain, false};
}

/// One gradient check. `op` names the op (or composite) it counts for in
/// the per-op table. `body` is graph IR that defines `%y`, of shape
/// `result`, from the inputs; in it `{name}` stands for the tensor type of
/// input `name` and `{y}` for the result's type (all f64).
struct Case {
  std::string op;
  std::vector<Input> inputs;
  std::string body;
  Shape result;
};

/// The table of cases (GradCheckCases.cpp).
const std::vector<Case> &allCases();

/// How many random points (inputs and R) each case is checked at.
constexpr int kPointsPerCase = 3;

/// `tensor<2x3xf64>` for {2, 3}; `tensor<f64>` for a scalar.
std::string tensorType(const Shape &shape, const std::string &element = "f64");

/// The body with its `{name}` placeholders replaced by types.
std::string expandBody(const Case &c);

/// The @main of a case: its inputs as parameters, its body, the loss
/// sum(y * R) and `return` of that loss.
std::string mainFunction(const Case &c);

/// Checks `c` at kPointsPerCase random points; returns an empty string on
/// success, else what went wrong (the first failing elements and the IR).
std::string checkCase(const Case &c, uint64_t seed);

/// The markdown table of checked cases and gradient elements per op.
std::string perOpTable(const std::vector<Case> &cases);

} // namespace pipecc::gradcheck

#endif // PIPECC_TEST_UNITTESTS_GRADCHECK_GRADCHECK_H
