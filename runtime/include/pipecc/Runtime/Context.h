//===- Context.h - State of a running rank ----------------------*- C++ -*-===//
//
// The definition behind the C API's opaque pipecc_rt_context.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CONTEXT_H
#define PIPECC_RUNTIME_CONTEXT_H

#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Options.h"
#include "pipecc/Runtime/Runtime.h"
#include "pipecc/Runtime/Transport.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::rt {

struct AlignedFree {
  void operator()(char *p) const;
};

struct BufferStorage {
  const pipecc_rt_buffer_desc *desc = nullptr;
  std::unique_ptr<char, AlignedFree> memory;
  int64_t copies = 1;
};

/// The data of one data input: the whole file (or synthetic batch) and how
/// many step batches it holds.
struct InputSource {
  std::optional<NpyArray> array;
  int64_t batches = 1;
};

struct Timer {
  double total = 0;
  int64_t calls = 0;
  double startedAt = 0;
  bool running = false;
};

} // namespace pipecc::rt

struct pipecc_rt_context {
  const pipecc_rt_rank_program *program = nullptr;
  pipecc::rt::Transport *transport = nullptr;
  pipecc::rt::Options options;
  float learningRate = 0.1f;
  float gradientScale = 1.0f;
  std::vector<pipecc::rt::BufferStorage> buffers; // by buffer id
  std::map<int64_t, pipecc::rt::InputSource> inputs; // by buffer id
  int64_t stepIndex = 0;
  double lossSum = 0;
  /// Losses reported, or labels counted under
  /// PIPECC_RT_PROGRAM_COUNTED_MEAN_LOSS (exact integers in a double).
  double lossCount = 0;
  std::map<std::string, pipecc::rt::Timer> timers;

  /// "buffer 3 ('fc1.weight')", for error messages.
  std::string bufferLabel(int64_t id) const;
  /// Checks the id and returns the buffer's storage.
  pipecc::rt::BufferStorage &buffer(int64_t id);
};

namespace pipecc::rt {

/// "nan", "inf" or "-inf", for messages about a non-finite `value`.
const char *nonFiniteName(float value);
/// Index of the first inf or nan among `count` floats, or -1.
int64_t findNonFinite(const float *data, int64_t count);
/// dst[i] += src[i]; then the index of the first non-finite dst[i], or -1.
int64_t addAndFindNonFinite(float *dst, const float *src, int64_t count);

/// Checks the program against the MPI job and its own consistency (buffer
/// roles, shapes, sizes, gradient/parameter links).
void validateProgram(const pipecc_rt_rank_program *program, int mpiRank,
                     int mpiSize);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_CONTEXT_H
