//===- DeviceProfile.h - What the cost model knows of a device --*- C++ -*-===//
//
// A device profile is data: a built-in row (sustained roofline rates), or a
// file `pipecc profile` measured on a machine (docs/cli.md, "Device profile
// files"): a table of matmul rates over shapes and transpositions, the
// element-wise bandwidth, per-call overheads, the link between two ranks and
// the number of cores. estimateSeconds() is the one rule that turns an op's
// cost into seconds on either kind.
//
//===----------------------------------------------------------------------===//

#ifndef PIPECC_COSTMODEL_DEVICEPROFILE_H
#define PIPECC_COSTMODEL_DEVICEPROFILE_H

#include "pipecc/Dialect/Graph/GraphInterfaces.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipecc::cost {

/// Where the CPU target runs a product whose B is not a parameter: where the
/// runtime's own rule sends it, or the path a measured profile found faster.
enum class PlainGemmPath { Rule, Blas, Engine };

/// Measured single-thread GEMM rates (flop/s) on a grid of shapes, one table
/// per transposition and accumulation (beta = 0 or 1). Rates between grid
/// points are interpolated multilinearly in log(rate) over log(dimension);
/// a dimension above the grid takes the rate of its largest point, one below
/// the grid takes the time of its smallest point (call overhead bound).
struct GemmRateTable {
  struct Table {
    bool transposeA = false, transposeB = false;
    /// beta = 1: the product is added into C.
    bool accumulate = false;
    /// Indexed [i][j][l] = rates[(i * n.size() + j) * k.size() + l] for
    /// m[i], n[j], k[l].
    std::vector<double> flopsPerSecond;
  };
  /// Ascending, positive.
  std::vector<int64_t> m, n, k;
  std::vector<Table> tables;
  /// Products whose B is a parameter (pipecc_rt_sgemm_weight), B already
  /// packed; empty when not measured (older profiles).
  std::vector<Table> weightTables;
  /// Packing a parameter B for weightTables' kernel, bytes of B per second
  /// (once per parameter, orientation and step); 0 with no weightTables.
  double packBytesPerSecond = 0;
  /// The same products as `tables` on one path each, whatever the runtime's
  /// rule would pick: the BLAS, and the packed engine (both operands packed
  /// per call). Empty when not measured (older profiles); where both have
  /// a product's transposition, plainChoice() picks the faster.
  std::vector<Table> blasTables, engineTables;

  bool empty() const { return tables.empty(); }
  /// The table of a transposition among `tables` (beta = 0 unless
  /// `accumulate` and one was measured; "nn" when that transposition was
  /// not measured); null when there is no table.
  const Table *tableFor(bool transposeA, bool transposeB,
                        bool accumulate) const;
  /// Seconds of one m x n x k product (2mnk flops); 0 for an empty product.
  double seconds(int64_t m, int64_t n, int64_t k, bool transposeA,
                 bool transposeB, bool accumulate = false) const;
  /// Seconds of one product whose B is a packed parameter (weightTables;
  /// seconds() when they were not measured), packing not included.
  double weightSeconds(int64_t m, int64_t n, int64_t k, bool transposeA,
                       bool transposeB) const;
  /// Seconds of packing a k x n parameter B (0 when not measured).
  double packSeconds(int64_t n, int64_t k) const;

  /// Where a product whose B is not a parameter runs, and its seconds: the
  /// faster of blasTables and engineTables where both have its
  /// transposition (the BLAS on a tie), else the runtime's rule at
  /// seconds(). The one rule of pipecc-matmul-to-blas (which passes the
  /// path to the runtime) and of the cost model.
  struct PlainChoice {
    PlainGemmPath path = PlainGemmPath::Rule;
    double seconds = 0;
  };
  PlainChoice plainChoice(int64_t m, int64_t n, int64_t k, bool transposeA,
                          bool transposeB, bool accumulate = false) const;
};

/// The link between two ranks over one transport.
struct LinkMeasurement {
  std::string transport; // "socket", "mpi"
  double latencySeconds = 0;
  double bytesPerSecond = 0;
  /// The latency while every core also runs another process (optional, 0
  /// when not measured): a message to a rank that waits on a busy core
  /// arrives when the scheduler next gives that rank the core.
  double busyLatencySeconds = 0;
  /// The core time of posting a message, at `postBytes` (increasing;
  /// empty when not measured, older profiles): `sendPostSeconds` the
  /// sender's (the socket transport writes what the socket takes before
  /// it returns), `lateReceivePostSeconds` a receive posted after its
  /// message came (copied out of the transport's queue).
  std::vector<int64_t> postBytes;
  std::vector<double> sendPostSeconds, lateReceivePostSeconds;
};

/// What the cost model knows about a device: sustained rates, not peaks.
/// Profiles are data; adding a device adds a row, not a code path.
struct DeviceProfile {
  /// The name that selects it: a built-in name, or the path of the file it
  /// was read from.
  std::string name;
  std::string description;
  double flopsPerSecond;
  double transcendentalsPerSecond;
  double memoryBytesPerSecond;
  /// The link between neighbouring pipeline ranks.
  double linkBytesPerSecond;
  double linkLatencySeconds;
  int64_t memoryBytes;

  // Measured profiles only (zero or empty in the built-in rows).
  /// Cores the ranks share; 0: every rank has its own.
  int cores = 0;
  /// Matmul rates of one rank computing while the other cores idle.
  GemmRateTable gemm;
  /// The same while every other core runs matmuls too (the ranks of a
  /// pipeline compute at once and share the caches and the memory bus);
  /// empty when not measured (older profiles, one core).
  GemmRateTable gemmShared;
  /// A reduction's read bandwidth (a sum over a buffer).
  double reductionBytesPerSecond = 0;
  /// An element-wise loop over buffers beyond the caches (the optimizer's
  /// sweep over every parameter); 0: memoryBytesPerSecond.
  double streamBytesPerSecond = 0;
  /// The runtime's addition of a micro-batch's weight gradients into the
  /// step's accumulators (read both, write one). Measured and kept in the
  /// file, not priced: stage functions accumulate in place (beta = 1).
  double accumulateBytesPerSecond = 0;
  /// Overhead of one call of a stage function by the rank program.
  double stageCallSeconds = 0;
  /// Overhead of one runtime entry point called by generated code.
  double runtimeCallSeconds = 0;
  /// Every transport measured; the first is the one linkBytesPerSecond and
  /// linkLatencySeconds describe.
  std::vector<LinkMeasurement> links;
  /// The machine and BLAS measured, for the reader.
  std::string machine, blas;

  /// The matmul rates of a pipeline of `ranks` ranks: gemmShared when two
  /// or more ranks compute at once on two or more cores and it was
  /// measured, else gemm.
  const GemmRateTable &gemmFor(int64_t ranks) const;
};

/// The built-in profiles; the first is the default (the host CPU).
llvm::ArrayRef<DeviceProfile> builtinDeviceProfiles();

/// A built-in profile by name, or the profile file at `nameOrPath` (read
/// once per process and kept); null with `error` set ("unknown device
/// profile 'x'", or the file and member at fault).
const DeviceProfile *loadDeviceProfile(llvm::StringRef nameOrPath,
                                       std::string &error);
/// Same, without the reason.
const DeviceProfile *lookupDeviceProfile(llvm::StringRef nameOrPath);

/// The profile in `json` (the file format of docs/cli.md); `name` becomes
/// its name. Fails naming the member at fault ("member 'gemm.m[2]': ...").
llvm::Expected<DeviceProfile> parseDeviceProfile(const llvm::json::Value &json,
                                                 llvm::StringRef name);
/// The file format of a measured profile (round trip of parseDeviceProfile).
llvm::json::Value toJSON(const DeviceProfile &profile);

/// Roofline time of one op execution: the slower of its arithmetic and its
/// memory traffic, plus transcendental evaluations.
double estimateSeconds(const graph::OpCost &cost, const DeviceProfile &device);

/// A contraction as the runtime runs it: `batch` GEMMs of m x k by k x n.
struct GemmShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false;
};
/// The GEMM shape of a graph.matmul with static shapes; nullopt otherwise.
std::optional<GemmShape> gemmShapeOf(mlir::Operation *op);

/// Whether `op` is a 2-D product by a parameter (a graph.matmul whose rhs
/// is a graph.param of rank 2): the CPU target runs it as
/// pipecc_rt_sgemm_weight, B packed once per step.
bool multipliesByParameter(mlir::Operation *op);

/// Seconds of one execution of `op` (a CostOpInterface op; 0 for others)
/// in a pipeline of `ranks` ranks and `microbatches` micro-batches per
/// step: on a profile with a GEMM rate table, a contraction takes its
/// measured GEMM time (gemmFor(ranks)); a product by a parameter its
/// packed-weight time plus its share of the one packing per step
/// (packSeconds / microbatches); everything else the roofline of its
/// OpCost. The one rule the partitioner and the schedule's durations use.
double estimateSeconds(mlir::Operation *op, const DeviceProfile &device,
                       int64_t ranks = 1, int64_t microbatches = 1);

/// Seconds to move `bytes` between neighbouring ranks (0 for no message).
double transferSeconds(int64_t bytes, const DeviceProfile &device);

/// Seconds of an SGD update of `parameterBytes` of float32 parameters
/// (read parameter and gradient, write the parameter, clear the gradient)
/// in `tensors` runtime calls.
double optimizerSeconds(int64_t parameterBytes, int64_t tensors,
                        const DeviceProfile &device);

} // namespace pipecc::cost

#endif // PIPECC_COSTMODEL_DEVICEPROFILE_H
