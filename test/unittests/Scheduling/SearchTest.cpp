//===- SearchTest.cpp - The auto schedule against the fixed ones ----------===//
//
// `auto` is never worse than the best fixed schedule that fits the memory
// limit (both simulated with blocking rendezvous and the message time), on
// a grid with uneven costs (F = 1, B = 0.976, W = 0.504 per stage, 0.05 s
// per message) and with F = B = W = 1 and free messages, at limits of P
// and 2P micro-batches, v = 1, 2, 3; and it is strictly better somewhere.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Search.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <iostream>

using namespace pipecc::scheduling;

namespace {
struct Costs {
  const char *label;
  ChunkDurations perStage;
  double messageSeconds;
};
const Costs kUneven{"uneven", {1, 0.976, 0.504}, 0.05};
const Costs kUnit{"unit", {1, 1, 1}, 0};

/// A problem of v chunks per rank, each holding 1/v of a stage's costs.
ScheduleProblem problemFor(int stages, int chunks, int microbatches,
                           const Costs &costs) {
  Result<PlacementKind> placement =
      lookupGenerator("auto")->placementFor(chunks);
  ScheduleProblem problem = ScheduleProblem::withPlacement(
      *placement, stages, chunks, microbatches, true);
  problem.durations.assign(
      problem.virtualStages(),
      ChunkDurations{costs.perStage.forward / chunks,
                     costs.perStage.backwardInput / chunks,
                     costs.perStage.backwardWeight / chunks});
  return problem;
}

double simulatedMakespan(const ScheduleProblem &problem,
                         const Schedule &schedule, const TimingModel &timing) {
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, schedule, {}, timing);
  EXPECT_TRUE(programs.ok()) << programs.message();
  Result<SimulationResult> simulation = simulate(problem, *programs, timing);
  EXPECT_TRUE(simulation.ok()) << simulation.message();
  return simulation ? simulation->makespan
                    : std::numeric_limits<double>::infinity();
}

TEST(AutoSchedule, NeverWorseThanTheBestFixedScheduleAndSometimesBetter) {
  int cases = 0, wins = 0, onlyAuto = 0;
  for (const Costs &costs : {kUneven, kUnit}) {
    for (int P : {2, 3, 4}) {
      for (int v : {1, 2, 3}) {
        for (int M : {P, 2 * P, 3 * P}) {
          for (int limitFactor : {1, 2}) {
            double limit = limitFactor * P;
            SCOPED_TRACE(std::string(costs.label) + " P=" + std::to_string(P) +
                         " v=" + std::to_string(v) + " M=" + std::to_string(M) +
                         " limit=" + std::to_string(limit));
            ScheduleProblem problem = problemFor(P, v, M, costs);
            ScheduleSearchOptions options;
            options.memoryLimitMicrobatches = limit;
            options.timing.latencySeconds = costs.messageSeconds;
            // The best fixed schedule within the limit, found here
            // independently of the search.
            std::string bestName;
            double best = std::numeric_limits<double>::infinity();
            for (const std::string &name : generatorNames()) {
              const ScheduleGenerator *generator = lookupGenerator(name);
              if (name == "auto" || !generator->accepts(problem))
                continue;
              Result<Schedule> schedule = generateSchedule(name, problem);
              ASSERT_TRUE(schedule.ok()) << schedule.message();
              Result<OrderPricing> pricing =
                  priceOrder(problem, *schedule, options);
              ASSERT_TRUE(pricing.ok()) << pricing.message();
              double peak = *std::max_element(pricing->peakMicrobatches.begin(),
                                              pricing->peakMicrobatches.end());
              if (peak > limit + 1e-9)
                continue;
              double makespan =
                  simulatedMakespan(problem, *schedule, options.timing);
              if (makespan < best) {
                best = makespan;
                bestName = name;
              }
            }
            Result<ScheduleSearchResult> found =
                searchOrdering(problem, options);
            ASSERT_TRUE(found.ok()) << found.message();
            ASSERT_TRUE(found->schedule.verify(problem).ok());
            double makespan =
                simulatedMakespan(problem, found->schedule, options.timing);
            EXPECT_DOUBLE_EQ(makespan, found->makespan);
            for (double peak : found->peakMicrobatches)
              EXPECT_LE(peak, limit + 1e-9);
            ++cases;
            if (bestName.empty()) {
              // Nothing fixed fits; auto found an order anyway.
              ++onlyAuto;
              std::cout << "only auto fits: " << costs.label << " P=" << P
                        << " v=" << v << " M=" << M << " limit=" << limit
                        << ": " << makespan << "\n";
              continue;
            }
            EXPECT_EQ(found->bestFixed, bestName);
            EXPECT_LE(makespan, best + 1e-9) << "best fixed: " << bestName;
            if (makespan < best - 1e-9) {
              ++wins;
              std::cout << "auto wins: " << costs.label << " P=" << P
                        << " v=" << v << " M=" << M << " limit=" << limit
                        << ": " << makespan << " vs " << bestName << " " << best
                        << "\n";
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 3 * 3 * 2);
  EXPECT_GT(wins, 0);
  std::cout << cases << " cases, auto strictly better in " << wins
            << ", the only order within the limit in " << onlyAuto << "\n";
}

TEST(AutoSchedule, HonoursTheMemoryLimitOrSaysWhatItNeeds) {
  ScheduleProblem problem = problemFor(4, 1, 8, kUnit);
  ScheduleSearchOptions options;
  options.memoryLimitMicrobatches = 2;
  Result<ScheduleSearchResult> tight = searchOrdering(problem, options);
  ASSERT_TRUE(tight.ok()) << tight.message();
  for (double peak : tight->peakMicrobatches)
    EXPECT_LE(peak, 2);
  options.memoryLimitMicrobatches = 0.5;
  Result<ScheduleSearchResult> impossible = searchOrdering(problem, options);
  ASSERT_FALSE(impossible.ok());
  EXPECT_EQ(impossible.message(),
            "auto found no order within the memory limit of 0.5 "
            "micro-batches of activations per rank; the least a fixed "
            "schedule needs is 4 (1f1b)");
}

TEST(AutoSchedule, HonoursAByteLimit) {
  ScheduleProblem problem = problemFor(4, 1, 8, kUnit);
  ScheduleSearchOptions options;
  // 100 bytes of activations per micro-batch until B, 50 more until W.
  options.activationBytes.assign(4, 100);
  options.stashBytes.assign(4, 50);
  options.memoryLimitBytes = 450;
  Result<ScheduleSearchResult> found = searchOrdering(problem, options);
  ASSERT_TRUE(found.ok()) << found.message();
  ASSERT_EQ(found->peakBytes.size(), 4u);
  for (int64_t peak : found->peakBytes)
    EXPECT_LE(peak, 450);
  options.memoryLimitBytes = 100;
  EXPECT_FALSE(searchOrdering(problem, options).ok());
  options.activationBytes.clear();
  options.stashBytes.clear();
  EXPECT_EQ(searchOrdering(problem, options).message(),
            "auto: a memory limit in bytes needs the activation sizes of the "
            "virtual stages");
}

TEST(AutoSchedule, BranchAndBoundProvesSmallProblems) {
  // P = 2, M = 2, split: 12 actions, within the exact search's reach.
  ScheduleProblem problem = problemFor(2, 1, 2, kUneven);
  ScheduleSearchOptions options;
  options.timing.latencySeconds = 0.05;
  Result<ScheduleSearchResult> found = searchOrdering(problem, options);
  ASSERT_TRUE(found.ok()) << found.message();
  EXPECT_TRUE(found->proven);
  // The least makespan priced without blocking: no fixed order beats it.
  Result<OrderPricing> mine = priceOrder(problem, found->schedule, options);
  ASSERT_TRUE(mine.ok());
  for (const std::string &name : generatorNames()) {
    if (name == "auto" || !lookupGenerator(name)->accepts(problem))
      continue;
    Result<OrderPricing> fixed =
        priceOrder(problem, *generateSchedule(name, problem), options);
    EXPECT_LE(mine->makespan, fixed->makespan + 1e-9) << name;
  }
}

TEST(AutoSchedule, SearchesChunksAndMicrobatches) {
  // A global batch split into M micro-batches: each costs 1/M of the
  // batch's F, B, W, and each message 0.05 s whatever M.
  ScheduleSearchSpace space;
  space.chunks = {1, 2, 3};
  space.microbatches = {4, 8, 16};
  space.build = [](PlacementKind placement, int chunks,
                   int microbatches) -> Result<ScheduleCandidateProblem> {
    ScheduleCandidateProblem candidate;
    candidate.problem = ScheduleProblem::withPlacement(placement, 4, chunks,
                                                       microbatches, true);
    double share = 16.0 / (microbatches * chunks);
    candidate.problem.durations.assign(
        candidate.problem.virtualStages(),
        ChunkDurations{share * 1, share * 0.976, share * 0.504});
    return candidate;
  };
  ScheduleSearchOptions options;
  options.timing.latencySeconds = 0.05;
  options.memoryLimitMicrobatches = 8;
  Result<ScheduleSpaceResult> found = searchSchedule(space, options);
  ASSERT_TRUE(found.ok()) << found.message();
  ASSERT_EQ(found->tried.size(), 9u);
  for (const ScheduleSpaceResult::Tried &tried : found->tried) {
    EXPECT_TRUE(tried.skipped.empty()) << tried.skipped;
    EXPECT_GE(tried.makespan, found->best.makespan - 1e-12);
  }
  EXPECT_EQ(found->problem.chunks, found->chunks);
  EXPECT_EQ(found->problem.microbatches, found->microbatches);
  EXPECT_TRUE(found->best.schedule.verify(found->problem).ok());
  std::cout << "searchSchedule: v=" << found->chunks
            << " M=" << found->microbatches << " makespan "
            << found->best.makespan << " (" << found->best.origin << ")\n";
}
} // namespace

// The search's fast pricing and the simulator's compute-only simulation are
// one rule: the same makespan, busy time and peak micro-batches for every
// fixed schedule, with per-boundary message times and uneven costs.
TEST(AutoSchedule, PricingAgreesWithTheSimulator) {
  for (const char *name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1",
                           "zb-h2", "zb-v"}) {
    const ScheduleGenerator *generator = lookupGenerator(name);
    ASSERT_NE(generator, nullptr) << name;
    for (int chunks : {1, 2}) {
      Result<PlacementKind> placement = generator->placementFor(chunks);
      if (!placement)
        continue;
      ScheduleProblem problem = ScheduleProblem::withPlacement(
          *placement, 4, chunks, 8, generator->needsSplitBackward());
      for (int q = 0; q < problem.virtualStages(); ++q)
        problem.durations.push_back({1.0 + 0.1 * q, 0.976, 0.504});
      ScheduleSearchOptions options;
      for (int q = 0; q + 1 < problem.virtualStages(); ++q)
        options.timing.boundarySeconds.push_back(0.05 + 0.01 * q);
      Result<Schedule> schedule = generateSchedule(name, problem);
      ASSERT_TRUE(schedule) << name << ": " << schedule.message();
      Result<OrderPricing> priced = priceOrder(problem, *schedule, options);
      Result<SimulationResult> simulated =
          simulateSchedule(problem, *schedule, options.timing);
      ASSERT_TRUE(priced) << priced.message();
      ASSERT_TRUE(simulated) << simulated.message();
      EXPECT_NEAR(priced->makespan, simulated->makespan, 1e-9) << name;
      for (int rank = 0; rank < problem.stages; ++rank) {
        EXPECT_NEAR(priced->busySeconds[rank], simulated->busySeconds[rank],
                    1e-9)
            << name << " rank " << rank;
        EXPECT_DOUBLE_EQ(priced->peakMicrobatches[rank],
                         simulated->memory[rank].peakActivationMicrobatches)
            << name << " rank " << rank;
      }
    }
  }
}
