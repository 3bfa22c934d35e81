/*===- Mgpu.h - MLIR's gpu-to-llvm host ABI, as the runtime implements it -*- C -*-===*
 *
 * The functions that MLIR 19's gpu-to-llvm lowering and gpu.binary
 * translation call from the stage functions of a `--target cuda` rank,
 * with the signatures of mlir/lib/ExecutionEngine/CudaRuntimeWrappers.cpp
 * at llvmorg-19 (test/Runtime/cuda-mgpu-abi.mlir checks the declarations
 * MLIR emits). libpipecc_runtime_cuda defines them (lib/CUDA/Mgpu.cpp);
 * the handles are the driver's CUmodule, CUfunction, CUstream and CUevent,
 * here opaque pointers so that no CUDA header is needed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef PIPECC_RUNTIME_CUDA_MGPU_H
#define PIPECC_RUNTIME_CUDA_MGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUmod_st *pipecc_mgpu_module;
typedef struct CUfunc_st *pipecc_mgpu_function;
typedef struct CUstream_st *pipecc_mgpu_stream;
typedef struct CUevent_st *pipecc_mgpu_event;

/* Loads the fatbin at `data` once; later calls with the same address return
 * the same module, and unloading is left to process exit. */
pipecc_mgpu_module mgpuModuleLoad(void *data, size_t gpuBlobSize);
/* The same for PTX, which the driver compiles when loading it (optLevel is
 * left to the driver's default). */
pipecc_mgpu_module mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(pipecc_mgpu_module module);
pipecc_mgpu_function mgpuModuleGetFunction(pipecc_mgpu_module module,
                                           const char *name);
void mgpuLaunchKernel(pipecc_mgpu_function function, intptr_t gridX,
                      intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                      intptr_t blockY, intptr_t blockZ, int32_t smem,
                      pipecc_mgpu_stream stream, void **params, void **extra,
                      size_t paramsCount);
/* Returns the rank's compute stream; synchronizing or destroying it does
 * nothing (PIPECC_CUDA_SYNC=1: synchronize after every launch). */
pipecc_mgpu_stream mgpuStreamCreate(void);
void mgpuStreamDestroy(pipecc_mgpu_stream stream);
void mgpuStreamSynchronize(pipecc_mgpu_stream stream);
void mgpuStreamWaitEvent(pipecc_mgpu_stream stream, pipecc_mgpu_event event);
pipecc_mgpu_event mgpuEventCreate(void);
void mgpuEventDestroy(pipecc_mgpu_event event);
void mgpuEventSynchronize(pipecc_mgpu_event event);
void mgpuEventRecord(pipecc_mgpu_event event, pipecc_mgpu_stream stream);
/* Stream-ordered workspace memory on the compute stream. */
void *mgpuMemAlloc(uint64_t sizeBytes, pipecc_mgpu_stream stream,
                   bool isHostShared);
void mgpuMemFree(void *ptr, pipecc_mgpu_stream stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                pipecc_mgpu_stream stream);
void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  pipecc_mgpu_stream stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  pipecc_mgpu_stream stream);
void mgpuSetDefaultDevice(int32_t device);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PIPECC_RUNTIME_CUDA_MGPU_H */
