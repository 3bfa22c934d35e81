//===- CudaDevice.h - The CUDA target's device and transports --*- C++ -*-===//
//
// What the CUDA target's pipecc_rt_main (lib/CUDA/Main.cpp) gives the core
// runtime: a Device on one GPU and the device transports. No CUDA header
// here: streams and events are the Device interface's opaque handles.
//
// One compute stream per rank (pipecc_rt_cuda_compute_stream) carries every
// kernel, cuBLASLt call and copy of the rank in program order; the device
// transports move data on a stream of their own and order it against the
// compute stream with events.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CUDA_CUDADEVICE_H
#define PIPECC_RUNTIME_CUDA_CUDADEVICE_H

#include "pipecc/Runtime/Device.h"
#include "pipecc/Runtime/Transport.h"

#include <memory>
#include <string>

namespace pipecc::rt {

/// This rank's index among the ranks of its node: OMPI_COMM_WORLD_LOCAL_RANK,
/// MPI_LOCALRANKID, SLURM_LOCALID or PIPECC_LOCAL_RANK when set, else
/// rank % localSize (ranks placed node by node).
int localRankOf(const Transport &transport);

/// Makes GPU `localRank % device count` current for this thread and creates
/// the rank's compute stream (pipecc_rt_cuda_set_compute_stream) unless one
/// is set. Throws naming the CUDA error when there is no usable GPU.
/// Returns the device ordinal.
int selectCudaDevice(int localRank);

/// The GPU made current by selectCudaDevice. Allocations are cudaMalloc'd
/// (the core allocates one arena per rank), copies and fills run on the
/// compute stream and complete before returning. peakMemoryBytes() is the
/// measured peak: the device memory each allocation took by cudaMemGetInfo
/// (free before minus free after, so including the driver's rounding), at
/// its highest, plus the high-water mark of the stream-ordered pool holding
/// the workspace (cuBLASLt's and the stage functions' temporaries).
std::unique_ptr<Device> createCudaDevice();

/// One line for the memory report: the measured arena allocation, the
/// workspace pool's high-water mark and cudaMemGetInfo's free and total
/// bytes; empty when `device` is not a CUDA device.
std::string describeCudaMemory(const Device &device);

/// How the ranks of a CUDA job move device data; chosen at launch with
/// PIPECC_CUDA_TRANSPORT=nccl|staged (default: nccl when every rank of the
/// node has a GPU of its own, staged otherwise).
enum class DeviceTransportKind { Nccl, HostStaged };
DeviceTransportKind chooseDeviceTransport(const Transport &host,
                                          int deviceCount);

/// NCCL for the Program channel (device memory): sends, receives,
/// broadcasts and all-reduces on a communication stream of their own,
/// asynchronous; a started receive's wait() makes the compute stream wait
/// for it, so compute waits only where it reads the received tensor. The
/// Control channel (host memory) and barriers go through `host`, which
/// also bootstraps the NCCL unique id. One rank per GPU (NCCL's rule).
/// Messages between two ranks must be started in the same order on both
/// sides, as the schedule's one global order of communication does: NCCL
/// matches them by order, not by tag.
std::unique_ptr<Transport> createNcclTransport(std::unique_ptr<Transport> host);

/// Program-channel messages staged through host memory: device -> host
/// copy, `host`'s message, host -> device copy. Any number of ranks may
/// share one GPU (for tests on one GPU). Deterministic all-reduce as the
/// host transport's.
std::unique_ptr<Transport>
createHostStagedTransport(std::unique_ptr<Transport> host);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_CUDA_CUDADEVICE_H
