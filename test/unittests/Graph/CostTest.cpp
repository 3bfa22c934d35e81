//===- CostTest.cpp - CostOpInterface numbers against their formulas -----===//

#include "GraphTestUtil.h"

#include "pipecc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace pipecc::graph;
using namespace pipecc::graph::testing;

namespace {

class CostTest : public GraphIRTest {
protected:
  /// The cost of the op named `opName` in @main of `source` (the first one).
  OpCost costOf(llvm::StringRef source, llvm::StringRef opName) {
    module = parse(source);
    std::optional<OpCost> cost;
    if (module)
      module->walk([&](CostOpInterface op) {
        if (!cost && op->getName().getStringRef() == opName)
          cost = op.getCost();
      });
    EXPECT_TRUE(cost) << "no " << opName.str() << " in\n" << source.str();
    return cost.value_or(OpCost());
  }

  OwningOpRef<ModuleOp> module;
};

void expectCost(const OpCost &cost, double flops, double transcendentals,
                int64_t bytesRead, int64_t bytesWritten) {
  EXPECT_EQ(cost.flops, flops);
  EXPECT_EQ(cost.transcendentals, transcendentals);
  EXPECT_EQ(cost.bytesRead, bytesRead);
  EXPECT_EQ(cost.bytesWritten, bytesWritten);
}

TEST_F(CostTest, MatMulIsTwoMNKPerBatchEntry) {
  // Batch [2, 3] (broadcast), M = 4, K = 5, N = 6: 2*M*N*K*6 flops.
  OpCost cost = costOf(R"mlir(
    func.func @main(%a: tensor<2x1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
      %y = graph.matmul %a, %b : tensor<2x1x4x5xf32>, tensor<3x5x6xf32> -> tensor<2x3x4x6xf32>
      return %y : tensor<2x3x4x6xf32>
    })mlir",
                       "graph.matmul");
  expectCost(cost, 2.0 * 6 * 4 * 6 * 5, 0, (40 + 90) * 4, 144 * 4);
}

TEST_F(CostTest, MatMulContractsTheTransposedDimension) {
  // transpose_lhs: lhs is [K, M] = [5, 4]; K is 5, not 4.
  OpCost cost = costOf(R"mlir(
    func.func @main(%a: tensor<5x4xf64>, %b: tensor<6x5xf64>) -> tensor<4x6xf64> {
      %y = graph.matmul %a, %b transpose_lhs transpose_rhs : tensor<5x4xf64>, tensor<6x5xf64> -> tensor<4x6xf64>
      return %y : tensor<4x6xf64>
    })mlir",
                       "graph.matmul");
  expectCost(cost, 2.0 * 4 * 6 * 5, 0, (20 + 30) * 8, 24 * 8);
}

TEST_F(CostTest, SoftmaxIsFourFlopsAndOneExpPerElement) {
  OpCost cost = costOf(R"mlir(
    func.func @main(%x: tensor<3x10xf32>) -> tensor<3x10xf32> {
      %y = graph.softmax %x axis = 1 : tensor<3x10xf32>
      return %y : tensor<3x10xf32>
    })mlir",
                       "graph.softmax");
  expectCost(cost, 4 * 30, 30, 30 * 4, 30 * 4);
}

TEST_F(CostTest, ReductionsAreOneFlopPerInputElement) {
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>) {
      %s = graph.reduce_sum %x axes = [1] keep_dims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
      %m = graph.reduce_mean %x axes = [0, 1] : tensor<2x3x4xf32> -> tensor<4xf32>
      %x2 = graph.reduce_max %x axes = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
      return %s, %m, %x2 : tensor<2x1x4xf32>, tensor<4xf32>, tensor<f32>
    })mlir";
  expectCost(costOf(source, "graph.reduce_sum"), 24, 0, 96, 8 * 4);
  expectCost(costOf(source, "graph.reduce_mean"), 24, 0, 96, 4 * 4);
  expectCost(costOf(source, "graph.reduce_max"), 24, 0, 96, 4);
}

} // namespace
