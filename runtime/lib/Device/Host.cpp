//===- Host.cpp - The host device: buffers in plain host memory -----------===//
#include "pipecc/Runtime/Device.h"
#include "pipecc/Runtime/BlasReport.h"
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <sys/resource.h>
#include <vector>

namespace pipecc::rt {

Device::~Device() = default;

namespace {
constexpr int64_t kHugePageBytes = 2 << 20;
} // namespace

void adviseHugePages(void *memory, int64_t bytes) {
  if (!memory || bytes < kHugePageBytes)
    return;
  auto begin = reinterpret_cast<uintptr_t>(memory);
  uintptr_t first = (begin + kHugePageBytes - 1) & ~uintptr_t(kHugePageBytes - 1);
  uintptr_t last =
      (begin + static_cast<uintptr_t>(bytes)) & ~uintptr_t(kHugePageBytes - 1);
  if (last > first)
    (void)madvise(reinterpret_cast<void *>(first), last - first,
                  MADV_HUGEPAGE);
}

int64_t Device::accumulateF32(float *dst, const float *src, int64_t count) {
  std::vector<float> sum(static_cast<size_t>(count)),
      addend(static_cast<size_t>(count));
  int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  copyToHost(sum.data(), dst, bytes);
  copyToHost(addend.data(), src, bytes);
  int64_t bad = addAndFindNonFinite(sum.data(), addend.data(), count);
  copyToDevice(dst, sum.data(), bytes);
  return bad;
}

int64_t Device::findNonFiniteF32(const float *data, int64_t count,
                                 float &value) {
  std::vector<float> values(static_cast<size_t>(count));
  copyToHost(values.data(), data, count * static_cast<int64_t>(sizeof(float)));
  int64_t bad = scanNonFinite(values.data(), count);
  if (bad >= 0)
    value = values[bad];
  return bad;
}

void Device::sgdUpdateF32(float *param, const float *grad, int64_t count,
                          float step) {
  std::vector<float> values(static_cast<size_t>(count)),
      gradient(static_cast<size_t>(count));
  int64_t bytes = count * static_cast<int64_t>(sizeof(float));
  copyToHost(values.data(), param, bytes);
  copyToHost(gradient.data(), grad, bytes);
  pipecc_rt_sgd_update_f32(values.data(), gradient.data(), count, step);
  copyToDevice(param, values.data(), bytes);
}

int64_t Device::sgdStepAndClearF32(float *param, float *grad, int64_t count,
                                   float step, bool check, float &value) {
  if (check) {
    int64_t bad = findNonFiniteF32(grad, count, value);
    if (bad >= 0)
      return bad;
  }
  sgdUpdateF32(param, grad, count, step);
  fill(grad, 0, count * static_cast<int64_t>(sizeof(float)));
  return -1;
}

void *allocateHostMemory(int64_t bytes, int64_t smallAlignment) {
  int64_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : smallAlignment;
  size_t rounded = static_cast<size_t>(std::max<int64_t>(
      alignment, (bytes + alignment - 1) / alignment * alignment));
  void *memory = std::aligned_alloc(static_cast<size_t>(alignment), rounded);
  if (memory && alignment == kHugePageBytes)
    adviseHugePages(memory, static_cast<int64_t>(rounded));
  return memory;
}

namespace {
class HostDevice final : public Device {
public:
  const char *name() const override { return "host"; }
  bool isHost() const override { return true; }

  void *allocate(int64_t bytes) override {
    if (bytes < 0)
      fail("host device: allocation of ", bytes, " bytes");
    // The arena: huge pages where it spans whole ones.
    void *memory = allocateHostMemory(bytes, 256);
    if (!memory)
      fail("out of host memory allocating ", bytes, " bytes");
    return memory;
  }
  void deallocate(void *memory) override { std::free(memory); }

  void copyToDevice(void *device, const void *host, int64_t bytes) override {
    copy(device, host, bytes);
  }
  void copyToHost(void *host, const void *device, int64_t bytes) override {
    copy(host, device, bytes);
  }
  void copyOnDevice(void *dst, const void *src, int64_t bytes) override {
    copy(dst, src, bytes);
  }
  void fill(void *device, int value, int64_t bytes) override {
    if (bytes > 0)
      std::memset(device, value, static_cast<size_t>(bytes));
  }

  Stream createStream() override { return nullptr; }
  void destroyStream(Stream) override {}
  void synchronize(Stream) override {}
  Event createEvent() override { return nullptr; }
  void destroyEvent(Event) override {}
  void recordEvent(Event, Stream) override {}
  void waitEvent(Stream, Event) override {}

  int64_t accumulateF32(float *dst, const float *src, int64_t count) override {
    return addAndFindNonFinite(dst, src, count);
  }
  int64_t findNonFiniteF32(const float *data, int64_t count,
                           float &value) override {
    int64_t bad = scanNonFinite(data, count);
    if (bad >= 0)
      value = data[bad];
    return bad;
  }
  void sgdUpdateF32(float *param, const float *grad, int64_t count,
                    float step) override {
    pipecc_rt_sgd_update_f32(param, grad, count, step);
  }
  int64_t sgdStepAndClearF32(float *param, float *grad, int64_t count,
                             float step, bool check, float &value) override {
    // One pass instead of three (scan, update, zero at the next step's
    // start): a chunk small enough for L1 is checked, then updated and
    // cleared while it is there. Runs of chunks as long as the target's
    // packed copies ask for (whole panels) are repacked after each, from
    // L2.
    constexpr int64_t kChunk = 2048;
    int64_t grain = weightRepackGrain(param);
    int64_t run = grain > 0 ? grain : count;
    for (int64_t first = 0; first < count; first += run) {
      int64_t end = std::min(count, first + run);
      for (int64_t begin = first; begin < end; begin += kChunk) {
        int64_t n = std::min(kChunk, end - begin);
        if (check) {
          if (int64_t bad = scanNonFinite(grad + begin, n); bad >= 0) {
            value = grad[begin + bad];
            return begin + bad;
          }
        }
        sgdUpdateAndClearF32(param + begin, grad + begin, n, step);
      }
      if (grain > 0)
        weightFloatsWritten(param, first, end);
    }
    return -1;
  }

  int64_t peakMemoryBytes() const override {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
      return 0;
    return static_cast<int64_t>(usage.ru_maxrss) * 1024; // Linux: KiB
  }

private:
  static void copy(void *dst, const void *src, int64_t bytes) {
    // memmove: overlapping is harmless on the host, and src == dst happens
    // when the core stages a buffer that already is host memory.
    if (bytes > 0 && dst != src)
      std::memmove(dst, src, static_cast<size_t>(bytes));
  }
};
} // namespace

std::unique_ptr<Device> createHostDevice() {
  return std::make_unique<HostDevice>();
}

} // namespace pipecc::rt
