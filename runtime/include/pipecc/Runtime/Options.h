//===- Options.h - Command line of a rank executable ------------*- C++ -*-===//
#ifndef PIPECC_RUNTIME_OPTIONS_H
#define PIPECC_RUNTIME_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace pipecc::rt {

struct Options {
  int64_t steps = 1;
  std::string dataDir;
  bool synthetic = false;
  /// Empty: rank<k>.safetensors next to the executable.
  std::string weightsPath;
  std::optional<float> learningRate;
  std::string dumpGradsPath;
  std::string savePath;
  /// Inference programs: the folder receiving one .npy per graph output.
  std::string outputsDir;
  bool quiet = false;
  bool timers = false;
  /// Print the arena size beside the measured peak memory at exit.
  bool memory = false;
  /// --trace FILE: the measured timeline of step `traceStep` (1-based; 0:
  /// the last step) goes to FILE.
  std::string tracePath;
  int64_t traceStep = 0;
  /// --threads N: threads of each BLAS call (1: P ranks on P cores).
  int threads = 1;
  /// --blas: print the BLAS, its kernels, threads and sgemm totals at exit.
  bool blas = false;
  /// --gemms: print each sgemm product's calls, time and rate at exit
  /// (steps after the first, as --timers' summaries).
  bool gemms = false;
  /// Not --no-packed-weights: matmuls by a parameter reuse one packed copy
  /// per step (pipecc_rt_sgemm_weight; single-threaded, so --threads 1).
  bool packedWeights = true;
  /// Not --pin-ranks off: ranks that out/launch started, more than the
  /// CPUs, are pinned to CPUs (CorePlacement.h).
  bool pinRanks = true;
  /// "mpi", "socket" or empty (see chooseTransport in Transport.h).
  std::string transport;
  bool help = false;
};

/// Parses the arguments after argv[0] ("--opt value" or "--opt=value").
/// Throws RuntimeError on unknown options, missing or malformed values.
Options parseOptions(int argc, char **argv);

std::string usageText(const char *programName);

/// The value of the last --transport option in argv ("" if none), read
/// before the transport (and so parseOptions) can run.
std::string findTransportOption(int argc, char **argv);

/// `pattern` with every "{rank}" replaced by `rank`.
std::string substituteRank(const std::string &pattern, int rank);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_OPTIONS_H
