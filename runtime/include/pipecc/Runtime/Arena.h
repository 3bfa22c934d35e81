//===- Arena.h - Placing a rank's buffers in its one allocation -*- C++ -*-===//
//
// Every buffer of a rank lies in one arena, allocated once through the
// Device. The compiler's static memory plan gives each buffer's offset and
// the arena's size (ABI 3: pipecc_rt_buffer_desc.offset,
// pipecc_rt_rank_program.arena_bytes); without a plan (offset -1, size 0)
// the runtime places the buffers one after another.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_ARENA_H
#define PIPECC_RUNTIME_ARENA_H

#include "pipecc/Runtime/Runtime.h"

#include <cstdint>
#include <vector>

namespace pipecc::rt {

/// Alignment of every buffer and every copy in the arena.
constexpr int64_t kArenaAlignment = 64;

struct BufferPlacement {
  int64_t offset = 0; ///< of copy 0, in bytes from the arena's start
  int64_t copies = 1; ///< micro-batch mb uses copy mb % copies
  int64_t stride = 0; ///< bytes from one copy to the next (64-aligned)
};

struct ArenaLayout {
  std::vector<BufferPlacement> buffers; ///< by buffer id
  int64_t bytes = 0;                    ///< the arena's size
  bool planned = false;                 ///< sized by the compiler's plan
};

/// `bytes` rounded up to a multiple of kArenaAlignment.
int64_t alignArena(int64_t bytes);

/// Copies of a buffer: `slots` when nonzero, else `microbatches` for a
/// per-micro-batch buffer and 1 for the others.
int64_t bufferCopies(const pipecc_rt_buffer_desc &desc, int64_t microbatches);

/// The placement of every buffer of `program`: the compiler's offsets where
/// given, the others after the highest end (in id order), the size
/// arena_bytes when nonzero, else the end of the last buffer. Throws naming
/// the buffer on a bad slot count, an unaligned or negative offset, a
/// buffer outside a planned arena, or a runtime-placed buffer in a planned
/// one.
ArenaLayout layOutArena(const pipecc_rt_rank_program &program);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_ARENA_H
