//===- DeviceProbe.cu - Is a CUDA device usable here? --------------------===//
//
// pipecc-cuda-device-probe: lists the CUDA devices and runs one tiny kernel
// on device 0, checking its result. Exit status 0: a device runs sm_90 code
// (lit's `cuda-device` feature, scripts/gpu-check.sh's first step);
// 1: no usable device (no driver, no device, a launch that fails); the
// reason is printed on one line. Linked with the static CUDA runtime, so it
// needs only the driver (libcuda.so.1).
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <cstdio>

namespace {

__global__ void writeIndices(int *out) { out[threadIdx.x] = 3 * threadIdx.x; }

int fail(const char *what, cudaError_t error) {
  std::printf("pipecc-cuda-device-probe: no usable device: %s: %s\n", what,
              cudaGetErrorString(error));
  return 1;
}

} // namespace

int main() {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count))
    return fail("cudaGetDeviceCount", error);
  if (count == 0) {
    std::printf("pipecc-cuda-device-probe: no usable device: none found\n");
    return 1;
  }
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop;
    if (cudaError_t error = cudaGetDeviceProperties(&prop, device))
      return fail("cudaGetDeviceProperties", error);
    std::printf("device %d: %s, sm_%d%d, %d SMs, %.1f GiB\n", device,
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  }

  constexpr int kThreads = 32;
  int *deviceOut = nullptr;
  if (cudaError_t error = cudaMalloc(&deviceOut, kThreads * sizeof(int)))
    return fail("cudaMalloc", error);
  writeIndices<<<1, kThreads>>>(deviceOut);
  if (cudaError_t error = cudaGetLastError())
    return fail("kernel launch", error);
  int hostOut[kThreads] = {};
  if (cudaError_t error = cudaMemcpy(hostOut, deviceOut, sizeof(hostOut),
                                     cudaMemcpyDeviceToHost))
    return fail("cudaMemcpy", error);
  cudaFree(deviceOut);
  for (int i = 0; i < kThreads; ++i) {
    if (hostOut[i] != 3 * i) {
      std::printf("pipecc-cuda-device-probe: no usable device: the probe "
                  "kernel wrote %d at %d, not %d\n", hostOut[i], i, 3 * i);
      return 1;
    }
  }
  std::printf("device 0 ran the probe kernel\n");
  return 0;
}
