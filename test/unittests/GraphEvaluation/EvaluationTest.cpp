//===- EvaluationTest.cpp - The graph dialect's constant evaluator --------===//
//
// Each test folds graph ops on constants through `canonicalize` (the
// dialect's fold hook, as the importer and every pass reach it) and
// compares the folded constant with a plain loop over the op's
// description, computed here on random data, or with a property (a splat
// stays a splat, a division by zero does not fold).
//
//===----------------------------------------------------------------------===//

#include "GraphTestUtil.h"

#include "pipecc/Dialect/Graph/GraphEvaluation.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace pipecc::graph;
using namespace pipecc::graph::testing;

namespace {

class EvaluationTest : public GraphIRTest {
protected:
  /// Canonicalizes `source`; returns the values of @main's results when
  /// each is a graph.constant, else fails the test.
  std::vector<DenseElementsAttr> fold(llvm::StringRef source) {
    module = parse(source);
    std::vector<DenseElementsAttr> values;
    if (!module)
      return values;
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    EXPECT_TRUE(succeeded(pm.run(*module))) << diagnostics;
    auto main = module->lookupSymbol<func::FuncOp>("main");
    auto ret = llvm::cast<func::ReturnOp>(main.front().getTerminator());
    for (Value result : ret.getOperands()) {
      auto constant = result.getDefiningOp<ConstantOp>();
      EXPECT_TRUE(constant) << "result not folded in\n" << printModule();
      if (constant)
        values.push_back(llvm::cast<DenseElementsAttr>(constant.getValue()));
    }
    return values;
  }

  std::string printModule() {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return text;
  }

  /// Whether @main still holds an op named `name` after canonicalization.
  bool hasOp(llvm::StringRef name) {
    bool found = false;
    module->walk([&](Operation *op) {
      found |= op->getName().getStringRef() == name;
    });
    return found;
  }

  OwningOpRef<ModuleOp> module;
};

/// `values` as the text of a dense attribute of `rows` rows.
std::string dense(const std::vector<int64_t> &values, size_t rows) {
  size_t cols = values.size() / rows;
  std::string text = "dense<[";
  for (size_t r = 0; r < rows; ++r) {
    text += r ? ", [" : "[";
    for (size_t c = 0; c < cols; ++c)
      text += (c ? ", " : "") + std::to_string(values[r * cols + c]);
    text += "]";
  }
  return text + "]>";
}

std::vector<int64_t> randomInts(size_t count, int64_t lo, int64_t hi,
                                unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> values(count);
  for (int64_t &v : values)
    v = dist(rng);
  return values;
}

std::vector<int64_t> ints(DenseElementsAttr attr) {
  std::vector<int64_t> out;
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(attr.getElementType().isInteger(1) ? v.getZExtValue()
                                                     : v.getSExtValue());
  return out;
}

TEST_F(EvaluationTest, ShapeArithmeticChainFoldsToOneConstant) {
  // (a + b) * 2 < 9, selected into a and cast to f32: a Reshape target
  // computation as exporters write it, on random integers.
  std::vector<int64_t> a = randomInts(6, -5, 5, 1), b = randomInts(6, -5, 5, 2);
  auto values = fold(llvm::formatv(R"mlir(
    func.func @main() -> tensor<2x3xf32> {{
      %a = graph.constant {0} : tensor<2x3xi64>
      %b = graph.constant {1} : tensor<2x3xi64>
      %two = graph.constant dense<2> : tensor<i64>
      %nine = graph.constant dense<9> : tensor<i64>
      %s = graph.add %a, %b : tensor<2x3xi64>, tensor<2x3xi64>
      %p = graph.mul %s, %two : tensor<2x3xi64>, tensor<i64>
      %m = graph.less %p, %nine : tensor<2x3xi64>, tensor<i64>
      %w = graph.where %m, %a, %p : tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>
      %f = graph.cast %w : tensor<2x3xi64> -> tensor<2x3xf32>
      return %f : tensor<2x3xf32>
    })mlir", dense(a, 2), dense(b, 2)).str());
  ASSERT_EQ(values.size(), 1u);
  auto got = llvm::to_vector(values[0].getValues<float>());
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t p = (a[i] + b[i]) * 2;
    EXPECT_EQ(got[i], static_cast<float>(p < 9 ? a[i] : p)) << i;
  }
  EXPECT_FALSE(hasOp("graph.add"));
  EXPECT_FALSE(hasOp("graph.cast"));
}

TEST_F(EvaluationTest, CumSumAllFlagCombinationsMatchLoops) {
  std::vector<int64_t> x = randomInts(12, -9, 9, 3);
  auto values = fold(llvm::formatv(R"mlir(
    func.func @main() -> (tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xi64>) {{
      %x = graph.constant {0} : tensor<3x4xi64>
      %a = graph.cumsum %x axis = 1 : tensor<3x4xi64>
      %b = graph.cumsum %x axis = 1 exclusive : tensor<3x4xi64>
      %c = graph.cumsum %x axis = 1 reverse : tensor<3x4xi64>
      %d = graph.cumsum %x axis = 1 exclusive reverse : tensor<3x4xi64>
      return %a, %b, %c, %d : tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xi64>, tensor<3x4xi64>
    })mlir", dense(x, 3)).str());
  ASSERT_EQ(values.size(), 4u);
  for (int variant = 0; variant < 4; ++variant) {
    bool exclusive = variant & 1, reverse = variant & 2;
    std::vector<int64_t> got = ints(values[variant]);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 4; ++i) {
        int64_t want = 0;
        for (int j = 0; j < 4; ++j) {
          bool counted = reverse ? (exclusive ? j > i : j >= i)
                                 : (exclusive ? j < i : j <= i);
          if (counted)
            want += x[r * 4 + j];
        }
        EXPECT_EQ(got[r * 4 + i], want) << "variant " << variant;
      }
  }
}

TEST_F(EvaluationTest, TriluStridedSliceGatherPadConcat) {
  std::vector<int64_t> x = randomInts(12, -9, 9, 4);
  auto values = fold(llvm::formatv(R"mlir(
    func.func @main() -> (tensor<3x4xi64>, tensor<2x2xi64>, tensor<3x2xi64>, tensor<4x6xi64>, tensor<3x8xi64>) {{
      %x = graph.constant {0} : tensor<3x4xi64>
      %ids = graph.constant dense<[-1, 0]> : tensor<2xi64>
      %t = graph.trilu %x k = 1 : tensor<3x4xi64>
      %s = graph.strided_slice %x offsets = [2, 3] sizes = [2, 2] strides = [-2, -2] : tensor<3x4xi64> -> tensor<2x2xi64>
      %g = graph.gather %x, %ids axis = 1 : tensor<3x4xi64>, tensor<2xi64> -> tensor<3x2xi64>
      %p = graph.pad %x low = [1, 2] : tensor<3x4xi64> -> tensor<4x6xi64>
      %c = graph.concat %x, %x axis = 1 : tensor<3x4xi64>, tensor<3x4xi64> -> tensor<3x8xi64>
      return %t, %s, %g, %p, %c : tensor<3x4xi64>, tensor<2x2xi64>, tensor<3x2xi64>, tensor<4x6xi64>, tensor<3x8xi64>
    })mlir", dense(x, 3)).str());
  ASSERT_EQ(values.size(), 5u);
  auto at = [&](int r, int c) { return x[r * 4 + c]; };
  std::vector<int64_t> t = ints(values[0]), s = ints(values[1]),
                       g = ints(values[2]), p = ints(values[3]),
                       c = ints(values[4]);
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 4; ++col)
      EXPECT_EQ(t[r * 4 + col], col - r <= 1 ? at(r, col) : 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_EQ(s[i * 2 + j], at(2 - 2 * i, 3 - 2 * j));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(g[r * 2], at(r, 3));
    EXPECT_EQ(g[r * 2 + 1], at(r, 0));
  }
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 6; ++col) {
      bool inside = r >= 1 && col >= 2;
      EXPECT_EQ(p[r * 6 + col], inside ? at(r - 1, col - 2) : 0);
    }
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 8; ++col)
      EXPECT_EQ(c[r * 8 + col], at(r, col % 4));
}

TEST_F(EvaluationTest, FloatResultsRoundToTheirElementType) {
  // f32: 0.1 + 0.2 rounds as float arithmetic does; f16 loses more.
  auto values = fold(R"mlir(
    func.func @main() -> (tensor<f32>, tensor<f16>, tensor<2xi32>, tensor<3xi1>) {
      %a = graph.constant dense<0.1> : tensor<f32>
      %b = graph.constant dense<0.2> : tensor<f32>
      %s = graph.add %a, %b : tensor<f32>, tensor<f32>
      %h = graph.cast %s : tensor<f32> -> tensor<f16>
      %f = graph.constant dense<[-2.75, 3.0e10]> : tensor<2xf32>
      %i = graph.cast %f : tensor<2xf32> -> tensor<2xi32>
      %z = graph.constant dense<[0.0, -0.5, 2.0]> : tensor<3xf32>
      %bz = graph.cast %z : tensor<3xf32> -> tensor<3xi1>
      return %s, %h, %i, %bz : tensor<f32>, tensor<f16>, tensor<2xi32>, tensor<3xi1>
    })mlir");
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(*values[0].getValues<float>().begin(), 0.1f + 0.2f);
  APFloat half(0.1f + 0.2f);
  bool losesInfo;
  half.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &losesInfo);
  EXPECT_TRUE(values[1].getValues<APFloat>()[0].bitwiseIsEqual(half));
  // Toward zero; saturated at the int32 range.
  EXPECT_EQ(ints(values[2]), (std::vector<int64_t>{-2, 2147483647}));
  EXPECT_EQ(ints(values[3]), (std::vector<int64_t>{0, 1, 1}));
}

TEST_F(EvaluationTest, LargeResultsFoldOnlyAsSplats) {
  // 2^22 elements: the splat broadcast folds to a splat; broadcasting a
  // non-splat constant that large is left to run time.
  fold(R"mlir(
    func.func @main() -> tensor<1024x4096xf32> {
      %c = graph.constant dense<1.5> : tensor<1x4096xf32>
      %b = graph.broadcast %c : tensor<1x4096xf32> -> tensor<1024x4096xf32>
      return %b : tensor<1024x4096xf32>
    })mlir");
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto constant = main.front().getTerminator()->getOperand(0)
                      .getDefiningOp<ConstantOp>();
  ASSERT_TRUE(constant);
  EXPECT_TRUE(llvm::cast<DenseElementsAttr>(constant.getValue()).isSplat());

  module = parse(R"mlir(
    func.func @main() -> tensor<1024x4096xf32> {
      %c = graph.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
      %r = graph.broadcast %c : tensor<1x2xf32> -> tensor<2097152x2xf32>
      %b = graph.reshape %r : tensor<2097152x2xf32> -> tensor<1024x4096xf32>
      return %b : tensor<1024x4096xf32>
    })mlir");
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(hasOp("graph.broadcast"));
}

TEST_F(EvaluationTest, IntegerDivisionByZeroDoesNotFold) {
  module = parse(R"mlir(
    func.func @main() -> tensor<2xi64> {
      %a = graph.constant dense<[7, -7]> : tensor<2xi64>
      %b = graph.constant dense<[2, 0]> : tensor<2xi64>
      %q = graph.div %a, %b : tensor<2xi64>, tensor<2xi64>
      return %q : tensor<2xi64>
    })mlir");
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_TRUE(hasOp("graph.div"));
  // Truncation toward zero when it does fold.
  auto values = fold(R"mlir(
    func.func @main() -> tensor<2xi64> {
      %a = graph.constant dense<[7, -7]> : tensor<2xi64>
      %b = graph.constant dense<2> : tensor<i64>
      %q = graph.div %a, %b : tensor<2xi64>, tensor<i64>
      return %q : tensor<2xi64>
    })mlir");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(ints(values[0]), (std::vector<int64_t>{3, -3}));
}

TEST_F(EvaluationTest, RangeFollowsOnnx) {
  Builder b(&context);
  auto scalar = [&](int64_t v) {
    return DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                  v);
  };
  std::string error;
  DenseElementsAttr range =
      evaluateRange(scalar(10), scalar(1), scalar(-3), error);
  ASSERT_TRUE(range) << error;
  EXPECT_EQ(ints(range), (std::vector<int64_t>{10, 7, 4}));
  EXPECT_FALSE(evaluateRange(scalar(0), scalar(4), scalar(0), error));
  EXPECT_EQ(error, "delta is zero");
  range = evaluateRange(scalar(5), scalar(1), scalar(1), error);
  ASSERT_TRUE(range);
  EXPECT_EQ(range.getNumElements(), 0);
}

} // namespace
