//===- Error.cpp ----------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"

#include <cstdio>
#include <cstdlib>
#include <mpi.h>

namespace pipecc::rt {

namespace {
/// The message as one line: names in it come from the model (tensor and
/// input names may hold newlines), and one error must not forge another.
std::string oneLine(const std::string &message) {
  static const char hex[] = "0123456789abcdef";
  std::string line;
  for (unsigned char c : message) {
    if (c < 0x20 || c == 0x7f) {
      line += "\\x";
      line += hex[c >> 4];
      line += hex[c & 15];
    } else {
      line += static_cast<char>(c);
    }
  }
  return line;
}
} // namespace

void fatalError(const std::string &message) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  bool mpiRunning = initialized && !finalized;
  int rank = -1;
  if (mpiRunning)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fflush(stdout);
  std::string line = oneLine(message);
  if (rank >= 0)
    std::fprintf(stderr, "pipecc-runtime: error: rank %d: %s\n", rank,
                 line.c_str());
  else
    std::fprintf(stderr, "pipecc-runtime: error: %s\n", line.c_str());
  std::fflush(stderr);
  // MPI_Abort tears down every rank, so no peer is left blocked in a receive.
  if (mpiRunning)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

} // namespace pipecc::rt
