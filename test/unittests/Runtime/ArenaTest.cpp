//===- ArenaTest.cpp - Placing buffers in the rank's one arena ------------===//
#include "pipecc/Runtime/Arena.h"
#include "pipecc/Runtime/Context.h"
#include "TestUtil.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

using namespace pipecc::rt;

namespace {

void noStep(pipecc_rt_context *) {}

pipecc_rt_buffer_desc buffer(const char *name, int32_t perMicrobatch,
                             int64_t bytes, int64_t slots = 0,
                             int64_t offset = -1) {
  return {name, PIPECC_RT_ROLE_ACTIVATION, PIPECC_RT_F32, perMicrobatch, 0,
          nullptr, bytes, -1, 0, slots, offset};
}

struct ArenaFixture : ::testing::Test {
  std::vector<pipecc_rt_buffer_desc> buffers;
  pipecc_rt_rank_program program{PIPECC_RT_ABI_VERSION, 0, 1, 4, 0, 0.1f,
                                 0.0f, 0, 0, nullptr, noStep, 0, "cpu"};
  ArenaLayout layOut() {
    program.buffers = buffers.data();
    program.num_buffers = static_cast<int64_t>(buffers.size());
    return layOutArena(program);
  }
};

TEST_F(ArenaFixture, RuntimeLayoutPacksAlignedCopies) {
  buffers = {buffer("a", 0, 10), buffer("b", 1, 100), buffer("c", 1, 64, 2),
             buffer("empty", 0, 0)};
  ArenaLayout layout = layOut();
  EXPECT_FALSE(layout.planned);
  ASSERT_EQ(layout.buffers.size(), 4u);
  EXPECT_EQ(layout.buffers[0].offset, 0);
  EXPECT_EQ(layout.buffers[0].copies, 1);
  EXPECT_EQ(layout.buffers[1].offset, 64);
  EXPECT_EQ(layout.buffers[1].copies, 4); // slots 0: one per micro-batch
  EXPECT_EQ(layout.buffers[1].stride, 128);
  EXPECT_EQ(layout.buffers[2].offset, 64 + 4 * 128);
  EXPECT_EQ(layout.buffers[2].copies, 2);
  EXPECT_EQ(layout.buffers[2].stride, 64);
  EXPECT_EQ(layout.bytes, 64 + 4 * 128 + 2 * 64);
  for (const BufferPlacement &placement : layout.buffers)
    EXPECT_EQ(placement.offset % kArenaAlignment, 0);
}

TEST_F(ArenaFixture, PlannedOffsetsAreHonouredAndMayShareBytes) {
  program.arena_bytes = 4096;
  buffers = {buffer("a", 0, 100, 0, 1024), buffer("b", 1, 64, 2, 0),
             buffer("c", 0, 64, 0, 0)};
  ArenaLayout layout = layOut();
  EXPECT_TRUE(layout.planned);
  EXPECT_EQ(layout.bytes, 4096);
  EXPECT_EQ(layout.buffers[0].offset, 1024);
  EXPECT_EQ(layout.buffers[1].offset, 0);
  EXPECT_EQ(layout.buffers[2].offset, 0);
}

TEST_F(ArenaFixture, UnplannedBuffersGoAfterPlacedOnes) {
  buffers = {buffer("free", 0, 8), buffer("placed", 0, 100, 0, 256)};
  ArenaLayout layout = layOut();
  EXPECT_EQ(layout.buffers[1].offset, 256);
  EXPECT_EQ(layout.buffers[0].offset, 384);
  EXPECT_EQ(layout.bytes, 448);
}

TEST_F(ArenaFixture, RejectsBadPlacements) {
  buffers = {buffer("a", 0, 8, 0, 32)};
  EXPECT_RUNTIME_ERROR(layOut(), "buffer 0 ('a')", "offset 32",
                       "multiple of 64");
  program.arena_bytes = 128;
  buffers = {buffer("a", 0, 100, 0, 64)};
  EXPECT_RUNTIME_ERROR(layOut(), "bytes [64, 192) lie outside the planned "
                                 "arena of 128 bytes");
  buffers = {buffer("a", 0, 8, 0, -1)};
  EXPECT_RUNTIME_ERROR(layOut(), "no arena offset", "planned");
  program.arena_bytes = 0;
  buffers = {buffer("a", 0, 8, 2)};
  EXPECT_RUNTIME_ERROR(layOut(), "2 slots for a buffer that is not "
                                 "per-micro-batch");
  buffers = {buffer("a", 1, 8, 5)};
  EXPECT_RUNTIME_ERROR(layOut(), "5 slots, expected 0");
}

TEST_F(ArenaFixture, MicrobatchUsesCopyModuloSlots) {
  buffers = {buffer("stash", 1, 12, 2), buffer("all", 1, 12),
             buffer("one", 0, 12)};
  program.buffers = buffers.data();
  program.num_buffers = 3;
  std::unique_ptr<Device> device = createHostDevice();
  pipecc_rt_context ctx;
  ctx.program = &program;
  ctx.device = device.get();
  allocateArena(ctx);
  auto *base = static_cast<char *>(pipecc_rt_buffer(&ctx, 0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % kArenaAlignment, 0u);
  for (int mb = 0; mb < 4; ++mb) {
    EXPECT_EQ(static_cast<char *>(pipecc_rt_buffer_microbatch(&ctx, 0, mb)),
              base + (mb % 2) * 64);
    EXPECT_EQ(static_cast<char *>(pipecc_rt_buffer_microbatch(&ctx, 1, mb)),
              static_cast<char *>(pipecc_rt_buffer(&ctx, 1)) + mb * 64);
    EXPECT_EQ(pipecc_rt_buffer_microbatch(&ctx, 2, mb),
              pipecc_rt_buffer(&ctx, 2));
  }
  // The arena starts zeroed.
  for (int64_t i = 0; i < ctx.layout.bytes; ++i)
    ASSERT_EQ(static_cast<char *>(ctx.arena)[i], 0);
}

} // namespace

namespace {
/// The VmFlags line of the mapping of /proc/self/smaps holding `address`.
std::string vmFlagsAt(const void *address) {
  std::ifstream smaps("/proc/self/smaps");
  auto target = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long begin, end;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2) {
      inside = begin <= target && target < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}
} // namespace

// The host device gives an arena of 2 MiB or more 2 MiB alignment and
// advises it to transparent huge pages (MADV_HUGEPAGE marks the mapping
// "hg" in smaps' VmFlags), where the kernel offers them.
TEST(HostDevice, LargeAllocationsAreAdvisedToHugePages) {
  std::unique_ptr<Device> device = createHostDevice();
  int64_t bytes = 9 << 20;
  void *memory = device->allocate(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % (2 << 20), 0u);
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.find("[never]") == std::string::npos && !modes.empty()) {
    EXPECT_NE(vmFlagsAt(static_cast<char *>(memory) + (4 << 20))
                  .find(" hg"),
              std::string::npos)
        << "THP modes: " << modes;
  }
  device->deallocate(memory);
  // Small ranges and unaligned edges are left alone, and never fail.
  void *small = device->allocate(4096);
  adviseHugePages(small, 4096);
  adviseHugePages(nullptr, 8 << 20);
  device->deallocate(small);
}
