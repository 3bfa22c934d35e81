//===- HostStagedTransport.cpp - Device messages through host memory ----===//
//
// Program-channel data is device memory: it is copied to a host buffer on
// the compute stream (after the kernels that produce it), sent with the
// host transport, and copied into device memory on arrival. Slower than
// NCCL, but any number of ranks may share one GPU, which NCCL refuses: the
// multi-rank tests on a single GPU use it. Control-channel data is host
// memory and passes straight through.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/CUDA/CudaDevice.h"

#include "CudaSupport.h"
#include "HostBackedTransport.h"

#include <map>
#include <vector>

namespace pipecc::rt {

namespace {

class HostStagedTransport final : public HostBackedTransport {
public:
  explicit HostStagedTransport(std::unique_ptr<Transport> host)
      : HostBackedTransport(std::move(host)) {
    computeStream_ = cuda::computeStream();
  }

  ~HostStagedTransport() override {
    try {
      finalize();
    } catch (...) {
    }
  }

  const char *name() const override { return "staged"; }

  void send(const void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    if (channel == Channel::Control)
      return host_->send(data, bytes, peer, tag, channel);
    std::vector<char> staged = toHost(data, bytes);
    host_->send(staged.data(), bytes, peer, tag, channel);
  }

  void recv(void *data, int64_t bytes, int peer, int tag,
            Channel channel) override {
    if (channel == Channel::Control)
      return host_->recv(data, bytes, peer, tag, channel);
    std::vector<char> staged(hostSize(bytes));
    host_->recv(staged.data(), bytes, peer, tag, channel);
    toDevice(data, staged.data(), bytes);
  }

  void sendRecv(const void *sendData, int64_t sendBytes, int dest,
                int sendTag, void *recvData, int64_t recvBytes, int source,
                int recvTag) override {
    std::vector<char> out = toHost(sendData, sendBytes);
    std::vector<char> in(hostSize(recvBytes));
    host_->sendRecv(out.data(), sendBytes, dest, sendTag, in.data(),
                    recvBytes, source, recvTag);
    toDevice(recvData, in.data(), recvBytes);
  }

  int64_t startSend(const void *data, int64_t bytes, int peer,
                    int tag) override {
    Pending pending;
    pending.staged = toHost(data, bytes);
    int64_t handle =
        host_->startSend(pending.staged.data(), bytes, peer, tag);
    pending_[handle] = std::move(pending);
    return handle;
  }

  int64_t startRecv(void *data, int64_t bytes, int peer, int tag) override {
    Pending pending;
    pending.staged.resize(hostSize(bytes));
    pending.deviceTarget = data;
    pending.bytes = bytes;
    int64_t handle =
        host_->startRecv(pending.staged.data(), bytes, peer, tag);
    pending_[handle] = std::move(pending);
    return handle;
  }

  void wait(int64_t handle) override {
    auto it = pending_.find(handle);
    if (it == pending_.end())
      fail("staged transport: wait on unknown request ", handle);
    host_->wait(handle);
    if (it->second.deviceTarget)
      toDevice(it->second.deviceTarget, it->second.staged.data(),
               it->second.bytes);
    pending_.erase(it);
  }

  bool finished(int64_t handle) override {
    return !pending_.count(handle) || host_->finished(handle);
  }

  void waitAll() override {
    while (!pending_.empty())
      wait(pending_.begin()->first);
  }

  size_t pendingTransfers() const override { return pending_.size(); }

  void allreduceSumF32(float *data, int64_t count,
                       const std::vector<int> &group) override {
    if (count < 0)
      fail("allreduce: negative count ", count);
    int64_t bytes = count * static_cast<int64_t>(sizeof(float));
    std::vector<char> staged = toHost(data, bytes);
    host_->allreduceSumF32(reinterpret_cast<float *>(staged.data()), count,
                           group);
    toDevice(data, staged.data(), bytes);
  }


  void broadcast(void *data, int64_t bytes, int root,
                 Channel channel) override {
    if (channel == Channel::Control)
      return host_->broadcast(data, bytes, root, channel);
    std::vector<char> staged = rank_ == root
                                   ? toHost(data, bytes)
                                   : std::vector<char>(hostSize(bytes));
    host_->broadcast(staged.data(), bytes, root, channel);
    if (rank_ != root)
      toDevice(data, staged.data(), bytes);
  }

  void barrier(Channel channel) override { host_->barrier(channel); }


  void setStream(void *stream) override {
    computeStream_ = static_cast<cudaStream_t>(stream);
  }

  void finalize() override {
    if (finalized_)
      return;
    finalized_ = true;
    host_->finalize();
  }

private:
  struct Pending {
    std::vector<char> staged;
    void *deviceTarget = nullptr; ///< receives only
    int64_t bytes = 0;
  };

  static size_t hostSize(int64_t bytes) {
    if (bytes < 0)
      fail("staged transport: negative message size ", bytes);
    return static_cast<size_t>(bytes);
  }

  /// The device bytes once the compute work queued so far has made them.
  std::vector<char> toHost(const void *device, int64_t bytes) {
    std::vector<char> host(hostSize(bytes));
    if (bytes > 0) {
      cuda::checkCuda(cudaMemcpyAsync(host.data(), device, host.size(),
                                      cudaMemcpyDeviceToHost,
                                      computeStream_),
                      "cudaMemcpyAsync (staging a message to the host)");
      cuda::checkCuda(cudaStreamSynchronize(computeStream_),
                      "cudaStreamSynchronize (staging a message)");
    }
    return host;
  }

  /// Copies into device memory, ordered on the compute stream; returns when
  /// the host buffer may be released.
  void toDevice(void *device, const char *host, int64_t bytes) {
    if (bytes <= 0)
      return;
    cuda::checkCuda(cudaMemcpyAsync(device, host, static_cast<size_t>(bytes),
                                    cudaMemcpyHostToDevice, computeStream_),
                    "cudaMemcpyAsync (a received message to the device)");
    cuda::checkCuda(cudaStreamSynchronize(computeStream_),
                    "cudaStreamSynchronize (a received message)");
  }

  cudaStream_t computeStream_ = nullptr;
  std::map<int64_t, Pending> pending_;
  bool finalized_ = false;
};

} // namespace

std::unique_ptr<Transport>
createHostStagedTransport(std::unique_ptr<Transport> host) {
  return std::make_unique<HostStagedTransport>(std::move(host));
}

} // namespace pipecc::rt
