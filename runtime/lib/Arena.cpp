//===- Arena.cpp - Buffer placement in the rank's arena -------------------===//
#include "pipecc/Runtime/Arena.h"
#include "pipecc/Runtime/Error.h"

#include <algorithm>
#include <limits>
#include <string>

namespace pipecc::rt {

namespace {
std::string label(const pipecc_rt_buffer_desc &desc, int64_t id) {
  std::string text = "buffer " + std::to_string(id);
  if (desc.name)
    text += std::string(" ('") + desc.name + "')";
  return text;
}

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max() / 2;
} // namespace

int64_t alignArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

int64_t bufferCopies(const pipecc_rt_buffer_desc &desc,
                     int64_t microbatches) {
  if (desc.slots > 0)
    return desc.slots;
  return desc.per_microbatch ? microbatches : 1;
}

ArenaLayout layOutArena(const pipecc_rt_rank_program &program) {
  ArenaLayout layout;
  layout.planned = program.arena_bytes > 0;
  if (program.arena_bytes < 0)
    fail("rank program has a negative arena size ", program.arena_bytes);
  layout.buffers.resize(static_cast<size_t>(program.num_buffers));
  int64_t end = 0;
  // First the compiler's placements, then the rest after them.
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t id = 0; id < program.num_buffers; ++id) {
      const pipecc_rt_buffer_desc &desc = program.buffers[id];
      bool placedByCompiler = desc.offset != -1;
      if (placedByCompiler != (pass == 0))
        continue;
      if (desc.bytes < 0 || desc.bytes > kMaxBytes)
        fail(label(desc, id), ": bad size ", desc.bytes);
      if (desc.slots < 0 || desc.slots > program.microbatches)
        fail(label(desc, id), ": ", desc.slots,
             " slots, expected 0 (one per micro-batch) up to ",
             program.microbatches);
      if (desc.slots > 1 && !desc.per_microbatch)
        fail(label(desc, id), ": ", desc.slots,
             " slots for a buffer that is not per-micro-batch");
      BufferPlacement &placement = layout.buffers[static_cast<size_t>(id)];
      placement.copies = bufferCopies(desc, program.microbatches);
      placement.stride = alignArena(desc.bytes);
      if (placement.copies > kMaxBytes / std::max<int64_t>(1, placement.stride))
        fail(label(desc, id), ": ", placement.copies, " copies of ",
             desc.bytes, " bytes overflow the arena");
      int64_t size = placement.copies * placement.stride;
      if (placedByCompiler) {
        if (desc.offset < 0 || desc.offset % kArenaAlignment != 0 ||
            desc.offset > kMaxBytes)
          fail(label(desc, id), ": arena offset ", desc.offset,
               " is not a non-negative multiple of ", kArenaAlignment);
        placement.offset = desc.offset;
      } else {
        if (layout.planned)
          fail(label(desc, id), ": no arena offset, but the program's arena "
               "of ", program.arena_bytes,
               " bytes is planned (every buffer needs an offset)");
        placement.offset = end;
      }
      int64_t bufferEnd = placement.offset + size;
      if (layout.planned && bufferEnd > program.arena_bytes)
        fail(label(desc, id), ": bytes [", placement.offset, ", ", bufferEnd,
             ") lie outside the planned arena of ", program.arena_bytes,
             " bytes");
      end = std::max(end, bufferEnd);
    }
  }
  layout.bytes = layout.planned ? program.arena_bytes : end;
  return layout;
}

} // namespace pipecc::rt
