//===- ReferenceEvaluatorTest.cpp - The oracle against hand-worked values -===//
//
// The gradient tests trust the reference evaluator; these pin it to values
// worked out by hand (or with numpy) for the ops whose indexing is easiest
// to get wrong.
//
//===----------------------------------------------------------------------===//

#include "ReferenceEvaluator.h"
#include "GraphTestUtil.h"

#include <cmath>

using namespace mlir;
using namespace pipecc::graph::testing;

namespace {

class ReferenceEvaluatorTest : public GraphIRTest {
protected:
  /// Evaluates @main of `source` and returns its only result.
  HostTensor evaluate(llvm::StringRef source) {
    module = parse(source);
    if (!module)
      return {};
    auto func = module->lookupSymbol<func::FuncOp>("main");
    ReferenceEvaluator evaluator;
    auto results = evaluator.run(func);
    EXPECT_TRUE(results) << evaluator.error();
    if (!results || results->size() != 1)
      return {};
    return results->front();
  }

  OwningOpRef<ModuleOp> module;
};

void expectTensor(const HostTensor &actual, const Shape &shape,
                  const std::vector<double> &data) {
  EXPECT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.data.size(), data.size());
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_NEAR(actual.data[i], data[i], 1e-12) << "element " << i;
}

TEST(IndexArithmetic, FlattenRoundTrips) {
  Shape shape{2, 3, 4};
  EXPECT_EQ(flatten({1, 2, 3}, shape), 23);
  EXPECT_EQ(unflatten(23, shape), (Shape{1, 2, 3}));
  EXPECT_EQ(unflatten(0, {}), Shape{});
  EXPECT_EQ(flatten({}, {}), 0);
}

TEST(IndexArithmetic, BroadcastShapes) {
  EXPECT_EQ(broadcastShapes({3, 1}, {4}), (Shape{3, 4}));
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcastShapes({}, {2}), (Shape{2}));
  EXPECT_EQ(broadcastShapes({3}, {4}), std::nullopt);
  // Element [1, 2] of a [3] broadcast to [2, 3] is element 2.
  EXPECT_EQ(broadcastSource({1, 2}, {3}, {2, 3}), 2);
  EXPECT_EQ(broadcastSource({1, 2}, {2, 1}, {2, 3}), 1);
}

TEST_F(ReferenceEvaluatorTest, BroadcastingSub) {
  HostTensor y = evaluate(R"mlir(
    func.func @main() -> tensor<2x3xf64> {
      %a = graph.constant dense<[[1.0], [2.0]]> : tensor<2x1xf64>
      %b = graph.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf64>
      %y = graph.sub %a, %b : tensor<2x1xf64>, tensor<3xf64>
      return %y : tensor<2x3xf64>
    })mlir");
  expectTensor(y, {2, 3}, {-9, -19, -29, -8, -18, -28});
}

TEST_F(ReferenceEvaluatorTest, MatMulTransposeFlags) {
  // A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]].
  const char *source = R"mlir(
    func.func @main() -> tensor<2x2xf64> {
      %a = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>
      %b = graph.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf64>
      %y = graph.matmul %a, %b {FLAGS} : tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x2xf64>
      return %y : tensor<2x2xf64>
    })mlir";
  auto with = [&](llvm::StringRef flags) {
    std::string text = source;
    text.replace(text.find("{FLAGS}"), 7, flags.str());
    return evaluate(text);
  };
  expectTensor(with(""), {2, 2}, {19, 22, 43, 50});              // A B
  expectTensor(with("transpose_lhs"), {2, 2}, {26, 30, 38, 44}); // A^T B
  expectTensor(with("transpose_rhs"), {2, 2}, {17, 23, 39, 53}); // A B^T
  expectTensor(with("transpose_lhs transpose_rhs"), {2, 2},
               {23, 31, 34, 46}); // A^T B^T
}

TEST_F(ReferenceEvaluatorTest, MatMulBroadcastsBatchDims) {
  // Batch [2, 1] against [3]: result batch [2, 3]; each lhs matrix is a
  // scaled identity, each rhs matrix a constant fill.
  HostTensor y = evaluate(R"mlir(
    func.func @main() -> tensor<2x3x2x2xf64> {
      %a = graph.constant dense<[[[[1.0, 0.0], [0.0, 1.0]]], [[[2.0, 0.0], [0.0, 2.0]]]]> : tensor<2x1x2x2xf64>
      %b = graph.constant dense<[[[1.0, 1.0], [1.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]], [[3.0, 3.0], [3.0, 3.0]]]> : tensor<3x2x2xf64>
      %y = graph.matmul %a, %b : tensor<2x1x2x2xf64>, tensor<3x2x2xf64> -> tensor<2x3x2x2xf64>
      return %y : tensor<2x3x2x2xf64>
    })mlir");
  std::vector<double> expected;
  for (double scale : {1.0, 2.0})
    for (double fill : {1.0, 2.0, 3.0})
      expected.insert(expected.end(), 4, scale * fill);
  expectTensor(y, {2, 3, 2, 2}, expected);
}

TEST_F(ReferenceEvaluatorTest, ReduceAndTranspose) {
  HostTensor sum = evaluate(R"mlir(
    func.func @main() -> tensor<3xf64> {
      %a = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf64>
      %y = graph.reduce_sum %a axes = [0] : tensor<2x3xf64> -> tensor<3xf64>
      return %y : tensor<3xf64>
    })mlir");
  expectTensor(sum, {3}, {5, 7, 9});
  HostTensor max = evaluate(R"mlir(
    func.func @main() -> tensor<2x1xf64> {
      %a = graph.constant dense<[[1.0, 7.0, 3.0], [4.0, 5.0, -6.0]]> : tensor<2x3xf64>
      %y = graph.reduce_max %a axes = [1] keep_dims : tensor<2x3xf64> -> tensor<2x1xf64>
      return %y : tensor<2x1xf64>
    })mlir");
  expectTensor(max, {2, 1}, {7, 5});
  HostTensor transposed = evaluate(R"mlir(
    func.func @main() -> tensor<3x1x2xf64> {
      %a = graph.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf64>
      %y = graph.transpose %a perm = [2, 0, 1] : tensor<1x2x3xf64> -> tensor<3x1x2xf64>
      return %y : tensor<3x1x2xf64>
    })mlir");
  expectTensor(transposed, {3, 1, 2}, {1, 4, 2, 5, 3, 6});
}

TEST_F(ReferenceEvaluatorTest, SoftmaxAlongAxisZero) {
  HostTensor y = evaluate(R"mlir(
    func.func @main() -> tensor<2x2xf64> {
      %a = graph.constant dense<[[0.0, 1.0], [0.0, 3.0]]> : tensor<2x2xf64>
      %y = graph.softmax %a axis = 0 : tensor<2x2xf64>
      return %y : tensor<2x2xf64>
    })mlir");
  double e2 = std::exp(2.0);
  expectTensor(y, {2, 2}, {0.5, 1 / (1 + e2), 0.5, e2 / (1 + e2)});
}

TEST_F(ReferenceEvaluatorTest, CrossEntropySkipsIgnoredLabels) {
  // Row 0: uniform over 2 classes, loss log 2. Row 1 is ignored. Row 2:
  // logits [0, ln 3], label 1: loss -log(3/4).
  HostTensor loss = evaluate(R"mlir(
    func.func @main() -> tensor<f64> {
      %x = graph.constant dense<[[0.0, 0.0], [5.0, -5.0], [0.0, 1.0986122886681098]]> : tensor<3x2xf64>
      %t = graph.constant dense<[0, -100, 1]> : tensor<3xi64>
      %l = graph.cross_entropy %x, %t {ignore_index = -100 : i64} : tensor<3x2xf64>, tensor<3xi64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  expectTensor(loss, {}, {(std::log(2.0) - std::log(0.75)) / 2});
  HostTensor grad = evaluate(R"mlir(
    func.func @main() -> tensor<3x2xf64> {
      %x = graph.constant dense<[[0.0, 0.0], [5.0, -5.0], [0.0, 1.0986122886681098]]> : tensor<3x2xf64>
      %t = graph.constant dense<[0, -100, 1]> : tensor<3xi64>
      %g = graph.constant dense<3.0> : tensor<f64>
      %d = graph.cross_entropy_grad %x, %t, %g {ignore_index = -100 : i64} : tensor<3x2xf64>, tensor<3xi64>, tensor<f64>
      return %d : tensor<3x2xf64>
    })mlir");
  // (p - onehot) * 3 / 2 on the two counted rows.
  expectTensor(grad, {3, 2}, {-0.75, 0.75, 0, 0, 0.375, -0.375});
}

TEST_F(ReferenceEvaluatorTest, ReportsBadLabels) {
  module = parse(R"mlir(
    func.func @main() -> tensor<f64> {
      %x = graph.constant dense<0.0> : tensor<2x2xf64>
      %t = graph.constant dense<[0, 2]> : tensor<2xi64>
      %l = graph.cross_entropy %x, %t : tensor<2x2xf64>, tensor<2xi64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  ReferenceEvaluator evaluator;
  EXPECT_FALSE(evaluator.run(module->lookupSymbol<func::FuncOp>("main")));
  EXPECT_NE(evaluator.error().find("label out of range"), std::string::npos)
      << evaluator.error();
}

} // namespace
