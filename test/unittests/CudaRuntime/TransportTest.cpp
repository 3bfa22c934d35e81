//===- TransportTest.cpp - Device tensors between ranks ------------------===//
//
// Each test forks one process per rank (CUDA must not be initialized before
// a fork, so even the "is there a GPU" question is asked in a child). A
// rank connects the socket transport, picks its GPU, wraps the socket
// transport in a device transport and moves device buffers; a failed check
// is written to <dir>/rank<k>.err. Needs a GPU (two for NCCL with two
// ranks); skips otherwise.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/CudaDevice.h"
#include "pipecc/Runtime/CUDA/Kernels.h"

#include "../Runtime/TestUtil.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace pipecc::rt;

namespace {

/// GPUs visible to a child process (0 without a driver).
int gpuCount() {
  static const int count = [] {
    pid_t pid = fork();
    if (pid == 0) {
      int n = 0;
      if (cudaGetDeviceCount(&n) != cudaSuccess)
        n = 0;
      _exit(n > 100 ? 100 : n);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
      return 0;
    return WEXITSTATUS(status);
  }();
  return count;
}

struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#define RANK_CHECK(condition)                                                  \
  do {                                                                         \
    if (!(condition))                                                          \
      throw CheckFailed(std::string("line ") + std::to_string(__LINE__) +      \
                        ": " #condition);                                      \
  } while (0)

using RankBody = std::function<void(Transport &, Device &)>;

/// Runs `body` on `size` forked ranks, each on GPU rank % count, over the
/// device transport `kind`; fails the test with every rank's complaint.
void runRanks(int size, DeviceTransportKind kind, const RankBody &body) {
  pipecc::rt::testing::TempDir dir;
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
        std::unique_ptr<Transport> host = createSocketTransport(config);
        selectCudaDevice(rank);
        std::unique_ptr<Transport> transport =
            kind == DeviceTransportKind::Nccl
                ? createNcclTransport(std::move(host))
                : createHostStagedTransport(std::move(host));
        std::unique_ptr<Device> device = createCudaDevice();
        body(*transport, *device);
        transport->finalize();
      } catch (const std::exception &e) {
        problem = e.what();
        status = 1;
      }
      if (status)
        std::ofstream(dir.file("rank" + std::to_string(rank) + ".err"))
            << problem;
      std::fflush(nullptr);
      _exit(status);
    }
    children.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int rank = 0; rank < size; ++rank) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(children[rank], &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done == 0) {
      kill(children[rank], SIGKILL);
      waitpid(children[rank], &status, 0);
      ADD_FAILURE() << "rank " << rank << " hung";
      continue;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::ifstream in(dir.file("rank" + std::to_string(rank) + ".err"));
      std::stringstream reason;
      reason << in.rdbuf();
      ADD_FAILURE() << "rank " << rank << ": " << reason.str();
    }
  }
}

std::vector<float> valuesOf(int rank, size_t n) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = static_cast<float>(rank * 1000 + i) * 0.25f;
  return values;
}

/// A device buffer holding `values`.
struct DeviceBuffer {
  DeviceBuffer(Device &device, const std::vector<float> &values)
      : device(device), bytes(values.size() * sizeof(float)) {
    data = device.allocate(bytes);
    device.copyToDevice(data, values.data(), bytes);
  }
  ~DeviceBuffer() { device.deallocate(data); }
  std::vector<float> read() {
    std::vector<float> values(bytes / sizeof(float));
    device.copyToHost(values.data(), data, bytes);
    return values;
  }
  Device &device;
  int64_t bytes;
  void *data;
};

/// Point-to-point (blocking and started), sendRecv, all-reduce and
/// broadcast of device tensors between two ranks.
void exchangeTwoRanks(Transport &transport, Device &device) {
  const size_t n = 3000;
  int rank = transport.rank(), peer = 1 - rank;
  DeviceBuffer mine(device, valuesOf(rank, n));
  DeviceBuffer received(device, std::vector<float>(n, -1.0f));
  if (rank == 0) {
    transport.send(mine.data, mine.bytes, 1, 7);
  } else {
    transport.recv(received.data, received.bytes, 0, 7);
    RANK_CHECK(received.read() == valuesOf(0, n));
  }
  // Started transfers both ways, in one order on both ranks (rank 0's
  // message first), as the schedule starts them: NCCL pairs messages by
  // order. The receive lands only after wait().
  int64_t sending = 0, receiving = 0;
  if (rank == 0) {
    sending = transport.startSend(mine.data, mine.bytes, peer, 8);
    receiving = transport.startRecv(received.data, received.bytes, peer, 8);
  } else {
    receiving = transport.startRecv(received.data, received.bytes, peer, 8);
    sending = transport.startSend(mine.data, mine.bytes, peer, 8);
  }
  transport.wait(receiving);
  transport.wait(sending);
  RANK_CHECK(received.read() == valuesOf(peer, n));
  RANK_CHECK(transport.pendingTransfers() == 0);

  DeviceBuffer swapped(device, std::vector<float>(n, 0.0f));
  transport.sendRecv(mine.data, mine.bytes, peer, 9, swapped.data,
                     swapped.bytes, peer, 9);
  RANK_CHECK(swapped.read() == valuesOf(peer, n));

  DeviceBuffer sum(device, valuesOf(rank, n));
  transport.allreduceSumF32(static_cast<float *>(sum.data), n, {});
  std::vector<float> expected = valuesOf(0, n), other = valuesOf(1, n);
  for (size_t i = 0; i < n; ++i)
    expected[i] += other[i];
  RANK_CHECK(sum.read() == expected);

  DeviceBuffer shared(device, valuesOf(rank, n));
  transport.broadcast(shared.data, shared.bytes, 1);
  RANK_CHECK(shared.read() == valuesOf(1, n));

  // Host data still travels on the Control channel.
  int64_t token = rank == 0 ? 42 : 0;
  transport.broadcast(&token, sizeof token, 0, Channel::Control);
  RANK_CHECK(token == 42);
}

TEST(CudaTransports, HostStagedMovesDeviceTensorsBetweenRanksOnOneGpu) {
  if (gpuCount() < 1)
    GTEST_SKIP() << "no CUDA device";
  runRanks(2, DeviceTransportKind::HostStaged, exchangeTwoRanks);
}

TEST(CudaTransports, NcclMovesDeviceTensorsBetweenTwoGpus) {
  if (gpuCount() < 2)
    GTEST_SKIP() << "NCCL needs a GPU per rank: fewer than two GPUs";
  runRanks(2, DeviceTransportKind::Nccl, exchangeTwoRanks);
}

TEST(CudaTransports, NcclOnOneRankBroadcastsAndReduces) {
  if (gpuCount() < 1)
    GTEST_SKIP() << "no CUDA device";
  runRanks(1, DeviceTransportKind::Nccl, [](Transport &transport,
                                            Device &device) {
    DeviceBuffer values(device, valuesOf(0, 100));
    transport.broadcast(values.data, values.bytes, 0);
    transport.allreduceSumF32(static_cast<float *>(values.data), 100, {});
    RANK_CHECK(values.read() == valuesOf(0, 100));
  });
}

} // namespace
