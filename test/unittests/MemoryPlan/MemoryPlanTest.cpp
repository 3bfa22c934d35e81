//===- MemoryPlanTest.cpp - Slots and arena offsets of a rank -------------===//
//
// The planner against the schedule generators and the simulator: a rank's
// program as pipecc's codegen sees it (stage input, saved activation, sent
// output, received and sent gradients, weights and their gradients), planned
// under GPipe, 1F1B and ZB-H1; the slots match the simulator's count of live
// micro-batches, and the arena never lets two live copies share a byte.
//
//===----------------------------------------------------------------------===//

#include "pipecc/MemoryPlan/MemoryPlan.h"
#include "pipecc/Scheduling/Communication.h"
#include "pipecc/Scheduling/Generators.h"
#include "pipecc/Scheduling/Simulator.h"

#include "gtest/gtest.h"

using namespace pipecc::memory;
using namespace pipecc::scheduling;

namespace {

/// Buffer ids of the simulated rank.
struct RankBuffers {
  int64_t input = -1, saved = -1, output = -1, gradIn = -1, gradOut = -1,
          weight = -1, gradient = -1, workspace = -1;
};

struct SimulatedRank {
  std::vector<BufferRecord> buffers;
  std::vector<ActionRecord> actions;
  RankBuffers ids;
};

/// The records of `rank` in `program`, shaped like a codegen rank: F reads
/// its input and the weight, keeps a saved activation and writes its output;
/// B reads the saved activation and the received gradient and writes the
/// gradient it sends; W reads the input and the saved activation, writes a
/// workspace it adds into the gradient accumulator.
SimulatedRank simulateRank(const Program &program, int rank, int stages) {
  SimulatedRank sim;
  auto add = [&](std::string name, BufferKind kind, int64_t bytes,
                 bool perMicrobatch) {
    sim.buffers.push_back({std::move(name), kind, bytes, perMicrobatch});
    return static_cast<int64_t>(sim.buffers.size() - 1);
  };
  RankBuffers &ids = sim.ids;
  ids.weight = add("w", BufferKind::Weight, 4000, false);
  ids.gradient = add("grad.w", BufferKind::Gradient, 4000, false);
  ids.input = add("in", rank == 0 ? BufferKind::DataInput : BufferKind::Transfer,
                  100, true);
  ids.saved = add("saved", BufferKind::Activation, 300, true);
  if (rank < stages - 1) {
    ids.output = add("out", BufferKind::Transfer, 100, true);
    ids.gradIn = add("grad.out", BufferKind::Transfer, 100, true);
  }
  if (rank > 0)
    ids.gradOut = add("grad.in", BufferKind::Transfer, 100, true);
  ids.workspace = add("dw", BufferKind::Workspace, 4000, false);

  auto optional = [](std::initializer_list<int64_t> list) {
    std::vector<int64_t> out;
    for (int64_t id : list)
      if (id >= 0)
        out.push_back(id);
    return out;
  };
  for (const ProgramAction &action : program) {
    ActionRecord record;
    record.label = describe(action);
    switch (action.kind) {
    case ProgramActionKind::Compute: {
      record.microbatch = action.compute.microbatch;
      bool input = false, weight = false;
      switch (action.compute.kind) {
      case ComputeKind::Forward:
        record.defines = optional({ids.saved, ids.output});
        if (rank == 0)
          record.defines.push_back(ids.input);
        else
          record.uses.push_back(ids.input);
        record.uses.push_back(ids.weight);
        break;
      case ComputeKind::BackwardInput:
        input = true;
        break;
      case ComputeKind::BackwardWeight:
        weight = true;
        break;
      case ComputeKind::Backward:
        input = weight = true;
        break;
      }
      if (input) {
        record.uses = optional({ids.saved, ids.gradIn, ids.weight});
        record.defines = optional({ids.gradOut});
      }
      if (weight) {
        for (int64_t id : {ids.input, ids.saved, ids.gradient})
          record.uses.push_back(id);
        record.defines.push_back(ids.workspace);
      }
      break;
    }
    case ProgramActionKind::Send:
      record.microbatch = action.microbatch;
      record.uses.push_back(action.tensor.rfind("act", 0) == 0 ? ids.output
                                                               : ids.gradOut);
      break;
    case ProgramActionKind::Recv:
      record.microbatch = action.microbatch;
      record.defines.push_back(action.tensor.rfind("act", 0) == 0 ? ids.input
                                                                  : ids.gradIn);
      break;
    case ProgramActionKind::AllReduce:
    case ProgramActionKind::OptimizerStep:
      record.uses.push_back(ids.gradient);
      break;
    }
    sim.actions.push_back(std::move(record));
  }
  return sim;
}

struct PipelineRun {
  std::vector<Program> programs;
  SimulationResult simulation;
};

PipelineRun runSchedule(const std::string &name, int stages, int microbatches,
                        bool split) {
  ScheduleProblem problem =
      ScheduleProblem::linear(stages, microbatches, split);
  problem.durations.assign(problem.virtualStages(), ChunkDurations{1, 2, 1});
  Result<Schedule> schedule = generateSchedule(name, problem);
  EXPECT_TRUE(schedule.ok()) << schedule.message();
  Result<std::vector<Program>> programs =
      materializeCommunication(problem, *schedule, TensorSizes{});
  EXPECT_TRUE(programs.ok()) << programs.message();
  Result<SimulationResult> simulation = simulate(problem, *programs, {});
  EXPECT_TRUE(simulation.ok()) << simulation.message();
  return {*programs, *simulation};
}

/// No two copies that are live at the same time share a byte, and every
/// offset is aligned.
void expectSound(const std::vector<BufferRecord> &buffers,
                 const MemoryPlan &plan, int64_t alignment = 64) {
  ASSERT_EQ(plan.buffers.size(), buffers.size());
  for (size_t a = 0; a < buffers.size(); ++a) {
    const BufferPlacement &pa = plan.buffers[a];
    EXPECT_EQ(pa.offset % alignment, 0) << buffers[a].name;
    EXPECT_EQ(pa.stride % alignment, 0) << buffers[a].name;
    EXPECT_GE(pa.stride, buffers[a].bytes);
    EXPECT_LE(pa.offset + pa.slots * pa.stride, plan.arenaBytes)
        << buffers[a].name;
    for (size_t b = a + 1; b < buffers.size(); ++b) {
      const BufferPlacement &pb = plan.buffers[b];
      bool livesTogether = pa.firstAction <= pb.lastAction &&
                           pb.firstAction <= pa.lastAction;
      bool sharesBytes = pa.offset < pb.offset + pb.slots * pb.stride &&
                         pb.offset < pa.offset + pa.slots * pa.stride;
      EXPECT_FALSE(livesTogether && sharesBytes)
          << buffers[a].name << " and " << buffers[b].name;
    }
  }
}

MemoryPlan planOrFail(const std::vector<BufferRecord> &buffers,
                      const std::vector<ActionRecord> &actions,
                      int microbatches, bool reuse = true) {
  PlanOptions options;
  options.microbatches = microbatches;
  options.reuse = reuse;
  Result<MemoryPlan> plan = planMemory(buffers, actions, options);
  EXPECT_TRUE(plan.ok()) << plan.message();
  return plan.ok() ? *plan : MemoryPlan{};
}

TEST(MemoryPlan, OneFOneBKeepsStagesMinusRankActivations) {
  const int stages = 4, microbatches = 8;
  PipelineRun run = runSchedule("1f1b", stages, microbatches, false);
  for (int rank = 0; rank < stages; ++rank) {
    SimulatedRank sim = simulateRank(run.programs[rank], rank, stages);
    MemoryPlan plan = planOrFail(sim.buffers, sim.actions, microbatches);
    EXPECT_EQ(plan.buffers[sim.ids.saved].slots, stages - rank) << rank;
    EXPECT_EQ(plan.buffers[sim.ids.saved].slots,
              run.simulation.peakLiveMicrobatches[rank]);
    EXPECT_EQ(plan.bytesOf(BufferKind::Activation), (stages - rank) * 300);
    EXPECT_EQ(plan.buffers[sim.ids.weight].slots, 1);
    expectSound(sim.buffers, plan);
  }
}

TEST(MemoryPlan, GPipeKeepsEveryMicrobatch) {
  const int stages = 3, microbatches = 6;
  PipelineRun run = runSchedule("gpipe", stages, microbatches, false);
  for (int rank = 0; rank < stages; ++rank) {
    SimulatedRank sim = simulateRank(run.programs[rank], rank, stages);
    MemoryPlan plan = planOrFail(sim.buffers, sim.actions, microbatches);
    EXPECT_EQ(plan.buffers[sim.ids.saved].slots, microbatches) << rank;
    EXPECT_EQ(plan.buffers[sim.ids.input].slots, microbatches) << rank;
    expectSound(sim.buffers, plan);
  }
}

TEST(MemoryPlan, ZeroBubbleH1MatchesTheSimulatorUntilW) {
  const int stages = 4, microbatches = 12;
  PipelineRun zb = runSchedule("zb-h1", stages, microbatches, true);
  PipelineRun plain = runSchedule("1f1b", stages, microbatches, true);
  for (int rank = 0; rank < stages; ++rank) {
    SimulatedRank sim = simulateRank(zb.programs[rank], rank, stages);
    MemoryPlan plan = planOrFail(sim.buffers, sim.actions, microbatches);
    // The saved activation and the stage input live until W.
    EXPECT_EQ(plan.buffers[sim.ids.saved].slots,
              zb.simulation.peakLiveUntilWeightGradient[rank])
        << rank;
    EXPECT_LE(plan.buffers[sim.ids.saved].slots, stages) << rank;
    // Deferring W never keeps fewer activations than 1F1B.
    SimulatedRank plainSim = simulateRank(plain.programs[rank], rank, stages);
    MemoryPlan plainPlan =
        planOrFail(plainSim.buffers, plainSim.actions, microbatches);
    EXPECT_GE(plan.buffers[sim.ids.saved].slots,
              plainPlan.buffers[plainSim.ids.saved].slots);
    expectSound(sim.buffers, plan);
  }
}

TEST(MemoryPlan, AddsSlotsWhenModuloAssignmentConflicts) {
  // Micro-batches 0 and 2 are live together while 1 is not: two live at
  // most, but 0 % 2 == 2 % 2 so two slots would share a copy.
  std::vector<BufferRecord> buffers = {{"a", BufferKind::Activation, 10, true}};
  std::vector<ActionRecord> actions = {
      {0, {0}, {}, "F0"}, {2, {0}, {}, "F2"}, {0, {}, {0}, "B0"},
      {2, {}, {0}, "B2"}, {1, {0}, {}, "F1"}, {1, {}, {0}, "B1"}};
  MemoryPlan plan = planOrFail(buffers, actions, 3);
  EXPECT_EQ(plan.buffers[0].peakLive, 2);
  EXPECT_EQ(plan.buffers[0].slots, 3);
}

TEST(MemoryPlan, KeepsSlotsAMultipleOfTheGroupThatReadsThem) {
  // F0 F1 W0 W1 F2 F3 W2 W3 ...: two micro-batches live at most, and two
  // copies are conflict-free. A call reading a group's copies as one block
  // needs a multiple of the group: 3 for groups of 3, and never more than
  // M (M copies keep any group of consecutive micro-batches whole).
  for (int microbatches : {6, 5}) {
    SCOPED_TRACE(microbatches);
    std::vector<BufferRecord> buffers = {
        {"a", BufferKind::Activation, 64, true}};
    std::vector<ActionRecord> actions;
    for (int m = 0; m < microbatches; ++m) {
      actions.push_back({m, {0}, {}, "F"});
      if (m % 2 == 1 || m + 1 == microbatches)
        for (int w = m - (m % 2); w <= m; ++w)
          actions.push_back({w, {}, {0}, "W"});
    }
    for (auto [multiple, slots] :
         {std::pair{1, 2}, {2, 2}, {3, 3}, {4, 4}, {6, microbatches}}) {
      buffers[0].slotMultiple = multiple;
      MemoryPlan plan = planOrFail(buffers, actions, microbatches);
      EXPECT_EQ(plan.buffers[0].slots, slots) << multiple;
      expectSound(buffers, plan);
    }
  }
}

TEST(MemoryPlan, ReusesBytesOfDisjointLifetimes) {
  std::vector<BufferRecord> buffers = {
      {"w", BufferKind::Weight, 100, false},
      {"t1", BufferKind::Workspace, 1000, false},
      {"t2", BufferKind::Workspace, 1000, false},
      {"t3", BufferKind::Workspace, 50, false}};
  std::vector<ActionRecord> actions = {
      {-1, {1}, {0}, "a"}, {-1, {3}, {1}, "b"}, {-1, {2}, {3}, "c"},
      {-1, {}, {2}, "d"}};
  MemoryPlan shared = planOrFail(buffers, actions, 1);
  MemoryPlan unshared = planOrFail(buffers, actions, 1, /*reuse=*/false);
  expectSound(buffers, shared);
  expectSound(buffers, unshared);
  // t1 and t2 never live together: one 1024-byte block serves both.
  EXPECT_EQ(shared.buffers[1].offset, shared.buffers[2].offset);
  EXPECT_EQ(shared.arenaBytes, 128 + 1024 + 64);
  EXPECT_EQ(unshared.arenaBytes, 128 + 1024 + 1024 + 64);
  EXPECT_EQ(shared.unsharedBytes, unshared.arenaBytes);
  EXPECT_EQ(shared.bytesOf(BufferKind::Workspace), 2050);
  EXPECT_EQ(shared.bytesOf(BufferKind::Weight), 100);
}

TEST(MemoryPlan, OutputsKeepEveryMicrobatch) {
  std::vector<BufferRecord> buffers = {{"y", BufferKind::Output, 8, true}};
  std::vector<ActionRecord> actions = {{0, {0}, {}, "F0"}, {1, {0}, {}, "F1"}};
  MemoryPlan plan = planOrFail(buffers, actions, 2);
  EXPECT_EQ(plan.buffers[0].slots, 2);
}

TEST(MemoryPlan, RejectsInconsistentRecords) {
  std::vector<BufferRecord> buffers = {{"a", BufferKind::Activation, 8, true}};
  PlanOptions options;
  options.microbatches = 2;
  Result<MemoryPlan> unknown =
      planMemory(buffers, {{0, {3}, {}, "F0"}}, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("names buffer 3"), std::string::npos)
      << unknown.message();
  Result<MemoryPlan> range = planMemory(buffers, {{2, {0}, {}, "F2"}}, options);
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.message().find("micro-batch 2, outside [0, 2)"),
            std::string::npos)
      << range.message();
  Result<MemoryPlan> noMicrobatch =
      planMemory(buffers, {{-1, {}, {0}, "allreduce"}}, options);
  ASSERT_FALSE(noMicrobatch.ok());
  EXPECT_NE(noMicrobatch.message().find("per-micro-batch buffer 'a'"),
            std::string::npos)
      << noMicrobatch.message();
}

} // namespace
