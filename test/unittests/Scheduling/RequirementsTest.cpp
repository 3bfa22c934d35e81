//===- RequirementsTest.cpp - Every schedule verifies or is refused -------===//
//
// For every registered schedule, P in 2..8, M in 1..4P and v in 1..3: either
// placementFor(v) / accepts() refuses up front with a reason that names the
// schedule, or the schedule generates, verifies, materialises its
// communication and simulates. A failure after acceptance is a bug. The
// refusals are also checked against each schedule's documented needs, so
// a generator that starts refusing what it should take fails here too.
//
//===----------------------------------------------------------------------===//

#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Search.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

#include <map>

using namespace pipecc::scheduling;

namespace {
/// The documented needs: whether `name` should take (v, M, split).
bool shouldAccept(const std::string &name, int stages, int chunks,
                  int microbatches, bool split) {
  if (name == "gpipe" || name == "auto")
    return true;
  if (name == "1f1b")
    return chunks == 1;
  if (name == "interleaved-1f1b")
    return microbatches >= stages;
  if (name == "zb-h1" || name == "zb-h2")
    return chunks == 1 && split;
  if (name == "zb-v")
    return chunks == 2 && split;
  ADD_FAILURE() << "no documented needs for " << name;
  return false;
}

TEST(ScheduleRequirements, EveryScheduleVerifiesOrIsRefusedUpFront) {
  // `auto` with a small budget: this test is about acceptance, not quality.
  ScheduleSearchOptions quick;
  quick.localSearchEvaluations = 20;
  quick.exactActions = 12;
  quick.exactNodes = 2000;
  registerGenerator(createAutoGenerator(quick));

  std::map<std::string, int> accepted, refused;
  for (const std::string &name : generatorNames()) {
    const ScheduleGenerator *generator = lookupGenerator(name);
    for (int chunks = 1; chunks <= 3; ++chunks) {
      Result<PlacementKind> placement = generator->placementFor(chunks);
      for (int stages = 2; stages <= 8; ++stages) {
        for (int microbatches = 1; microbatches <= 4 * stages; ++microbatches) {
          for (bool split : {false, true}) {
            // auto is slow next to the others: one backward, fewer M.
            if (name == "auto" &&
                (!split || (microbatches % 3 != 0 && microbatches != 1)))
              continue;
            SCOPED_TRACE(name + " P=" + std::to_string(stages) +
                         " v=" + std::to_string(chunks) +
                         " M=" + std::to_string(microbatches) +
                         (split ? " split" : " fused"));
            bool expected =
                shouldAccept(name, stages, chunks, microbatches, split);
            if (!placement) {
              EXPECT_FALSE(expected) << placement.message();
              EXPECT_EQ(placement.message().rfind(name + " needs", 0), 0u)
                  << placement.message();
              ++refused[name];
              continue;
            }
            ScheduleProblem problem = ScheduleProblem::withPlacement(
                *placement, stages, chunks, microbatches, split);
            ASSERT_TRUE(problem.check().ok()) << problem.check().message();
            Status acceptance = generator->accepts(problem);
            EXPECT_EQ(acceptance.ok(), expected) << acceptance.message();
            if (!acceptance) {
              EXPECT_EQ(acceptance.message().rfind(name + " needs", 0), 0u)
                  << acceptance.message();
              ++refused[name];
              continue;
            }
            problem.durations.assign(problem.virtualStages(),
                                     ChunkDurations{1, 0.976, 0.504});
            Result<Schedule> schedule = generateSchedule(name, problem);
            ASSERT_TRUE(schedule.ok()) << schedule.message();
            TimingModel timing;
            timing.latencySeconds = 0.05;
            Result<std::vector<Program>> programs =
                materializeCommunication(problem, *schedule, {}, timing);
            ASSERT_TRUE(programs.ok()) << programs.message();
            Result<SimulationResult> simulation =
                simulate(problem, *programs, timing);
            ASSERT_TRUE(simulation.ok()) << simulation.message();
            ++accepted[name];
          }
        }
      }
    }
  }
  registerGenerator(createAutoGenerator());
  // Every schedule has shapes it takes.
  for (const std::string &name : generatorNames())
    EXPECT_GT(accepted[name], 0) << name;
  EXPECT_EQ(refused["gpipe"], 0);
  EXPECT_EQ(refused["auto"], 0);
}

TEST(ScheduleRequirements, RefusalsStateTheNeed) {
  auto refusal = [](const std::string &name, const ScheduleProblem &problem) {
    Result<Schedule> schedule = generateSchedule(name, problem);
    return schedule ? std::string("accepted") : schedule.message();
  };
  EXPECT_EQ(lookupGenerator("1f1b")->placementFor(2).message(),
            "1f1b needs one chunk per rank, got 2; use interleaved-1f1b or "
            "zb-v");
  EXPECT_EQ(lookupGenerator("zb-v")->placementFor(3).message(),
            "zb-v needs 2 chunks per rank, got 3");
  EXPECT_EQ(refusal("interleaved-1f1b", ScheduleProblem::interleaved(4, 2, 3)),
            "interleaved-1f1b needs micro-batches >= ranks, got 3 < 4");
  EXPECT_EQ(refusal("zb-h2", ScheduleProblem::linear(4, 8)),
            "zb-h2 needs the backward split into B and W");
  EXPECT_EQ(refusal("zb-v", ScheduleProblem::interleaved(4, 2, 8, true)),
            "zb-v needs the v placement of the virtual stages");
  EXPECT_EQ(refusal("interleaved-1f1b", ScheduleProblem::vShape(4, 8)),
            "interleaved-1f1b needs the interleaved placement of the virtual "
            "stages");
  // The placements the partition asks for.
  const ScheduleGenerator *automatic = lookupGenerator("auto");
  EXPECT_EQ(*automatic->placementFor(1), PlacementKind::Linear);
  EXPECT_EQ(*automatic->placementFor(2), PlacementKind::VShape);
  EXPECT_EQ(*automatic->placementFor(3), PlacementKind::Interleaved);
  EXPECT_EQ(*lookupGenerator("gpipe")->placementFor(3),
            PlacementKind::Interleaved);
  EXPECT_TRUE(lookupGenerator("zb-v")->needsSplitBackward());
  EXPECT_FALSE(lookupGenerator("1f1b")->needsSplitBackward());
  EXPECT_STREQ(placementName(PlacementKind::VShape), "v");
}
} // namespace
