//===- ExactnessTest.cpp - Simulated bubbles against the closed forms -----===//
//
// F = B = W = 1 per virtual stage and free communication, the setting of
// the closed forms:
//   gpipe, 1f1b (B and W fused)  bubble (P-1)/(M+P-1), simulated with
//                                blocking rendezvous;
//   interleaved-1f1b (fused)     (P-1)/(vM+P-1) for M a multiple of P, with
//                                posted sends (priceOrder: blocking sends
//                                make a sender wait for a busy receiver and
//                                lose up to a few percent at P = 5 and 8);
//   zb-h1                        1F1B's peak activations (its rank 0's);
//   zb-h2                        no idle time inside any rank's span once
//                                M >= 2P - 1, peak <= 2P - 1;
//   zb-v                         makespan 6M + P - 1 (each rank's 6M of
//                                work plus the P - 1 the last rank must wait
//                                for its first input: the least any order
//                                can take) once M >= 2P, peak <= P.
// The bubble is the simulator's: mean over ranks of 1 - busy / makespan;
// the span bubble (OrderPricing::spanBubble) counts only the idle time
// between a rank's first and last action, the bubble of consecutive steps
// that overlap, which the zero-bubble papers report as 0.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Search.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace pipecc::scheduling;

namespace {
ScheduleProblem unitProblem(const std::string &name, int stages, int chunks,
                            int microbatches, bool split) {
  Result<PlacementKind> placement = lookupGenerator(name)->placementFor(chunks);
  EXPECT_TRUE(placement.ok()) << placement.message();
  ScheduleProblem problem = ScheduleProblem::withPlacement(
      *placement, stages, chunks, microbatches, split);
  problem.durations.assign(problem.virtualStages(), ChunkDurations{1, 1, 1});
  return problem;
}

/// Blocking-rendezvous simulation with free communication.
SimulationResult simulated(const ScheduleProblem &problem,
                           const Schedule &schedule) {
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, schedule, {});
  EXPECT_TRUE(programs.ok()) << programs.message();
  Result<SimulationResult> simulation = simulate(problem, *programs);
  EXPECT_TRUE(simulation.ok()) << simulation.message();
  return *simulation;
}

OrderPricing priced(const ScheduleProblem &problem, const Schedule &schedule) {
  Result<OrderPricing> pricing = priceOrder(problem, schedule);
  EXPECT_TRUE(pricing.ok()) << pricing.message();
  return *pricing;
}

double peakOf(const OrderPricing &pricing) {
  return *std::max_element(pricing.peakMicrobatches.begin(),
                           pricing.peakMicrobatches.end());
}

TEST(Exactness, GPipeAndOneFOneBBubbleIsTheClosedForm) {
  for (const std::string name : {"gpipe", "1f1b"}) {
    for (int P = 2; P <= 8; ++P) {
      for (int M = 1; M <= 4 * P; ++M) {
        SCOPED_TRACE(name + " P=" + std::to_string(P) +
                     " M=" + std::to_string(M));
        ScheduleProblem problem = unitProblem(name, P, 1, M, false);
        Result<Schedule> schedule = generateSchedule(name, problem);
        ASSERT_TRUE(schedule.ok()) << schedule.message();
        SimulationResult simulation = simulated(problem, *schedule);
        EXPECT_NEAR(simulation.bubbleFraction, (P - 1.0) / (M + P - 1.0),
                    1e-12);
        EXPECT_NEAR(priced(problem, *schedule).bubble,
                    (P - 1.0) / (M + P - 1.0), 1e-12);
      }
    }
  }
}

TEST(Exactness, InterleavedBubbleIsTheClosedFormForWholeGroups) {
  for (int v = 1; v <= 3; ++v) {
    for (int P = 2; P <= 8; ++P) {
      for (int M = P; M <= 4 * P; ++M) {
        SCOPED_TRACE("P=" + std::to_string(P) + " v=" + std::to_string(v) +
                     " M=" + std::to_string(M));
        ScheduleProblem problem =
            unitProblem("interleaved-1f1b", P, v, M, false);
        Result<Schedule> schedule =
            generateSchedule("interleaved-1f1b", problem);
        ASSERT_TRUE(schedule.ok()) << schedule.message();
        double closedForm = (P - 1.0) / (v * M + P - 1.0);
        double bubble = priced(problem, *schedule).bubble;
        if (M % P == 0)
          EXPECT_NEAR(bubble, closedForm, 1e-12);
        else
          EXPECT_GE(bubble, closedForm - 1e-12);
        // Blocking rendezvous can only add waiting.
        EXPECT_GE(simulated(problem, *schedule).bubbleFraction, bubble - 1e-12);
      }
    }
  }
}

TEST(Exactness, ZeroBubbleH1KeepsOneFOneBPeakActivations) {
  for (int P = 2; P <= 8; ++P) {
    for (int M = 1; M <= 4 * P; ++M) {
      SCOPED_TRACE("P=" + std::to_string(P) + " M=" + std::to_string(M));
      ScheduleProblem problem = unitProblem("zb-h1", P, 1, M, true);
      OrderPricing h1 = priced(problem, *generateSchedule("zb-h1", problem));
      OrderPricing base = priced(problem, *generateSchedule("1f1b", problem));
      // Rank r defers its W's by r micro-batches and holds up to P - r + r:
      // more than 1F1B's P - r there, never more than 1F1B's peak (rank 0).
      for (int rank = 0; rank < P; ++rank)
        EXPECT_LE(h1.peakMicrobatches[rank], std::min(M, P)) << "rank " << rank;
      EXPECT_EQ(peakOf(base), std::min(M, P));
      EXPECT_EQ(peakOf(h1), peakOf(base));
      // Bubble (P - 1)(F + B - W) = P - 1 over 3M of work.
      if (M >= P) {
        EXPECT_DOUBLE_EQ(h1.makespan, 3.0 * M + P - 1);
      }
    }
  }
}

TEST(Exactness, ZeroBubbleH2HasNoIdleInsideAnyRankOnceMIsLargeEnough) {
  for (int P = 2; P <= 8; ++P) {
    for (int M = 1; M <= 4 * P; ++M) {
      SCOPED_TRACE("P=" + std::to_string(P) + " M=" + std::to_string(M));
      ScheduleProblem problem = unitProblem("zb-h2", P, 1, M, true);
      Result<Schedule> schedule = generateSchedule("zb-h2", problem);
      ASSERT_TRUE(schedule.ok()) << schedule.message();
      OrderPricing pricing = priced(problem, *schedule);
      EXPECT_LE(peakOf(pricing), 2 * P - 1);
      // The least makespan of any order once M >= P: rank P - 1 waits
      // P - 1 for its first input, then has 3M of work.
      if (M >= P) {
        EXPECT_DOUBLE_EQ(pricing.makespan, 3.0 * M + P - 1);
      }
      if (M >= 2 * P - 1) {
        EXPECT_EQ(pricing.spanBubble(), 0);
        EXPECT_NEAR(pricing.bubble, (P - 1.0) / (3.0 * M + P - 1), 1e-12);
        // Blocking rendezvous with free messages: the same timeline.
        EXPECT_DOUBLE_EQ(simulated(problem, *schedule).makespan,
                         pricing.makespan);
      } else {
        EXPECT_GT(pricing.spanBubble(), 0);
      }
    }
  }
}

TEST(Exactness, ZeroBubbleVTakesTheLeastMakespanWithinOneFOneBMemory) {
  for (int P = 2; P <= 8; ++P) {
    for (int M = 1; M <= 4 * P; ++M) {
      SCOPED_TRACE("P=" + std::to_string(P) + " M=" + std::to_string(M));
      ScheduleProblem problem = unitProblem("zb-v", P, 2, M, true);
      Result<Schedule> schedule = generateSchedule("zb-v", problem);
      ASSERT_TRUE(schedule.ok()) << schedule.message();
      OrderPricing pricing = priced(problem, *schedule);
      // 1F1B's peak is min(M, P) micro-batches on rank 0.
      EXPECT_LE(peakOf(pricing), std::min(M, P) + 1e-12);
      if (M >= 2 * P) {
        EXPECT_DOUBLE_EQ(pricing.makespan, 6.0 * M + P - 1);
        EXPECT_NEAR(pricing.bubble, (P - 1.0) / (6.0 * M + P - 1), 1e-12);
      }
    }
  }
}
} // namespace
