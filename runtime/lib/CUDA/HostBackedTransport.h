//===- HostBackedTransport.h - Device transports over a host one -*- C++ -*-===//
//
// What the CUDA runtime's device transports (NCCL, host-staged) share: they
// carry the program's device-memory messages themselves and hand the
// runtime's own host-memory traffic (loss sums, the bootstrap blob) to the
// host transport they wrap, whose ranks they are.
//
//===----------------------------------------------------------------------===//
#ifndef PIPECC_RUNTIME_CUDA_HOSTBACKEDTRANSPORT_H
#define PIPECC_RUNTIME_CUDA_HOSTBACKEDTRANSPORT_H

#include "pipecc/Runtime/Transport.h"

#include <memory>

namespace pipecc::rt {

class HostBackedTransport : public Transport {
public:
  void reduceSumF64(double *data, int64_t count, int root) override {
    host_->reduceSumF64(data, count, root);
  }
  int64_t allreduceMaxI64(int64_t value) override {
    return host_->allreduceMaxI64(value);
  }
  void allreduceSumF64(double *data, int64_t count) override {
    host_->allreduceSumF64(data, count);
  }
  void broadcastBootstrap(void *data, int64_t bytes) override {
    host_->broadcastBootstrap(data, bytes);
  }

protected:
  explicit HostBackedTransport(std::unique_ptr<Transport> host)
      : host_(std::move(host)) {
    rank_ = host_->rank();
    size_ = host_->size();
    localSize_ = host_->localSize();
    localRank_ = host_->localRank();
  }

  std::unique_ptr<Transport> host_;
};

} // namespace pipecc::rt

#endif // PIPECC_RUNTIME_CUDA_HOSTBACKEDTRANSPORT_H
