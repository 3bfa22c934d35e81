//===- Device.h - Where a rank's buffers live -------------------*- C++ -*-===//
//
// The core runtime reaches buffer memory only through a Device: it
// allocates the rank's one arena with it and copies data, weights,
// gradients and checkpoints in and out through it. HostDevice (plain host
// memory, lib/Device/Host.cpp) is the CPU target's; the CUDA runtime adds
// CudaDevice. When !isHost() the core stages through host memory with the
// copy functions; on the host device it reads and writes buffers in place.
//
// Streams and events are opaque handles (cudaStream_t / cudaEvent_t on
// CUDA); the host device's are null and its operations synchronous.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_DEVICE_H
#define PIPECC_RUNTIME_DEVICE_H

#include <cstdint>
#include <memory>

namespace pipecc::rt {

class Device {
public:
  using Stream = void *;
  using Event = void *;

  virtual ~Device();
  /// "host", "cuda:0", ...: for messages.
  virtual const char *name() const = 0;
  /// Whether device pointers are host pointers the runtime may dereference.
  virtual bool isHost() const = 0;

  /// `bytes` bytes, 256-byte aligned (a 64-byte aligned offset into it
  /// stays 64-byte aligned); contents undefined. Throws when out of memory.
  virtual void *allocate(int64_t bytes) = 0;
  virtual void deallocate(void *memory) = 0;

  /// Synchronous copies: complete when the call returns.
  virtual void copyToDevice(void *device, const void *host, int64_t bytes) = 0;
  virtual void copyToHost(void *host, const void *device, int64_t bytes) = 0;
  virtual void copyOnDevice(void *dst, const void *src, int64_t bytes) = 0;
  virtual void fill(void *device, int value, int64_t bytes) = 0;

  /// Host memory that stays alive and unchanged until unpinForCopies (a
  /// data input's array): the source of copyImmutableToDevice. Advice
  /// only (CUDA: page-locked, so that those copies need not wait).
  virtual void pinForCopies(const void * /*host*/, int64_t /*bytes*/) {}
  virtual void unpinForCopies(const void * /*host*/) {}
  /// Copies host bytes that stay unchanged while the copy may run: unlike
  /// copyToDevice it may return before the copy is done, ordered before
  /// the work queued after it (CUDA: on the compute stream, from pinned
  /// memory). Default: copyToDevice.
  virtual void copyImmutableToDevice(void *device, const void *host,
                                     int64_t bytes) {
    copyToDevice(device, host, bytes);
  }

  virtual Stream createStream() = 0;
  virtual void destroyStream(Stream stream) = 0;
  /// Waits until all work queued on `stream` is done.
  virtual void synchronize(Stream stream) = 0;
  virtual Event createEvent() = 0;
  virtual void destroyEvent(Event event) = 0;
  /// Marks the point reached by `stream`'s queued work.
  virtual void recordEvent(Event event, Stream stream) = 0;
  /// Makes later work on `stream` wait for `event`.
  virtual void waitEvent(Stream stream, Event event) = 0;
  /// Waits until all work the rank's generated code queued is done (the
  /// CUDA compute stream): --trace calls it at the edges of every compute
  /// action so that host timestamps measure the action, not its launch.
  /// The host device runs everything synchronously.
  virtual void finishQueuedWork() {}

  /// Training-step arithmetic on f32 buffers in device memory. The defaults
  /// stage through host memory with the copy functions (right for any
  /// device); a device with kernels overrides them so that gradients and
  /// weights never cross to the host.
  ///
  /// dst[i] += src[i]; returns -1 when every dst[i] is finite afterwards,
  /// else the index of a non-finite one.
  virtual int64_t accumulateF32(float *dst, const float *src, int64_t count);
  /// -1 when every data[i] is finite, else the index of a non-finite one
  /// and its value in `value`.
  virtual int64_t findNonFiniteF32(const float *data, int64_t count,
                                   float &value);
  /// param[i] -= step * grad[i].
  virtual void sgdUpdateF32(float *param, const float *grad, int64_t count,
                            float step);
  /// The optimizer's one pass over a parameter and its gradient
  /// accumulator: param[i] -= step * grad[i], then grad[i] = 0, so the
  /// accumulator starts the next step at zero. With `check`, returns the
  /// index of a non-finite grad[i] (its value in `value`) when there is one
  /// (the buffers are then partly updated: training stops), else -1.
  virtual int64_t sgdStepAndClearF32(float *param, float *grad, int64_t count,
                                     float step, bool check, float &value);

  /// The most memory this rank has held on the device so far, in bytes
  /// (host: the process's peak resident set, getrusage's ru_maxrss).
  virtual int64_t peakMemoryBytes() const = 0;
};

/// Plain host memory (aligned_alloc, memcpy, memset); allocations of 2 MiB
/// and more are 2 MiB aligned and advised to huge pages.
std::unique_ptr<Device> createHostDevice();

/// Asks the kernel to back the whole 2 MiB pages inside [memory, memory +
/// bytes) of host memory with transparent huge pages (madvise
/// MADV_HUGEPAGE; a kernel in THP's "madvise" mode gives them only to such
/// ranges). A step walks activations, weights and workspace of tens to
/// hundreds of MiB: with 4 KiB pages most of its TLB misses are page walks,
/// nested ones under a hypervisor. Advice only: nothing fails without it.
void adviseHugePages(void *memory, int64_t bytes);

/// Host memory for a large buffer (the arena, a packed weight): at least
/// `bytes`, rounded up to its alignment, which is 2 MiB (and the range
/// advised to huge pages, adviseHugePages) from 2 MiB up, else
/// `smallAlignment` (a power of two). Null when out of memory; free it with
/// std::free.
void *allocateHostMemory(int64_t bytes, int64_t smallAlignment);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_DEVICE_H
