//===- Main.cpp - pipecc_rt_main of the CUDA target ----------------------===//
//
// The CUDA target's rank executables: a GPU picked by the rank's place on
// its node, and a device transport (NCCL, or host-staged when ranks share a
// GPU) over a host transport that carries the runtime's own messages and
// the NCCL bootstrap. GPU nodes often have no MPI, so these executables do
// not link it: the host transport is always the socket one, with the rank
// taken from the launcher's environment (out/launch, mpirun, srun).
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/CudaDevice.h"
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"

#include "CudaSupport.h"

using namespace pipecc::rt;

namespace {
// Whatever transport was asked for, the host side is the socket one:
// out/launch's folder, or under mpirun/srun the launcher job's
// (socketConfigFromEnvironment).
std::unique_ptr<Transport> createCudaTransport(TransportKind, int *,
                                               char ***) {
  std::unique_ptr<Transport> host =
      createSocketTransport(socketConfigFromEnvironment());
  int deviceCount = 0;
  cuda::checkCuda(cudaGetDeviceCount(&deviceCount),
                  "cudaGetDeviceCount (is there a GPU and a driver?)");
  selectCudaDevice(localRankOf(*host));
  if (chooseDeviceTransport(*host, deviceCount) == DeviceTransportKind::Nccl)
    return createNcclTransport(std::move(host));
  return createHostStagedTransport(std::move(host));
}

std::unique_ptr<Device> createDevice(const Transport &) {
  return createCudaDevice();
}
} // namespace

extern "C" int pipecc_rt_main(int argc, char **argv,
                              const pipecc_rt_rank_program *program) {
  RankSetup setup;
  setup.target = "cuda";
  setup.createTransport = createCudaTransport;
  setup.createDevice = createDevice;
  return guardCall([&] { return runRank(argc, argv, program, setup); });
}
