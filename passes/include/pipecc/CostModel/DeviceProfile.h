#ifndef PIPECC_COSTMODEL_DEVICEPROFILE_H
#define PIPECC_COSTMODEL_DEVICEPROFILE_H

#include "pipecc/Dialect/Graph/GraphInterfaces.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace pipecc::cost {

/// What the cost model knows about a device: sustained rates, not peaks.
/// Profiles are data; adding a device adds a row, not a code path.
struct DeviceProfile {
  llvm::StringRef name;
  llvm::StringRef description;
  double flopsPerSecond;
  double transcendentalsPerSecond;
  double memoryBytesPerSecond;
  /// The link between neighbouring pipeline ranks.
  double linkBytesPerSecond;
  double linkLatencySeconds;
  int64_t memoryBytes;
};

/// The built-in profiles; the first is the default (the host CPU).
llvm::ArrayRef<DeviceProfile> builtinDeviceProfiles();
/// Looks a profile up by name; null if unknown.
const DeviceProfile *lookupDeviceProfile(llvm::StringRef name);

/// Roofline time of one op execution: the slower of its arithmetic and its
/// memory traffic, plus transcendental evaluations.
double estimateSeconds(const graph::OpCost &cost, const DeviceProfile &device);

/// Seconds to move `bytes` between neighbouring ranks (0 for no message).
double transferSeconds(int64_t bytes, const DeviceProfile &device);

} // namespace pipecc::cost

#endif // PIPECC_COSTMODEL_DEVICEPROFILE_H
