//===- Context.h - State of a running rank ----------------------*- C++ -*-===//
//
// The definition behind the C API's opaque pipecc_rt_context.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CONTEXT_H
#define PIPECC_RUNTIME_CONTEXT_H

#include "pipecc/Runtime/Arena.h"
#include "pipecc/Runtime/Device.h"
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Options.h"
#include "pipecc/Runtime/Runtime.h"
#include "pipecc/Runtime/Trace.h"
#include "pipecc/Runtime/Transport.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::rt {

/// A buffer's place in the arena. `memory` is a device pointer: the core
/// dereferences it only when the device isHost(), else it copies through
/// the Device (pipecc_rt_context::hostView / writeToDevice).
struct BufferStorage {
  const pipecc_rt_buffer_desc *desc = nullptr;
  char *memory = nullptr; ///< copy 0
  int64_t copies = 1;     ///< micro-batch mb uses copy mb % copies
  int64_t stride = 0;     ///< bytes between copies
  /// A gradient the program asked to check this step, which the
  /// optimizer's pass checks (pipecc_rt_check_gradient).
  bool checkAtOptimizer = false;
};

/// The data of one data input: the whole file (or synthetic batch) and how
/// many step batches it holds.
struct InputSource {
  std::optional<NpyArray> array;
  int64_t batches = 1;
};

struct Timer {
  double total = 0;
  int64_t calls = 0;
  double startedAt = 0;
  bool running = false;
};

/// --timers: where one step's seconds went on this rank (docs/cli.md,
/// "Timers"). `other` is what the step took beyond the named parts.
struct StepTimes {
  double step = 0;
  /// F/B/W actions (between pipecc_rt_trace_begin and _end).
  double compute = 0;
  /// Starting messages (isend/irecv calls).
  double post = 0;
  /// Waiting for messages: pipecc_rt_wait, blocking send/recv, the wait
  /// for transfers left at the step's end.
  double wait = 0;
  /// Optimizer, loss reduction, gradient all-reduces.
  double optimizer = 0;
  /// The BLAS's sgemm counters over the step (when the target reports
  /// them; calls < 0 otherwise).
  int64_t sgemmCalls = -1, sgemmFlops = 0;
  double sgemmSeconds = 0;
  /// The thread's CPU time in sgemm, where the rank counts it (it shares
  /// its CPU with other ranks); < 0 otherwise.
  double sgemmCpuSeconds = -1;
};

} // namespace pipecc::rt

struct pipecc_rt_context {
  pipecc_rt_context() = default;
  pipecc_rt_context(const pipecc_rt_context &) = delete;
  pipecc_rt_context &operator=(const pipecc_rt_context &) = delete;
  ~pipecc_rt_context();

  const pipecc_rt_rank_program *program = nullptr;
  pipecc::rt::Transport *transport = nullptr;
  pipecc::rt::Device *device = nullptr;
  /// The rank's one allocation holding every buffer (on `device`).
  void *arena = nullptr;
  pipecc::rt::ArenaLayout layout;
  pipecc::rt::Options options;
  float learningRate = 0.1f;
  float gradientScale = 1.0f;
  /// Every gradient accumulator holds zeros (the optimizer's pass cleared
  /// them): the next step need not fill them.
  bool gradientsClear = false;
  /// The optimizer step was the last to write parameters, and repacked
  /// the copies it could (Device::sgdStepAndClearF32): the next step need
  /// not mark every packed copy stale.
  bool optimizerRepackedWeights = false;
  /// --timers on a rank pinned to a CPU it shares with other ranks: the
  /// BLAS counts its thread CPU time too (StepTimes::sgemmCpuSeconds).
  bool sgemmCpuTime = false;
  std::vector<pipecc::rt::BufferStorage> buffers; // by buffer id
  std::map<int64_t, pipecc::rt::InputSource> inputs; // by buffer id
  int64_t stepIndex = 0;
  double lossSum = 0;
  /// Losses reported, or labels counted under
  /// PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS (exact integers in a double).
  double lossCount = 0;
  std::map<std::string, pipecc::rt::Timer> timers;
  /// --timers: the running step's times (null when off: the one test each
  /// timed call makes), and every finished step's.
  pipecc::rt::StepTimes *stepTimes = nullptr;
  pipecc::rt::StepTimes currentStep;
  std::vector<pipecc::rt::StepTimes> finishedSteps;
  double computeStartedAt = 0;
  /// --trace: what each started transfer is, by handle, for its wait's
  /// record (filled while the traced step runs).
  std::map<int64_t, pipecc::rt::TraceEvent> startedTransfers;
  /// --trace: the record of the traced step.
  std::unique_ptr<pipecc::rt::StepTrace> trace;
  /// `trace` while the traced step runs, else null: the one test every
  /// traced call makes.
  pipecc::rt::StepTrace *recording = nullptr;

  /// "buffer 3 ('fc1.weight')", for error messages.
  std::string bufferLabel(int64_t id) const;
  /// Checks the id and returns the buffer's storage.
  pipecc::rt::BufferStorage &buffer(int64_t id);
  /// Copy `microbatch % copies` of a buffer (device pointer); checks that
  /// microbatch lies in [0, microbatches) for a buffer with copies.
  char *microbatchCopy(int64_t id, int64_t microbatch);

  /// The `bytes` bytes at device pointer `data` readable on the host:
  /// `data` itself on a host device, else a copy in `staging`.
  const char *hostView(const void *data, int64_t bytes,
                       std::vector<char> &staging) const;
  /// Host-writable memory standing for device bytes [data, data + bytes):
  /// `data` itself on a host device, else `staging` (call writeBack after).
  char *hostWritable(void *data, int64_t bytes, std::vector<char> &staging,
                     bool keepContents) const;
  /// Completes hostWritable: copies `staging` to the device when used.
  void writeBack(void *data, const char *host, int64_t bytes) const;
};

namespace pipecc::rt {

/// "nan", "inf" or "-inf", for messages about a non-finite `value`.
const char *nonFiniteName(float value);
/// Index of the first inf or nan among `count` floats, or -1.
int64_t findNonFinite(const float *data, int64_t count);
/// findNonFinite with a vectorized test first: as cheap as reading the
/// data when everything is finite, which is every step but the last.
int64_t scanNonFinite(const float *data, int64_t count);
/// param[i] -= step * grad[i], then grad[i] = 0 (the host optimizer's
/// pass over one parameter, Device::sgdStepAndClearF32).
void sgdUpdateAndClearF32(float *param, float *grad, int64_t count,
                          float step);
/// dst[i] += src[i]; then the index of the first non-finite dst[i], or -1.
int64_t addAndFindNonFinite(float *dst, const float *src, int64_t count);

/// Checks the program against the job (rank, size, target) and its own
/// consistency (buffer roles, shapes, sizes, gradient/parameter links,
/// arena placement). `target` is the runtime's ("cpu", "cuda").
void validateProgram(const pipecc_rt_rank_program *program, int rank,
                     int size, const char *target = "cpu");

/// Lays out (layOutArena), allocates on ctx.device and zero-fills the
/// rank's arena, and points ctx.buffers into it. Needs ctx.program and
/// ctx.device.
void allocateArena(pipecc_rt_context &ctx);

/// What a target library gives the core's driver (pipecc_rt_main of the
/// target calls runRank with it).
struct RankSetup {
  /// "cpu", "cuda": the target programs must be compiled for.
  const char *target = "cpu";
  /// The transport of `kind`; argc/argv as given to main (MPI may use them).
  std::unique_ptr<Transport> (*createTransport)(TransportKind kind,
                                                int *argc,
                                                char ***argv) = nullptr;
  /// The device of this rank once the transport is up (may pick a GPU by
  /// the transport's local rank).
  std::unique_ptr<Device> (*createDevice)(const Transport &transport) =
      nullptr;
  /// Called once the transport is up, with the options (--threads,
  /// --no-packed-weights): the target's matmul library.
  void (*configureMatmuls)(const Transport &transport,
                           const Options &options) = nullptr;
};

/// The whole life of a rank: options, transport, validation, arena,
/// weights, data, steps, outputs. Throws RuntimeError on failure.
int runRank(int argc, char **argv, const pipecc_rt_rank_program *program,
            const RankSetup &setup);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_CONTEXT_H
