//===- ContextApi.cpp - C API calls made by a rank's step function --------===//
#include "pipecc/Runtime/BlasReport.h"
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

using namespace pipecc::rt;

std::string pipecc_rt_context::bufferLabel(int64_t id) const {
  std::string text = "buffer " + std::to_string(id);
  if (id >= 0 && id < static_cast<int64_t>(buffers.size()) &&
      buffers[id].desc && buffers[id].desc->name)
    text += std::string(" ('") + buffers[id].desc->name + "')";
  return text;
}

BufferStorage &pipecc_rt_context::buffer(int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(buffers.size()))
    fail("buffer id ", id, " out of range [0, ", buffers.size(), ")");
  return buffers[static_cast<size_t>(id)];
}

pipecc_rt_context::~pipecc_rt_context() {
  if (device)
    for (auto &[id, source] : inputs)
      if (source.array)
        device->unpinForCopies(source.array->data());
  if (arena && device)
    device->deallocate(arena);
}

char *pipecc_rt_context::microbatchCopy(int64_t id, int64_t microbatch) {
  BufferStorage &storage = buffer(id);
  if (!storage.desc->per_microbatch && storage.copies == 1)
    return storage.memory;
  if (microbatch < 0 || microbatch >= program->microbatches)
    fail(bufferLabel(id), ": micro-batch ", microbatch, " out of range [0, ",
         program->microbatches, ")");
  return storage.memory + (microbatch % storage.copies) * storage.stride;
}

const char *pipecc_rt_context::hostView(const void *data, int64_t bytes,
                                        std::vector<char> &staging) const {
  if (device->isHost())
    return static_cast<const char *>(data);
  staging.resize(static_cast<size_t>(bytes));
  device->copyToHost(staging.data(), data, bytes);
  return staging.data();
}

char *pipecc_rt_context::hostWritable(void *data, int64_t bytes,
                                      std::vector<char> &staging,
                                      bool keepContents) const {
  if (device->isHost())
    return static_cast<char *>(data);
  staging.resize(static_cast<size_t>(bytes));
  if (keepContents)
    device->copyToHost(staging.data(), data, bytes);
  return staging.data();
}

void pipecc_rt_context::writeBack(void *data, const char *host,
                                  int64_t bytes) const {
  if (host != data)
    device->copyToDevice(data, host, bytes);
}

namespace pipecc::rt {
const char *nonFiniteName(float value) {
  if (std::isnan(value))
    return "nan";
  return value > 0 ? "inf" : "-inf";
}

int64_t findNonFinite(const float *data, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(data[i]))
      return i;
  return -1;
}

namespace {
/// Exponent bits all ones: inf or nan. An integer OR over a loop keeps it
/// vectorized.
inline uint32_t nonFiniteBit(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return (bits & 0x7f800000u) == 0x7f800000u;
}
} // namespace

int64_t scanNonFinite(const float *data, int64_t count) {
  uint32_t nonFinite = 0;
  for (int64_t i = 0; i < count; ++i)
    nonFinite |= nonFiniteBit(data[i]);
  return nonFinite ? findNonFinite(data, count) : -1;
}

void sgdUpdateAndClearF32(float *param, float *grad, int64_t count,
                          float step) {
  for (int64_t i = 0; i < count; ++i) {
    param[i] -= step * grad[i];
    grad[i] = 0.0f;
  }
}

int64_t addAndFindNonFinite(float *dst, const float *src, int64_t count) {
  // As cheap as the addition alone; the search runs only on failure.
  uint32_t nonFinite = 0;
  for (int64_t i = 0; i < count; ++i) {
    float sum = dst[i] + src[i];
    dst[i] = sum;
    nonFinite |= nonFiniteBit(sum);
  }
  return nonFinite ? findNonFinite(dst, count) : -1;
}
} // namespace pipecc::rt

namespace {
pipecc_rt_context &checked(pipecc_rt_context *ctx) {
  if (!ctx)
    fail("runtime call with a NULL context");
  return *ctx;
}

char *microbatchCopy(pipecc_rt_context &ctx, int64_t id, int64_t microbatch) {
  return ctx.microbatchCopy(id, microbatch);
}

double secondsNow() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Runs `body`; while the traced step runs, also records it as the event
/// `describe()` makes, and under --timers adds its seconds to the step's
/// `bucket` (only then: an untimed call pays two tests).
template <typename Describe, typename Body>
auto timed(pipecc_rt_context &c, double StepTimes::*bucket, Describe &&describe,
           Body &&body) -> decltype(body()) {
  StepTrace *trace = c.recording;
  StepTimes *times = c.stepTimes;
  if (!trace && !times)
    return body();
  double start = secondsNow();
  auto finish = [&] {
    double end = secondsNow();
    if (trace)
      trace->record(describe(), start, end);
    if (times)
      times->*bucket += end - start;
  };
  if constexpr (std::is_void_v<decltype(body())>) {
    body();
    finish();
  } else {
    auto result = body();
    finish();
    return result;
  }
}

/// A message of buffer `id`'s copy `microbatch` to or from `peer`.
TraceEvent messageEvent(pipecc_rt_context &c, TraceCategory category,
                        int64_t id, int64_t microbatch, int32_t peer) {
  TraceEvent event;
  event.category = category;
  const pipecc_rt_buffer_desc *desc = c.buffer(id).desc;
  event.label = desc->name ? desc->name : "";
  event.microbatch = desc->per_microbatch ? microbatch : -1;
  event.peer = peer;
  event.bytes = desc->bytes;
  return event;
}

/// The same for raw memory.
TraceEvent bytesEvent(TraceCategory category, int64_t bytes, int32_t peer) {
  TraceEvent event;
  event.category = category;
  event.peer = peer;
  event.bytes = bytes;
  return event;
}

/// While the traced step runs: what transfer `handle` is, for its wait.
void rememberTransfer(pipecc_rt_context &c, int64_t handle,
                      TraceCategory category, int64_t id, int64_t microbatch,
                      int32_t peer) {
  if (c.recording)
    c.startedTransfers[handle] =
        messageEvent(c, category, id, microbatch, peer);
}

/// The wait for transfer `handle`: named like the transfer ("wait" with
/// its buffer, micro-batch, peer and bytes) when the traced step started
/// it.
TraceEvent waitEvent(pipecc_rt_context &c, int64_t handle) {
  TraceEvent event = bytesEvent(TraceCategory::Wait, 0, -1);
  auto started = c.startedTransfers.find(handle);
  if (started == c.startedTransfers.end())
    return event;
  event = started->second;
  event.label =
      std::string(event.category == TraceCategory::Send ? "send " : "recv ") +
      event.label;
  event.category = TraceCategory::Wait;
  c.startedTransfers.erase(started);
  return event;
}

static_assert(static_cast<int>(TraceCategory::Forward) ==
                      PIPECC_RT_TRACE_FORWARD &&
                  static_cast<int>(TraceCategory::BackwardInput) ==
                      PIPECC_RT_TRACE_BACKWARD_INPUT &&
                  static_cast<int>(TraceCategory::BackwardWeight) ==
                      PIPECC_RT_TRACE_BACKWARD_WEIGHT &&
                  static_cast<int>(TraceCategory::Backward) ==
                      PIPECC_RT_TRACE_BACKWARD,
              "trace kinds of the C API and the trace's categories agree");
} // namespace

// Helpers of the C entry points below: C++ linkage (a C-linkage function
// may not return ByteSlice or std::pair).
namespace {
/// A data input's bytes for this step's `microbatch` in its host array:
/// what pipecc_rt_load_microbatch copies to the device. `caller` names the
/// entry point in the error for a slice that does not fill the buffer.
ByteSlice inputSlice(pipecc_rt_context &c, int64_t buffer_id,
                     const InputSource &source, int64_t microbatch,
                     const char *caller) {
  int64_t microbatches = c.program->microbatches;
  int64_t batch = c.stepIndex % source.batches;
  const NpyArray &array = *source.array;
  int64_t bytes = c.buffer(buffer_id).desc->bytes;
  // A scalar input (inference programs, one micro-batch) is read whole.
  ByteSlice slice = c.program->buffers[buffer_id].num_dims == 0
                        ? ByteSlice{array.data(), array.bytes()}
                        : array.slice(source.batches * microbatches,
                                      batch * microbatches + microbatch);
  if (slice.bytes != bytes)
    fail(caller, ": ", c.bufferLabel(buffer_id), ": slice of ", slice.bytes,
         " bytes for a buffer of ", bytes);
  return slice;
}

float readFloat(pipecc_rt_context &c, const float *value) {
  if (!value)
    fail("a NULL pointer given for a reported value");
  float result;
  c.device->copyToHost(&result, value, sizeof result);
  return result;
}

/// The gradient accumulator `id` and its element count; `caller` names the
/// entry point in the error when the buffer is not a gradient.
std::pair<BufferStorage *, int64_t>
gradientAccumulator(pipecc_rt_context &c, int64_t id, const char *caller) {
  BufferStorage &storage = c.buffer(id);
  if (storage.desc->role != PIPECC_RT_ROLE_GRADIENT)
    fail(caller, ": ", c.bufferLabel(id), " is not a gradient");
  return {&storage,
          storage.desc->bytes / static_cast<int64_t>(sizeof(float))};
}

[[noreturn]] void failNonFiniteGradient(pipecc_rt_context &c,
                                        const BufferStorage &storage,
                                        int64_t index, float value) {
  fail("step ", c.stepIndex + 1, ": the gradient of '",
       c.program->buffers[storage.desc->parameter_id].name,
       "' summed over the micro-batches is ", nonFiniteName(value),
       " at element ", index, "; training stopped, nothing saved");
}

/// Whether the runtime applies the optimizer after this program's steps
/// (pipecc_rt_optimizer_step from the driver).
bool runtimeRunsOptimizer(const pipecc_rt_context &c) {
  return !(c.program->flags & (PIPECC_RT_PROGRAM_OWNS_OPTIMIZER |
                               PIPECC_RT_PROGRAM_INFERENCE));
}
} // namespace

extern "C" {

void *pipecc_rt_buffer(pipecc_rt_context *ctx, int64_t buffer_id) {
  return guardCall(
      [&] { return (void *)checked(ctx).buffer(buffer_id).memory; });
}

void *pipecc_rt_buffer_microbatch(pipecc_rt_context *ctx, int64_t buffer_id,
                                  int64_t microbatch) {
  return guardCall([&] {
    return (void *)microbatchCopy(checked(ctx), buffer_id, microbatch);
  });
}

int64_t pipecc_rt_buffer_bytes(pipecc_rt_context *ctx, int64_t buffer_id) {
  return guardCall(
      [&] { return checked(ctx).buffer(buffer_id).desc->bytes; });
}

int32_t pipecc_rt_rank(pipecc_rt_context *ctx) {
  return guardCall([&] { return checked(ctx).transport->rank(); });
}
int32_t pipecc_rt_num_ranks(pipecc_rt_context *ctx) {
  return guardCall([&] { return checked(ctx).transport->size(); });
}
int32_t pipecc_rt_microbatches(pipecc_rt_context *ctx) {
  return guardCall([&] { return checked(ctx).program->microbatches; });
}
int64_t pipecc_rt_step_index(pipecc_rt_context *ctx) {
  return guardCall([&] { return checked(ctx).stepIndex; });
}
float pipecc_rt_learning_rate(pipecc_rt_context *ctx) {
  return guardCall([&] { return checked(ctx).learningRate; });
}

void pipecc_rt_load_microbatch(pipecc_rt_context *ctx, int64_t buffer_id,
                               int64_t microbatch) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    auto source = c.inputs.find(buffer_id);
    if (source == c.inputs.end())
      fail("load_microbatch: ", c.bufferLabel(buffer_id),
           " is not a data input");
    int64_t microbatches = c.program->microbatches;
    if (microbatch < 0 || microbatch >= microbatches)
      fail("load_microbatch: ", c.bufferLabel(buffer_id), ": micro-batch ",
           microbatch, " out of range [0, ", microbatches, ")");
    ByteSlice slice = inputSlice(c, buffer_id, source->second, microbatch,
                                 "load_microbatch");
    // The array stays unchanged for the run (pinned by loadInputs).
    c.device->copyImmutableToDevice(microbatchCopy(c, buffer_id, microbatch),
                                    slice.data, slice.bytes);
  });
}

void pipecc_rt_check_class_ids(pipecc_rt_context *ctx, int64_t buffer_id,
                               int64_t microbatch, int64_t num_classes,
                               int32_t has_ignore_index,
                               int64_t ignore_index) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    const pipecc_rt_buffer_desc &desc = *c.buffer(buffer_id).desc;
    // A data input's ids are read from its host array, the bytes its
    // device copy was loaded from: reading the device copy back would wait
    // for all the work queued before it.
    std::vector<char> staging;
    auto input = c.inputs.find(buffer_id);
    const char *data =
        input != c.inputs.end() && input->second.array
            ? inputSlice(c, buffer_id, input->second, microbatch,
                         "check_class_ids")
                  .data
            : c.hostView(microbatchCopy(c, buffer_id, microbatch), desc.bytes,
                         staging);
    int64_t width = desc.dtype == PIPECC_RT_I64 ? 8
                    : desc.dtype == PIPECC_RT_I32 ? 4
                                                  : 0;
    if (width == 0)
      fail("check_class_ids: ", c.bufferLabel(buffer_id),
           " does not hold integers");
    int64_t count = desc.bytes / width;
    for (int64_t i = 0; i < count; ++i) {
      int64_t value;
      if (width == 8) {
        std::memcpy(&value, data + i * 8, 8);
      } else {
        int32_t narrow;
        std::memcpy(&narrow, data + i * 4, 4);
        value = narrow;
      }
      if ((value >= 0 && value < num_classes) ||
          (has_ignore_index && value == ignore_index))
        continue;
      auto source = c.inputs.find(buffer_id);
      int64_t batches =
          source == c.inputs.end() ? 1 : std::max<int64_t>(1, source->second.batches);
      int64_t sample = ((c.stepIndex % batches) * c.program->microbatches +
                        microbatch) *
                           desc.shape[0] +
                       i / std::max<int64_t>(1, count / desc.shape[0]);
      fail("input '", desc.name, "' holds class id ", value, " at sample ",
           sample, " (step ", c.stepIndex + 1, "), outside [0, ",
           num_classes, ")",
           has_ignore_index ? " and not the ignored id " : "",
           has_ignore_index ? std::to_string(ignore_index) : "");
    }
  });
}

void pipecc_rt_send(pipecc_rt_context *ctx, int64_t buffer_id,
                    int64_t microbatch, int32_t peer, int32_t tag) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    timed(
        c, &StepTimes::wait,
        [&] {
          return messageEvent(c, TraceCategory::Send, buffer_id, microbatch,
                              peer);
        },
        [&] {
          c.transport->send(microbatchCopy(c, buffer_id, microbatch),
                            c.buffer(buffer_id).desc->bytes, peer, tag);
        });
  });
}

void pipecc_rt_recv(pipecc_rt_context *ctx, int64_t buffer_id,
                    int64_t microbatch, int32_t peer, int32_t tag) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    try {
      timed(
          c, &StepTimes::wait,
          [&] {
            return messageEvent(c, TraceCategory::Recv, buffer_id, microbatch,
                                peer);
          },
          [&] {
            c.transport->recv(microbatchCopy(c, buffer_id, microbatch),
                              c.buffer(buffer_id).desc->bytes, peer, tag);
          });
    } catch (const RuntimeError &e) {
      fail(c.bufferLabel(buffer_id), ": ", e.what());
    }
  });
}

void pipecc_rt_send_bytes(pipecc_rt_context *ctx, const void *data,
                          int64_t bytes, int32_t peer, int32_t tag) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    timed(
        c, &StepTimes::wait,
        [&] { return bytesEvent(TraceCategory::Send, bytes, peer); },
        [&] { c.transport->send(data, bytes, peer, tag); });
  });
}

void pipecc_rt_recv_bytes(pipecc_rt_context *ctx, void *data, int64_t bytes,
                          int32_t peer, int32_t tag) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    timed(
        c, &StepTimes::wait,
        [&] { return bytesEvent(TraceCategory::Recv, bytes, peer); },
        [&] { c.transport->recv(data, bytes, peer, tag); });
  });
}

int64_t pipecc_rt_isend(pipecc_rt_context *ctx, int64_t buffer_id,
                        int64_t microbatch, int32_t peer, int32_t tag) {
  return guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    int64_t handle = timed(
        c, &StepTimes::post,
        [&] {
          return messageEvent(c, TraceCategory::Send, buffer_id, microbatch,
                              peer);
        },
        [&] {
          return c.transport->startSend(
              microbatchCopy(c, buffer_id, microbatch),
              c.buffer(buffer_id).desc->bytes, peer, tag);
        });
    rememberTransfer(c, handle, TraceCategory::Send, buffer_id, microbatch,
                     peer);
    return handle;
  });
}

int64_t pipecc_rt_irecv(pipecc_rt_context *ctx, int64_t buffer_id,
                        int64_t microbatch, int32_t peer, int32_t tag) {
  return guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    int64_t handle = timed(
        c, &StepTimes::post,
        [&] {
          return messageEvent(c, TraceCategory::Recv, buffer_id, microbatch,
                              peer);
        },
        [&] {
          return c.transport->startRecv(
              microbatchCopy(c, buffer_id, microbatch),
              c.buffer(buffer_id).desc->bytes, peer, tag);
        });
    rememberTransfer(c, handle, TraceCategory::Recv, buffer_id, microbatch,
                     peer);
    return handle;
  });
}

int64_t pipecc_rt_isend_bytes(pipecc_rt_context *ctx, const void *data,
                              int64_t bytes, int32_t peer, int32_t tag) {
  return guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    return timed(
        c, &StepTimes::post,
        [&] { return bytesEvent(TraceCategory::Send, bytes, peer); },
        [&] { return c.transport->startSend(data, bytes, peer, tag); });
  });
}

int64_t pipecc_rt_irecv_bytes(pipecc_rt_context *ctx, void *data,
                              int64_t bytes, int32_t peer, int32_t tag) {
  return guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    return timed(
        c, &StepTimes::post,
        [&] { return bytesEvent(TraceCategory::Recv, bytes, peer); },
        [&] { return c.transport->startRecv(data, bytes, peer, tag); });
  });
}

void pipecc_rt_wait(pipecc_rt_context *ctx, int64_t request) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    // The step's first waits often block (a pipeline filling up): the
    // weights it packs at their first use are packed here instead, one by
    // one while the message is still on its way, so packing never delays
    // the compute that reads it; copies left stale are packed during their
    // first product (docs/design.md, "Packed weights"). Counted as waiting.
    timed(
        c, &StepTimes::wait, [&] { return waitEvent(c, request); },
        [&] {
          while (!c.transport->finished(request) && packStaleWeight()) {
          }
          c.transport->wait(request);
        });
  });
}

void pipecc_rt_wait_all(pipecc_rt_context *ctx) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    timed(
        c, &StepTimes::wait,
        [&] {
          c.startedTransfers.clear();
          return bytesEvent(TraceCategory::Wait, 0, -1);
        },
        [&] { c.transport->waitAll(); });
  });
}

void pipecc_rt_sendrecv_bytes(pipecc_rt_context *ctx, const void *send_data,
                              int64_t send_bytes, int32_t dest,
                              int32_t send_tag, void *recv_data,
                              int64_t recv_bytes, int32_t source,
                              int32_t recv_tag) {
  guardCall([&] {
    checked(ctx).transport->sendRecv(send_data, send_bytes, dest, send_tag,
                                     recv_data, recv_bytes, source, recv_tag);
  });
}

void pipecc_rt_allreduce_sum_f32(pipecc_rt_context *ctx, float *data,
                                 int64_t count, const int32_t *group_ranks,
                                 int32_t group_size) {
  guardCall([&] {
    std::vector<int> group;
    if (group_ranks && group_size > 0)
      group.assign(group_ranks, group_ranks + group_size);
    pipecc_rt_context &c = checked(ctx);
    timed(
        c, &StepTimes::optimizer,
        [&] {
          return bytesEvent(TraceCategory::AllReduce,
                            count * static_cast<int64_t>(sizeof(float)), -1);
        },
        [&] { c.transport->allreduceSumF32(data, count, group); });
  });
}

void pipecc_rt_broadcast_bytes(pipecc_rt_context *ctx, void *data,
                               int64_t bytes, int32_t root) {
  guardCall([&] { checked(ctx).transport->broadcast(data, bytes, root); });
}

void pipecc_rt_barrier(pipecc_rt_context *ctx) {
  guardCall([&] { checked(ctx).transport->barrier(); });
}

void pipecc_rt_report_loss(pipecc_rt_context *ctx, int64_t microbatch,
                           float loss) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    if (!std::isfinite(loss))
      fail("step ", c.stepIndex + 1, ", micro-batch ", microbatch,
           ": the loss is ", nonFiniteName(loss),
           "; training stopped, nothing saved");
    c.lossSum += loss;
    if (!(c.program->flags & PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS))
      c.lossCount += 1;
  });
}

void pipecc_rt_report_loss_count(pipecc_rt_context *ctx, int64_t microbatch,
                                 float count) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    if (!std::isfinite(count) || count < 0)
      fail("step ", c.stepIndex + 1, ", micro-batch ", microbatch,
           ": the loss counted ", count, " labels");
    c.lossCount += count;
  });
}

void pipecc_rt_report_loss_at(pipecc_rt_context *ctx, int64_t microbatch,
                              const float *loss) {
  float value = guardCall([&] { return readFloat(checked(ctx), loss); });
  pipecc_rt_report_loss(ctx, microbatch, value);
}

void pipecc_rt_report_loss_count_at(pipecc_rt_context *ctx,
                                    int64_t microbatch, const float *count) {
  float value = guardCall([&] { return readFloat(checked(ctx), count); });
  pipecc_rt_report_loss_count(ctx, microbatch, value);
}

void pipecc_rt_accumulate_gradient(pipecc_rt_context *ctx,
                                   int64_t gradient_buffer_id,
                                   int64_t microbatch, const float *src) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    auto [accumulator, count] =
        gradientAccumulator(c, gradient_buffer_id, "accumulate_gradient");
    BufferStorage &storage = *accumulator;
    // The accumulator starts the step at zero and the job stops at the first
    // non-finite sum, so a non-finite element here is this micro-batch's
    // doing (a non-finite gradient, or finite ones overflowing).
    int64_t bad = c.device->accumulateF32(
        reinterpret_cast<float *>(storage.memory), src, count);
    if (bad >= 0) {
      float value = 0;
      c.device->copyToHost(&value, storage.memory + bad * sizeof(float),
                           sizeof(float));
      fail("step ", c.stepIndex + 1, ", micro-batch ", microbatch,
           ": the gradient of '",
           c.program->buffers[storage.desc->parameter_id].name, "' is ",
           nonFiniteName(value), " at element ", bad,
           "; training stopped, nothing saved");
    }
  });
}

void pipecc_rt_check_gradient(pipecc_rt_context *ctx,
                              int64_t gradient_buffer_id) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    auto [accumulator, count] =
        gradientAccumulator(c, gradient_buffer_id, "check_gradient");
    BufferStorage &storage = *accumulator;
    // The optimizer's one pass over the gradient checks it before it
    // updates anything from it, at the end of this step: nothing is saved
    // before either, so the run stops with the same message, and the
    // gradient is read once instead of twice.
    if (runtimeRunsOptimizer(c)) {
      storage.checkAtOptimizer = true;
      return;
    }
    float value = 0;
    int64_t bad = c.device->findNonFiniteF32(
        reinterpret_cast<const float *>(storage.memory), count, value);
    if (bad >= 0)
      failNonFiniteGradient(c, storage, bad, value);
  });
}

void pipecc_rt_optimizer_step(pipecc_rt_context *ctx) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    float step = c.learningRate * c.gradientScale;
    // Every packed copy is stale from here; the update repacks those it
    // can (Device::sgdStepAndClearF32) and the rest wait for their next
    // use.
    notifyWeightsChanged();
    c.optimizerRepackedWeights = false;
    timed(
        c, &StepTimes::optimizer,
        [] { return bytesEvent(TraceCategory::Optimizer, 0, -1); },
        [&] {
          // Checks, updates and clears each gradient in one pass: the
          // next step starts from zeros without filling them.
          for (BufferStorage &storage : c.buffers) {
            if (storage.desc->role != PIPECC_RT_ROLE_GRADIENT)
              continue;
            BufferStorage &parameter = c.buffer(storage.desc->parameter_id);
            bool check = storage.checkAtOptimizer;
            storage.checkAtOptimizer = false;
            float value = 0;
            int64_t bad = c.device->sgdStepAndClearF32(
                reinterpret_cast<float *>(parameter.memory),
                reinterpret_cast<float *>(storage.memory),
                storage.desc->bytes / static_cast<int64_t>(sizeof(float)),
                step, check, value);
            if (bad >= 0)
              failNonFiniteGradient(c, storage, bad, value);
          }
          c.gradientsClear = true;
          if (c.recording)
            c.device->finishQueuedWork();
        });
    c.optimizerRepackedWeights = true;
  });
}

void pipecc_rt_trace_begin(pipecc_rt_context *ctx, int32_t kind,
                           int64_t virtual_stage, int64_t chunk,
                           int64_t microbatch) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    if (!c.recording && !c.stepTimes)
      return;
    if (kind < PIPECC_RT_TRACE_FORWARD || kind > PIPECC_RT_TRACE_BACKWARD)
      fail("pipecc_rt_trace_begin: unknown action kind ", kind);
    // Work queued before belongs to the actions before.
    c.device->finishQueuedWork();
    double now = secondsNow();
    c.computeStartedAt = now;
    if (c.recording)
      c.recording->beginCompute(static_cast<TraceCategory>(kind), virtual_stage,
                                chunk, microbatch, now);
  });
}

void pipecc_rt_trace_microbatches(pipecc_rt_context *ctx, int64_t count) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    if (c.recording)
      c.recording->setMicrobatches(count);
  });
}

void pipecc_rt_trace_end(pipecc_rt_context *ctx) {
  guardCall([&] {
    pipecc_rt_context &c = checked(ctx);
    if (!c.recording && !c.stepTimes)
      return;
    c.device->finishQueuedWork();
    double now = secondsNow();
    if (c.stepTimes)
      c.stepTimes->compute += now - c.computeStartedAt;
    if (c.recording)
      c.recording->endCompute(now);
  });
}

void pipecc_rt_timer_begin(pipecc_rt_context *ctx, const char *label) {
  guardCall([&] {
    Timer &timer = checked(ctx).timers[label ? label : ""];
    if (timer.running)
      fail("timer '", label, "' begun twice without an end");
    timer.running = true;
    timer.startedAt = secondsNow();
  });
}

void pipecc_rt_timer_end(pipecc_rt_context *ctx, const char *label) {
  guardCall([&] {
    double now = secondsNow();
    auto &timers = checked(ctx).timers;
    auto timer = timers.find(label ? label : "");
    if (timer == timers.end() || !timer->second.running)
      fail("timer '", label, "' ended without a begin");
    timer->second.running = false;
    timer->second.total += now - timer->second.startedAt;
    timer->second.calls += 1;
  });
}

void pipecc_rt_abort(pipecc_rt_context *, const char *message) {
  fatalError(message ? message : "aborted by generated code");
}

} // extern "C"
