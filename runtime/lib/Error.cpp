//===- Error.cpp ----------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <mpi.h>

namespace pipecc::rt {

void fatalError(const std::string &message) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  bool mpiRunning = initialized && !finalized;
  int rank = -1;
  if (mpiRunning)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fflush(stdout);
  if (rank >= 0)
    std::fprintf(stderr, "pipecc-runtime: error: rank %d: %s\n", rank,
                 message.c_str());
  else
    std::fprintf(stderr, "pipecc-runtime: error: %s\n", message.c_str());
  std::fflush(stderr);
  // MPI_Abort tears down every rank, so no peer is left blocked in a receive.
  if (mpiRunning)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

} // namespace pipecc::rt
