//===- Transport.h - Messages between the ranks of a pipeline ---*- C++ -*-===//
//
// The runtime's one view of inter-rank communication. Implementations:
// MpiTransport (lib/Transport/Mpi.cpp, under mpirun/srun), SocketTransport
// (lib/Transport/Socket.cpp, ranks on one node started by out/launch without
// MPI) and the CUDA runtime's device transports. This header includes no MPI
// (nor CUDA) header: the core library does not depend on either.
//
// Two channels keep the compiler's messages (whose small integer tags it
// picks freely) apart from the runtime's own traffic (loss reduction,
// gathering tensors on rank 0), so a tag can never be matched by the wrong
// party. All failures throw RuntimeError naming the peer and tag; the C API
// turns that into one error line and the end of the job.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_TRANSPORT_H
#define PIPECC_RUNTIME_TRANSPORT_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pipecc::rt {

enum class Channel {
  Program, ///< messages of the generated code
  Control, ///< the runtime's own messages
};

class Transport {
public:
  virtual ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  /// "mpi", "socket", ...: for messages.
  virtual const char *name() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Number of ranks on this node (for sizing thread pools).
  int localSize() const { return localSize_; }
  /// This rank's index among the ranks of its node (picks its GPU).
  int localRank() const { return localRank_; }

  /// Blocking send of `bytes` bytes to `peer` with `tag`.
  virtual void send(const void *data, int64_t bytes, int peer, int tag,
                    Channel channel = Channel::Program) = 0;
  /// Blocking receive of exactly `bytes` bytes from `peer` with `tag`;
  /// a message of any other size is an error naming the tag and peer.
  /// Messages of one (peer, channel, tag) arrive in the order sent.
  virtual void recv(void *data, int64_t bytes, int peer, int tag,
                    Channel channel = Channel::Program) = 0;
  /// Simultaneous send and receive: lets two neighbours swap data without
  /// ordering their blocking calls. Each message at most 1 GiB.
  virtual void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                        int sendTag, void *recvData, int64_t recvBytes,
                        int source, int recvTag) = 0;

  /// Non-blocking variants (Program channel): start the transfer and return
  /// a handle for wait(). The memory must stay untouched until then. A
  /// started receive gets the same size check as recv(), at wait().
  virtual int64_t startSend(const void *data, int64_t bytes, int peer,
                            int tag) = 0;
  virtual int64_t startRecv(void *data, int64_t bytes, int peer,
                            int tag) = 0;
  virtual void wait(int64_t handle) = 0;
  /// Whether wait(handle) would return (or fail) at once: lets a rank use a
  /// wait for other work until its message is there. Never blocks. A
  /// transport that cannot tell without blocking says false (the default).
  virtual bool finished(int64_t handle) {
    (void)handle;
    return false;
  }
  /// Waits for every started transfer.
  virtual void waitAll() = 0;
  virtual size_t pendingTransfers() const = 0;

  /// In-place sum of `count` floats over the ranks in `group` (world ranks,
  /// any order, must include this rank; empty = all ranks). Every member
  /// must call it with the same group and count. Deterministic on every
  /// transport: the group's lowest rank adds the members' values in rank
  /// order, ((x0 + x1) + x2) + ..., and sends the sum to every member, so
  /// all members (and all transports) get the same bits.
  virtual void allreduceSumF32(float *data, int64_t count,
                               const std::vector<int> &group) = 0;
  /// Sums `count` doubles onto `root` (Control channel); other ranks'
  /// output is unspecified.
  virtual void reduceSumF64(double *data, int64_t count, int root) = 0;
  virtual int64_t allreduceMaxI64(int64_t value) = 0;
  /// In-place sum over all ranks (Control channel).
  virtual void allreduceSumF64(double *data, int64_t count) = 0;
  virtual void broadcast(void *data, int64_t bytes, int root,
                         Channel channel = Channel::Program) = 0;
  virtual void barrier(Channel channel = Channel::Program) = 0;
  /// Rank 0's `bytes` bytes to every rank, before any other traffic of a
  /// device transport (the NCCL unique id): the Control broadcast.
  virtual void broadcastBootstrap(void *data, int64_t bytes) {
    broadcast(data, bytes, /*root=*/0, Channel::Control);
  }
  /// The device stream a device transport orders its transfers on (opaque
  /// cudaStream_t); host transports ignore it.
  virtual void setStream(void *stream) { (void)stream; }

  /// Ends the transport (collective: call it on every rank after the last
  /// message). Idempotent.
  virtual void finalize() = 0;

protected:
  Transport() = default;
  /// Throws unless 0 <= peer < size, peer != rank and 0 <= tag <= maxTag.
  void checkPeerAndTag(int peer, int tag, const char *operation,
                       int maxTag) const;
  /// The sorted members of an allreduce group (empty: every rank), checked:
  /// in range, no duplicates, this rank among them.
  std::vector<int> groupMembers(const std::vector<int> &group) const;

  int rank_ = 0, size_ = 1, localSize_ = 1, localRank_ = 0;
};

/// How the ranks of a job talk; chosen at launch.
enum class TransportKind { Mpi, Socket };

/// The transport to use: `option` (--transport) when not empty, else
/// PIPECC_TRANSPORT, else socket when out/launch started the ranks itself
/// (PIPECC_RENDEZVOUS is set) or no launcher is visible, mpi under
/// mpirun/srun (their environment variables). Throws on an unknown name.
TransportKind chooseTransport(const std::string &option);

/// Rank and size from the launcher's environment: PIPECC_RANK/SIZE
/// (out/launch), OMPI_COMM_WORLD_RANK/SIZE (OpenMPI), PMI_RANK/SIZE
/// (MPICH, Intel MPI), SLURM_PROCID/NTASKS (srun), in that order; rank 0
/// of 1 when none is set. Throws on malformed values.
struct RankEnvironment {
  int rank = 0, size = 1;
  /// Which variables gave them ("PIPECC_RANK", ...; "" when none).
  std::string source;
};
RankEnvironment rankFromEnvironment();

/// How a socket transport finds its peers.
struct SocketConfig {
  int rank = 0, size = 1;
  /// Folder holding one Unix-domain socket per rank (rank<k>.sock).
  std::string rendezvous;
  /// Seconds to wait for every peer to connect.
  int bootstrapTimeoutSeconds = 60;
  /// The folder was made for this job (not given): once connected, each
  /// rank tries to remove it, and the last one succeeds.
  bool removeRendezvous = false;
};
/// From the environment: rankFromEnvironment(), PIPECC_RENDEZVOUS (when
/// size > 1; under mpirun or srun without it, a folder per launcher job in
/// $TMPDIR or /tmp, for ranks on one node), PIPECC_BOOTSTRAP_TIMEOUT
/// (seconds, default 60).
SocketConfig socketConfigFromEnvironment();

/// Connects the ranks (every pair over one Unix-domain stream socket) and
/// returns once all are connected; throws naming the missing ranks after
/// the bootstrap timeout.
std::unique_ptr<Transport> createSocketTransport(const SocketConfig &config);

/// MPI (in pipecc_runtime_mpi): initializes MPI with
/// MPI_Init_thread(MPI_THREAD_FUNNELED) unless the caller already did
/// (then finalize() leaves MPI running).
std::unique_ptr<Transport> createMpiTransport(int *argc, char ***argv);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_TRANSPORT_H
