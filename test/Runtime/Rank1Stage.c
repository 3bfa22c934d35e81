/*===- Rank1Stage.c - Rank 1 of the MPI test, in C -----------------------===*
 *
 * Written in C on purpose: it checks that Runtime.h is a valid C header and
 * that a rank program (descriptor table + step) built outside C++ works, as
 * the compiler's generated code will be. See MpiExchangeTest.cpp for the
 * model.
 *
 *===----------------------------------------------------------------------===*/
#include "pipecc/Runtime/Runtime.h"

#include <stddef.h>

enum {
  kMicrobatches = 4,
  kMicrobatchSize = 2,
  kForwardTag = 0,
  kBackwardTag = 16
};
enum { S1, GradS1, Label1, Y1, DY1, Scratch1, NumRank1Buffers };

void pipecc_test_check_collectives(pipecc_rt_context *ctx, int64_t scratch);

static const int64_t kSShape[] = {1};
static const int64_t kVectorShape[] = {kMicrobatchSize};

const pipecc_rt_buffer_desc pipecc_test_rank1_buffers[] = {
    {"stage1.s", PIPECC_RT_ROLE_PARAMETER, PIPECC_RT_F32, 0, 1, kSShape, 4,
     -1, 0, 0, -1},
    {"grad.stage1.s", PIPECC_RT_ROLE_GRADIENT, PIPECC_RT_F32, 0, 1, kSShape,
     4, S1, 0, 0, -1},
    {"label", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_I64, 0, 1, kVectorShape,
     kMicrobatchSize * 8, -1, 3, 0, -1},
    {"y", PIPECC_RT_ROLE_ACTIVATION, PIPECC_RT_F32, 0, 1, kVectorShape,
     kMicrobatchSize * 4, -1, 0, 0, -1},
    {"dy", PIPECC_RT_ROLE_ACTIVATION, PIPECC_RT_F32, 0, 1, kVectorShape,
     kMicrobatchSize * 4, -1, 0, 0, -1},
    {"scratch", PIPECC_RT_ROLE_SCRATCH, PIPECC_RT_F32, 0, 0, NULL, 16, -1, 0,
     0, -1},
};
const int64_t pipecc_test_rank1_num_buffers = NumRank1Buffers;

/* z = s * y, loss = mean(0.5 * (z - label)^2); sends dL/dy back. */
void pipecc_test_rank1_step(pipecc_rt_context *ctx) {
  float s = *(float *)pipecc_rt_buffer(ctx, S1);
  float *gradS = (float *)pipecc_rt_buffer(ctx, GradS1);
  const int64_t *label = (const int64_t *)pipecc_rt_buffer(ctx, Label1);
  const float *y = (const float *)pipecc_rt_buffer(ctx, Y1);
  float *dy = (float *)pipecc_rt_buffer(ctx, DY1);
  for (int m = 0; m < kMicrobatches; ++m) {
    pipecc_rt_timer_begin(ctx, "stage1");
    pipecc_rt_recv(ctx, Y1, 0, 0, kForwardTag + m);
    pipecc_rt_load_microbatch(ctx, Label1, m);
    float loss = 0;
    for (int i = 0; i < kMicrobatchSize; ++i) {
      float r = s * y[i] - (float)label[i];
      float dz = r / kMicrobatchSize;
      loss += 0.5f * r * r / kMicrobatchSize;
      gradS[0] += dz * y[i];
      dy[i] = dz * s;
    }
    pipecc_rt_report_loss(ctx, m, loss);
    pipecc_rt_send(ctx, DY1, 0, 0, kBackwardTag + m);
    pipecc_rt_timer_end(ctx, "stage1");
  }
  pipecc_test_check_collectives(ctx, Scratch1);
}
