//===- ProgramTest.cpp - validateProgram ----------------------------------===//
#include "pipecc/Runtime/Context.h"
#include "TestUtil.h"

#include <cstddef>
#include <limits>

using namespace pipecc::rt;

namespace {

// The compiler emits these structs as LLVM constants: pin their layout.
static_assert(sizeof(pipecc_rt_buffer_desc) == 72);
static_assert(offsetof(pipecc_rt_buffer_desc, shape) == 24);
static_assert(offsetof(pipecc_rt_buffer_desc, num_classes) == 48);
static_assert(offsetof(pipecc_rt_buffer_desc, slots) == 56);
static_assert(offsetof(pipecc_rt_buffer_desc, offset) == 64);
static_assert(sizeof(pipecc_rt_rank_program) == 96);
static_assert(offsetof(pipecc_rt_rank_program, microbatch_size) == 16);
static_assert(offsetof(pipecc_rt_rank_program, num_buffers) == 40);
static_assert(offsetof(pipecc_rt_rank_program, step) == 56);
static_assert(offsetof(pipecc_rt_rank_program, arena_bytes) == 64);
static_assert(offsetof(pipecc_rt_rank_program, target) == 72);
static_assert(offsetof(pipecc_rt_rank_program, stage_workspace_bytes) == 80);
static_assert(offsetof(pipecc_rt_rank_program, stage_workspace) == 88);

void noStep(pipecc_rt_context *) {}

const int64_t kShape[] = {2, 3};

struct ProgramFixture : ::testing::Test {
  std::vector<pipecc_rt_buffer_desc> buffers = {
      {"w", PIPECC_RT_ROLE_PARAMETER, PIPECC_RT_F32, 0, 2, kShape, 24, -1, 0,
       0, -1},
      {"gw", PIPECC_RT_ROLE_GRADIENT, PIPECC_RT_F32, 0, 2, kShape, 24, 0, 0, 0,
       -1},
      {"x", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_I64, 1, 2, kShape, 48, -1,
       5, 0, -1},
      {nullptr, PIPECC_RT_ROLE_SCRATCH, PIPECC_RT_F32, 0, 0, nullptr, 100, -1,
       0, 0, -1},
  };
  pipecc_rt_rank_program program{PIPECC_RT_ABI_VERSION, 1, 2, 4, 0, 0.1f,
                                 0.0f, 0, 4, nullptr, noStep, 0, "cpu"};
  void validate() {
    program.buffers = buffers.data();
    program.num_buffers = static_cast<int64_t>(buffers.size());
    validateProgram(&program, /*mpiRank=*/1, /*mpiSize=*/2);
  }
};

TEST_F(ProgramFixture, AcceptsAWellFormedProgram) { validate(); }

TEST_F(ProgramFixture, RejectsMismatchedJob) {
  program.abi_version = 99;
  EXPECT_RUNTIME_ERROR(validate(), "ABI version 99");
  program.abi_version = PIPECC_RT_ABI_VERSION;
  program.rank = 0;
  EXPECT_RUNTIME_ERROR(validate(), "rank 0's program but the job gave it rank 1");
  program.rank = 1;
  program.num_ranks = 3;
  EXPECT_RUNTIME_ERROR(validate(), "3-rank pipeline but the job has 2");
  program.num_ranks = 2;
  program.microbatches = 0;
  EXPECT_RUNTIME_ERROR(validate(), "0 micro-batches");
  program.microbatches = 4;
  program.step = nullptr;
  EXPECT_RUNTIME_ERROR(validate(), "no step function");
}

TEST_F(ProgramFixture, RejectsLearningRatesTheRanksCannotUse) {
  // No silent substitute (the runtime once trained with 0.1 instead of 0).
  for (float lr : {0.0f, -0.0f, -0.1f, 1e-40f,
                   std::numeric_limits<float>::infinity(),
                   std::numeric_limits<float>::quiet_NaN()}) {
    program.default_lr = lr;
    EXPECT_RUNTIME_ERROR(validate(), "not a positive normal float32");
  }
}

TEST_F(ProgramFixture, RejectsBadBuffers) {
  buffers[0].bytes = 20;
  EXPECT_RUNTIME_ERROR(validate(), "buffer 0 ('w')", "20 bytes",
                       "[2, 3] needs 24");
  buffers[0].bytes = 24;
  buffers[1].parameter_id = 2;
  EXPECT_RUNTIME_ERROR(validate(), "buffer 1 ('gw')",
                       "does not name a parameter");
  buffers[1].parameter_id = 0;
  buffers[2].num_dims = 0;
  buffers[2].bytes = 8;
  EXPECT_RUNTIME_ERROR(validate(), "buffer 2 ('x')",
                       "without a micro-batch dimension");
  buffers[2].num_dims = 2;
  buffers[2].bytes = 48;
  buffers[1].dtype = PIPECC_RT_I32;
  EXPECT_RUNTIME_ERROR(validate(), "gradients must be F32");
  buffers[1].dtype = PIPECC_RT_F32;
  buffers.push_back(buffers[0]);
  EXPECT_RUNTIME_ERROR(validate(), "two parameters named 'w'");
  buffers.back().name = "w2";
  buffers.back().per_microbatch = 1;
  EXPECT_RUNTIME_ERROR(validate(), "cannot be per-micro-batch");
  buffers.back().per_microbatch = 0;
  buffers.back().role = 7;
  EXPECT_RUNTIME_ERROR(validate(), "unknown role 7");
}

TEST_F(ProgramFixture, OutputsBelongToInferencePrograms) {
  const int64_t shape[] = {4};
  buffers.push_back({"y", PIPECC_RT_ROLE_OUTPUT, PIPECC_RT_BOOL, 1, 1, shape,
                     4, -1, 0});
  EXPECT_RUNTIME_ERROR(validate(), "buffer 4 ('y')",
                       "only an inference program has outputs");
  program.flags = PIPECC_RT_PROGRAM_INFERENCE;
  validate();
  // Bool is one byte per element.
  buffers.back().bytes = 16;
  EXPECT_RUNTIME_ERROR(validate(), "16 bytes", "[4] needs 4");
  buffers.back().bytes = 4;
  buffers.back().per_microbatch = 0;
  EXPECT_RUNTIME_ERROR(validate(), "outputs are per-micro-batch");
  buffers.back().per_microbatch = 1;
  buffers.push_back(buffers.back());
  EXPECT_RUNTIME_ERROR(validate(), "two outputs named 'y'");
  buffers.pop_back();
  // A scalar input is read whole, with one micro-batch only.
  buffers[2].num_dims = 0;
  buffers[2].bytes = 8;
  EXPECT_RUNTIME_ERROR(validate(), "without a micro-batch dimension");
  program.microbatches = 1;
  validate();
}

} // namespace
