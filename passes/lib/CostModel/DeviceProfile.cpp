#include "pipecc/CostModel/DeviceProfile.h"

#include <algorithm>

using namespace pipecc;
using namespace pipecc::cost;

llvm::ArrayRef<DeviceProfile> cost::builtinDeviceProfiles() {
  // Sustained FP32 rates. The CPU row is a modest 2-core x86 server core
  // pair with OpenBLAS; the GPU rows use FP32 (non-tensor-core) throughput,
  // HBM bandwidth and one direction of NVLink.
  static const DeviceProfile profiles[] = {
      {"host-cpu", "x86-64 CPU cores with OpenBLAS, MPI over shared memory",
       /*flops=*/4.0e10, /*transcendentals=*/1.0e9, /*memory=*/1.0e10,
       /*link=*/5.0e9, /*latency=*/5.0e-6, /*memoryBytes=*/16LL << 30},
      {"a100", "NVIDIA A100 SXM 80 GB, NVLink 3", 1.95e13, 2.4e12, 2.0e12,
       3.0e11, 1.0e-5, 80LL << 30},
      {"h100", "NVIDIA H100 SXM 80 GB, NVLink 4", 6.7e13, 8.0e12, 3.35e12,
       4.5e11, 1.0e-5, 80LL << 30},
      {"h200", "NVIDIA H200 SXM 141 GB, NVLink 4", 6.7e13, 8.0e12, 4.8e12,
       4.5e11, 1.0e-5, 141LL << 30},
  };
  return profiles;
}

const DeviceProfile *cost::lookupDeviceProfile(llvm::StringRef name) {
  for (const DeviceProfile &profile : builtinDeviceProfiles())
    if (profile.name == name)
      return &profile;
  return nullptr;
}

double cost::estimateSeconds(const graph::OpCost &cost,
                             const DeviceProfile &device) {
  double compute = cost.flops / device.flopsPerSecond;
  double memory =
      double(cost.bytesRead + cost.bytesWritten) / device.memoryBytesPerSecond;
  return std::max(compute, memory) +
         cost.transcendentals / device.transcendentalsPerSecond;
}

double cost::transferSeconds(int64_t bytes, const DeviceProfile &device) {
  return bytes == 0 ? 0.0
                    : device.linkLatencySeconds +
                          double(bytes) / device.linkBytesPerSecond;
}
