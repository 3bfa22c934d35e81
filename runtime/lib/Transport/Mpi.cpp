//===- Mpi.cpp - The MPI transport ----------------------------------------===//
//
// Two communicators duplicated from MPI_COMM_WORLD carry the Program and
// Control channels; each allreduce group gets a communicator of its own.
// Only this file (and the pipecc_runtime_mpi library) sees mpi.h.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Transport.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <map>
#include <mpi.h>
#include <string>

namespace pipecc::rt {

namespace {
/// Throws RuntimeError("<what>: <MPI error string>") when code != MPI_SUCCESS.
void checkMpi(int code, const char *what);

class MpiTransport final : public Transport {
public:
  MpiTransport(int *argc, char ***argv);
  ~MpiTransport() override;

  const char *name() const override { return "mpi"; }
  void send(const void *data, int64_t bytes, int peer, int tag,
            Channel channel) override;
  void recv(void *data, int64_t bytes, int peer, int tag,
            Channel channel) override;
  void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                int sendTag, void *recvData, int64_t recvBytes, int source,
                int recvTag) override;
  int64_t startSend(const void *data, int64_t bytes, int peer,
                    int tag) override;
  int64_t startRecv(void *data, int64_t bytes, int peer, int tag) override;
  void wait(int64_t handle) override;
  bool finished(int64_t handle) override;
  void waitAll() override;
  size_t pendingTransfers() const override { return pending_.size(); }
  void allreduceSumF32(float *data, int64_t count,
                       const std::vector<int> &group) override;
  void reduceSumF64(double *data, int64_t count, int root) override;
  int64_t allreduceMaxI64(int64_t value) override;
  void allreduceSumF64(double *data, int64_t count) override;
  void broadcast(void *data, int64_t bytes, int root,
                 Channel channel) override;
  void barrier(Channel channel) override;
  void finalize() override;

private:
  MPI_Comm comm(Channel channel) const;
  void checkPeer(int peer, int tag, const char *operation) const {
    checkPeerAndTag(peer, tag, operation, maxTag_);
  }
  int64_t startTransfer(void *data, int64_t bytes, int peer, int tag,
                        bool isReceive);
  MPI_Comm groupComm(const std::vector<int> &members);

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

/// A fatal error under MPI ends the whole job: MPI_Abort tears down every
/// rank, so no peer is left blocked in a receive.
void abortMpiJob(int exitCode) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, exitCode);
}

// MPI counts are ints: larger messages go as consecutive chunks, which MPI's
// non-overtaking rule keeps in order for one (source, tag, communicator).
constexpr int64_t kMaxChunkBytes = int64_t(1) << 30;

int chunkBytes(int64_t remaining) {
  return static_cast<int>(std::min(remaining, kMaxChunkBytes));
}

void checkMpi(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail(what, ": ", std::string(text, length));
}
} // namespace

MpiTransport::MpiTransport(int *argc, char ***argv) {
  setAbortHandler(abortMpiJob);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
      fail("MPI_Init_thread failed");
    ownsMpi_ = true;
  }
  // Return error codes instead of MPI's default silent abort, so that our
  // messages name what failed.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  setErrorRank(rank_);
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &programComm_), "MPI_Comm_dup");
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &controlComm_), "MPI_Comm_dup");

  int *tagUpperBound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagUpperBound, &found);
  if (found && tagUpperBound)
    maxTag_ = *tagUpperBound;

  MPI_Comm node;
  checkMpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_,
                               MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  MPI_Comm_size(node, &localSize_);
  MPI_Comm_rank(node, &localRank_);
  MPI_Comm_free(&node);
}

MpiTransport::~MpiTransport() {
  // Unwinding from an error: MPI_Finalize is collective and would wait for
  // ranks that are still running; the error handler aborts the job instead.
  if (std::uncaught_exceptions() > 0)
    return;
  finalize();
}

void MpiTransport::finalize() {
  if (finalized_)
    return;
  finalized_ = true;
  for (auto &entry : groupComms_)
    if (entry.second != MPI_COMM_NULL)
      MPI_Comm_free(&entry.second);
  groupComms_.clear();
  if (programComm_ != MPI_COMM_NULL)
    MPI_Comm_free(&programComm_);
  if (controlComm_ != MPI_COMM_NULL)
    MPI_Comm_free(&controlComm_);
  if (ownsMpi_)
    MPI_Finalize();
}

MPI_Comm MpiTransport::comm(Channel channel) const {
  return channel == Channel::Program ? programComm_ : controlComm_;
}

void MpiTransport::send(const void *data, int64_t bytes, int peer, int tag,
                     Channel channel) {
  checkPeer(peer, tag, "send");
  if (bytes < 0)
    fail("send to rank ", peer, " tag ", tag, ": negative size ", bytes);
  const char *cursor = static_cast<const char *>(data);
  int64_t remaining = bytes;
  do { // a zero-byte message is still sent: the receiver waits for it
    int chunk = chunkBytes(remaining);
    int code = MPI_Send(cursor, chunk, MPI_BYTE, peer, tag, comm(channel));
    if (code != MPI_SUCCESS)
      checkMpi(code, ("send of " + std::to_string(bytes) + " bytes to rank " +
                      std::to_string(peer) + " tag " + std::to_string(tag))
                         .c_str());
    cursor += chunk;
    remaining -= chunk;
  } while (remaining > 0);
}

void MpiTransport::recv(void *data, int64_t bytes, int peer, int tag,
                     Channel channel) {
  checkPeer(peer, tag, "recv");
  if (bytes < 0)
    fail("recv from rank ", peer, " tag ", tag, ": negative size ", bytes);
  char *cursor = static_cast<char *>(data);
  int64_t remaining = bytes;
  std::string where = "recv from rank " + std::to_string(peer) + " tag " +
                      std::to_string(tag);
  do {
    int expected = chunkBytes(remaining);
    // Probe first so that a wrong-sized message is reported with both sizes
    // instead of MPI's generic truncation error.
    MPI_Status status;
    checkMpi(MPI_Probe(peer, tag, comm(channel), &status), where.c_str());
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count != expected)
      fail(where, ": expected a message of ", expected,
           " bytes, got ", count,
           " (sender and receiver disagree on the buffer)");
    checkMpi(MPI_Recv(cursor, expected, MPI_BYTE, peer, tag, comm(channel),
                      MPI_STATUS_IGNORE),
             where.c_str());
    cursor += expected;
    remaining -= expected;
  } while (remaining > 0);
}

int64_t MpiTransport::startSend(const void *data, int64_t bytes, int peer,
                             int tag) {
  return startTransfer(const_cast<void *>(data), bytes, peer, tag,
                       /*isReceive=*/false);
}

int64_t MpiTransport::startRecv(void *data, int64_t bytes, int peer, int tag) {
  return startTransfer(data, bytes, peer, tag, /*isReceive=*/true);
}

int64_t MpiTransport::startTransfer(void *data, int64_t bytes, int peer, int tag,
                                 bool isReceive) {
  const char *what = isReceive ? "irecv" : "isend";
  std::string where = std::string(what) + (isReceive ? " from" : " to") +
                      " rank " + std::to_string(peer) + " tag " +
                      std::to_string(tag);
  checkPeer(peer, tag, what);
  if (bytes < 0)
    fail(where, ": negative size ", bytes);
  PendingTransfer transfer;
  transfer.isReceive = isReceive;
  transfer.peer = peer;
  transfer.tag = tag;
  char *cursor = static_cast<char *>(data);
  int64_t remaining = bytes;
  // Messages over 2 GiB travel as several MPI messages of at most INT_MAX.
  do {
    int chunk = chunkBytes(remaining);
    MPI_Request request;
    checkMpi(isReceive ? MPI_Irecv(cursor, chunk, MPI_BYTE, peer, tag,
                                   programComm_, &request)
                       : MPI_Isend(cursor, chunk, MPI_BYTE, peer, tag,
                                   programComm_, &request),
             where.c_str());
    transfer.requests.push_back(request);
    transfer.chunkBytes.push_back(chunk);
    cursor += chunk;
    remaining -= chunk;
  } while (remaining > 0);
  pending_[nextHandle_] = std::move(transfer);
  return nextHandle_++;
}

bool MpiTransport::finished(int64_t handle) {
  auto found = pending_.find(handle);
  if (found == pending_.end())
    return true; // wait() names the unknown handle
  // MPI_Request_get_status leaves the request to wait(), whose status
  // checks a receive's size; a failed query leaves its error to wait() too.
  for (MPI_Request request : found->second.requests) {
    int done = 0;
    if (MPI_Request_get_status(request, &done, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
      return true;
    if (!done)
      return false;
  }
  return true;
}

void MpiTransport::wait(int64_t handle) {
  auto found = pending_.find(handle);
  if (found == pending_.end())
    fail("wait on unknown or already completed transfer handle ", handle);
  PendingTransfer transfer = std::move(found->second);
  pending_.erase(found);
  std::string where =
      std::string(transfer.isReceive ? "irecv from rank " : "isend to rank ") +
      std::to_string(transfer.peer) + " tag " + std::to_string(transfer.tag);
  for (size_t i = 0; i < transfer.requests.size(); ++i) {
    MPI_Status status;
    int code = MPI_Wait(&transfer.requests[i], &status);
    if (code != MPI_SUCCESS)
      checkMpi(code, (where + " (expecting " +
                      std::to_string(transfer.chunkBytes[i]) + " bytes)")
                         .c_str());
    if (!transfer.isReceive)
      continue;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count != transfer.chunkBytes[i])
      fail(where, ": expected a message of ", transfer.chunkBytes[i],
           " bytes, got ", count,
           " (sender and receiver disagree on the buffer)");
  }
}

void MpiTransport::waitAll() {
  while (!pending_.empty())
    wait(pending_.begin()->first);
}

void MpiTransport::sendRecv(const void *sendData, int64_t sendBytes, int dest,
                         int sendTag, void *recvData, int64_t recvBytes,
                         int source, int recvTag) {
  checkPeer(dest, sendTag, "sendrecv (send)");
  checkPeer(source, recvTag, "sendrecv (recv)");
  if (sendBytes > kMaxChunkBytes || recvBytes > kMaxChunkBytes ||
      sendBytes < 0 || recvBytes < 0)
    fail("sendrecv to rank ", dest, " tag ", sendTag, ": sizes ", sendBytes,
         "/", recvBytes, " outside [0, 1 GiB]");
  MPI_Status status;
  std::string where = "sendrecv to rank " + std::to_string(dest) + " tag " +
                      std::to_string(sendTag) + ", from rank " +
                      std::to_string(source) + " tag " +
                      std::to_string(recvTag);
  checkMpi(MPI_Sendrecv(sendData, static_cast<int>(sendBytes), MPI_BYTE, dest,
                        sendTag, recvData, static_cast<int>(recvBytes),
                        MPI_BYTE, source, recvTag, programComm_, &status),
           where.c_str());
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  if (count != recvBytes)
    fail(where, ": expected a message of ", recvBytes, " bytes, got ",
         count);
}

MPI_Comm MpiTransport::groupComm(const std::vector<int> &members) {
  auto cached = groupComms_.find(members);
  if (cached != groupComms_.end())
    return cached->second;
  MPI_Group world, subgroup;
  MPI_Comm_group(programComm_, &world);
  MPI_Group_incl(world, static_cast<int>(members.size()), members.data(),
                 &subgroup);
  MPI_Comm result = MPI_COMM_NULL;
  // Collective over the group's members only, unlike MPI_Comm_create.
  int code = MPI_Comm_create_group(programComm_, subgroup, /*tag=*/0, &result);
  MPI_Group_free(&subgroup);
  MPI_Group_free(&world);
  checkMpi(code, "MPI_Comm_create_group for an allreduce group");
  MPI_Comm_set_errhandler(result, MPI_ERRORS_RETURN);
  groupComms_[members] = result;
  return result;
}

void MpiTransport::allreduceSumF32(float *data, int64_t count,
                                const std::vector<int> &group) {
  if (count < 0)
    fail("allreduce: negative element count ", count);
  std::vector<int> members = groupMembers(group);
  // A communicator of its own (also for the whole world), so its messages
  // cannot meet the generated code's tags.
  MPI_Comm communicator = groupComm(members);
  if (members.size() == 1)
    return;
  // MPI_Allreduce may add in a different order on each rank. Here the
  // group's lowest rank adds the members' values in rank order and
  // broadcasts the sum: every member ends with the same bits, so tied
  // weights stay identical copies.
  int position = 0, groupSize = 0;
  MPI_Comm_rank(communicator, &position);
  MPI_Comm_size(communicator, &groupSize);
  constexpr int kReduceTag = 0;
  constexpr int64_t kMaxChunkElements = kMaxChunkBytes / sizeof(float);
  std::string where = "allreduce of " + std::to_string(count) + " floats";
  std::vector<float> incoming;
  for (int64_t done = 0; done < count;) {
    int chunk = static_cast<int>(std::min(count - done, kMaxChunkElements));
    float *part = data + done;
    if (position == 0) {
      incoming.resize(static_cast<size_t>(chunk));
      for (int member = 1; member < groupSize; ++member) {
        checkMpi(MPI_Recv(incoming.data(), chunk, MPI_FLOAT, member,
                          kReduceTag, communicator, MPI_STATUS_IGNORE),
                 where.c_str());
        for (int i = 0; i < chunk; ++i)
          part[i] += incoming[static_cast<size_t>(i)];
      }
    } else {
      checkMpi(MPI_Send(part, chunk, MPI_FLOAT, 0, kReduceTag, communicator),
               where.c_str());
    }
    checkMpi(MPI_Bcast(part, chunk, MPI_FLOAT, 0, communicator),
             where.c_str());
    done += chunk;
  }
}

void MpiTransport::reduceSumF64(double *data, int64_t count, int root) {
  std::vector<double> result(static_cast<size_t>(count));
  checkMpi(MPI_Reduce(data, result.data(), static_cast<int>(count),
                      MPI_DOUBLE, MPI_SUM, root, controlComm_),
           "reduce");
  if (rank_ == root)
    std::copy(result.begin(), result.end(), data);
}

void MpiTransport::allreduceSumF64(double *data, int64_t count) {
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                         MPI_DOUBLE, MPI_SUM, controlComm_),
           "allreduce sum");
}

int64_t MpiTransport::allreduceMaxI64(int64_t value) {
  int64_t result = 0;
  checkMpi(MPI_Allreduce(&value, &result, 1, MPI_INT64_T, MPI_MAX,
                         controlComm_),
           "allreduce max");
  return result;
}

void MpiTransport::broadcast(void *data, int64_t bytes, int root,
                          Channel channel) {
  if (root < 0 || root >= size_)
    fail("broadcast: root rank ", root, " out of range [0, ", size_, ")");
  char *cursor = static_cast<char *>(data);
  for (int64_t remaining = bytes; remaining > 0;) {
    int chunk = chunkBytes(remaining);
    checkMpi(MPI_Bcast(cursor, chunk, MPI_BYTE, root, comm(channel)),
             ("broadcast of " + std::to_string(bytes) + " bytes from rank " +
              std::to_string(root))
                 .c_str());
    cursor += chunk;
    remaining -= chunk;
  }
}

void MpiTransport::barrier(Channel channel) {
  checkMpi(MPI_Barrier(comm(channel)), "barrier");
}

std::unique_ptr<Transport> createMpiTransport(int *argc, char ***argv) {
  return std::make_unique<MpiTransport>(argc, argv);
}

} // namespace pipecc::rt
