/*===- Runtime.h - C API of the pipecc runtime ---------------------*- C -*-===*
 *
 * Every rank executable out/rank<k> is the compiler's generated code linked
 * with the runtime (pipecc_runtime_core + a target library, see
 * runtime/README.md). The generated code provides one constant
 * pipecc_rt_rank_program describing the rank (its buffers and its step
 * function) and a C main that calls pipecc_rt_main; the runtime does the
 * rest: connecting the ranks, allocating buffers, loading weights and data, the
 * training loop, the optimizer, logging, dumping gradients and saving
 * weights.
 *
 * Errors: every function here either succeeds or prints one line
 *   pipecc-runtime: error: rank <r>: <what went wrong>
 * to stderr and ends the whole job with exit code 1 (MPI_Abort under MPI;
 * under the socket transport the peers see the rank's connections close and
 * out/launch stops them), so that no other rank is left waiting for a
 * message that never comes.
 *
 * Threads: call the runtime from the thread that called pipecc_rt_main
 * (MPI is initialized with MPI_THREAD_FUNNELED).
 *
 *===----------------------------------------------------------------------===*/
#ifndef PIPECC_RUNTIME_RUNTIME_H
#define PIPECC_RUNTIME_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever pipecc_rt_rank_program or pipecc_rt_buffer_desc change
 * layout, or a function the generated code calls changes its signature
 * (2: micro-batch argument of pipecc_rt_report_loss; 3: slots and offset of
 * a buffer, arena_bytes and target of a program; 4: the step calls
 * pipecc_rt_trace_begin / pipecc_rt_trace_end around its compute actions;
 * 5: a rank object compiled beyond the baseline CPU calls
 * pipecc_rt_require_cpu_features, CpuFeatures.h, before main; 6: stage
 * functions add weight gradients into the accumulator, the step calls
 * pipecc_rt_check_gradient on it, and a program says its
 * stage_workspace_bytes; 7: the step posts its messages with
 * pipecc_rt_isend / pipecc_rt_irecv and waits for them with
 * pipecc_rt_wait; 8: stage functions multiply by a parameter with
 * pipecc_rt_sgemm_weight; 9: a program gives its stage_workspace; 10: a
 * matmul with a bias (and relu) after it calls pipecc_rt_sgemm_epilogue;
 * 11: a plain product whose path the device profile decides calls
 * pipecc_rt_sgemm_epilogue with PIPECC_RT_GEMM_ON_BLAS or _ON_ENGINE);
 * pipecc_rt_main refuses a program built for another version. */
#define PIPECC_RT_ABI_VERSION 11

/*===----------------------------------------------------------------------===*
 * The program description the compiler emits for each rank
 *===----------------------------------------------------------------------===*/

typedef enum pipecc_rt_buffer_role {
  /* Trainable weights, initialized from the weights file by `name`, F32. */
  PIPECC_RT_ROLE_PARAMETER = 0,
  /* Gradient accumulator of the parameter `parameter_id` (same shape, F32).
   * The runtime zeroes it before every step; the step adds each
   * micro-batch's gradient into it. See pipecc_rt_optimizer_step. */
  PIPECC_RT_ROLE_GRADIENT = 1,
  /* A graph input fed from <data dir>/<name>.npy (or synthetic data); its
   * shape is one micro-batch's shape. Filled by pipecc_rt_load_microbatch. */
  PIPECC_RT_ROLE_DATA_INPUT = 2,
  /* Values passed between stages or kept from forward to backward. */
  PIPECC_RT_ROLE_ACTIVATION = 3,
  /* Temporary storage of the step; no guarantees across steps. */
  PIPECC_RT_ROLE_SCRATCH = 4,
  /* A graph output of an inference program (`name`: the ONNX output name),
   * one copy per micro-batch; --outputs DIR writes it to
   * DIR/<dataFileName(name)>.npy after the last step. */
  PIPECC_RT_ROLE_OUTPUT = 5
} pipecc_rt_buffer_role;

/* Element types; the values match the safetensors/npy support. */
typedef enum pipecc_rt_dtype {
  PIPECC_RT_F32 = 0,
  PIPECC_RT_I64 = 1,
  PIPECC_RT_I32 = 2,
  /* bfloat16 activations (--precision bf16); parameters, gradients and
   * data inputs stay F32. */
  PIPECC_RT_BF16 = 5,
  /* One byte per element, 0 or 1 (numpy's bool). */
  PIPECC_RT_BOOL = 9
} pipecc_rt_dtype;

/* One buffer of a rank. A buffer's id is its index in
 * pipecc_rt_rank_program.buffers. Every buffer lies in the rank's one arena
 * (see pipecc_rt_rank_program.arena_bytes), 64-byte aligned; the arena is
 * zero-filled before the first step.
 *
 * Layout (x86-64, natural alignment; the compiler emits it as an LLVM
 * struct {ptr, i32, i32, i32, i32, ptr, i64, i64, i64, i64, i64}, 72
 * bytes). */
typedef struct pipecc_rt_buffer_desc {
  /* Parameter: tensor name in the weights file and in --save/--dump-grads
   *   output. Gradient: informational (the parameter's name is used).
   * Data input: the input's name; the data file is dataFileName(name).
   * Others: a name for error messages (may be NULL). */
  const char *name;
  int32_t role;           /* pipecc_rt_buffer_role */
  int32_t dtype;          /* pipecc_rt_dtype */
  /* Nonzero: the runtime allocates `microbatches` copies of `bytes` bytes,
   * reached with pipecc_rt_buffer_microbatch (e.g. activations stashed
   * from each micro-batch's forward for its backward). */
  int32_t per_microbatch;
  int32_t num_dims;       /* length of shape[]; 0 for a scalar */
  /* Dimensions, row-major. Required for parameters, gradients and data
   * inputs (for data inputs: the shape of ONE micro-batch, dim 0 = samples
   * per micro-batch); optional (NULL) for activations and scratch. */
  const int64_t *shape;
  /* Size of one copy in bytes; must equal the shape's size when a shape is
   * given. */
  int64_t bytes;
  /* Gradients: buffer id of their parameter. Everything else: -1. */
  int64_t parameter_id;
  /* Integer data inputs holding class ids (labels, token ids): synthetic
   * data draws values in [0, num_classes). 0 = not class ids (synthetic
   * integers are then 0). Ignored otherwise. */
  int64_t num_classes;
  /* Per-micro-batch buffers: copies allocated; micro-batch mb uses copy
   * mb % slots (a schedule with at most `slots` micro-batches in flight
   * needs no more). 0 means `microbatches` copies. Other buffers: 0 or 1. */
  int64_t slots;
  /* Byte offset of copy 0 in the rank's arena, a multiple of 64; copy c lies
   * at offset + c * (bytes rounded up to a multiple of 64). Buffers whose
   * lifetimes do not overlap may share bytes. -1: the runtime places the
   * buffer (after every placed one; needs arena_bytes == 0). */
  int64_t offset;
} pipecc_rt_buffer_desc;

typedef struct pipecc_rt_context pipecc_rt_context;

/* Flags of pipecc_rt_rank_program.flags. */
/* The step updates the parameters itself; the runtime then does not call
 * pipecc_rt_optimizer_step after the step. */
#define PIPECC_RT_PROGRAM_OWNS_OPTIMIZER 0x1u
/* A forward-only program (pipecc --inference): no gradients, no loss, no
 * optimizer step; its outputs are PIPECC_RT_ROLE_OUTPUT buffers. Its data
 * inputs may hold inf and nan, and a scalar input is read whole (M = 1). */
#define PIPECC_RT_PROGRAM_INFERENCE 0x2u
/* The loss is a mean over counted labels (cross-entropy with an
 * ignore_index): the rank computing it reports each micro-batch's sum with
 * pipecc_rt_report_loss and its label count with
 * pipecc_rt_report_loss_count. The step's loss is the sum of the sums over
 * the sum of the counts, and every rank scales its accumulated gradients by
 * 1 / that count (0 when the step counts no label) instead of
 * gradient_scale, so the step equals one full batch exactly. */
#define PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS 0x4u

/* What the compiler emits for rank `rank` of `num_ranks`.
 * Layout (x86-64): {i32, i32, i32, i32, i64, f32, f32, i32, [4 x i8] pad, i64,
 * ptr, ptr, i64, ptr}, 80 bytes. */
typedef struct pipecc_rt_rank_program {
  uint32_t abi_version;   /* PIPECC_RT_ABI_VERSION */
  int32_t rank;           /* must equal the rank the launcher gives */
  int32_t num_ranks;      /* must equal the number of ranks started */
  int32_t microbatches;   /* M >= 1: micro-batches per training step */
  /* Samples per micro-batch, for the samples/s figure. 0: taken from the
   * first dimension of a data input (the largest over all ranks). */
  int64_t microbatch_size;
  /* SGD learning rate unless --lr: positive, finite and normal (the
   * runtime refuses anything else rather than substituting a value). */
  float default_lr;
  /* Factor turning an accumulated gradient into the gradient of the step's
   * loss. 0 means 1/microbatches: right when each micro-batch's loss is a
   * mean over its samples and the step's loss is the mean over
   * micro-batches. With R data-parallel replicas whose gradients the step
   * all-reduces (sums), use 1/(microbatches*R). */
  float gradient_scale;
  uint32_t flags;         /* PIPECC_RT_PROGRAM_* */
  int64_t num_buffers;
  const pipecc_rt_buffer_desc *buffers;
  /* Runs one training step of this rank: for each micro-batch, load inputs,
   * forward, send/receive, backward, accumulate gradients, and report the
   * loss on the rank that computes it. */
  void (*step)(pipecc_rt_context *ctx);
  /* Size in bytes of the rank's one allocation holding every buffer (the
   * compiler's static memory plan; every buffer then has an offset). 0: the
   * runtime lays the buffers out itself and sizes the arena. */
  int64_t arena_bytes;
  /* The target the program was compiled for: "cpu" or "cuda" (NULL means
   * "cpu"); a runtime built for another target refuses it. */
  const char *target;
  /* Bytes of the static workspace holding the stage functions'
   * temporaries (a zero-initialised global of the executable, outside the
   * arena); 0 when they have none. */
  int64_t stage_workspace_bytes;
  /* That workspace (NULL when there is none): the runtime asks the kernel
   * to back it with huge pages. */
  void *stage_workspace;
} pipecc_rt_rank_program;

/*===----------------------------------------------------------------------===*
 * Driver
 *===----------------------------------------------------------------------===*/

/* The main function of a rank executable. Command line (every rank gets the
 * same arguments; `--opt=value` also works):
 *   --steps N          training steps (default 1)
 *   --data DIR         one .npy file per data input of the rank, named by
 *                      pipecc::rt::dataFileName (DataFileName.h): the
 *                      input name with bytes outside [A-Za-z0-9_.-] and a
 *                      leading '.' written %XX, plus ".npy"; a regular
 *                      file of finite values (float32),
 *                      shape [S, <micro-batch shape without dim 0>...], the
 *                      input's dtype, S a multiple of M * microbatch size.
 *                      Step s uses batch (s mod S/(M*mb)), split into M
 *                      micro-batches of consecutive samples.
 *   --synthetic        deterministic pseudo-random data instead of --data
 *                      (see pipecc_rt_synthetic_value)
 *   --weights FILE     safetensors file holding (at least) this rank's
 *                      parameters by name; "{rank}" in FILE becomes the
 *                      rank number. Default: rank<k>.safetensors in the
 *                      executable's directory. A --save output works here.
 *   --lr X             SGD learning rate (default: the program's); a
 *                      decimal number whose float32 value is positive,
 *                      finite and normal (Numbers.h)
 *   --dump-grads FILE  after step 1: rank 0 writes one safetensors file with
 *                      "loss" (F32 scalar, the step's loss) and
 *                      "grad.<parameter name>" for every parameter of every
 *                      rank (gradient of the step's loss, i.e. accumulated
 *                      gradient * gradient_scale, before the update)
 *   --save FILE        after the last step: rank 0 writes all ranks' trained
 *                      parameters by name into one safetensors file (both
 *                      outputs through Files.h's writeFileAtomically; a
 *                      non-finite parameter is an error, nothing saved)
 *   --timers           at exit, rank 0 prints every rank's timer totals
 *   --trace FILE       rank 0 writes the measured timeline of the last
 *                      step (or of --trace-step N, 1-based) as a Chrome /
 *                      Perfetto trace (pipecc/Runtime/Trace.h): every
 *                      rank's compute actions, messages, waits, all-reduces
 *                      and optimizer, from a barrier before the step
 *   --memory           at exit, rank 0 prints per rank the arena size and
 *                      the measured peak (host: peak resident set):
 *                      "memory rank <r>: arena <n> bytes (<planned|runtime
 *                      layout>) peak <m> bytes (<device>)"
 *   --transport mpi|socket
 *                      how the ranks talk (default: PIPECC_TRANSPORT, else
 *                      socket when out/launch started the ranks itself or
 *                      no launcher is seen, mpi under mpirun/srun); the
 *                      socket transport never calls MPI
 *   --threads N        threads of each BLAS call in a rank (default 1: P
 *                      ranks on P cores do not oversubscribe them); set
 *                      through the BLAS's API, environment variables such
 *                      as OPENBLAS_NUM_THREADS play no part
 *   --blas             at exit, rank 0 prints per rank the BLAS, its
 *                      kernels and threads, and the sgemm totals:
 *                      "blas rank <r>: <description>, <t> thread(s);
 *                      sgemm <n> calls, <g> GFLOP in <s> s, <x> GFLOP/s"
 *   --quiet            no per-step lines
 *   --help
 * Each step: zero gradients, program->step(ctx), reduce the reported losses
 * to rank 0 (to every rank under PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS, which
 * sets the gradient scale from the label count), optimizer step (unless
 * PIPECC_RT_PROGRAM_OWNS_OPTIMIZER), and
 * rank 0 prints
 *   step <n> loss <mean of reported losses, %.6f> samples/s <%.1f>
 * Parameters that several ranks hold under one name (replicas) are written
 * once, from the lowest rank. Under the mpi transport, initializes MPI unless
 * the caller already did (then leaves it running). Returns 0; failures end
 * the job with exit code 1. */
int pipecc_rt_main(int argc, char **argv,
                   const pipecc_rt_rank_program *program);

/* Base address of buffer `buffer_id` (copy 0 of a per-micro-batch buffer). */
void *pipecc_rt_buffer(pipecc_rt_context *ctx, int64_t buffer_id);
/* Copy `microbatch` of a per-micro-batch buffer; for other buffers the
 * base address whatever `microbatch` is. */
void *pipecc_rt_buffer_microbatch(pipecc_rt_context *ctx, int64_t buffer_id,
                                  int64_t microbatch);
/* Size in bytes of one copy of the buffer. */
int64_t pipecc_rt_buffer_bytes(pipecc_rt_context *ctx, int64_t buffer_id);

int32_t pipecc_rt_rank(pipecc_rt_context *ctx);
int32_t pipecc_rt_num_ranks(pipecc_rt_context *ctx);
int32_t pipecc_rt_microbatches(pipecc_rt_context *ctx);
/* 0-based index of the running step. */
int64_t pipecc_rt_step_index(pipecc_rt_context *ctx);

/* Copies micro-batch `microbatch` (0 <= microbatch < M) of this step's data
 * for data input `buffer_id` into the buffer (into copy `microbatch` when
 * the buffer is per-micro-batch). */
void pipecc_rt_load_microbatch(pipecc_rt_context *ctx, int64_t buffer_id,
                               int64_t microbatch);

/* Checks that copy `microbatch` of integer data input `buffer_id` holds
 * class ids in [0, num_classes), or `ignore_index` where has_ignore_index is
 * nonzero; otherwise ends the job naming the input, the sample and the
 * value. Generated code calls it after loading labels a loss indexes with. */
void pipecc_rt_check_class_ids(pipecc_rt_context *ctx, int64_t buffer_id,
                               int64_t microbatch, int64_t num_classes,
                               int32_t has_ignore_index,
                               int64_t ignore_index);

/* Blocking send / receive of a whole buffer (copy `microbatch` of a
 * per-micro-batch buffer) to / from world rank `peer` with message tag
 * `tag` (0 <= tag <= 32767 always works). A receive whose matching message
 * has another size is an error naming the tag and peer. */
void pipecc_rt_send(pipecc_rt_context *ctx, int64_t buffer_id,
                    int64_t microbatch, int32_t peer, int32_t tag);
void pipecc_rt_recv(pipecc_rt_context *ctx, int64_t buffer_id,
                    int64_t microbatch, int32_t peer, int32_t tag);
/* The same on raw memory. */
void pipecc_rt_send_bytes(pipecc_rt_context *ctx, const void *data,
                          int64_t bytes, int32_t peer, int32_t tag);
void pipecc_rt_recv_bytes(pipecc_rt_context *ctx, void *data, int64_t bytes,
                          int32_t peer, int32_t tag);
/* MPI_Sendrecv: send to `dest` and receive from `source` at once, so two
 * neighbours can swap data without deadlocking on blocking sends. Each
 * message at most 1 GiB. */
void pipecc_rt_sendrecv_bytes(pipecc_rt_context *ctx, const void *send_data,
                              int64_t send_bytes, int32_t dest,
                              int32_t send_tag, void *recv_data,
                              int64_t recv_bytes, int32_t source,
                              int32_t recv_tag);

/* Non-blocking send / receive: start the transfer and return a handle for
 * pipecc_rt_wait. The memory must not be touched (send: modified; receive:
 * read) before the wait. Use them where two ranks would otherwise both
 * block in a send to each other (e.g. 1F1B: activations forward while
 * gradients go back). A receive of the wrong size fails at the wait. Every
 * transfer a step starts and does not wait for is waited for when the step
 * returns. */
int64_t pipecc_rt_isend(pipecc_rt_context *ctx, int64_t buffer_id,
                        int64_t microbatch, int32_t peer, int32_t tag);
int64_t pipecc_rt_irecv(pipecc_rt_context *ctx, int64_t buffer_id,
                        int64_t microbatch, int32_t peer, int32_t tag);
int64_t pipecc_rt_isend_bytes(pipecc_rt_context *ctx, const void *data,
                              int64_t bytes, int32_t peer, int32_t tag);
int64_t pipecc_rt_irecv_bytes(pipecc_rt_context *ctx, void *data,
                              int64_t bytes, int32_t peer, int32_t tag);
void pipecc_rt_wait(pipecc_rt_context *ctx, int64_t request);
/* Waits for every transfer started and not yet waited for. */
void pipecc_rt_wait_all(pipecc_rt_context *ctx);

/* In-place sum of `count` floats over the world ranks group_ranks[0 ..
 * group_size) (must include the caller; NULL/0 = all ranks). All members
 * call it with the same group and count, in the same order relative to
 * their other collectives. The group's communicator is created at first
 * use and cached. Deterministic: the lowest member adds the members' values
 * in rank order and broadcasts the sum, so every member gets the same bits
 * (the gradients of tied weights, whose copies must stay identical). */
void pipecc_rt_allreduce_sum_f32(pipecc_rt_context *ctx, float *data,
                                 int64_t count, const int32_t *group_ranks,
                                 int32_t group_size);
/* Broadcast `bytes` bytes from world rank `root` to all ranks. */
void pipecc_rt_broadcast_bytes(pipecc_rt_context *ctx, void *data,
                               int64_t bytes, int32_t root);
void pipecc_rt_barrier(pipecc_rt_context *ctx);

/* Records the loss of micro-batch `microbatch`. Call it on the rank(s)
 * computing the loss, once per micro-batch. The step's loss printed by rank
 * 0 is the mean of all values reported in the step, over all ranks (under
 * PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS: their sum over the reported label
 * counts). A loss
 * that is inf or nan ends the job ("step <s>, micro-batch <m>: the loss is
 * nan; ..."), before any weights are updated or saved. */
void pipecc_rt_report_loss(pipecc_rt_context *ctx, int64_t microbatch,
                           float loss);
/* Records how many labels micro-batch `microbatch`'s loss counted (programs
 * with PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS); a count that is negative or not
 * finite ends the job. */
void pipecc_rt_report_loss_count(pipecc_rt_context *ctx, int64_t microbatch,
                                 float count);
/* The same, reading the value from a buffer of the rank (the float at
 * `loss` / `count`, in the memory of the program's target: device memory
 * on CUDA). Generated code calls these, never loads the value itself. */
void pipecc_rt_report_loss_at(pipecc_rt_context *ctx, int64_t microbatch,
                              const float *loss);
void pipecc_rt_report_loss_count_at(pipecc_rt_context *ctx,
                                    int64_t microbatch, const float *count);

/* The same two calls with the value read from buffer memory (`loss`: one
 * float the step computed, a device pointer on a device target), so that
 * generated code never loads what the host may not be able to read. */
void pipecc_rt_report_loss_at(pipecc_rt_context *ctx, int64_t microbatch,
                              const float *loss);
void pipecc_rt_report_loss_count_at(pipecc_rt_context *ctx,
                                    int64_t microbatch, const float *count);

/* Adds micro-batch `microbatch`'s gradient `src` (as many floats as the
 * buffer holds) into gradient buffer `gradient_buffer_id`. A sum that is
 * inf or nan ends the job naming the step, the micro-batch and the
 * parameter, before any weights are updated or saved. */
void pipecc_rt_accumulate_gradient(pipecc_rt_context *ctx,
                                   int64_t gradient_buffer_id,
                                   int64_t microbatch, const float *src);

/* Checks gradient buffer `gradient_buffer_id` after the step's last stage
 * call that adds into it (generated code whose stage functions accumulate
 * in place calls it once per step): an inf or nan ends the job naming the
 * step, the parameter and the element, before any weights are updated or
 * saved. */
void pipecc_rt_check_gradient(pipecc_rt_context *ctx,
                              int64_t gradient_buffer_id);

/* SGD over every gradient buffer of this rank:
 *   param -= lr * gradient_scale * gradient
 * Called by the runtime after each step unless the program sets
 * PIPECC_RT_PROGRAM_OWNS_OPTIMIZER. */
void pipecc_rt_optimizer_step(pipecc_rt_context *ctx);
/* The learning rate in effect (--lr or the program's default). */
float pipecc_rt_learning_rate(pipecc_rt_context *ctx);

/* Wall-clock timers, accumulated per label (labels compared by content) and
 * printed at exit with --timers. Begin/end pairs of one label must not
 * nest. */
void pipecc_rt_timer_begin(pipecc_rt_context *ctx, const char *label);
void pipecc_rt_timer_end(pipecc_rt_context *ctx, const char *label);

/* What a traced compute action is (--trace): the values are fixed. */
typedef enum pipecc_rt_trace_kind {
  PIPECC_RT_TRACE_FORWARD = 0,         /* "F" */
  PIPECC_RT_TRACE_BACKWARD_INPUT = 1,  /* "B" */
  PIPECC_RT_TRACE_BACKWARD_WEIGHT = 2, /* "W" */
  PIPECC_RT_TRACE_BACKWARD = 3         /* "BW": B and W in one action */
} pipecc_rt_trace_kind;

/* The step calls these around each compute action of its program (one
 * begin, the action's calls, one end; they do not nest). `virtual_stage` is
 * the model-order stage whose function runs, `chunk` its position among the
 * rank's stages. They record the action's start and end when the running
 * step is the one --trace records, and return at once otherwise. */
void pipecc_rt_trace_begin(pipecc_rt_context *ctx, int32_t kind,
                           int64_t virtual_stage, int64_t chunk,
                           int64_t microbatch);
void pipecc_rt_trace_end(pipecc_rt_context *ctx);
/* Between begin and end: the action runs `count` consecutive micro-batches
 * from its own in one call (a grouped weight gradient); the trace names it
 * "W4-5" and counts it for each. */
void pipecc_rt_trace_microbatches(pipecc_rt_context *ctx, int64_t count);

/* Ends the job with "pipecc-runtime: error: rank <r>: <message>", exit 1. */
void pipecc_rt_abort(pipecc_rt_context *ctx, const char *message);

/* The synthetic value of element `index` of input `name` (index counts
 * elements of the step's whole batch, micro-batch after micro-batch, in C
 * order). With h = FNV-1a-64(name) and u = splitmix64(h + index):
 *   F32: (u >> 40) * 2^-23 - 1, uniform in [-1, 1)
 *   integer with num_classes > 0: u mod num_classes;   otherwise 0.
 * Every step sees the same batch. Returned as double (integers exact). */
double pipecc_rt_synthetic_value(const char *name, int32_t dtype,
                                 int64_t num_classes, int64_t index);

/*===----------------------------------------------------------------------===*
 * Kernels (no context needed)
 *===----------------------------------------------------------------------===*/

/* In pipecc_runtime_cpu (BLAS): C = alpha * op(A) * op(B) + beta * C,
 * row-major, op(X) = X or X^T when trans_x != 0; op(A) is M x K, op(B) is
 * K x N, C is M x N; lda/ldb/ldc are row strides in elements. Forwards to
 * the BLAS's cblas_sgemm (docs/design.md, "The BLAS"), counted in
 * pipecc_rt_blas_stats. */
void pipecc_rt_sgemm(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc);
/* pipecc_rt_sgemm for a B that is a parameter: B's values stay fixed
 * until the next pipecc_rt_weights_changed, so the runtime packs op(B)
 * for its kernel at the first call and reuses the packed copy in later
 * calls (one packing per step, not one per micro-batch; docs/design.md,
 * "Packed weights"). Falls back to pipecc_rt_sgemm where this CPU has no
 * packed-weight kernel or pipecc_rt_blas_set_packed_weights turned it off.
 * Counted in pipecc_rt_blas_stats, packing included. */
void pipecc_rt_sgemm_weight(int32_t trans_a, int32_t trans_b, int64_t m,
                            int64_t n, int64_t k, float alpha, const float *a,
                            int64_t lda, const float *b, int64_t ldb,
                            float beta, float *c, int64_t ldc);
/* Flags of pipecc_rt_sgemm_epilogue. */
enum {
  PIPECC_RT_GEMM_RELU = 1,     /* then C = C > 0 or NaN ? C : 0 */
  PIPECC_RT_GEMM_WEIGHT_B = 2, /* B is a parameter: pipecc_rt_sgemm_weight */
  /* Without WEIGHT_B, at most one of: the product runs on the BLAS, or on
   * the packed engine (the BLAS where this CPU has no engine kernel),
   * instead of where the runtime's own rule sends it. The compiler sets
   * one where a measured device profile timed both paths for the product
   * (docs/design.md, "Engine or BLAS for a weight gradient is a per-CPU
   * question"). With --threads above 1 the rule decides: the profile
   * timed one thread. */
  PIPECC_RT_GEMM_ON_BLAS = 4,
  PIPECC_RT_GEMM_ON_ENGINE = 8,
};
/* pipecc_rt_sgemm (pipecc_rt_sgemm_weight with PIPECC_RT_GEMM_WEIGHT_B),
 * then C[i][j] += bias[j] (bias: N floats; NULL adds nothing) and with
 * PIPECC_RT_GEMM_RELU the relu: a Linear's bias and ReLU in the product's
 * last store instead of a pass reading C back (the packed engine), or in
 * one pass after the BLAS's product; the same arithmetic, in the same
 * order, as the separate loop. Counted in pipecc_rt_blas_stats, the
 * epilogue included. */
void pipecc_rt_sgemm_epilogue(int32_t trans_a, int32_t trans_b, int64_t m,
                              int64_t n, int64_t k, float alpha,
                              const float *a, int64_t lda, const float *b,
                              int64_t ldb, float beta, float *c, int64_t ldc,
                              const float *bias, int32_t flags);
/* Parameters may have been written (the optimizer step, weights loaded):
 * every packed copy is stale. The driver calls it before every step. */
void pipecc_rt_weights_changed(void);
/* Packs now one copy that pipecc_rt_weights_changed made stale (the first
 * the last step used); returns 1, or 0 when none is stale. Work the step
 * would do at the weight's first use, done instead while the rank waits
 * for a message: pipecc_rt_wait packs copies one by one until its message
 * is there. Not counted in pipecc_rt_blas_stats (no product). */
int32_t pipecc_rt_pack_stale_weight(void);
/* The optimizer's side of the packed copies: pipecc_rt_weight_repack_grain
 * is how many floats of the parameter at `param` to update at a time (0:
 * none of its copies is repacked by the optimizer: it has none, or a wait
 * packs them); after each such run of floats [begin, end), in order from
 * 0 after pipecc_rt_weights_changed, pipecc_rt_weight_written repacks
 * what the copies hold of them while they are in cache. A copy whose last
 * packing took a product's time is repacked this way; once all its rows
 * are, it is current (no packing at the next step's first product). */
int64_t pipecc_rt_weight_repack_grain(const float *param);
void pipecc_rt_weight_written(const float *param, int64_t begin,
                              int64_t end);
/* Turns the packed copies on (the default) or off; returns whether
 * pipecc_rt_sgemm_weight now uses them (never on a CPU without a
 * packed-weight kernel). */
int32_t pipecc_rt_blas_set_packed_weights(int32_t enabled);
typedef struct pipecc_rt_packed_weight_counters {
  int64_t packs; /* packings since the process started */
  int64_t bytes; /* bytes of packed copies held now */
} pipecc_rt_packed_weight_counters;
void pipecc_rt_packed_weight_stats(pipecc_rt_packed_weight_counters *out);
/* `batch` independent sgemms; matrix i of A starts at a + i * stride_a
 * (elements), likewise B and C. A stride of 0 broadcasts one matrix. */
void pipecc_rt_sgemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                             int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, int64_t stride_a,
                             const float *b, int64_t ldb, int64_t stride_b,
                             float beta, float *c, int64_t ldc,
                             int64_t stride_c, int64_t batch);

/* The CPU target's BLAS, for reports (out/launch --blas, --timers). In
 * pipecc_runtime_cpu; the core runtime reaches them through weak references
 * (pipecc/Runtime/BlasReport.h), so a target without a BLAS links without
 * them. Not thread-safe: a rank calls the BLAS from one thread. */
typedef struct pipecc_rt_blas_counters {
  int64_t calls;   /* sgemms run (each matrix of a batched call counts) */
  int64_t flops;   /* 2 * M * N * K summed over them */
  double seconds;  /* wall-clock time inside the BLAS (monotonic clock) */
  double cpu_seconds; /* this thread's CPU time inside the BLAS, counted
                         only while pipecc_rt_blas_count_cpu_time is on */
} pipecc_rt_blas_counters;
/* Turns the CPU-time counter on or off (off by default: a thread CPU
 * clock read is a system call, about 0.6 us against 20 ns for the wall
 * clock). A rank sharing its CPU with other ranks turns it on under
 * --timers: there a product's wall time includes the time the kernel ran
 * another rank in the middle of it. */
void pipecc_rt_blas_count_cpu_time(int32_t enabled);
/* The counters since the process started or since the last reset. */
void pipecc_rt_blas_stats(pipecc_rt_blas_counters *out);
void pipecc_rt_blas_reset_stats(void);
/* The library, its version and the kernels it picked for this CPU, e.g.
 * "OpenBLAS 0.3.34 (scipy-openblas32), Haswell kernels". */
const char *pipecc_rt_blas_description(void);
/* Sets the threads each BLAS call may use (threads >= 1); returns the
 * number in effect afterwards (the library's own count). */
int32_t pipecc_rt_blas_set_threads(int32_t threads);
int32_t pipecc_rt_blas_threads(void);
/* Per-product counters (out/launch --gemms): while recording is on, every
 * sgemm is also counted under its shape, how its operands are read and
 * what ran it, so a step's matmul time can be laid beside each shape's best
 * rate (scripts/bench-cpu.sh). Off by default: a lookup per call. */
enum {
  PIPECC_RT_GEMM_BLAS = 0,          /* the BLAS's cblas_sgemm */
  PIPECC_RT_GEMM_ENGINE = 1,        /* the packed engine, both packed per call */
  PIPECC_RT_GEMM_PACKED_WEIGHT = 2, /* the engine on B's packed copy */
  PIPECC_RT_GEMM_ENGINE_BATCHED = 3 /* the engine's batch of small products */
};
typedef struct pipecc_rt_gemm_product {
  int32_t path;       /* PIPECC_RT_GEMM_* */
  int32_t trans_a;    /* op(A) = A^T */
  int32_t trans_b;    /* op(B) = B^T */
  int32_t accumulate; /* beta != 0: C is read and added into */
  int64_t m, n, k;
  int64_t batch;      /* products per call (1 but for batched calls) */
  int64_t calls;      /* calls of this product since recording began */
  double seconds;     /* wall-clock time inside them, packing included */
} pipecc_rt_gemm_product;
/* Starts (enabled != 0, from empty) or stops recording. */
void pipecc_rt_blas_record_products(int32_t enabled);
/* Copies up to `capacity` recorded products, in the order first seen, to
 * `out` (may be NULL with capacity 0); returns how many are recorded. */
int64_t pipecc_rt_blas_products(pipecc_rt_gemm_product *out, int64_t capacity);

/* dst[i] += src[i] */
void pipecc_rt_accumulate_f32(float *dst, const float *src, int64_t n);
/* x[i] *= s */
void pipecc_rt_scale_f32(float *x, int64_t n, float s);
/* param[i] -= lr * grad[i] */
void pipecc_rt_sgd_update_f32(float *param, const float *grad, int64_t n,
                              float lr);
/* memset(data, 0, bytes) */
void pipecc_rt_zero(void *data, int64_t bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PIPECC_RUNTIME_RUNTIME_H */
