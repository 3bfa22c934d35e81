//===- CudaDevice.cpp - Device on one GPU --------------------------------===//
#include "pipecc/Runtime/CUDA/CudaDevice.h"

#include "CudaSupport.h"
#include "pipecc/Runtime/CUDA/Kernels.h"

#include "pipecc/Runtime/Runtime.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace pipecc::rt {

namespace {

int environmentInteger(const char *name) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return -1;
  char *end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < 0 || parsed > 1 << 20)
    fail("environment variable ", name, "='", value,
         "' is not a local rank");
  return static_cast<int>(parsed);
}

class CudaDevice final : public Device {
public:
  explicit CudaDevice(int ordinal)
      : name_("cuda:" + std::to_string(ordinal)) {}

  const char *name() const override { return name_.c_str(); }
  bool isHost() const override { return false; }

  void *allocate(int64_t bytes) override {
    if (bytes < 0)
      fail(name_, ": allocation of ", bytes, " bytes");
    size_t freeBefore = 0, freeAfter = 0, total = 0;
    cuda::checkCuda(cudaMemGetInfo(&freeBefore, &total), "cudaMemGetInfo");
    void *memory = nullptr;
    cudaError_t status =
        cudaMalloc(&memory, static_cast<size_t>(bytes > 0 ? bytes : 1));
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      fail("out of GPU memory on ", name_, " allocating ", bytes,
           " bytes (", freeBefore, " of ", total, " bytes free)");
    }
    cuda::checkCuda(status, "cudaMalloc");
    cuda::checkCuda(cudaMemGetInfo(&freeAfter, &total), "cudaMemGetInfo");
    // Another process on the GPU may free memory meanwhile: never count
    // less than asked for.
    int64_t measured = freeBefore > freeAfter
                           ? static_cast<int64_t>(freeBefore - freeAfter)
                           : 0;
    if (measured < bytes)
      measured = bytes;
    allocations_[memory] = measured;
    current_ += measured;
    if (current_ > peak_)
      peak_ = current_;
    requested_ += bytes;
    return memory;
  }

  void deallocate(void *memory) override {
    if (!memory)
      return;
    auto it = allocations_.find(memory);
    if (it == allocations_.end())
      fail(name_, ": freeing memory it did not allocate");
    current_ -= it->second;
    allocations_.erase(it);
    cuda::checkCuda(cudaFree(memory), "cudaFree");
  }

  void copyToDevice(void *device, const void *host, int64_t bytes) override {
    copy(device, host, bytes, cudaMemcpyHostToDevice, "host to device");
  }
  void pinForCopies(const void *host, int64_t bytes) override {
    if (bytes <= 0 || pinned_.count(host))
      return;
    // Page-locking can fail (a limit on locked memory): the copies then
    // stay synchronous, which is only slower.
    if (cudaHostRegister(const_cast<void *>(host), static_cast<size_t>(bytes),
                         cudaHostRegisterDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    pinned_[host] = bytes;
  }
  void unpinForCopies(const void *host) override {
    auto found = pinned_.find(host);
    if (found == pinned_.end())
      return;
    // The copies from it must be done before it may be freed. At the end
    // of a run: an error here (a context already torn down) is no failure.
    (void)cudaStreamSynchronize(cuda::computeStream());
    (void)cudaHostUnregister(const_cast<void *>(host));
    (void)cudaGetLastError();
    pinned_.erase(found);
  }
  // From pinned memory the copy is queued on the compute stream and the
  // host goes on launching: a synchronous copy there left the GPU idle
  // while the host queued each micro-batch's kernels.
  void copyImmutableToDevice(void *device, const void *host,
                             int64_t bytes) override {
    if (bytes <= 0)
      return;
    if (!isPinned(host, bytes))
      return copyToDevice(device, host, bytes);
    cuda::checkCuda(cudaMemcpyAsync(device, host, static_cast<size_t>(bytes),
                                    cudaMemcpyHostToDevice,
                                    cuda::computeStream()),
                    "cudaMemcpyAsync (pinned host to device)");
  }
  void copyToHost(void *host, const void *device, int64_t bytes) override {
    copy(host, device, bytes, cudaMemcpyDeviceToHost, "device to host");
  }
  void copyOnDevice(void *dst, const void *src, int64_t bytes) override {
    copy(dst, src, bytes, cudaMemcpyDeviceToDevice, "device to device");
  }
  void fill(void *device, int value, int64_t bytes) override {
    if (bytes <= 0)
      return;
    cudaStream_t stream = cuda::computeStream();
    cuda::checkCuda(cudaMemsetAsync(device, value, static_cast<size_t>(bytes),
                                    stream),
                    "cudaMemsetAsync");
    cuda::checkCuda(cudaStreamSynchronize(stream),
                    "cudaStreamSynchronize (after a fill)");
  }

  Stream createStream() override {
    cudaStream_t stream = nullptr;
    cuda::checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags");
    return stream;
  }
  void destroyStream(Stream stream) override {
    cuda::checkCuda(cudaStreamDestroy(static_cast<cudaStream_t>(stream)),
                    "cudaStreamDestroy");
  }
  void synchronize(Stream stream) override {
    cuda::checkCuda(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                    "cudaStreamSynchronize");
  }
  void finishQueuedWork() override {
    cuda::checkCuda(cudaStreamSynchronize(cuda::computeStream()),
                    "cudaStreamSynchronize (timing an action for --trace)");
  }
  Event createEvent() override {
    cudaEvent_t event = nullptr;
    cuda::checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                    "cudaEventCreateWithFlags");
    return event;
  }
  void destroyEvent(Event event) override {
    cuda::checkCuda(cudaEventDestroy(static_cast<cudaEvent_t>(event)),
                    "cudaEventDestroy");
  }
  void recordEvent(Event event, Stream stream) override {
    cuda::checkCuda(cudaEventRecord(static_cast<cudaEvent_t>(event),
                                    static_cast<cudaStream_t>(stream)),
                    "cudaEventRecord");
  }
  void waitEvent(Stream stream, Event event) override {
    cuda::checkCuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                        static_cast<cudaEvent_t>(event), 0),
                    "cudaStreamWaitEvent");
  }

  // The step's arithmetic runs as kernels (Kernels.cu) on the compute
  // stream the stage functions' kernels use: gradients and weights never
  // cross to the host.
  int64_t accumulateF32(float *dst, const float *src, int64_t count) override {
    int32_t *flagOnDevice = deviceScalar(nonFinite_, "non-finite flag");
    cuda::checkCuda(cudaMemsetAsync(flagOnDevice, 0, sizeof(int32_t),
                                    cuda::computeStream()),
                    "cudaMemsetAsync");
    pipecc_rt_cuda_accumulate(dst, src, PIPECC_RT_F32, count, flagOnDevice);
    if (!readBack(flagOnDevice, "non-finite flag"))
      return -1;
    // The error path only: find the element on the host.
    std::vector<float> sum(static_cast<size_t>(count));
    copyToHost(sum.data(), dst, count * static_cast<int64_t>(sizeof(float)));
    for (int64_t i = 0; i < count; ++i)
      if (!std::isfinite(sum[i]))
        return i;
    return 0;
  }
  // On the device: the host's version copies the whole gradient back
  // (the optimizer checks every gradient each step: 285 MB a step for the
  // 71 M parameters of the bf16 benchmark, most of its step time).
  int64_t findNonFiniteF32(const float *data, int64_t count,
                           float &value) override {
    uint64_t *firstOnDevice = deviceScalar(firstNonFinite_, "non-finite index");
    pipecc_rt_cuda_find_non_finite_f32(data, count, firstOnDevice);
    uint64_t first = readBack(firstOnDevice, "non-finite index");
    if (first == UINT64_MAX)
      return -1;
    copyToHost(&value, data + first, sizeof(float));
    return static_cast<int64_t>(first);
  }
  void sgdUpdateF32(float *param, const float *grad, int64_t count,
                    float step) override {
    pipecc_rt_cuda_sgd_update(param, grad, /*param_bf16=*/nullptr, count,
                              step);
  }

  int64_t peakMemoryBytes() const override {
    return peak_ + poolHighWater();
  }

  std::string describeMemory() const {
    size_t freeBytes = 0, total = 0;
    if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) {
      (void)cudaGetLastError();
      freeBytes = total = 0;
    }
    char line[320];
    std::snprintf(line, sizeof line,
                  "%s: allocations %lld bytes requested, %lld measured "
                  "(peak); workspace pool high-water %lld bytes; "
                  "free %lld of %lld bytes",
                  name_.c_str(), static_cast<long long>(requested_),
                  static_cast<long long>(peak_),
                  static_cast<long long>(poolHighWater()),
                  static_cast<long long>(freeBytes),
                  static_cast<long long>(total));
    return line;
  }

private:
  int32_t *nonFinite_ = nullptr;
  uint64_t *firstNonFinite_ = nullptr;
  /// pinForCopies's ranges: start -> bytes.
  std::map<const void *, int64_t> pinned_;

  /// A check's result on the device (`slot`), allocated on first use.
  template <typename T> static T *deviceScalar(T *&slot, const char *what) {
    if (!slot)
      cuda::checkCuda(cudaMalloc(reinterpret_cast<void **>(&slot), sizeof(T)),
                      (std::string("cudaMalloc (") + what + ")").c_str());
    return slot;
  }
  /// Its value once the work queued before on the compute stream is done.
  template <typename T> static T readBack(const T *scalar, const char *what) {
    cudaStream_t stream = cuda::computeStream();
    T value{};
    cuda::checkCuda(cudaMemcpyAsync(&value, scalar, sizeof value,
                                    cudaMemcpyDeviceToHost, stream),
                    (std::string("cudaMemcpyAsync (") + what + ")").c_str());
    cuda::checkCuda(cudaStreamSynchronize(stream),
                    (std::string("cudaStreamSynchronize (reading the ") +
                     what + ")")
                        .c_str());
    return value;
  }

  bool isPinned(const void *host, int64_t bytes) const {
    auto after = pinned_.upper_bound(host);
    if (after == pinned_.begin())
      return false;
    auto range = std::prev(after);
    const char *start = static_cast<const char *>(range->first);
    const char *at = static_cast<const char *>(host);
    return at + bytes <= start + range->second;
  }
  /// The stream-ordered pool's most reserved bytes (the workspace).
  static int64_t poolHighWater() {
    int device = 0;
    cudaMemPool_t pool;
    uint64_t high = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh,
                                &high) != cudaSuccess) {
      (void)cudaGetLastError();
      return cuda::peakWorkspaceBytes();
    }
    return static_cast<int64_t>(high);
  }

  void copy(void *dst, const void *src, int64_t bytes, cudaMemcpyKind kind,
            const char *what) {
    if (bytes <= 0)
      return;
    cudaStream_t stream = cuda::computeStream();
    cuda::checkCuda(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                    kind, stream),
                    (std::string("cudaMemcpyAsync (") + what + ")").c_str());
    cuda::checkCuda(cudaStreamSynchronize(stream),
                    (std::string("cudaStreamSynchronize (after a copy ") +
                     what + ")")
                        .c_str());
  }

  std::string name_;
  std::map<void *, int64_t> allocations_;
  int64_t current_ = 0, peak_ = 0, requested_ = 0;
};

} // namespace

int localRankOf(const Transport &transport) {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", "PIPECC_LOCAL_RANK"}) {
    int value = environmentInteger(name);
    if (value >= 0)
      return value;
  }
  int perNode = transport.localSize() > 0 ? transport.localSize() : 1;
  return transport.rank() % perNode;
}

int selectCudaDevice(int localRank) {
  int count = 0;
  cuda::checkCuda(cudaGetDeviceCount(&count),
                  "cudaGetDeviceCount (is there a GPU and a driver?)");
  if (count <= 0)
    fail("no CUDA device found");
  int ordinal = localRank % count;
  cuda::checkCuda(cudaSetDevice(ordinal), "cudaSetDevice");
  if (!pipecc_rt_cuda_compute_stream()) {
    cudaStream_t stream = nullptr;
    cuda::checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                    "cudaStreamCreateWithFlags (compute stream)");
    pipecc_rt_cuda_set_compute_stream(stream);
  }
  return ordinal;
}

std::unique_ptr<Device> createCudaDevice() {
  int ordinal = 0;
  cuda::checkCuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  return std::make_unique<CudaDevice>(ordinal);
}

std::string describeCudaMemory(const Device &device) {
  auto *cudaDevice = dynamic_cast<const CudaDevice *>(&device);
  return cudaDevice ? cudaDevice->describeMemory() : std::string();
}

DeviceTransportKind chooseDeviceTransport(const Transport &host,
                                          int deviceCount) {
  const char *choice = std::getenv("PIPECC_CUDA_TRANSPORT");
  if (choice && *choice) {
    std::string value = choice;
    if (value == "nccl")
      return DeviceTransportKind::Nccl;
    if (value == "staged")
      return DeviceTransportKind::HostStaged;
    fail("PIPECC_CUDA_TRANSPORT='", value,
         "' is neither 'nccl' nor 'staged'");
  }
  return host.localSize() <= deviceCount ? DeviceTransportKind::Nccl
                                         : DeviceTransportKind::HostStaged;
}

} // namespace pipecc::rt
