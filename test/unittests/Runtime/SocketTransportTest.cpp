//===- SocketTransportTest.cpp - Ranks over Unix-domain sockets -----------===//
//
// Each test forks one process per rank; a rank reports a failed check by
// writing the reason to <dir>/rank<k>.err and exiting with status 1, which
// the parent turns into a test failure.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Transport.h"
#include "TestUtil.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <thread>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

/// Thrown by a rank's body when one of its checks fails.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

#define RANK_CHECK(condition)                                                  \
  do {                                                                         \
    if (!(condition))                                                          \
      throw CheckFailed(std::string("line ") + std::to_string(__LINE__) +      \
                        ": " #condition);                                      \
  } while (0)

using RankBody = std::function<void(Transport &)>;

/// Runs `body` on `size` forked ranks connected by a socket transport;
/// fails the test with every rank's complaint. Ranks still running after
/// 30 s are killed (a hang is a failure, not a stuck test).
void runRanks(int size, const RankBody &body) {
  TempDir dir;
  std::vector<pid_t> children;
  for (int rank = 0; rank < size; ++rank) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      std::string problem;
      try {
        SocketConfig config;
        config.rank = rank;
        config.size = size;
        config.rendezvous = dir.path();
        config.bootstrapTimeoutSeconds = 20;
        std::unique_ptr<Transport> transport = createSocketTransport(config);
        body(*transport);
        transport->finalize();
      } catch (const std::exception &e) {
        problem = e.what();
        status = 1;
      }
      if (status) {
        std::ofstream(dir.file("rank" + std::to_string(rank) + ".err"))
            << problem;
      }
      std::fflush(nullptr);
      _exit(status);
    }
    children.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int rank = 0; rank < size; ++rank) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(children[rank], &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done == 0) {
      for (pid_t child : children)
        kill(child, SIGKILL);
      waitpid(children[rank], &status, 0);
      ADD_FAILURE() << "rank " << rank << " hung";
      continue;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      continue;
    std::ifstream err(dir.file("rank" + std::to_string(rank) + ".err"));
    std::stringstream text;
    text << err.rdbuf();
    ADD_FAILURE() << "rank " << rank << " failed: " << text.str();
  }
}

/// Expects `statement` to throw RuntimeError whose message holds `part`.
void expectError(const std::function<void()> &statement,
                 const std::string &part) {
  try {
    statement();
  } catch (const RuntimeError &e) {
    if (std::string(e.what()).find(part) == std::string::npos)
      throw CheckFailed("error \"" + std::string(e.what()) + "\" lacks \"" +
                        part + "\"");
    return;
  }
  throw CheckFailed("expected an error with \"" + part + "\"");
}

TEST(SocketTransport, PointToPointMatchesTagsAndChannels) {
  runRanks(2, [](Transport &t) {
    RANK_CHECK(t.size() == 2 && std::strcmp(t.name(), "socket") == 0);
    if (t.rank() == 0) {
      int32_t five[2] = {5, 55}, seven[3] = {7, 77, 777}, control = 9;
      t.send(five, sizeof five, 1, 5);
      t.send(seven, sizeof seven, 1, 7);
      t.send(&control, sizeof control, 1, 5, Channel::Control);
      for (int32_t i = 0; i < 3; ++i) // same tag: order kept
        t.send(&i, sizeof i, 1, 8);
    } else {
      int32_t five[2] = {}, seven[3] = {}, control = 0;
      // Received out of order: tag 7 first, then the Control message with
      // the same tag as the Program one.
      t.recv(seven, sizeof seven, 0, 7);
      t.recv(&control, sizeof control, 0, 5, Channel::Control);
      t.recv(five, sizeof five, 0, 5);
      RANK_CHECK(seven[2] == 777 && five[1] == 55 && control == 9);
      for (int32_t i = 0; i < 3; ++i) {
        int32_t value = -1;
        t.recv(&value, sizeof value, 0, 8);
        RANK_CHECK(value == i);
      }
    }
  });
}

// finished() is what lets a wait pack weights only until its message is
// there: false while the message has not been sent, true once it arrived
// (without waiting), and wait() then returns it.
TEST(SocketTransport, FinishedSaysWhenAReceiveHasArrived) {
  runRanks(2, [](Transport &t) {
    int32_t go = 0;
    if (t.rank() == 0) {
      t.recv(&go, sizeof go, 1, 1); // rank 1 has checked "not yet"
      int32_t value = 42;
      t.send(&value, sizeof value, 1, 2);
    } else {
      int32_t value = 0;
      int64_t handle = t.startRecv(&value, sizeof value, 0, 2);
      RANK_CHECK(!t.finished(handle));
      t.send(&go, sizeof go, 0, 1);
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!t.finished(handle) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      RANK_CHECK(t.finished(handle));
      t.wait(handle);
      RANK_CHECK(value == 42);
      RANK_CHECK(t.finished(handle)); // unknown now: wait() would name it
    }
  });
}

TEST(SocketTransport, SizeMismatchNamesPeerTagAndSizes) {
  runRanks(2, [](Transport &t) {
    if (t.rank() == 0) {
      float three[3] = {1, 2, 3};
      t.send(three, sizeof three, 1, 3);
      t.send(three, sizeof three, 1, 4);
    } else {
      float two[2];
      expectError([&] { t.recv(two, sizeof two, 0, 3); },
                  "recv from rank 0 tag 3: expected a message of 8 bytes, "
                  "got 12 (sender and receiver disagree on the buffer)");
      int64_t handle = t.startRecv(two, sizeof two, 0, 4);
      expectError([&] { t.wait(handle); },
                  "irecv from rank 0 tag 4: expected a message of 8 bytes, "
                  "got 12");
      expectError([&] { t.send(two, 8, 1, 0); }, "peer is this rank");
      expectError([&] { t.send(two, 8, 2, 0); }, "peer rank 2 out of range");
      expectError([&] { t.wait(12345); }, "unknown or already completed");
    }
  });
}

TEST(SocketTransport, LargeCrossingSendsAndNonBlockingTransfersComplete) {
  constexpr size_t kCount = size_t(4) << 20; // 16 MiB: beyond socket buffers
  runRanks(2, [&](Transport &t) {
    int peer = 1 - t.rank();
    std::vector<float> mine(kCount, static_cast<float>(t.rank() + 1)),
        theirs(kCount, 0.0f);
    // Both ranks send before receiving: the progress thread reads anyway.
    t.send(mine.data(), kCount * 4, peer, 1);
    t.recv(theirs.data(), kCount * 4, peer, 1);
    RANK_CHECK(theirs.front() == peer + 1 && theirs.back() == peer + 1);
    std::vector<float> again(kCount, 0.0f);
    int64_t receive = t.startRecv(again.data(), kCount * 4, peer, 2);
    int64_t send = t.startSend(mine.data(), kCount * 4, peer, 2);
    RANK_CHECK(t.pendingTransfers() == 2);
    t.waitAll();
    (void)receive;
    (void)send;
    RANK_CHECK(t.pendingTransfers() == 0);
    RANK_CHECK(again[kCount / 2] == peer + 1);
    int32_t swapped = -1, out = t.rank() * 10;
    t.sendRecv(&out, 4, peer, 3, &swapped, 4, peer, 3);
    RANK_CHECK(swapped == peer * 10);
  });
}

/// Values whose float sum depends on the order of the additions.
std::vector<float> rankValues(int rank, int count) {
  std::mt19937 generator(1234 + rank);
  std::uniform_real_distribution<float> exponent(-20.0f, 20.0f);
  std::vector<float> values(static_cast<size_t>(count));
  for (float &value : values)
    value = std::ldexp(exponent(generator) > 0 ? 1.0f : -1.0f,
                       static_cast<int>(exponent(generator))) *
            (1.0f + exponent(generator) / 64.0f);
  return values;
}

TEST(SocketTransport, AllreduceIsTheSerialSumInRankOrderOnEveryRank) {
  constexpr int kCount = 1000;
  runRanks(4, [&](Transport &t) {
    std::vector<float> data = rankValues(t.rank(), kCount);
    t.allreduceSumF32(data.data(), kCount, {});
    std::vector<float> expected = rankValues(0, kCount);
    bool orderMatters = false;
    for (int rank = 1; rank < 4; ++rank) {
      std::vector<float> next = rankValues(rank, kCount);
      for (int i = 0; i < kCount; ++i)
        expected[i] += next[i];
    }
    std::vector<float> reversed = rankValues(3, kCount);
    for (int rank = 2; rank >= 0; --rank) {
      std::vector<float> next = rankValues(rank, kCount);
      for (int i = 0; i < kCount; ++i)
        reversed[i] += next[i];
    }
    for (int i = 0; i < kCount; ++i)
      orderMatters |= reversed[i] != expected[i];
    RANK_CHECK(orderMatters); // the check below can fail
    RANK_CHECK(std::memcmp(data.data(), expected.data(), kCount * 4) == 0);

    // Two disjoint groups at once, listed in any order.
    std::vector<int> group = t.rank() % 2 ? std::vector<int>{3, 1}
                                          : std::vector<int>{2, 0};
    std::vector<float> pair = rankValues(t.rank(), 10);
    t.allreduceSumF32(pair.data(), 10, group);
    std::vector<float> low = rankValues(t.rank() % 2, 10),
                       high = rankValues(t.rank() % 2 + 2, 10);
    for (int i = 0; i < 10; ++i)
      RANK_CHECK(pair[i] == low[i] + high[i]);
    expectError([&] { t.allreduceSumF32(pair.data(), 1, {0, 0}); },
                "lists rank 0 twice");
  });
}

TEST(SocketTransport, ControlCollectivesAndBootstrapBlob) {
  runRanks(3, [](Transport &t) {
    char blob[128] = {};
    if (t.rank() == 0)
      std::strcpy(blob, "nccl-unique-id-stand-in");
    t.broadcastBootstrap(blob, sizeof blob);
    RANK_CHECK(std::string(blob) == "nccl-unique-id-stand-in");
    RANK_CHECK(t.allreduceMaxI64(t.rank() * 7 - 3) == 11);
    double sums[2] = {0.5 * t.rank(), 1.0};
    t.allreduceSumF64(sums, 2);
    RANK_CHECK(sums[0] == 1.5 && sums[1] == 3.0);
    double reduced = t.rank() + 1.0;
    t.reduceSumF64(&reduced, 1, 2);
    if (t.rank() == 2)
      RANK_CHECK(reduced == 6.0);
    int64_t value = t.rank() == 1 ? 42 : 0;
    t.broadcast(&value, sizeof value, 1, Channel::Program);
    RANK_CHECK(value == 42);
    t.barrier(Channel::Program);
    t.barrier(Channel::Control);
  });
}

TEST(SocketTransport, APeerThatDiesFailsTheWaitInsteadOfHanging) {
  runRanks(2, [](Transport &t) {
    if (t.rank() == 1)
      _exit(0); // gone without its goodbye, as a crashed rank
    float value;
    expectError([&] { t.recv(&value, sizeof value, 1, 0); },
                "rank 1 ended without finishing");
  });
}

TEST(SocketTransport, BootstrapTimeoutNamesTheMissingRanks) {
  TempDir dir;
  SocketConfig config;
  config.rank = 0;
  config.size = 3;
  config.rendezvous = dir.path();
  config.bootstrapTimeoutSeconds = 1;
  EXPECT_RUNTIME_ERROR(createSocketTransport(config),
                       "rank(s) 1, 2 did not connect within 1 s");
  config.rank = 2;
  EXPECT_RUNTIME_ERROR(createSocketTransport(config), "rank 0 did not open",
                       "rank0.sock within 1 s");
}

/// Sets environment variables for one test and restores them after.
class ScopedEnvironment {
public:
  ~ScopedEnvironment() {
    for (auto &[name, value] : saved_)
      value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
  }
  void set(const std::string &name, const char *value) {
    if (!saved_.count(name)) {
      const char *old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    value ? setenv(name.c_str(), value, 1) : unsetenv(name.c_str());
  }

private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const char *const kLauncherVariables[] = {
    "PIPECC_TRANSPORT",     "PIPECC_RENDEZVOUS",    "PIPECC_RANK",
    "PIPECC_SIZE",          "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "PMI_RANK",             "PMI_SIZE",             "PMIX_RANK",
    "SLURM_PROCID",         "SLURM_NTASKS"};

TEST(SocketTransport, ChoosesTheTransportFromOptionAndEnvironment) {
  ScopedEnvironment env;
  for (const char *name : kLauncherVariables)
    env.set(name, nullptr);
  EXPECT_EQ(chooseTransport("mpi"), TransportKind::Mpi);
  EXPECT_EQ(chooseTransport("socket"), TransportKind::Socket);
  EXPECT_RUNTIME_ERROR(chooseTransport("nccl"), "unknown transport 'nccl'");
  // A rank started alone: sockets (a one-rank job, no MPI).
  EXPECT_EQ(chooseTransport(""), TransportKind::Socket);
  env.set("SLURM_NTASKS", "4");
  EXPECT_EQ(chooseTransport(""), TransportKind::Mpi); // under srun
  env.set("PIPECC_RENDEZVOUS", "/tmp/x");             // out/launch's ranks
  EXPECT_EQ(chooseTransport(""), TransportKind::Socket);
  env.set("PIPECC_TRANSPORT", "mpi");
  EXPECT_EQ(chooseTransport(""), TransportKind::Mpi);
  EXPECT_EQ(chooseTransport("socket"), TransportKind::Socket);
  env.set("PIPECC_TRANSPORT", "smoke");
  EXPECT_RUNTIME_ERROR(chooseTransport(""),
                       "PIPECC_TRANSPORT: unknown transport 'smoke'");
}

TEST(SocketTransport, TakesRankAndSizeFromTheLauncher) {
  ScopedEnvironment env;
  for (const char *name : kLauncherVariables)
    env.set(name, nullptr);
  RankEnvironment alone = rankFromEnvironment();
  EXPECT_EQ(alone.rank, 0);
  EXPECT_EQ(alone.size, 1);
  env.set("SLURM_PROCID", "3");
  env.set("SLURM_NTASKS", "8");
  EXPECT_EQ(rankFromEnvironment().rank, 3);
  env.set("PMI_RANK", "1");
  env.set("PMI_SIZE", "2");
  EXPECT_EQ(rankFromEnvironment().source, "PMI_RANK");
  env.set("OMPI_COMM_WORLD_RANK", "2");
  env.set("OMPI_COMM_WORLD_SIZE", "4");
  RankEnvironment ompi = rankFromEnvironment();
  EXPECT_EQ(ompi.rank, 2);
  EXPECT_EQ(ompi.size, 4);
  env.set("PIPECC_RANK", "5");
  env.set("PIPECC_SIZE", "6");
  EXPECT_EQ(rankFromEnvironment().rank, 5);
  env.set("PIPECC_RANK", "6");
  EXPECT_RUNTIME_ERROR(rankFromEnvironment(), "PIPECC_RANK");
  env.set("PIPECC_SIZE", nullptr);
  EXPECT_RUNTIME_ERROR(rankFromEnvironment(),
                       "PIPECC_SIZE is missing beside PIPECC_RANK");
  env.set("PIPECC_RANK", nullptr);
  env.set("PIPECC_RENDEZVOUS", nullptr);
  EXPECT_RUNTIME_ERROR(socketConfigFromEnvironment(),
                       "no PIPECC_RENDEZVOUS folder");
}

} // namespace
