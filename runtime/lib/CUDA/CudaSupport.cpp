//===- CudaSupport.cpp - Error checks, compute stream, workspace pool ----===//
#include "CudaSupport.h"

#include "pipecc/Runtime/CUDA/Kernels.h"

#include <string>
#include <unordered_map>

namespace pipecc::rt::cuda {

void checkCuda(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return;
  // Reset the runtime's last-error state so that a later, unrelated
  // cudaGetLastError does not report this failure again.
  (void)cudaGetLastError();
  fail(what, ": ", cudaGetErrorName(status), ": ",
       cudaGetErrorString(status));
}

const DriverApi &driver() {
  static const DriverApi api = [] {
    DriverApi loaded;
    auto lookUp = [](const char *name, void **function) {
      cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
      checkCuda(cudaGetDriverEntryPointByVersion(name, function,
                                                 CUDA_VERSION,
                                                 cudaEnableDefault, &found),
                (std::string("looking up the CUDA driver's ") + name).c_str());
      if (found != cudaDriverEntryPointSuccess || !*function)
        fail("the CUDA driver has no ", name, " for CUDA ", CUDA_VERSION,
             " (is the driver older than the toolkit?)");
    };
#define PIPECC_LOOK_UP_DRIVER_FUNCTION(name)                                   \
  lookUp(#name, reinterpret_cast<void **>(&loaded.name));
    PIPECC_CUDA_DRIVER_FUNCTIONS(PIPECC_LOOK_UP_DRIVER_FUNCTION)
#undef PIPECC_LOOK_UP_DRIVER_FUNCTION
    return loaded;
  }();
  return api;
}

void checkDriver(CUresult status, const char *what) {
  if (status == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *description = nullptr;
  driver().cuGetErrorName(status, &name);
  driver().cuGetErrorString(status, &description);
  fail(what, ": ", name ? name : "CUDA driver error ",
       name ? "" : std::to_string(static_cast<int>(status)), ": ",
       description ? description : "(no description)");
}

namespace {
cudaStream_t theComputeStream = nullptr;

struct WorkspacePool {
  bool configured = false;
  std::unordered_map<void *, int64_t> sizes;
  int64_t current = 0, peak = 0;
};
WorkspacePool &pool() {
  static WorkspacePool instance;
  return instance;
}
} // namespace

cudaStream_t computeStream() { return theComputeStream; }

void *allocateWorkspace(int64_t bytes) {
  if (bytes < 0)
    fail("workspace_alloc: negative size ", bytes);
  if (bytes == 0)
    return nullptr;
  WorkspacePool &state = pool();
  if (!state.configured) {
    // Keep freed blocks in the device's pool across steps instead of
    // returning them to the driver at every synchronization.
    int device = 0;
    checkCuda(cudaGetDevice(&device), "cudaGetDevice");
    cudaMemPool_t memPool;
    checkCuda(cudaDeviceGetDefaultMemPool(&memPool, device),
              "cudaDeviceGetDefaultMemPool");
    uint64_t keepAll = UINT64_MAX;
    checkCuda(cudaMemPoolSetAttribute(memPool,
                                      cudaMemPoolAttrReleaseThreshold,
                                      &keepAll),
              "cudaMemPoolSetAttribute(release threshold)");
    state.configured = true;
  }
  void *ptr = nullptr;
  checkCuda(cudaMallocAsync(&ptr, static_cast<size_t>(bytes),
                            computeStream()),
            ("cudaMallocAsync of " + std::to_string(bytes) +
             " workspace bytes").c_str());
  state.sizes[ptr] = bytes;
  state.current += bytes;
  if (state.current > state.peak)
    state.peak = state.current;
  return ptr;
}

void freeWorkspace(void *ptr) {
  if (!ptr)
    return;
  WorkspacePool &state = pool();
  auto it = state.sizes.find(ptr);
  if (it == state.sizes.end())
    fail("workspace_free: pointer was not returned by workspace_alloc");
  state.current -= it->second;
  state.sizes.erase(it);
  checkCuda(cudaFreeAsync(ptr, computeStream()), "cudaFreeAsync");
}

int64_t currentWorkspaceBytes() { return pool().current; }
int64_t peakWorkspaceBytes() { return pool().peak; }

void checkFloatType(int32_t dtype, const char *what) {
  if (dtype != PIPECC_RT_CUDA_F32 && dtype != PIPECC_RT_CUDA_BF16)
    fail(what, ": element type ", dtype, " is neither F32 (",
         static_cast<int>(PIPECC_RT_CUDA_F32), ") nor BF16 (",
         static_cast<int>(PIPECC_RT_CUDA_BF16), ")");
}

} // namespace pipecc::rt::cuda

using namespace pipecc::rt;

extern "C" {

void *pipecc_rt_cuda_compute_stream(void) {
  return cuda::theComputeStream;
}

void pipecc_rt_cuda_set_compute_stream(void *stream) {
  cuda::theComputeStream = static_cast<cudaStream_t>(stream);
}

void *pipecc_rt_cuda_workspace_alloc(int64_t bytes) {
  return guardCall([&] { return cuda::allocateWorkspace(bytes); });
}

void pipecc_rt_cuda_workspace_free(void *ptr) {
  guardCall([&] { cuda::freeWorkspace(ptr); });
}

} // extern "C"
