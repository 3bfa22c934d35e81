//===- NcclTransport.cpp - Device messages over NCCL ---------------------===//
//
// Program-channel data is device memory and moves with NCCL on a
// communication stream of its own; everything on the host (Control
// channel, barriers, the NCCL unique id) goes through the host transport.
//
// Ordering with the compute stream, with events only (the host never
// waits):
//   - starting a transfer first makes the communication stream wait for the
//     compute work queued so far (the data to send is computed; a buffer
//     to receive into is no longer read);
//   - wait() makes the compute stream wait for the transfer, so the kernels
//     queued after it (those reading a received tensor, or overwriting a
//     sent one) run after it, and nothing else does.
// NCCL matches point-to-point messages by order: both sides of a pair must
// start them in the same order, which the schedule's one global order of
// communication guarantees. The all-reduce is a gather to the group's
// lowest rank, a sum in rank order and a send back: the bits the host
// transports give (Transport.h), not NCCL's ring order.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/CudaDevice.h"

#include "CudaSupport.h"
#include "HostBackedTransport.h"

#include <nccl.h>

#include <map>
#include <vector>

namespace pipecc::rt {

namespace {

void checkNccl(ncclResult_t status, const char *what) {
  if (status != ncclSuccess && status != ncclInProgress)
    fail(what, ": ", ncclGetErrorString(status));
}

constexpr int kMaxTag = 0x3fffffff;

class NcclTransport final : public HostBackedTransport {
public:
  explicit NcclTransport(std::unique_ptr<Transport> host)
      : HostBackedTransport(std::move(host)) {
    computeStream_ = cuda::computeStream();
    cuda::checkCuda(
        cudaStreamCreateWithFlags(&commStream_, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags (communication stream)");
    ncclUniqueId id{};
    if (rank_ == 0)
      checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    host_->broadcastBootstrap(&id, sizeof id);
    checkNccl(ncclCommInitRank(&comm_, size_, id, rank_),
              "ncclCommInitRank (one rank per GPU; set "
              "PIPECC_CUDA_TRANSPORT=staged to share a GPU)");
  }

  ~NcclTransport() override {
    try {
      finalize();
    } catch (...) {
    }
  }

  const char *name() const override { return "nccl"; }

  void send(const void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    if (channel == Channel::Control)
      return host_->send(data, bytes, peer, tag, channel);
    wait(startSend(data, bytes, peer, tag));
  }

  void recv(void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    if (channel == Channel::Control)
      return host_->recv(data, bytes, peer, tag, channel);
    wait(startRecv(data, bytes, peer, tag));
  }

  void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                int sendTag, void *recvData, int64_t recvBytes, int source,
                int recvTag) override {
    checkPeerAndTag(dest, sendTag, "sendrecv", kMaxTag);
    checkPeerAndTag(source, recvTag, "sendrecv", kMaxTag);
    checkBytes(sendBytes, "sendrecv");
    checkBytes(recvBytes, "sendrecv");
    afterCompute();
    // One group: neither side's send waits for the other's receive.
    checkNccl(ncclGroupStart(), "ncclGroupStart");
    checkNccl(ncclSend(sendData, static_cast<size_t>(sendBytes), ncclUint8,
                       dest, comm_, commStream_),
              "ncclSend");
    checkNccl(ncclRecv(recvData, static_cast<size_t>(recvBytes), ncclUint8,
                       source, comm_, commStream_),
              "ncclRecv");
    checkNccl(ncclGroupEnd(), "ncclGroupEnd");
    computeAfterCommunication();
  }

  int64_t startSend(const void *data, int64_t bytes, int peer,
                    int tag) override {
    checkPeerAndTag(peer, tag, "send", kMaxTag);
    checkBytes(bytes, "send");
    afterCompute();
    checkNccl(ncclSend(data, static_cast<size_t>(bytes), ncclUint8, peer,
                       comm_, commStream_),
              "ncclSend");
    return track();
  }

  int64_t startRecv(void *data, int64_t bytes, int peer, int tag) override {
    checkPeerAndTag(peer, tag, "receive", kMaxTag);
    checkBytes(bytes, "receive");
    afterCompute();
    checkNccl(ncclRecv(data, static_cast<size_t>(bytes), ncclUint8, peer,
                       comm_, commStream_),
              "ncclRecv");
    return track();
  }

  void wait(int64_t handle) override {
    auto it = pending_.find(handle);
    if (it == pending_.end())
      fail("nccl transport: wait on unknown request ", handle);
    cuda::checkCuda(cudaStreamWaitEvent(computeStream_, it->second, 0),
                    "cudaStreamWaitEvent (compute waits for a transfer)");
    freeEvents_.push_back(it->second);
    pending_.erase(it);
  }

  void waitAll() override {
    while (!pending_.empty())
      wait(pending_.begin()->first);
  }

  size_t pendingTransfers() const override { return pending_.size(); }

  void allreduceSumF32(float *data, int64_t count,
                       const std::vector<int> &group) override {
    std::vector<int> members = groupMembers(group);
    if (members.size() <= 1 || count == 0)
      return;
    if (count < 0)
      fail("allreduce: negative count ", count);
    afterCompute();
    size_t elements = static_cast<size_t>(count);
    int root = members.front();
    if (rank_ == root) {
      void *scratch = nullptr;
      cuda::checkCuda(cudaMallocAsync(&scratch, elements * sizeof(float),
                                      commStream_),
                      "cudaMallocAsync (allreduce scratch)");
      for (size_t i = 1; i < members.size(); ++i) {
        checkNccl(ncclRecv(scratch, elements, ncclFloat32, members[i], comm_,
                           commStream_),
                  "ncclRecv (allreduce)");
        cuda::accumulateOnStream(data, static_cast<const float *>(scratch),
                                 count, commStream_);
      }
      cuda::checkCuda(cudaFreeAsync(scratch, commStream_), "cudaFreeAsync");
      checkNccl(ncclGroupStart(), "ncclGroupStart");
      for (size_t i = 1; i < members.size(); ++i)
        checkNccl(ncclSend(data, elements, ncclFloat32, members[i], comm_,
                           commStream_),
                  "ncclSend (allreduce)");
      checkNccl(ncclGroupEnd(), "ncclGroupEnd");
    } else {
      checkNccl(ncclSend(data, elements, ncclFloat32, root, comm_,
                         commStream_),
                "ncclSend (allreduce)");
      checkNccl(ncclRecv(data, elements, ncclFloat32, root, comm_,
                         commStream_),
                "ncclRecv (allreduce)");
    }
    computeAfterCommunication();
  }


  void broadcast(void *data, int64_t bytes, int root,
                 Channel channel) override {
    if (channel == Channel::Control)
      return host_->broadcast(data, bytes, root, channel);
    if (root < 0 || root >= size_)
      fail("broadcast: root ", root, " is not a rank (", size_, " ranks)");
    checkBytes(bytes, "broadcast");
    afterCompute();
    checkNccl(ncclBroadcast(data, data, static_cast<size_t>(bytes), ncclUint8,
                            root, comm_, commStream_),
              "ncclBroadcast");
    computeAfterCommunication();
  }

  void barrier(Channel channel) override {
    if (channel == Channel::Program) {
      // The program's transfers so far are part of what it waits for.
      cuda::checkCuda(cudaStreamSynchronize(commStream_),
                      "cudaStreamSynchronize (communication stream)");
    }
    host_->barrier(channel);
  }


  void setStream(void *stream) override {
    computeStream_ = static_cast<cudaStream_t>(stream);
  }

  void finalize() override {
    if (finalized_)
      return;
    finalized_ = true;
    cuda::checkCuda(cudaStreamSynchronize(commStream_),
                    "cudaStreamSynchronize (communication stream)");
    checkNccl(ncclCommDestroy(comm_), "ncclCommDestroy");
    for (auto &entry : pending_)
      freeEvents_.push_back(entry.second);
    pending_.clear();
    for (cudaEvent_t event : freeEvents_)
      cudaEventDestroy(event);
    freeEvents_.clear();
    cudaStreamDestroy(commStream_);
    host_->finalize();
  }

private:
  static void checkBytes(int64_t bytes, const char *operation) {
    if (bytes < 0)
      fail(operation, ": negative size ", bytes);
  }

  cudaEvent_t takeEvent() {
    if (!freeEvents_.empty()) {
      cudaEvent_t event = freeEvents_.back();
      freeEvents_.pop_back();
      return event;
    }
    cudaEvent_t event = nullptr;
    cuda::checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                    "cudaEventCreateWithFlags");
    return event;
  }

  /// The communication stream waits for the compute work queued so far.
  void afterCompute() {
    cudaEvent_t event = takeEvent();
    cuda::checkCuda(cudaEventRecord(event, computeStream_),
                    "cudaEventRecord (compute)");
    cuda::checkCuda(cudaStreamWaitEvent(commStream_, event, 0),
                    "cudaStreamWaitEvent (communication waits for compute)");
    freeEvents_.push_back(event); // a recorded event may be re-recorded
  }

  /// A handle whose wait() orders compute after the transfers queued so far.
  int64_t track() {
    cudaEvent_t event = takeEvent();
    cuda::checkCuda(cudaEventRecord(event, commStream_),
                    "cudaEventRecord (communication)");
    int64_t handle = nextHandle_++;
    pending_[handle] = event;
    return handle;
  }

  /// Collectives: compute reads their result, so it waits right away.
  void computeAfterCommunication() { wait(track()); }

  ncclComm_t comm_ = nullptr;
  cudaStream_t commStream_ = nullptr, computeStream_ = nullptr;
  std::map<int64_t, cudaEvent_t> pending_;
  std::vector<cudaEvent_t> freeEvents_;
  int64_t nextHandle_ = 1;
  bool finalized_ = false;
};

} // namespace

std::unique_ptr<Transport> createNcclTransport(std::unique_ptr<Transport> host) {
  return std::make_unique<NcclTransport>(std::move(host));
}

} // namespace pipecc::rt
