//===- DynamicProgrammingTest.cpp - DP against brute force and baselines --===//

#include "pipecc/Partition/Algorithms.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace pipecc::partition;

namespace {
/// A random model: op costs in [0, 1) s, tensors of up to 1 MB over a 1 GB/s
/// link. With `skipEdges`, some ops also feed several later ops.
Problem randomProblem(std::mt19937 &rng, int numOps, int stages,
                      bool skipEdges) {
  std::uniform_real_distribution<double> seconds(0.0, 1.0);
  std::uniform_int_distribution<int64_t> bytes(0, 1 << 20);
  Problem problem;
  problem.stages = stages;
  problem.link = LinkProfile{"random", 1e9, 1e-4};
  for (int i = 0; i < numOps; ++i)
    problem.ops.push_back(OpCost{"op" + std::to_string(i), seconds(rng),
                                 seconds(rng), seconds(rng), bytes(rng),
                                 bytes(rng)});
  for (int i = 0; i + 1 < numOps; ++i) {
    Tensor tensor{i, {i + 1}, bytes(rng)};
    if (skipEdges) {
      std::uniform_int_distribution<int> later(i + 1, numOps - 1);
      int extra = std::uniform_int_distribution<int>(0, 2)(rng);
      for (int e = 0; e < extra; ++e)
        tensor.consumers.push_back(later(rng));
    }
    problem.tensors.push_back(tensor);
  }
  if (skipEdges && numOps > 2) {
    // A second output of some op, read far away (a residual branch).
    std::uniform_int_distribution<int> producer(0, numOps - 3);
    int from = producer(rng);
    problem.addTensor(from, std::uniform_int_distribution<int>(
                                from + 2, numOps - 1)(rng),
                      bytes(rng));
  }
  return problem;
}

void expectSameBottleneck(const Problem &problem, const char *what) {
  Result<Partition> fast = dynamicProgramming(problem);
  Result<Partition> reference = bruteForce(problem);
  ASSERT_EQ(fast.ok(), reference.ok()) << what << ": " << fast.message()
                                       << " / " << reference.message();
  if (!fast.ok())
    return;
  EXPECT_TRUE(verify(problem, *fast).ok()) << verify(problem, *fast).message();
  double scale = std::max(1.0, std::fabs(reference->bottleneck));
  EXPECT_LE(std::fabs(fast->bottleneck - reference->bottleneck), 1e-12 * scale)
      << what << ": DP " << fast->bottleneck << " vs brute force "
      << reference->bottleneck;
}

TEST(DynamicProgramming, MatchesBruteForceOnRandomChains) {
  std::mt19937 rng(20240601);
  for (int trial = 0; trial < 300; ++trial) {
    int numOps = std::uniform_int_distribution<int>(1, 12)(rng);
    int stages = std::uniform_int_distribution<int>(1, std::min(5, numOps))(rng);
    expectSameBottleneck(randomProblem(rng, numOps, stages, false), "chain");
  }
}

TEST(DynamicProgramming, MatchesBruteForceOnRandomDagsWithSkipEdges) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    int numOps = std::uniform_int_distribution<int>(2, 12)(rng);
    int stages = std::uniform_int_distribution<int>(1, std::min(5, numOps))(rng);
    expectSameBottleneck(randomProblem(rng, numOps, stages, true), "dag");
  }
}

TEST(DynamicProgramming, MatchesBruteForceWithSharedParameters) {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    int numOps = std::uniform_int_distribution<int>(2, 12)(rng);
    int stages = std::uniform_int_distribution<int>(1, std::min(5, numOps))(rng);
    Problem problem = randomProblem(rng, numOps, stages, true);
    problem.microbatches = std::uniform_int_distribution<int>(1, 8)(rng);
    std::uniform_int_distribution<int> op(0, numOps - 1);
    for (int p = std::uniform_int_distribution<int>(1, 3)(rng); p > 0; --p)
      problem.sharedParameters.push_back(
          {{op(rng), op(rng), op(rng)},
           std::uniform_int_distribution<int64_t>(0, 8 << 20)(rng)});
    MemoryConstraint memory;
    memory.inFlightMicrobatches.assign(stages, 1);
    memory.limitBytes =
        std::uniform_int_distribution<int64_t>(8 << 20, 40 << 20)(rng);
    problem.memory = memory;
    expectSameBottleneck(problem, "shared");
  }
}

TEST(DynamicProgramming, MatchesBruteForceUnderRandomMemoryLimits) {
  std::mt19937 rng(99);
  int infeasible = 0;
  for (int trial = 0; trial < 200; ++trial) {
    int numOps = std::uniform_int_distribution<int>(2, 12)(rng);
    int stages = std::uniform_int_distribution<int>(1, std::min(5, numOps))(rng);
    Problem problem = randomProblem(rng, numOps, stages, true);
    MemoryConstraint memory;
    for (int s = 0; s < stages; ++s)
      memory.inFlightMicrobatches.push_back(stages - s);
    memory.parameterStateMultiplier = 4;
    memory.limitBytes =
        std::uniform_int_distribution<int64_t>(1 << 20, 40 << 20)(rng);
    problem.memory = memory;
    expectSameBottleneck(problem, "memory");
    infeasible += !dynamicProgramming(problem).ok();
  }
  // The limits are drawn so that both outcomes occur.
  EXPECT_GT(infeasible, 0);
  EXPECT_LT(infeasible, 200);
}

TEST(DynamicProgramming, HandCheckedChain) {
  // Ops cost 4, 1, 1, 1, 1, 4 (F only); free communication. Three stages:
  // [4] [1 1 1 1] [4] has bottleneck 4, and it is the only optimum.
  Problem problem;
  problem.stages = 3;
  problem.link = LinkProfile{"free", 1, 0};
  for (double cost : {4, 1, 1, 1, 1, 4})
    problem.ops.push_back(OpCost{"", cost, 0, 0, 0, 0});
  for (int i = 0; i + 1 < 6; ++i)
    problem.addTensor(i, i + 1, 0);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok()) << best.message();
  EXPECT_EQ(best->cutsAfter, (std::vector<int>{0, 4}));
  EXPECT_DOUBLE_EQ(best->bottleneck, 4);
}

TEST(DynamicProgramming, CommunicationMovesTheCut) {
  // Four unit ops; the tensor after op 1 is huge, the one after op 2 small.
  // Compute alone would cut after op 1 (2 vs 2); paying 2 * 10 s for the big
  // tensor makes cutting after op 2 (3 + 2 * 0.001 vs 1 + ...) better.
  Problem problem;
  problem.stages = 2;
  problem.link = LinkProfile{"slow", 1000, 0};
  for (int i = 0; i < 4; ++i)
    problem.ops.push_back(OpCost{"", 1, 0, 0, 0, 0});
  problem.addTensor(0, 1, 10);
  problem.addTensor(1, 2, 10000);
  problem.addTensor(2, 3, 1);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->cutsAfter, (std::vector<int>{2}));
  EXPECT_DOUBLE_EQ(best->bottleneck, 3 + 2 * 0.001);
  EXPECT_EQ(best->stages[0].bytesOut, 1);
}

TEST(DynamicProgramming, BreaksTiesTowardsTheSmallestCuts) {
  // Six equal ops into two stages of three: cuts [2] is the only optimum; with
  // a zero-cost op in the middle, [2] and [3] tie and [2] wins.
  Problem problem;
  problem.stages = 2;
  problem.link = LinkProfile{"free", 1, 0};
  for (double cost : {1, 1, 1, 0, 1, 1, 1})
    problem.ops.push_back(OpCost{"", cost, 0, 0, 0, 0});
  for (int i = 0; i + 1 < 7; ++i)
    problem.addTensor(i, i + 1, 0);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->cutsAfter, (std::vector<int>{2}));
  Result<Partition> reference = bruteForce(problem);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->cutsAfter, best->cutsAfter);
}

TEST(DynamicProgramming, AgreesWithBruteForceCutsOnIntegerCosts) {
  // Integer costs make every sum exact, so ties are real ties and both
  // algorithms must pick the same (lexicographically smallest) cuts.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    int numOps = std::uniform_int_distribution<int>(1, 10)(rng);
    int stages = std::uniform_int_distribution<int>(1, std::min(4, numOps))(rng);
    Problem problem;
    problem.stages = stages;
    problem.link = LinkProfile{"unit", 1, 1};
    for (int i = 0; i < numOps; ++i)
      problem.ops.push_back(
          OpCost{"", double(std::uniform_int_distribution<int>(0, 3)(rng)), 0,
                 0, 0, 0});
    for (int i = 0; i + 1 < numOps; ++i)
      problem.addTensor(i, i + 1, std::uniform_int_distribution<int>(0, 2)(rng));
    Result<Partition> fast = dynamicProgramming(problem);
    Result<Partition> reference = bruteForce(problem);
    ASSERT_TRUE(fast.ok() && reference.ok());
    EXPECT_EQ(fast->cutsAfter, reference->cutsAfter);
  }
}

/// An MLP whose hidden widths swing between narrow and wide, priced like
/// matmuls on an accelerator: F ~ 2*batch*in*out FLOPs, B and W as much each.
Problem unevenMlp(int stages) {
  const std::vector<int64_t> widths = {64,   4096, 64,  1024, 64,  4096,
                                       256,  2048, 64,  512,  4096, 64, 128};
  const int64_t batch = 32;
  const double flopsPerSecond = 1e12;
  Problem problem;
  problem.stages = stages;
  problem.link = LinkProfile{"nvlink", 400e9, 5e-6};
  for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    int64_t in = widths[layer], out = widths[layer + 1];
    double seconds = 2.0 * batch * in * out / flopsPerSecond;
    problem.ops.push_back(OpCost{"linear" + std::to_string(layer), seconds,
                                 seconds, seconds, batch * out * 4,
                                 in * out * 4});
    if (layer > 0)
      problem.addTensor(int(layer) - 1, int(layer), batch * in * 4);
  }
  return problem;
}

TEST(DynamicProgramming, BeatsUniformOnAnUnevenMlp) {
  for (int stages = 2; stages <= 5; ++stages) {
    Problem problem = unevenMlp(stages);
    Result<Partition> best = dynamicProgramming(problem);
    Result<Partition> even = uniform(problem);
    Result<Partition> reference = bruteForce(problem);
    ASSERT_TRUE(best.ok() && even.ok() && reference.ok());
    EXPECT_LT(best->bottleneck, even->bottleneck) << stages << " stages";
    EXPECT_LE(std::fabs(best->bottleneck - reference->bottleneck),
              1e-12 * reference->bottleneck);
  }
}

TEST(DynamicProgramming, ScalesToLargeModels) {
  // 2000 ops into 16 stages: O(P * N^2) = 64M steps, well under a second.
  std::mt19937 rng(11);
  Problem problem = randomProblem(rng, 2000, 16, true);
  Result<Partition> best = dynamicProgramming(problem);
  ASSERT_TRUE(best.ok()) << best.message();
  Result<Partition> even = uniform(problem);
  ASSERT_TRUE(even.ok());
  EXPECT_LE(best->bottleneck, even->bottleneck);
}
} // namespace
