//===- CudaSupport.h - Error checks and shared state of the CUDA runtime -===//
//
// Internal to runtime/lib/CUDA. Every CUDA, driver, cuBLASLt and NCCL status
// goes through one of the check functions, which throw RuntimeError naming
// the call and the library's own error string; the C entry points turn that
// into the runtime's one-line error (guardCall).
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CUDA_CUDASUPPORT_H
#define PIPECC_RUNTIME_CUDA_CUDASUPPORT_H

#include "pipecc/Runtime/Error.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace pipecc::rt::cuda {

// The driver API functions the runtime calls (mgpu* shims), reached
// through cudart's cudaGetDriverEntryPointByVersion rather than by linking
// libcuda: cudart loads the driver itself when first used, so the
// executables and tests start on a machine without a driver and report
// "no driver" as an error instead of failing to load.
#define PIPECC_CUDA_DRIVER_FUNCTIONS(X)                                       \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuCtxGetCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamDestroy)                                                           \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventSynchronize)                                                        \
  X(cuEventRecord)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)

struct DriverApi {
#define PIPECC_DECLARE_DRIVER_FUNCTION(name) decltype(&::name) name = nullptr;
  PIPECC_CUDA_DRIVER_FUNCTIONS(PIPECC_DECLARE_DRIVER_FUNCTION)
#undef PIPECC_DECLARE_DRIVER_FUNCTION
};
/// The driver's functions, looked up on first use; throws when there is no
/// driver (or one older than the toolkit).
const DriverApi &driver();

/// Throws "<what>: <CUDA error name>: <description>" unless `status` is
/// cudaSuccess.
void checkCuda(cudaError_t status, const char *what);
/// The same for the driver API.
void checkDriver(CUresult status, const char *what);

/// The rank's compute stream (pipecc_rt_cuda_compute_stream).
cudaStream_t computeStream();

/// Stream-ordered device memory on the compute stream, counted in the
/// workspace high-water mark (see peakWorkspaceBytes).
void *allocateWorkspace(int64_t bytes);
void freeWorkspace(void *ptr);
/// Bytes of workspace currently allocated and the most ever allocated at
/// once.
int64_t currentWorkspaceBytes();
int64_t peakWorkspaceBytes();

/// dst[i] += src[i] for f32 data, on `stream` (the device transports'
/// sums, which run on their own stream).
void accumulateOnStream(float *dst, const float *src, int64_t n,
                        cudaStream_t stream);

/// Throws unless `dtype` is PIPECC_RT_CUDA_F32 or PIPECC_RT_CUDA_BF16;
/// `what` names the function and argument.
void checkFloatType(int32_t dtype, const char *what);

} // namespace pipecc::rt::cuda

#endif // PIPECC_RUNTIME_CUDA_CUDASUPPORT_H
