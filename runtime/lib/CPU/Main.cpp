//===- Main.cpp - pipecc_rt_main of the CPU target ------------------------===//
//
// The CPU target's rank executables: host device, OpenBLAS, and either
// transport (MPI under mpirun/srun, sockets when out/launch starts the ranks
// itself). The socket transport never calls MPI, so an executable linked
// with MPI runs without MPI_Init there.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"

#include <algorithm>
#include <cblas.h>
#include <cstdlib>
#include <thread>

using namespace pipecc::rt;

namespace {
std::unique_ptr<Transport> createCpuTransport(TransportKind kind, int *argc,
                                              char ***argv) {
  if (kind == TransportKind::Mpi)
    return createMpiTransport(argc, argv);
  return createSocketTransport(socketConfigFromEnvironment());
}

std::unique_ptr<Device> createCpuDevice(const Transport &) {
  return createHostDevice();
}

/// Each rank's BLAS would otherwise start one thread per core, and several
/// ranks share a node: split the cores instead of oversubscribing them.
void configureBlasThreads(const Transport &transport) {
  if (std::getenv("OPENBLAS_NUM_THREADS") || std::getenv("OMP_NUM_THREADS"))
    return;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  int threads = std::max(1, cores / std::max(1, transport.localSize()));
  openblas_set_num_threads(threads);
}
} // namespace

extern "C" int pipecc_rt_main(int argc, char **argv,
                              const pipecc_rt_rank_program *program) {
  RankSetup setup;
  setup.target = "cpu";
  setup.createTransport = createCpuTransport;
  setup.createDevice = createCpuDevice;
  setup.configureThreads = configureBlasThreads;
  return guardCall([&] { return runRank(argc, argv, program, setup); });
}
