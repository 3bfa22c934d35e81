//===- GeneratorsTest.cpp - Generated schedules verify and simulate -------===//
//
// Every generator over a grid of pipeline shapes: the schedule verifies, its
// programs simulate to completion under blocking rendezvous, and the timing
// and memory match the textbook numbers.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace pipecc::scheduling;

namespace {
/// F = 1, B = 2, W = 1 on every (stage, chunk), scaled by `scale`.
void setUniformDurations(ScheduleProblem &problem, double scale = 1) {
  problem.durations.assign(problem.virtualStages(),
                           ChunkDurations{1 * scale, 2 * scale, 1 * scale});
}

struct Outcome {
  Schedule schedule;
  SimulationResult simulation;
};

/// Generates, materialises and simulates; fails the test on any diagnostic.
std::optional<Outcome> run(const std::string &name,
                           const ScheduleProblem &problem,
                           const TensorSizes &sizes = {},
                           const TimingModel &timing = {}) {
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << name << ": " << schedule.message();
  if (!schedule)
    return std::nullopt;
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, sizes, timing);
  EXPECT_TRUE(programs.ok()) << name << ": " << programs.message();
  if (!programs)
    return std::nullopt;
  Result<SimulationResult> simulation = simulate(problem, *programs, timing);
  EXPECT_TRUE(simulation.ok()) << name << ": " << simulation.message();
  if (!simulation)
    return std::nullopt;
  return Outcome{*schedule, *simulation};
}

TEST(GeneratorRegistry, FindsGeneratorsByName) {
  std::vector<std::string> names = generatorNames();
  for (const char *name : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1",
                           "zb-h2", "zb-v", "auto"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    ASSERT_NE(lookupGenerator(name), nullptr) << name;
    EXPECT_EQ(lookupGenerator(name)->name(), name);
  }
  EXPECT_EQ(lookupGenerator("zb-x"), nullptr);
  Result<Schedule> unknown =
      generateSchedule("zb-x", ScheduleProblem::linear(2, 2));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown schedule 'zb-x'; known schedules: "
                                   "gpipe 1f1b interleaved-1f1b zb-h1 zb-h2 "
                                   "zb-v auto"),
            std::string::npos)
      << unknown.message();
}

TEST(GeneratorRegistry, GeneratorsRefuseShapesTheyDoNotHandle) {
  Result<Schedule> chunked =
      generateSchedule("1f1b", ScheduleProblem::interleaved(2, 2, 4));
  ASSERT_FALSE(chunked.ok());
  EXPECT_NE(chunked.message().find("use interleaved-1f1b"), std::string::npos);
  Result<Schedule> few =
      generateSchedule("interleaved-1f1b", ScheduleProblem::interleaved(4, 2, 3));
  ASSERT_FALSE(few.ok());
  EXPECT_EQ(few.message(),
            "interleaved-1f1b needs micro-batches >= ranks, got 3 < 4");
  EXPECT_FALSE(
      generateSchedule("interleaved-1f1b", ScheduleProblem::vShape(2, 4)).ok());
  EXPECT_FALSE(generateSchedule("zb-h1", ScheduleProblem::linear(2, 4)).ok());
}

TEST(GPipeAnd1F1B, RunOnEveryShapeWithTextbookTimeAndMemory) {
  for (const std::string name : {"gpipe", "1f1b"}) {
    for (bool split : {false, true}) {
      for (int stages = 1; stages <= 6; ++stages) {
        for (int microbatches = 1; microbatches <= 12; ++microbatches) {
          SCOPED_TRACE(name + " P=" + std::to_string(stages) +
                       " M=" + std::to_string(microbatches) +
                       (split ? " split" : " fused"));
          ScheduleProblem problem =
              ScheduleProblem::linear(stages, microbatches, split);
          setUniformDurations(problem);
          std::optional<Outcome> outcome = run(name, problem);
          ASSERT_TRUE(outcome);
          const SimulationResult &simulation = outcome->simulation;
          // Fused: the textbook (M + P - 1) (F + B) with B including W.
          // Split, W right after B: W leaves the gradient's critical path,
          // so only the last W adds to the bubble, M (F + B + W) +
          // (P - 1) (F + B).
          const double F = 1, B = 2, W = 1;
          double expected = split ? microbatches * (F + B + W) +
                                        (stages - 1) * (F + B)
                                  : (microbatches + stages - 1) * (F + B + W);
          EXPECT_DOUBLE_EQ(simulation.makespan, expected);
          EXPECT_NEAR(simulation.bubbleFraction,
                      1 - microbatches * (F + B + W) / expected, 1e-12);
          for (int stage = 0; stage < stages; ++stage) {
            int expected = name == "gpipe"
                               ? microbatches
                               : std::min(microbatches, stages - stage);
            EXPECT_EQ(simulation.peakLiveMicrobatches[stage], expected)
                << "stage " << stage;
            EXPECT_EQ(simulation.peakLiveUntilWeightGradient[stage], expected);
          }
        }
      }
    }
  }
}

TEST(GPipeAnd1F1B, SurviveNonUniformCostsAndCommunication) {
  TimingModel timing{1e3, 0.25, 0.5};
  for (const std::string name : {"gpipe", "1f1b"}) {
    for (int stages = 1; stages <= 5; ++stages) {
      for (int microbatches = 1; microbatches <= 9; microbatches += 2) {
        ScheduleProblem problem =
            ScheduleProblem::linear(stages, microbatches, true);
        for (int s = 0; s < stages; ++s)
          problem.durations.push_back(
              ChunkDurations{1.0 + s, 2.0 + 0.5 * s, 0.5 + (s % 2)});
        TensorSizes sizes;
        for (int q = 0; q + 1 < stages; ++q) {
          sizes.activationBytes.push_back(100 * (q + 1));
          sizes.gradientBytes.push_back(100 * (q + 1));
        }
        std::optional<Outcome> outcome = run(name, problem, sizes, timing);
        ASSERT_TRUE(outcome) << name;
        EXPECT_GT(outcome->simulation.makespan, 0);
      }
    }
  }
}

TEST(GPipe, HandlesInterleavedAndVShapedPlacements) {
  for (int stages = 1; stages <= 4; ++stages) {
    for (int microbatches = 1; microbatches <= 6; ++microbatches) {
      for (bool split : {false, true}) {
        ASSERT_TRUE(run("gpipe", ScheduleProblem::interleaved(
                                     stages, 3, microbatches, split)));
        ASSERT_TRUE(
            run("gpipe", ScheduleProblem::vShape(stages, microbatches, split)));
      }
    }
  }
}

TEST(InterleavedOneFOneB, BeatsOneFOneBWithinTheIdealBound) {
  for (int stages = 1; stages <= 5; ++stages) {
    for (int chunks = 1; chunks <= 3; ++chunks) {
      for (int microbatches = stages; microbatches <= 12;
           microbatches += stages) {
        for (bool split : {false, true}) {
          SCOPED_TRACE("P=" + std::to_string(stages) +
                       " v=" + std::to_string(chunks) +
                       " M=" + std::to_string(microbatches));
          ScheduleProblem problem = ScheduleProblem::interleaved(
              stages, chunks, microbatches, split);
          // Each chunk holds 1/v of a stage's layers.
          setUniformDurations(problem, 1.0 / chunks);
          std::optional<Outcome> outcome = run("interleaved-1f1b", problem);
          ASSERT_TRUE(outcome);
          double makespan = outcome->simulation.makespan;
          // No schedule beats M (F + B + W) of work plus the interleaved
          // bubble (P - 1) (F + B + W) / v, or (P - 1) (F + B) / v when W is
          // off the critical path. Megatron's order reaches it for large M;
          // for M near P, and with blocking sends that wait for a busy
          // receiver, it lands somewhat above.
          double bubbleWork = split ? 3.0 : 4.0;
          double ideal =
              microbatches * 4.0 + (stages - 1) * bubbleWork / chunks;
          EXPECT_GE(makespan, ideal - 1e-9);
          double oneFOneB = microbatches * 4.0 + (stages - 1) * bubbleWork;
          if (chunks > 1 && stages > 1)
            EXPECT_LT(makespan, oneFOneB);
          else
            EXPECT_NEAR(makespan, oneFOneB, 1e-9);
        }
      }
    }
  }
}

TEST(InterleavedOneFOneB, ReachesTheIdealBubbleWithManyMicrobatches) {
  ScheduleProblem problem = ScheduleProblem::interleaved(4, 2, 16);
  setUniformDurations(problem, 0.5);
  std::optional<Outcome> outcome = run("interleaved-1f1b", problem);
  ASSERT_TRUE(outcome);
  EXPECT_DOUBLE_EQ(outcome->simulation.makespan, 16 * 4.0 + 3 * 4.0 / 2);
}

TEST(ZeroBubbleH1, CutsTheBubbleWithinOneFOneBMemory) {
  for (int stages = 1; stages <= 6; ++stages) {
    for (int microbatches = 1; microbatches <= 12; ++microbatches) {
      SCOPED_TRACE("P=" + std::to_string(stages) +
                   " M=" + std::to_string(microbatches));
      // F = B = W = 1, the setting of the paper's ZB-H1 analysis.
      ScheduleProblem problem =
          ScheduleProblem::linear(stages, microbatches, true);
      problem.durations.assign(stages, ChunkDurations{1, 1, 1});
      std::optional<Outcome> zeroBubble = run("zb-h1", problem);
      std::optional<Outcome> baseline = run("1f1b", problem);
      ASSERT_TRUE(zeroBubble && baseline);
      const SimulationResult &simulation = zeroBubble->simulation;
      EXPECT_LE(simulation.makespan, baseline->simulation.makespan);
      if (microbatches >= stages) {
        // Bubble (P - 1) (F + B - W) instead of 1F1B's (P - 1) (F + B + W).
        EXPECT_DOUBLE_EQ(simulation.makespan,
                         3.0 * microbatches + (stages - 1));
      }
      for (int stage = 0; stage < stages; ++stage) {
        EXPECT_EQ(simulation.peakLiveMicrobatches[stage],
                  std::min(microbatches, stages - stage));
        EXPECT_LE(simulation.peakLiveUntilWeightGradient[stage],
                  std::min(microbatches, stages));
      }
    }
  }
}
} // namespace
