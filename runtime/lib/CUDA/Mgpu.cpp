//===- Mgpu.cpp - The host ABI of MLIR's gpu-to-llvm lowering ------------===//
//
// The stage functions that the CUDA pipeline builds call these (MLIR 19's
// names and signatures, as in mlir/lib/ExecutionEngine/
// CudaRuntimeWrappers.cpp; Debian ships no libmlir_cuda_runtime, and the
// rank executables must not need LLVM). Two differences from MLIR's
// wrappers, both because MLIR 19 emits, around every launch,
//   mgpuModuleLoad, mgpuModuleGetFunction, mgpuStreamCreate,
//   mgpuLaunchKernel, mgpuStreamSynchronize, mgpuStreamDestroy,
//   mgpuModuleUnload:
//   - modules are loaded once per fatbin or PTX image (keyed by its address,
//     a constant of the executable) and functions looked up once; unloading
//     is left to process exit;
//   - the "created" stream is the rank's compute stream, and synchronizing
//     or destroying it does nothing: every device operation of a rank is
//     ordered on that stream (memory through the stream-ordered workspace
//     pool), and the host waits only where it reads device memory. Set
//     PIPECC_CUDA_SYNC=1 to synchronize after every launch instead, so that
//     a failing kernel is reported at its launch.
// The driver API comes through cudart (CudaSupport.h). Failures end the
// job with one error line, like the rest of the runtime.
//
//===----------------------------------------------------------------------===//
#include "CudaSupport.h"

#include "pipecc/Runtime/CUDA/Mgpu.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>

using namespace pipecc::rt;
using namespace pipecc::rt::cuda;

namespace {

int32_t defaultDevice = 0;

/// Makes a context current on this thread: the primary context of the
/// runtime API's device, which CudaDevice and the kernels use too.
void ensureContext() {
  CUcontext context = nullptr;
  checkDriver(driver().cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (context)
    return;
  checkCuda(cudaSetDevice(defaultDevice), "cudaSetDevice");
  checkCuda(cudaFree(nullptr), "cudaFree(nullptr) (context creation)");
}

bool synchronizeEveryLaunch() {
  static const bool enabled = [] {
    const char *value = std::getenv("PIPECC_CUDA_SYNC");
    return value && std::strcmp(value, "") != 0 &&
           std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

std::map<const void *, CUmodule> &modules() {
  static std::map<const void *, CUmodule> instance;
  return instance;
}
std::map<std::pair<CUmodule, std::string>, CUfunction> &functions() {
  static std::map<std::pair<CUmodule, std::string>, CUfunction> instance;
  return instance;
}
/// The name each looked-up function was found by, for launch diagnostics.
std::map<CUfunction, std::string> &functionNames() {
  static std::map<CUfunction, std::string> instance;
  return instance;
}

/// The module of the image at `data`, loaded on first use.
CUmodule loadModule(const void *data, const std::string &what) {
  CUmodule &module = modules()[data];
  if (!module) {
    ensureContext();
    checkDriver(driver().cuModuleLoadData(&module, data),
                ("cuModuleLoadData (" + what + ")").c_str());
  }
  return module;
}

/// "cuLaunchKernel(stage1_forward_kernel, grid 4x1x1, block 256x1x1, 0 B
/// shared)": which launch failed and with what shape.
std::string describeLaunch(CUfunction function, intptr_t gridX, intptr_t gridY,
                           intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                           intptr_t blockZ, int32_t smem) {
  auto it = functionNames().find(function);
  std::string name = it == functionNames().end() ? "?" : it->second;
  return "cuLaunchKernel(" + name + ", grid " + std::to_string(gridX) + "x" +
         std::to_string(gridY) + "x" + std::to_string(gridZ) + ", block " +
         std::to_string(blockX) + "x" + std::to_string(blockY) + "x" +
         std::to_string(blockZ) + ", " + std::to_string(smem) +
         " B shared)";
}

bool isComputeStream(CUstream stream) {
  return stream == reinterpret_cast<CUstream>(computeStream());
}

} // namespace

extern "C" {

CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return guardCall([&] {
    return loadModule(data, "a GPU binary of " + std::to_string(gpuBlobSize) +
                                " bytes");
  });
}

CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  (void)optLevel;
  return guardCall([&] { return loadModule(data, "PTX"); });
}

void mgpuModuleUnload(CUmodule module) {
  // Kept loaded for the next call of the stage function (see above).
  (void)module;
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  return guardCall([&] {
    CUfunction &function = functions()[{module, name}];
    if (!function)
      checkDriver(driver().cuModuleGetFunction(&function, module, name),
                  (std::string("cuModuleGetFunction(") + name + ")").c_str());
    functionNames()[function] = name;
    return function;
  });
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t paramsCount) {
  (void)paramsCount;
  guardCall([&] {
    ensureContext();
    // More than 48 KiB of dynamic shared memory must be opted into.
    if (smem > 48 * 1024)
      checkDriver(driver().cuFuncSetAttribute(
                      function,
                      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
                  "cuFuncSetAttribute(max dynamic shared memory)");
    checkDriver(driver().cuLaunchKernel(function, static_cast<unsigned>(gridX),
                               static_cast<unsigned>(gridY),
                               static_cast<unsigned>(gridZ),
                               static_cast<unsigned>(blockX),
                               static_cast<unsigned>(blockY),
                               static_cast<unsigned>(blockZ),
                               static_cast<unsigned>(smem), stream, params,
                               extra),
                describeLaunch(function, gridX, gridY, gridZ, blockX, blockY,
                               blockZ, smem)
                    .c_str());
    if (synchronizeEveryLaunch())
      checkDriver(driver().cuStreamSynchronize(stream),
                  ("kernel execution (PIPECC_CUDA_SYNC) of " +
                   describeLaunch(function, gridX, gridY, gridZ, blockX,
                                  blockY, blockZ, smem))
                      .c_str());
  });
}

CUstream mgpuStreamCreate() {
  return guardCall([&] {
    ensureContext();
    return reinterpret_cast<CUstream>(computeStream());
  });
}

void mgpuStreamDestroy(CUstream stream) {
  guardCall([&] {
    if (!isComputeStream(stream))
      checkDriver(driver().cuStreamDestroy(stream), "cuStreamDestroy");
  });
}

void mgpuStreamSynchronize(CUstream stream) {
  guardCall([&] {
    if (!isComputeStream(stream) || synchronizeEveryLaunch())
      checkDriver(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  });
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  guardCall([&] {
    checkDriver(driver().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
  });
}

CUevent mgpuEventCreate() {
  return guardCall([&] {
    ensureContext();
    CUevent event = nullptr;
    checkDriver(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
                "cuEventCreate");
    return event;
  });
}

void mgpuEventDestroy(CUevent event) {
  guardCall([&] { checkDriver(driver().cuEventDestroy(event), "cuEventDestroy"); });
}

void mgpuEventSynchronize(CUevent event) {
  guardCall(
      [&] { checkDriver(driver().cuEventSynchronize(event), "cuEventSynchronize"); });
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  guardCall(
      [&] { checkDriver(driver().cuEventRecord(event, stream), "cuEventRecord"); });
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  return guardCall([&]() -> void * {
    ensureContext();
    if (isHostShared)
      fail("gpu.alloc host_shared is not supported by the pipecc runtime");
    if (!isComputeStream(stream))
      fail("gpu.alloc on a stream other than the rank's compute stream");
    return allocateWorkspace(static_cast<int64_t>(sizeBytes));
  });
}

void mgpuMemFree(void *ptr, CUstream stream) {
  (void)stream; // the workspace pool frees on the compute stream
  guardCall([&] { freeWorkspace(ptr); });
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  guardCall([&] {
    checkCuda(cudaMemcpyAsync(dst, src, sizeBytes, cudaMemcpyDefault,
                              reinterpret_cast<cudaStream_t>(stream)),
              "cudaMemcpyAsync (gpu.memcpy)");
  });
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream stream) {
  guardCall([&] {
    checkDriver(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, stream),
                "cuMemsetD32Async (gpu.memset)");
  });
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  guardCall([&] {
    checkDriver(driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, stream),
                "cuMemsetD16Async (gpu.memset)");
  });
}

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

} // extern "C"
