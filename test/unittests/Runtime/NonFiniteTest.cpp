//===- NonFiniteTest.cpp - Losses and gradients that stop training --------===//
//
// The generated code reports each micro-batch's loss and adds each
// micro-batch's gradient through the runtime, which ends the job at the
// first inf or nan, naming the step, the micro-batch and the parameter.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace pipecc::rt;

namespace {

constexpr int64_t kShape[] = {2, 3};

class NonFiniteFixture : public ::testing::Test {
protected:
  pipecc_rt_buffer_desc buffers[2] = {
      {"fc.weight", PIPECC_RT_ROLE_PARAMETER, PIPECC_RT_F32, 0, 2, kShape, 24,
       -1, 0, 0, -1},
      {"fc.weight.grad", PIPECC_RT_ROLE_GRADIENT, PIPECC_RT_F32, 0, 2, kShape,
       24, 0, 0, 0, -1}};
  pipecc_rt_rank_program program{};
  std::unique_ptr<Device> device = createHostDevice();
  pipecc_rt_context ctx;
  char memory[2][64] alignas(64) = {};

  void SetUp() override {
    program.microbatches = 4;
    program.num_buffers = 2;
    program.buffers = buffers;
    ctx.program = &program;
    ctx.device = device.get();
    ctx.buffers.resize(2);
    for (int i = 0; i < 2; ++i) {
      ctx.buffers[i].desc = &buffers[i];
      ctx.buffers[i].memory = memory[i];
    }
    ctx.stepIndex = 6; // step 7
  }
  float *gradient() {
    return reinterpret_cast<float *>(ctx.buffers[1].memory);
  }
};

TEST_F(NonFiniteFixture, FiniteGradientsAccumulate) {
  float src[6] = {1, 2, 3, 4, 5, 6};
  pipecc_rt_accumulate_gradient(&ctx, 1, 0, src);
  pipecc_rt_accumulate_gradient(&ctx, 1, 1, src);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(gradient()[i], 2 * src[i]);
  pipecc_rt_report_loss(&ctx, 0, 0.5f);
  pipecc_rt_report_loss(&ctx, 1, 1.5f);
  EXPECT_EQ(ctx.lossSum, 2.0);
  EXPECT_EQ(ctx.lossCount, 2);
  // Read from buffer memory through the device.
  float inBuffer = 2.25f;
  pipecc_rt_report_loss_at(&ctx, 2, &inBuffer);
  EXPECT_EQ(ctx.lossSum, 4.25);
  EXPECT_EQ(ctx.lossCount, 3);
}

using NonFiniteDeathTest = NonFiniteFixture;

TEST_F(NonFiniteDeathTest, NanGradientNamesStepMicrobatchAndParameter) {
  float src[6] = {0, 0, 0, 0, std::numeric_limits<float>::quiet_NaN(), 0};
  EXPECT_EXIT(pipecc_rt_accumulate_gradient(&ctx, 1, 3, src),
              ::testing::ExitedWithCode(1),
              "^pipecc-runtime: error: step 7, micro-batch 3: the gradient of "
              "'fc.weight' is nan at element 4; training stopped, nothing "
              "saved\n$");
}

TEST_F(NonFiniteDeathTest, LossReadFromBufferIsCheckedToo) {
  float inBuffer = std::numeric_limits<float>::infinity();
  EXPECT_EXIT(pipecc_rt_report_loss_at(&ctx, 1, &inBuffer),
              ::testing::ExitedWithCode(1),
              "step 7, micro-batch 1: the loss is inf");
}

TEST_F(NonFiniteDeathTest, OverflowingSumIsCaught) {
  float src[6] = {0, 3e38f, 0, 0, 0, 0};
  pipecc_rt_accumulate_gradient(&ctx, 1, 0, src);
  EXPECT_EXIT(pipecc_rt_accumulate_gradient(&ctx, 1, 1, src),
              ::testing::ExitedWithCode(1),
              "step 7, micro-batch 1: the gradient of 'fc.weight' is inf at "
              "element 1");
}

TEST_F(NonFiniteDeathTest, NonFiniteLossNamesStepAndMicrobatch) {
  EXPECT_EXIT(
      pipecc_rt_report_loss(&ctx, 2, -std::numeric_limits<float>::infinity()),
      ::testing::ExitedWithCode(1),
      "^pipecc-runtime: error: step 7, micro-batch 2: the loss is "
      "-inf; training stopped, nothing saved\n$");
}

// The optimizer's pass updates every parameter from its gradient and leaves
// the gradient zero, so the next step accumulates from zero without a fill.
TEST_F(NonFiniteFixture, OptimizerStepUpdatesAndClearsTheGradients) {
  float *param = reinterpret_cast<float *>(ctx.buffers[0].memory);
  for (int i = 0; i < 6; ++i) {
    param[i] = 1.0f + i;
    gradient()[i] = 2.0f * i;
  }
  ctx.learningRate = 0.25f;
  ctx.gradientScale = 0.5f;
  pipecc_rt_check_gradient(&ctx, 1); // finite: the pass goes through
  pipecc_rt_optimizer_step(&ctx);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(param[i], 1.0f + i - 0.125f * 2.0f * i) << i;
    EXPECT_EQ(gradient()[i], 0.0f) << i;
  }
  EXPECT_TRUE(ctx.gradientsClear);
  EXPECT_FALSE(ctx.buffers[1].checkAtOptimizer);
}

// A gradient the program checks is checked by the optimizer's pass (when
// the runtime runs the optimizer): the same message, before anything of
// this step is saved.
TEST_F(NonFiniteDeathTest, CheckedGradientStopsAtTheOptimizerStep) {
  gradient()[4] = -std::numeric_limits<float>::infinity();
  pipecc_rt_check_gradient(&ctx, 1);
  EXPECT_TRUE(ctx.buffers[1].checkAtOptimizer);
  EXPECT_EXIT(pipecc_rt_optimizer_step(&ctx), ::testing::ExitedWithCode(1),
              "^pipecc-runtime: error: step 7: the gradient of 'fc.weight' "
              "summed over the micro-batches is -inf at element 4; training "
              "stopped, nothing saved\n$");
}

// A program that owns its optimizer gets the check at once.
TEST_F(NonFiniteDeathTest, CheckedGradientStopsAtOnceWhenTheProgramOwnsTheOptimizer) {
  program.flags = PIPECC_RT_PROGRAM_OWNS_OPTIMIZER;
  gradient()[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EXIT(pipecc_rt_check_gradient(&ctx, 1), ::testing::ExitedWithCode(1),
              "step 7: the gradient of 'fc.weight' summed over the "
              "micro-batches is nan at element 2");
}

} // namespace
