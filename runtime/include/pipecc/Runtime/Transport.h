//===- Transport.h - Point-to-point and collective messages over MPI -*- C++ -*-===//
//
// Two communicators duplicated from MPI_COMM_WORLD keep the compiler's
// messages (whose small integer tags it picks freely) apart from the
// runtime's own traffic (loss reduction, gathering tensors on rank 0), so a
// tag can never be matched by the wrong party. All failures throw
// RuntimeError naming the peer and tag; the C API turns that into an abort.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_TRANSPORT_H
#define PIPECC_RUNTIME_TRANSPORT_H

#include <cstdint>
#include <map>
#include <mpi.h>
#include <vector>

namespace pipecc::rt {

enum class Channel {
  Program, ///< messages of the generated code
  Control, ///< the runtime's own messages
};

class Transport {
public:
  /// Initializes MPI with MPI_Init_thread(MPI_THREAD_FUNNELED) unless the
  /// caller already did (then finalize() leaves MPI running).
  Transport(int *argc, char ***argv);
  ~Transport();
  Transport(const Transport &) = delete;
  Transport &operator=(const Transport &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Number of ranks on this node (for sizing BLAS thread pools).
  int localSize() const { return localSize_; }

  /// Blocking send of `bytes` bytes to `peer` with `tag`.
  void send(const void *data, int64_t bytes, int peer, int tag,
            Channel channel = Channel::Program);
  /// Blocking receive of exactly `bytes` bytes from `peer` with `tag`;
  /// a message of any other size is an error naming the tag and peer.
  void recv(void *data, int64_t bytes, int peer, int tag,
            Channel channel = Channel::Program);
  /// Simultaneous send and receive (MPI_Sendrecv): lets two neighbours swap
  /// data without ordering their blocking calls.
  void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                int sendTag, void *recvData, int64_t recvBytes, int source,
                int recvTag);

  /// Non-blocking variants: start the transfer and return a handle for
  /// wait(). The memory must stay untouched until then. A started receive
  /// gets the same size check as recv(), at wait().
  int64_t startSend(const void *data, int64_t bytes, int peer, int tag);
  int64_t startRecv(void *data, int64_t bytes, int peer, int tag);
  void wait(int64_t handle);
  /// Waits for every started transfer.
  void waitAll();
  size_t pendingTransfers() const { return pending_.size(); }

  /// In-place sum of `count` floats over the ranks in `group` (world ranks,
  /// any order, must include this rank; empty = all ranks). Every member
  /// must call it with the same group and count. The sub-communicator is
  /// created on first use and cached.
  void allreduceSumF32(float *data, int64_t count,
                       const std::vector<int> &group);
  /// Sums `count` doubles onto `root` (Control channel); other ranks' output
  /// is unspecified.
  void reduceSumF64(double *data, int64_t count, int root);
  int64_t allreduceMaxI64(int64_t value);
  /// In-place sum over all ranks (control channel).
  void allreduceSumF64(double *data, int64_t count);
  void broadcast(void *data, int64_t bytes, int root,
                 Channel channel = Channel::Program);
  void barrier(Channel channel = Channel::Program);

  /// Frees communicators and, when init did MPI_Init, calls MPI_Finalize.
  /// Idempotent.
  void finalize();

private:
  MPI_Comm comm(Channel channel) const;
  void checkPeer(int peer, int tag, const char *operation) const;
  int64_t startTransfer(void *data, int64_t bytes, int peer, int tag,
                        bool isReceive);
  MPI_Comm groupComm(const std::vector<int> &group);

  int rank_ = 0, size_ = 1, localSize_ = 1;
  int maxTag_ = 32767;
  bool ownsMpi_ = false, finalized_ = false;
  MPI_Comm programComm_ = MPI_COMM_NULL;
  MPI_Comm controlComm_ = MPI_COMM_NULL;
  std::map<std::vector<int>, MPI_Comm> groupComms_;

  struct PendingTransfer {
    bool isReceive = false;
    int peer = 0, tag = 0;
    std::vector<MPI_Request> requests; // one per chunk
    std::vector<int> chunkBytes;
  };
  std::map<int64_t, PendingTransfer> pending_;
  int64_t nextHandle_ = 1;
};

/// Throws RuntimeError("<what>: <MPI error string>") when code != MPI_SUCCESS.
void checkMpi(int code, const char *what);

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_TRANSPORT_H
