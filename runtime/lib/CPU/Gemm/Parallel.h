//===- Parallel.h - The packed GEMM's threads -------------------*- C++ -*-===//
//
// `--threads N` gives each rank's products N threads. The engine splits a
// product into N parts that write disjoint parts of C (columns of a
// product by a packed weight, rows of a shallow one, entries of a batch),
// each part running the one-thread loops on its share, so every element
// of C is summed by one thread in the one-thread order: the result is the
// same bit for bit whatever N is.
//
// The caller runs part 0 and the team's threads the others. A thread
// waits for the next product spinning for a short while (a step runs its
// products microseconds apart, between element-wise loops), then asleep.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CPU_GEMM_PARALLEL_H
#define PIPECC_RUNTIME_CPU_GEMM_PARALLEL_H

#include <cstdint>
#include <type_traits>

namespace pipecc::rt::gemm {

/// Sets the threads products may use (1: the caller's alone; the default).
/// Starts or stops the team's threads; call between products, from the
/// thread that runs them. Where a thread cannot be started it throws and
/// leaves the caller's thread alone.
void setThreads(int threads);

/// The threads products use (setThreads).
int threads();

/// How many calls of runParts have run more than one part so far (for
/// tests: that a product was split, not only that its result is right).
int64_t splitRuns();

namespace detail {
void runParts(int parts, void (*body)(void *, int), void *context);
} // namespace detail

/// Runs body(part) for part 0 .. parts - 1, part 0 on the calling thread
/// and each other on a thread of the team (those beyond the team's threads
/// on the calling thread too); returns when all have. An exception a part
/// throws is rethrown here once every part has ended. Not from a part
/// itself (no nesting).
template <typename Body> void runParts(int parts, Body &&body) {
  if (parts <= 1) {
    body(0);
    return;
  }
  detail::runParts(
      parts,
      [](void *context, int part) {
        (*static_cast<std::remove_reference_t<Body> *>(context))(part);
      },
      &body);
}

/// The first of `count` items that part `part` of `parts` takes: contiguous
/// shares as equal as whole items allow.
inline int64_t partBegin(int64_t count, int part, int parts) {
  return count * part / parts;
}

} // namespace pipecc::rt::gemm

#endif // PIPECC_RUNTIME_CPU_GEMM_PARALLEL_H
