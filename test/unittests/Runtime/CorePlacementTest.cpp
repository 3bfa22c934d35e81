//===- CorePlacementTest.cpp ----------------------------------------------===//
#include "pipecc/Runtime/CorePlacement.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sched.h>
#include <thread>

using namespace pipecc::rt;

namespace {

TEST(CorePlacement, NoMoreRanksThanCpusStayUnpinned) {
  EXPECT_EQ(cpuSlotOfRank(0, 2, 2), -1);
  EXPECT_EQ(cpuSlotOfRank(1, 2, 8), -1);
  EXPECT_EQ(cpuSlotOfRank(0, 1, 1), -1);
  // Nothing known about the CPUs, or a rank outside the job.
  EXPECT_EQ(cpuSlotOfRank(0, 4, 0), -1);
  EXPECT_EQ(cpuSlotOfRank(4, 4, 2), -1);
  EXPECT_EQ(cpuSlotOfRank(-1, 4, 2), -1);
}

TEST(CorePlacement, ConsecutiveRanksShareACpu) {
  // 4 stages on 2 CPUs: stages 0 and 1 on the first, 2 and 3 on the second.
  int four[] = {0, 0, 1, 1};
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(cpuSlotOfRank(rank, 4, 2), four[rank]) << rank;
  // Uneven: every CPU gets 2 or 3 of 7 ranks, in order.
  int counts[3] = {0, 0, 0};
  int last = 0;
  for (int rank = 0; rank < 7; ++rank) {
    int slot = cpuSlotOfRank(rank, 7, 3);
    ASSERT_GE(slot, last);
    ASSERT_LT(slot, 3);
    last = slot;
    ++counts[slot];
  }
  for (int count : counts) {
    EXPECT_GE(count, 2);
    EXPECT_LE(count, 3);
  }
}

TEST(CorePlacement, PinsThreadsThatRunAlready) {
  std::vector<int> cpus = usableCpus();
  ASSERT_FALSE(cpus.empty());
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  std::atomic<bool> pinned{false}, stop{false};
  std::atomic<int> seenCpus{-1};
  std::thread early([&] {
    while (!pinned)
      std::this_thread::yield();
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      seenCpus = CPU_COUNT(&set);
    while (!stop)
      std::this_thread::yield();
  });
  std::string error;
  bool ok = pinToCpu(cpus.back(), error);
  pinned = true;
  while (seenCpus == -1)
    std::this_thread::yield();
  stop = true;
  early.join();
  EXPECT_TRUE(ok) << error;
  EXPECT_EQ(seenCpus, 1);
  std::vector<int> now = usableCpus();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0], cpus.back());
  // Back to the mask the test started with, for the tests after it.
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);

  EXPECT_FALSE(pinToCpu(-1, error));
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
}

} // namespace
