//===- GradientTest.cpp - Gradient rules against finite differences -------===//
//
// Each test writes a small @main that applies graph ops to trainable
// parameters and folds the result into a scalar loss with a fixed random
// weighting, runs the real `pipecc-autodiff` pass, evaluates the gradients
// it built with the reference evaluator and compares every element with a
// central finite difference of the evaluated loss. A wrong rule, a wrong
// broadcast reduction or a dropped accumulation changes some element by far
// more than the tolerance.
//
//===----------------------------------------------------------------------===//

#include "GraphTestUtil.h"
#include "ReferenceEvaluator.h"

#include "pipecc/Dialect/Graph/GraphOps.h"
#include "pipecc/Passes/Attributes.h"
#include "pipecc/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <sstream>

using namespace mlir;
using namespace pipecc;
using namespace pipecc::graph;
using namespace pipecc::graph::testing;

namespace {

/// How a parameter's initial values are drawn: uniformly from [lo, hi],
/// with a random sign when `randomSign` (to keep clear of zero: the kink of
/// relu, the pole of a divisor).
struct Init {
  double lo = -1, hi = 1;
  bool randomSign = false;

  static Init uniform(double lo, double hi) { return {lo, hi, false}; }
  static Init awayFromZero(double lo, double hi) { return {lo, hi, true}; }
};

/// splitmix64: a deterministic stream that is the same on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  double uniform() { // in [0, 1)
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

private:
  uint64_t state;
};

/// FNV-1a: a seed per parameter name, unlike std::hash fixed by the spec.
uint64_t fnv1a(llvm::StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

std::string typeString(const Shape &shape) {
  std::string text = "tensor<";
  for (int64_t dim : shape)
    text += std::to_string(dim) + "x";
  return text + "f32>";
}

/// `step` relative to the value, as `h ~ 1e-6 relative` asks.
constexpr double kRelativeStep = 1e-6;
/// Allowed difference, relative to the largest gradient element.
constexpr double kTolerance = 1e-6;

class GradientTest : public GraphIRTest {
protected:
  /// Checks every trainable parameter's gradient in a @main whose body is
  /// `body` and whose loss is sum(`result` * W) for a fixed random W (a
  /// non-trainable parameter; for a scalar `result`, result * W). Every
  /// parameter is initialised from `inits` by name, else from [-1, 1].
  void check(llvm::StringRef body, llvm::StringRef result,
             const Shape &resultShape,
             const std::map<std::string, Init> &inits = {}) {
    std::string type = typeString(resultShape);
    std::string source = "func.func @main() -> tensor<f32> {\n" + body.str();
    source += llvm::formatv("\n  %loss_w = graph.param \"loss_weights\" : {0}\n"
                            "  %loss_p = graph.mul {1}, %loss_w : {0}, {0}\n",
                            type, result);
    if (resultShape.empty()) {
      source += "  return %loss_p : tensor<f32>\n}\n";
    } else {
      std::vector<std::string> axes;
      for (size_t i = 0; i < resultShape.size(); ++i)
        axes.push_back(std::to_string(i));
      source += llvm::formatv("  %loss = graph.reduce_sum %loss_p axes = [{0}]"
                              " : {1} -> tensor<f32>\n"
                              "  return %loss : tensor<f32>\n}\n",
                              llvm::join(axes, ", "), type);
    }
    checkModule(source, inits);
  }

  /// Checks the gradients of the whole module `source`, whose @main returns
  /// only its scalar loss.
  void checkModule(const std::string &source,
                   const std::map<std::string, Init> &inits) {
    OwningOpRef<ModuleOp> module = parse(source);
    ASSERT_TRUE(module);
    auto main = module->lookupSymbol<func::FuncOp>("main");
    ASSERT_TRUE(main);
    initialiseParams(main, inits);

    // The forward function, kept apart from the one autodiff rewrites.
    OwningOpRef<ModuleOp> forwardModule = module->clone();
    auto forward = forwardModule->lookupSymbol<func::FuncOp>("main");

    PassManager pm(&context);
    pm.addPass(createAutodiff());
    diagnostics.clear();
    ASSERT_TRUE(succeeded(pm.run(*module))) << "autodiff failed:\n"
                                            << diagnostics << source;

    ReferenceEvaluator evaluator;
    auto results = evaluator.run(main);
    ASSERT_TRUE(results) << evaluator.error() << "\nin\n" << dump(*module);
    auto forwardResults = evaluator.run(forward);
    ASSERT_TRUE(forwardResults) << evaluator.error();
    double loss = forwardResults->front().data[0];
    EXPECT_DOUBLE_EQ((*results)[0].data[0], loss)
        << "autodiff changed the loss";
    ASSERT_TRUE(std::isfinite(loss));

    unsigned checked = 0;
    for (unsigned i = 1; i < results->size(); ++i) {
      auto name = main.getResultAttrOfType<StringAttr>(i, attrs::kGrad);
      ASSERT_TRUE(name) << "result " << i << " names no parameter";
      SCOPED_TRACE("gradient of '" + name.str() + "'");
      checkParam(forward, name.str(), (*results)[i], *module);
      ++checked;
    }
    EXPECT_EQ(checked, countTrainable(forward))
        << "autodiff returned a gradient per trainable parameter";
  }

private:
  /// Gives every parameter a deterministic pseudo-random `init`, rounded to
  /// f32 so that the attribute holds exactly what the evaluator reads.
  void initialiseParams(func::FuncOp main,
                        const std::map<std::string, Init> &inits) {
    main.walk([&](ParamOp param) {
      std::string name = param.getParamName().str();
      auto found = inits.find(name);
      Init init = found == inits.end() ? Init() : found->second;
      Random random(fnv1a(name));
      auto type = param.getType();
      SmallVector<Attribute> elements;
      for (int64_t i = 0; i < type.getNumElements(); ++i) {
        double value = init.lo + (init.hi - init.lo) * random.uniform();
        if (init.randomSign && random.uniform() < 0.5)
          value = -value;
        elements.push_back(FloatAttr::get(type.getElementType(), value));
      }
      param.setInitAttr(
          llvm::cast<ElementsAttr>(DenseElementsAttr::get(type, elements)));
      baseValues[name] = fromInit(param);
    });
  }

  HostTensor fromInit(ParamOp param) {
    // Read back through the evaluator: the attribute's rounded values.
    ReferenceEvaluator evaluator;
    OpBuilder builder(&context);
    auto func = builder.create<func::FuncOp>(
        param.getLoc(), "read", builder.getFunctionType({}, {param.getType()}));
    Block *block = func.addEntryBlock();
    builder.setInsertionPointToStart(block);
    Operation *copy = builder.clone(*param);
    builder.create<func::ReturnOp>(param.getLoc(), copy->getResults());
    auto values = evaluator.run(func);
    func.erase();
    EXPECT_TRUE(values) << evaluator.error();
    return values ? values->front() : HostTensor();
  }

  unsigned countTrainable(func::FuncOp func) {
    unsigned count = 0;
    func.walk([&](ParamOp param) { count += param.getTrainable(); });
    return count;
  }

  void checkParam(func::FuncOp forward, const std::string &name,
                  const HostTensor &analytic, ModuleOp differentiated) {
    const HostTensor &base = baseValues[name];
    ASSERT_EQ(analytic.shape, base.shape);
    ReferenceEvaluator evaluator;
    auto lossAt = [&](const HostTensor &value) {
      auto results = evaluator.run(forward, {{name, value}});
      EXPECT_TRUE(results) << evaluator.error();
      return results ? results->front().data[0] : NAN;
    };
    std::vector<double> numeric(base.size());
    double scale = 0;
    for (int64_t i = 0; i < base.size(); ++i) {
      double x = base.data[i];
      double step = kRelativeStep * std::max(1.0, std::abs(x));
      HostTensor plus = base, minus = base;
      plus.data[i] = x + step;
      minus.data[i] = x - step;
      numeric[i] =
          (lossAt(plus) - lossAt(minus)) / (plus.data[i] - minus.data[i]);
      scale =
          std::max({scale, std::abs(numeric[i]), std::abs(analytic.data[i])});
    }
    // A loss that does not move with the parameter checks nothing.
    EXPECT_GT(scale, 1e-3) << "degenerate test: the gradient is ~0";
    double tolerance = kTolerance * std::max(scale, 1e-2);
    int reported = 0;
    for (int64_t i = 0; i < base.size(); ++i) {
      double error = std::abs(analytic.data[i] - numeric[i]);
      if (error <= tolerance)
        continue;
      if (reported++ < 4)
        ADD_FAILURE() << "element " << i << ": autodiff " << analytic.data[i]
                      << ", finite difference " << numeric[i] << " (tolerance "
                      << tolerance << ")";
    }
    if (reported)
      ADD_FAILURE() << reported << " of " << base.size()
                    << " elements differ; differentiated IR:\n"
                    << dump(differentiated);
  }

  static std::string dump(ModuleOp module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    // Without the large init values: the ops are what a reader needs.
    module.walk([](ParamOp param) { param.removeInitAttr(); });
    module.print(os);
    return os.str();
  }

  std::map<std::string, HostTensor> baseValues;
};

//===----------------------------------------------------------------------===//
// Elementwise binary ops, broadcasting both ways
//===----------------------------------------------------------------------===//

struct BinaryCase {
  const char *op;
  Shape lhs, rhs;
};

std::ostream &operator<<(std::ostream &os, const BinaryCase &c) {
  return os << c.op << " " << typeString(c.lhs) << ", " << typeString(c.rhs);
}

class BinaryGradientTest : public GradientTest,
                           public ::testing::WithParamInterface<BinaryCase> {};

TEST_P(BinaryGradientTest, MatchesFiniteDifferences) {
  const BinaryCase &c = GetParam();
  Shape out = *broadcastShapes(c.lhs, c.rhs);
  check(llvm::formatv("  %a = graph.param \"a\" trainable : {0}\n"
                      "  %b = graph.param \"b\" trainable : {1}\n"
                      "  %y = graph.{2} %a, %b : {0}, {1}\n",
                      typeString(c.lhs), typeString(c.rhs), c.op)
            .str(),
        "%y", out,
        // Away from zero for div; the same for the others does no harm.
        {{"b", Init::awayFromZero(0.5, 1.5)}});
}

std::vector<BinaryCase> binaryCases() {
  std::vector<BinaryCase> cases;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {3, 4}},       // no broadcasting
      {{3, 4}, {4}},          // rhs lacks a leading dimension
      {{4}, {3, 4}},          // lhs lacks a leading dimension
      {{3, 1}, {1, 4}},       // each stretches a size-1 dimension
      {{2, 3, 4}, {3, 1}},    // rhs: both at once
      {{2, 1, 4}, {2, 3, 4}}, // lhs stretches a middle dimension
      {{3, 4}, {}},           // rhs is a scalar
      {{}, {3, 4}},           // lhs is a scalar
  };
  for (const char *op : {"add", "sub", "mul", "div"})
    for (const auto &[lhs, rhs] : shapes)
      cases.push_back({op, lhs, rhs});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Broadcasting, BinaryGradientTest,
                         ::testing::ValuesIn(binaryCases()));

TEST_F(GradientTest, SameValueOnBothSides) {
  // Both operand gradients accumulate into one parameter.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<3x4xf32>
  %m = graph.mul %x, %x : tensor<3x4xf32>, tensor<3x4xf32>
  %d = graph.div %m, %x : tensor<3x4xf32>, tensor<3x4xf32>
  %s = graph.sub %d, %m : tensor<3x4xf32>, tensor<3x4xf32>
  )mlir",
        "%s", {3, 4}, {{"x", Init::awayFromZero(0.5, 1.5)}});
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

struct UnaryCase {
  const char *op;
  Init init;
};

std::ostream &operator<<(std::ostream &os, const UnaryCase &c) {
  return os << c.op;
}

class UnaryGradientTest : public GradientTest,
                          public ::testing::WithParamInterface<UnaryCase> {};

TEST_P(UnaryGradientTest, MatchesFiniteDifferences) {
  check(llvm::formatv("  %x = graph.param \"x\" trainable : tensor<3x4xf32>\n"
                      "  %y = graph.{0} %x : tensor<3x4xf32>\n",
                      GetParam().op)
            .str(),
        "%y", {3, 4}, {{"x", GetParam().init}});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, UnaryGradientTest,
    ::testing::Values(UnaryCase{"relu", Init::awayFromZero(0.1, 1.5)},
                      UnaryCase{"neg", Init::uniform(-1, 1)},
                      UnaryCase{"tanh", Init::uniform(-2, 2)},
                      UnaryCase{"exp", Init::uniform(-1, 1.5)},
                      UnaryCase{"log", Init::uniform(0.3, 3)},
                      UnaryCase{"sqrt", Init::uniform(0.3, 3)},
                      UnaryCase{"erf", Init::uniform(-2, 2)}),
    [](const auto &info) { return std::string(info.param.op); });

TEST_F(GradientTest, SoftplusChain) {
  // log(1 + exp(x)) then tanh: the rules compose through a constant.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x5xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %e = graph.exp %x : tensor<2x5xf32>
  %s = graph.add %e, %one : tensor<2x5xf32>, tensor<f32>
  %l = graph.log %s : tensor<2x5xf32>
  %t = graph.tanh %l : tensor<2x5xf32>
  )mlir",
        "%t", {2, 5}, {{"x", Init::uniform(-2, 2)}});
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

struct MatMulCase {
  bool transposeLhs, transposeRhs;
  Shape lhsBatch, rhsBatch;
  int64_t m = 3, k = 4, n = 5;
};

std::ostream &operator<<(std::ostream &os, const MatMulCase &c) {
  auto batch = [&](const Shape &shape) {
    std::string text = "[";
    for (int64_t dim : shape)
      text += std::to_string(dim) + ",";
    return text + "]";
  };
  return os << (c.transposeLhs ? "A^T" : "A") << batch(c.lhsBatch) << " "
            << (c.transposeRhs ? "B^T" : "B") << batch(c.rhsBatch) << " M"
            << c.m << " K" << c.k << " N" << c.n;
}

class MatMulGradientTest : public GradientTest,
                           public ::testing::WithParamInterface<MatMulCase> {};

TEST_P(MatMulGradientTest, MatchesFiniteDifferences) {
  // op(A) is [M, K], op(B) is [K, N].
  const MatMulCase &c = GetParam();
  Shape lhs = c.lhsBatch, rhs = c.rhsBatch;
  lhs.insert(lhs.end(),
             {c.transposeLhs ? c.k : c.m, c.transposeLhs ? c.m : c.k});
  rhs.insert(rhs.end(),
             {c.transposeRhs ? c.n : c.k, c.transposeRhs ? c.k : c.n});
  Shape out = *broadcastShapes(c.lhsBatch, c.rhsBatch);
  out.insert(out.end(), {c.m, c.n});
  std::string flags;
  if (c.transposeLhs)
    flags += " transpose_lhs";
  if (c.transposeRhs)
    flags += " transpose_rhs";
  check(llvm::formatv("  %a = graph.param \"a\" trainable : {0}\n"
                      "  %b = graph.param \"b\" trainable : {1}\n"
                      "  %y = graph.matmul %a, %b{2} : {0}, {1} -> {3}\n",
                      typeString(lhs), typeString(rhs), flags, typeString(out))
            .str(),
        "%y", out);
}

std::vector<MatMulCase> matmulCases() {
  std::vector<MatMulCase> cases;
  const std::vector<std::pair<Shape, Shape>> batches = {
      {{}, {}},      // plain matrices
      {{2}, {2}},    // equal batches
      {{2}, {}},     // rhs shared by every lhs matrix
      {{}, {2}},     // lhs shared by every rhs matrix
      {{2, 1}, {3}}, // both broadcast: batch [2, 3]
      {{1}, {2}},    // a size-1 batch dimension stretches
  };
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // Distinct M, K, N: a rule that mixes up dimensions builds ill-typed
      // IR.
      for (const auto &[lhs, rhs] : batches)
        cases.push_back({ta, tb, lhs, rhs});
      // Square: a misplaced transpose is well-typed, only its values wrong.
      cases.push_back({ta, tb, {}, {}, 3, 3, 3});
      cases.push_back({ta, tb, {2}, {}, 3, 3, 3});
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(TransposeAndBatch, MatMulGradientTest,
                         ::testing::ValuesIn(matmulCases()));

//===----------------------------------------------------------------------===//
// Reductions and data movement
//===----------------------------------------------------------------------===//

struct ReduceCase {
  const char *op;
  std::vector<int64_t> axes;
  bool keepDims;
};

std::ostream &operator<<(std::ostream &os, const ReduceCase &c) {
  os << c.op << " axes";
  for (int64_t axis : c.axes)
    os << " " << axis;
  return os << (c.keepDims ? " keep_dims" : "");
}

class ReduceGradientTest : public GradientTest,
                           public ::testing::WithParamInterface<ReduceCase> {};

TEST_P(ReduceGradientTest, MatchesFiniteDifferences) {
  const ReduceCase &c = GetParam();
  Shape input{2, 3, 4}, out;
  for (int64_t d = 0; d < 3; ++d)
    if (!llvm::is_contained(c.axes, d))
      out.push_back(input[d]);
    else if (c.keepDims)
      out.push_back(1);
  std::vector<std::string> axes;
  for (int64_t axis : c.axes)
    axes.push_back(std::to_string(axis));
  check(llvm::formatv("  %x = graph.param \"x\" trainable : {0}\n"
                      "  %y = graph.{1} %x axes = [{2}]{3} : {0} -> {4}\n",
                      typeString(input), c.op, llvm::join(axes, ", "),
                      c.keepDims ? " keep_dims" : "", typeString(out))
            .str(),
        "%y", out);
}

std::vector<ReduceCase> reduceCases() {
  std::vector<ReduceCase> cases;
  for (const char *op : {"reduce_sum", "reduce_mean"})
    for (std::vector<int64_t> axes :
         {std::vector<int64_t>{1}, {0, 2}, {2, 0}, {0, 1, 2}})
      for (bool keepDims : {false, true})
        cases.push_back({op, axes, keepDims});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AxesAndKeepDims, ReduceGradientTest,
                         ::testing::ValuesIn(reduceCases()));

TEST_F(GradientTest, ReshapeToEachShape) {
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x3x4xf32>
  %a = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = graph.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %c = graph.reshape %b : tensor<24xf32> -> tensor<4x1x6xf32>
  %d = graph.reshape %c : tensor<4x1x6xf32> -> tensor<6x4xf32>
  %e = graph.tanh %d : tensor<6x4xf32>
  %y = graph.add %a, %e : tensor<6x4xf32>, tensor<6x4xf32>
  )mlir",
        "%y", {6, 4});
}

TEST_F(GradientTest, TransposeNonSelfInversePermutation) {
  // [2, 0, 1] is not its own inverse: a rule that reused `perm` would put
  // the gradient in the wrong places (and fail to verify).
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x3x4xf32>
  %y = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  )mlir",
        "%y", {4, 2, 3});
}

TEST_F(GradientTest, TransposeSwaps) {
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<3x3xf32>
  %t = graph.transpose %x perm = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  %m = graph.mul %t, %x : tensor<3x3xf32>, tensor<3x3xf32>
  %z = graph.param "z" trainable : tensor<2x3x4xf32>
  %u = graph.transpose %z perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %y = graph.matmul %u, %m : tensor<2x4x3xf32>, tensor<3x3xf32> -> tensor<2x4x3xf32>
  )mlir",
        "%y", {2, 4, 3});
}

TEST_F(GradientTest, BroadcastEachWay) {
  check(R"mlir(
  %a = graph.param "a" trainable : tensor<3x1xf32>
  %b = graph.param "b" trainable : tensor<4xf32>
  %c = graph.param "c" trainable : tensor<1x1xf32>
  %d = graph.param "d" trainable : tensor<f32>
  %e = graph.param "e" trainable : tensor<2x1x4xf32>
  %ba = graph.broadcast %a : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %bb = graph.broadcast %b : tensor<4xf32> -> tensor<2x3x4xf32>
  %bc = graph.broadcast %c : tensor<1x1xf32> -> tensor<2x3x4xf32>
  %bd = graph.broadcast %d : tensor<f32> -> tensor<2x3x4xf32>
  %be = graph.broadcast %e : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
  %s0 = graph.add %ba, %bb : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %s1 = graph.mul %s0, %bc : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %s2 = graph.sub %s1, %bd : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %y = graph.mul %s2, %be : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  )mlir",
        "%y", {2, 3, 4});
}

TEST_F(GradientTest, ReduceMaxHasNoRule) {
  // Not differentiable here: autodiff must say so rather than guess.
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @main() -> tensor<f32> {
      %x = graph.param "x" trainable : tensor<2x3xf32>
      %y = graph.reduce_max %x axes = [0, 1] : tensor<2x3xf32> -> tensor<f32>
      return %y : tensor<f32>
    })mlir");
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(createAutodiff());
  diagnostics.clear();
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_NE(diagnostics.find("no gradient rule"), std::string::npos)
      << diagnostics;
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, SoftmaxEachAxis) {
  // Random weights matter: under a uniform weighting softmax's gradient is
  // zero, and a wrong rule could pass.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x3x4xf32>
  %a = graph.softmax %x axis = 0 : tensor<2x3x4xf32>
  %b = graph.softmax %x axis = 1 : tensor<2x3x4xf32>
  %c = graph.softmax %x axis = 2 : tensor<2x3x4xf32>
  %ab = graph.add %a, %b : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  %y = graph.sub %ab, %c : tensor<2x3x4xf32>, tensor<2x3x4xf32>
  )mlir",
        "%y", {2, 3, 4}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, SoftmaxWeightedSum) {
  // Attention-like: probabilities over classes weight trainable values.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<4x5xf32>
  %v = graph.param "v" trainable : tensor<5x3xf32>
  %p = graph.softmax %x axis = 1 : tensor<4x5xf32>
  %y = graph.matmul %p, %v : tensor<4x5xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
  )mlir",
        "%y", {4, 3}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, CrossEntropy) {
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<4x5xf32>
  %t = graph.constant dense<[0, 3, 4, 1]> : tensor<4xi64>
  %l = graph.cross_entropy %x, %t : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  )mlir",
        "%l", {}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, CrossEntropyIgnoreIndex) {
  // Two of five rows are ignored: they get no gradient and do not count in
  // the mean, so the other rows' gradients are scaled by 1/3, not 1/5.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<5x4xf32>
  %t = graph.constant dense<[2, -100, 0, -100, 3]> : tensor<5xi64>
  %l = graph.cross_entropy %x, %t {ignore_index = -100 : i64} : tensor<5x4xf32>, tensor<5xi64> -> tensor<f32>
  )mlir",
        "%l", {}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, CrossEntropyIgnoreIndexIsAClass) {
  // An ignore_index inside [0, C), with i32 labels.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<4x3xf32>
  %t = graph.constant dense<[1, 0, 1, 2]> : tensor<4xi32>
  %l = graph.cross_entropy %x, %t {ignore_index = 1 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  )mlir",
        "%l", {}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, CrossEntropySpatial) {
  // [N, C, d] logits against [N, d] labels, as for per-token losses.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x4x3xf32>
  %t = graph.constant dense<[[0, 3, -1], [2, 1, 3]]> : tensor<2x3xi64>
  %l = graph.cross_entropy %x, %t {ignore_index = -1 : i64} : tensor<2x4x3xf32>, tensor<2x3xi64> -> tensor<f32>
  )mlir",
        "%l", {}, {{"x", Init::uniform(-2, 2)}});
}

TEST_F(GradientTest, MSELossBothOperands) {
  check(R"mlir(
  %p = graph.param "p" trainable : tensor<3x4xf32>
  %t = graph.param "t" trainable : tensor<3x4xf32>
  %l = graph.mse_loss %p, %t : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<f32>
  )mlir",
        "%l", {});
}

//===----------------------------------------------------------------------===//
// Compositions
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, MatMulAddReluChain) {
  // A two-layer perceptron: weights stored [out, in] as ONNX Gemm does.
  // Inputs and weights are positive-heavy so that no pre-activation lies
  // within a finite-difference step of relu's kink.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<4x3xf32>
  %w1 = graph.param "w1" trainable : tensor<5x3xf32>
  %b1 = graph.param "b1" trainable : tensor<5xf32>
  %w2 = graph.param "w2" trainable : tensor<3x5xf32>
  %b2 = graph.param "b2" trainable : tensor<3xf32>
  %h = graph.matmul %x, %w1 transpose_rhs : tensor<4x3xf32>, tensor<5x3xf32> -> tensor<4x5xf32>
  %hb = graph.add %h, %b1 : tensor<4x5xf32>, tensor<5xf32>
  %r = graph.relu %hb : tensor<4x5xf32>
  %o = graph.matmul %r, %w2 transpose_rhs : tensor<4x5xf32>, tensor<3x5xf32> -> tensor<4x3xf32>
  %ob = graph.add %o, %b2 : tensor<4x3xf32>, tensor<3xf32>
  %y = graph.relu %ob : tensor<4x3xf32>
  )mlir",
        "%y", {4, 3},
        {{"x", Init::uniform(0.2, 1)},
         {"w1", Init::uniform(-0.6, 1)},
         {"w2", Init::uniform(-0.6, 1)}});
}

TEST_F(GradientTest, ClassifierWithCrossEntropy) {
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<6x4xf32>
  %w = graph.param "w" trainable : tensor<4x3xf32>
  %b = graph.param "b" trainable : tensor<3xf32>
  %t = graph.constant dense<[0, 2, 1, 1, -100, 2]> : tensor<6xi64>
  %h = graph.matmul %x, %w : tensor<6x4xf32>, tensor<4x3xf32> -> tensor<6x3xf32>
  %z = graph.add %h, %b : tensor<6x3xf32>, tensor<3xf32>
  %l = graph.cross_entropy %z, %t {ignore_index = -100 : i64} : tensor<6x3xf32>, tensor<6xi64> -> tensor<f32>
  )mlir",
        "%l", {});
}

TEST_F(GradientTest, LayerNormLike) {
  // mean/variance normalisation with keep_dims reductions, broadcasting
  // them back, then a learned scale: every reduction rule composes here.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<3x6xf32>
  %g = graph.param "g" trainable : tensor<6xf32>
  %mu = graph.reduce_mean %x axes = [1] keep_dims : tensor<3x6xf32> -> tensor<3x1xf32>
  %c = graph.sub %x, %mu : tensor<3x6xf32>, tensor<3x1xf32>
  %sq = graph.mul %c, %c : tensor<3x6xf32>, tensor<3x6xf32>
  %var = graph.reduce_mean %sq axes = [1] : tensor<3x6xf32> -> tensor<3xf32>
  %eps = graph.constant dense<0.5> : tensor<f32>
  %ve = graph.add %var, %eps : tensor<3xf32>, tensor<f32>
  %lv = graph.log %ve : tensor<3xf32>
  %half = graph.constant dense<-0.5> : tensor<f32>
  %ls = graph.mul %lv, %half : tensor<3xf32>, tensor<f32>
  %inv = graph.exp %ls : tensor<3xf32>
  %inv2 = graph.reshape %inv : tensor<3xf32> -> tensor<3x1xf32>
  %n = graph.mul %c, %inv2 : tensor<3x6xf32>, tensor<3x1xf32>
  %y = graph.mul %n, %g : tensor<3x6xf32>, tensor<6xf32>
  )mlir",
        "%y", {3, 6}, {{"x", Init::uniform(-2, 2)}});
}

//===----------------------------------------------------------------------===//
// Selection, slicing and gathers
//===----------------------------------------------------------------------===//

TEST_F(GradientTest, WhereBroadcastsAllThree) {
  // The condition [1, 4] stretches over rows, lhs [3, 1] over columns and
  // the scalar rhs everywhere: each gradient sums only where selected.
  check(R"mlir(
  %c = graph.constant dense<[[true, false, false, true]]> : tensor<1x4xi1>
  %l = graph.param "l" trainable : tensor<3x1xf32>
  %r = graph.param "r" trainable : tensor<f32>
  %x = graph.param "x" trainable : tensor<3x4xf32>
  %w = graph.where %c, %l, %r : tensor<1x4xi1>, tensor<3x1xf32>, tensor<f32>
  %y = graph.mul %w, %x : tensor<3x4xf32>, tensor<3x4xf32>
  )mlir",
        "%y", {3, 4});
}

TEST_F(GradientTest, CausalMaskedSoftmax) {
  // Attention scores masked with -inf above the diagonal, as exported:
  // masked positions get probability 0 and no gradient.
  check(R"mlir(
  %q = graph.param "q" trainable : tensor<2x3x4xf32>
  %k = graph.param "k" trainable : tensor<2x3x4xf32>
  %s = graph.matmul %q, %k transpose_rhs : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
  %m = graph.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  %masked = graph.where %m, %ninf, %s : tensor<3x3xi1>, tensor<f32>, tensor<2x3x3xf32>
  %y = graph.softmax %masked axis = 2 : tensor<2x3x3xf32>
  )mlir",
        "%y", {2, 3, 3});
}

TEST_F(GradientTest, SplitIntoThreeSlices) {
  // Split as exported for q, k, v: three slices of one tensor, whose
  // padded gradients accumulate into disjoint parts of it.
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x3x6xf32>
  %a = graph.slice %x offsets = [0, 0, 0] sizes = [2, 3, 2] : tensor<2x3x6xf32> -> tensor<2x3x2xf32>
  %b = graph.slice %x offsets = [0, 0, 2] sizes = [2, 3, 2] : tensor<2x3x6xf32> -> tensor<2x3x2xf32>
  %c = graph.slice %x offsets = [0, 1, 3] sizes = [2, 2, 2] : tensor<2x3x6xf32> -> tensor<2x2x2xf32>
  %ab = graph.mul %a, %b : tensor<2x3x2xf32>, tensor<2x3x2xf32>
  %abc = graph.slice %ab offsets = [0, 0, 0] sizes = [2, 2, 2] : tensor<2x3x2xf32> -> tensor<2x2x2xf32>
  %y = graph.add %abc, %c : tensor<2x2x2xf32>, tensor<2x2x2xf32>
  )mlir",
        "%y", {2, 2, 2});
}

TEST_F(GradientTest, PadThenTanh) {
  check(R"mlir(
  %x = graph.param "x" trainable : tensor<2x3xf32>
  %p = graph.pad %x low = [1, 2] : tensor<2x3xf32> -> tensor<4x6xf32>
  %y = graph.tanh %p : tensor<4x6xf32>
  )mlir",
        "%y", {4, 6});
}

TEST_F(GradientTest, EmbeddingGatherRepeatedIndices) {
  // Rows 1 and 3 are read twice and row 0 never (a negative index counts
  // from the end): the gradient is a scatter-add, not a scatter.
  check(R"mlir(
  %t = graph.param "t" trainable : tensor<4x3xf32>
  %i = graph.constant dense<[[1, 3], [-1, 2], [1, 2]]> : tensor<3x2xi64>
  %y = graph.gather %t, %i axis = 0 : tensor<4x3xf32>, tensor<3x2xi64> -> tensor<3x2x3xf32>
  )mlir",
        "%y", {3, 2, 3});
}

TEST_F(GradientTest, GatherInnerAxis) {
  check(R"mlir(
  %t = graph.param "t" trainable : tensor<2x5x3xf32>
  %i = graph.constant dense<[4, 0, 4]> : tensor<3xi32>
  %g = graph.gather %t, %i axis = 1 : tensor<2x5x3xf32>, tensor<3xi32> -> tensor<2x3x3xf32>
  %y = graph.tanh %g : tensor<2x3x3xf32>
  )mlir",
        "%y", {2, 3, 3});
}

} // namespace
