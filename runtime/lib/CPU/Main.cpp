//===- Main.cpp - pipecc_rt_main of the CPU target ------------------------===//
//
// The CPU target's rank executables: host device, BLAS, and either
// transport (MPI under mpirun/srun, sockets when out/launch starts the ranks
// itself). The socket transport never calls MPI, so an executable linked
// with MPI runs without MPI_Init there.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Runtime.h"

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

/// --threads N (default 1) threads per product: each rank's BLAS would
/// otherwise start one per core, and P ranks on P cores would oversubscribe
/// them. Through the library's API, so no environment variable counts.
/// Where the packed engine runs, it takes the N threads for every product
/// and the BLAS keeps one (pipecc_rt_blas_set_threads).
void configureBlas(const Transport &, const Options &options) {
  pipecc_rt_blas_set_threads(options.threads);
  pipecc_rt_blas_set_packed_weights(options.packedWeights);
}
} // namespace

extern "C" int pipecc_rt_main(int argc, char **argv,
                              const pipecc_rt_rank_program *program) {
  RankSetup setup;
  setup.target = "cpu";
  setup.createTransport = createCpuTransport;
  setup.createDevice = createCpuDevice;
  setup.configureMatmuls = configureBlas;
  return guardCall([&] { return runRank(argc, argv, program, setup); });
}
