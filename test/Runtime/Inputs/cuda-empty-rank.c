/* A CUDA rank with nothing to do: enough to reach the device set-up. */
#include "pipecc/Runtime/Runtime.h"

#include <stddef.h>

static void step(pipecc_rt_context *ctx) { (void)ctx; }

static const pipecc_rt_rank_program program = {
    .abi_version = PIPECC_RT_ABI_VERSION,
    .rank = 0,
    .num_ranks = 1,
    .microbatches = 1,
    .default_lr = 0.1f,
    .num_buffers = 0,
    .buffers = NULL,
    .step = step,
    .target = "cuda",
};

int main(int argc, char **argv) {
  return pipecc_rt_main(argc, argv, &program);
}
