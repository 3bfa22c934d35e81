#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

using namespace pipecc;
using namespace pipecc::cost;

namespace {
constexpr llvm::StringLiteral kFormat = "pipecc-device-profile";
constexpr int64_t kVersion = 1;

/// The bracketing grid points of `value` on `axis` and the weight of the
/// upper one, in log space; clamped to the grid.
struct Bracket {
  size_t lower = 0, upper = 0;
  double weight = 0;
  /// value / the smallest grid point when below the grid, else 1.
  double belowGrid = 1;
};

Bracket bracket(const std::vector<int64_t> &axis, int64_t value) {
  Bracket b;
  if (value <= axis.front()) {
    b.belowGrid = double(std::max<int64_t>(value, 1)) / double(axis.front());
    return b;
  }
  if (value >= axis.back()) {
    b.lower = b.upper = axis.size() - 1;
    return b;
  }
  size_t upper = std::upper_bound(axis.begin(), axis.end(), value) - axis.begin();
  b.lower = upper - 1;
  b.upper = upper;
  b.weight = std::log(double(value) / double(axis[b.lower])) /
             std::log(double(axis[upper]) / double(axis[b.lower]));
  return b;
}
} // namespace

namespace {
/// The table of a transposition among `tables` (GemmRateTable::tableFor).
const GemmRateTable::Table *
tableAmong(const std::vector<GemmRateTable::Table> &tables, bool transposeA,
           bool transposeB, bool accumulate) {
  using Table = GemmRateTable::Table;
  const Table *plain = nullptr, *sameTranspose = nullptr;
  for (const Table &table : tables) {
    if (table.transposeA == transposeA && table.transposeB == transposeB) {
      if (table.accumulate == accumulate)
        return &table;
      if (!table.accumulate || !sameTranspose)
        sameTranspose = &table;
    }
    if (!table.transposeA && !table.transposeB && !table.accumulate)
      plain = &table;
  }
  if (sameTranspose)
    return sameTranspose;
  return plain ? plain : (tables.empty() ? nullptr : &tables.front());
}

/// Seconds of an m x n x k product at `table`'s rates over the grid.
double secondsAt(const GemmRateTable &grid, const GemmRateTable::Table *table,
                 int64_t m, int64_t n, int64_t k) {
  if (!table || m <= 0 || n <= 0 || k <= 0)
    return 0;
  Bracket bm = bracket(grid.m, m), bn = bracket(grid.n, n),
          bk = bracket(grid.k, k);
  double logRate = 0;
  for (int corner = 0; corner < 8; ++corner) {
    bool hiM = corner & 4, hiN = corner & 2, hiK = corner & 1;
    double weight = (hiM ? bm.weight : 1 - bm.weight) *
                    (hiN ? bn.weight : 1 - bn.weight) *
                    (hiK ? bk.weight : 1 - bk.weight);
    if (weight == 0)
      continue;
    size_t i = hiM ? bm.upper : bm.lower, j = hiN ? bn.upper : bn.lower,
           l = hiK ? bk.upper : bk.lower;
    double rate =
        table->flopsPerSecond[(i * grid.n.size() + j) * grid.k.size() + l];
    logRate += weight * std::log(rate);
  }
  // Below the grid a product takes its smallest point's time: the rate
  // falls with the work.
  double rate =
      std::exp(logRate) * bm.belowGrid * bn.belowGrid * bk.belowGrid;
  return 2.0 * double(m) * double(n) * double(k) / rate;
}
} // namespace

const GemmRateTable::Table *
GemmRateTable::tableFor(bool transposeA, bool transposeB,
                        bool accumulate) const {
  return tableAmong(tables, transposeA, transposeB, accumulate);
}

double GemmRateTable::seconds(int64_t m, int64_t n, int64_t k,
                              bool transposeA, bool transposeB,
                              bool accumulate) const {
  return secondsAt(*this, tableFor(transposeA, transposeB, accumulate), m, n,
                   k);
}

double GemmRateTable::weightSeconds(int64_t m, int64_t n, int64_t k,
                                    bool transposeA, bool transposeB) const {
  if (weightTables.empty())
    return seconds(m, n, k, transposeA, transposeB);
  return secondsAt(*this,
                   tableAmong(weightTables, transposeA, transposeB, false), m,
                   n, k);
}

GemmRateTable::PlainChoice
GemmRateTable::plainChoice(int64_t m, int64_t n, int64_t k, bool transposeA,
                           bool transposeB, bool accumulate) const {
  // Only a table of the product's own transposition decides a path.
  auto own = [&](const std::vector<Table> &among) -> const Table * {
    const Table *table = tableAmong(among, transposeA, transposeB, accumulate);
    return table && table->transposeA == transposeA &&
                   table->transposeB == transposeB
               ? table
               : nullptr;
  };
  const Table *blas = own(blasTables), *engine = own(engineTables);
  if (!blas || !engine)
    return {PlainGemmPath::Rule,
            seconds(m, n, k, transposeA, transposeB, accumulate)};
  double onBlas = secondsAt(*this, blas, m, n, k);
  double onEngine = secondsAt(*this, engine, m, n, k);
  if (onEngine < onBlas)
    return {PlainGemmPath::Engine, onEngine};
  return {PlainGemmPath::Blas, onBlas};
}

double GemmRateTable::packSeconds(int64_t n, int64_t k) const {
  if (weightTables.empty() || packBytesPerSecond <= 0 || n <= 0 || k <= 0)
    return 0;
  return 4.0 * double(n) * double(k) / packBytesPerSecond;
}

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

//===----------------------------------------------------------------------===//
// The file format
//===----------------------------------------------------------------------===//

namespace {
/// Reads members, failing with the first one at fault.
class ProfileReader {
public:
  explicit ProfileReader(const llvm::json::Object &root) : root(root) {}

  llvm::Error fail(const std::string &member, const std::string &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "member '" + member + "': " + what);
  }

  const llvm::json::Value *member(const llvm::json::Object &object,
                                  llvm::StringRef key) {
    return object.get(key);
  }

  llvm::Error positive(const llvm::json::Object &object, llvm::StringRef key,
                       const std::string &path, double &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return fail(path, "missing");
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number <= 0)
      return fail(path, "expected a positive number");
    out = *number;
    return llvm::Error::success();
  }

  llvm::Error nonNegative(const llvm::json::Object &object,
                          llvm::StringRef key, const std::string &path,
                          double &out) {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return fail(path, "missing");
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0)
      return fail(path, "expected a non-negative number");
    out = *number;
    return llvm::Error::success();
  }

  llvm::Error object(const llvm::json::Object &parent, llvm::StringRef key,
                     const std::string &path,
                     const llvm::json::Object *&out) {
    const llvm::json::Value *value = parent.get(key);
    if (!value)
      return fail(path, "missing");
    out = value->getAsObject();
    if (!out)
      return fail(path, "expected an object");
    return llvm::Error::success();
  }

  llvm::Error axis(const llvm::json::Object &gemm, llvm::StringRef member,
                   llvm::StringRef key, std::vector<int64_t> &out) {
    std::string path = (member + "." + key).str();
    const llvm::json::Value *value = gemm.get(key);
    if (!value)
      return fail(path, "missing");
    const llvm::json::Array *array = value->getAsArray();
    if (!array || array->empty())
      return fail(path, "expected a non-empty array of sizes");
    for (auto [i, entry] : llvm::enumerate(*array)) {
      std::optional<int64_t> size = entry.getAsInteger();
      if (!size || *size <= 0 || (!out.empty() && *size <= out.back()))
        return fail(path + "[" + std::to_string(i) + "]",
                    "expected a positive integer above the previous one");
      out.push_back(*size);
    }
    return llvm::Error::success();
  }

  const llvm::json::Object &root;
};

llvm::Error readTables(ProfileReader &reader, const llvm::json::Object &gemm,
                       llvm::StringRef member, llvm::StringRef key,
                       const GemmRateTable &grid,
                       std::vector<GemmRateTable::Table> &out);

/// The GEMM rate table in `gemm`, the object of the member named `member`
/// ("gemm", "gemm_shared").
llvm::Error readGemm(ProfileReader &reader, const llvm::json::Object &gemm,
                     llvm::StringRef member, GemmRateTable &table) {
  for (auto [key, axis] : {std::pair{"m", &table.m}, std::pair{"n", &table.n},
                           std::pair{"k", &table.k}})
    if (llvm::Error error = reader.axis(gemm, member, key, *axis))
      return error;
  if (llvm::Error error = readTables(reader, gemm, member, "tables", table,
                                     table.tables))
    return error;
  // Optional: profiles written before the paths were timed have neither.
  for (auto [key, tables] :
       {std::pair{"blas_tables", &table.blasTables},
        std::pair{"engine_tables", &table.engineTables}})
    if (gemm.get(key))
      if (llvm::Error error =
              readTables(reader, gemm, member, key, table, *tables))
        return error;
  // Optional: profiles written before pipecc_rt_sgemm_weight have none.
  if (!gemm.get("weight_tables"))
    return llvm::Error::success();
  if (llvm::Error error = readTables(reader, gemm, member, "weight_tables",
                                     table, table.weightTables))
    return error;
  return reader.positive(gemm, "pack_bytes_per_s",
                         (member + ".pack_bytes_per_s").str(),
                         table.packBytesPerSecond);
}

/// The array of rate tables `key` of `gemm` (the member `member`), over
/// `grid`'s axes.
llvm::Error readTables(ProfileReader &reader, const llvm::json::Object &gemm,
                       llvm::StringRef member, llvm::StringRef key,
                       const GemmRateTable &grid,
                       std::vector<GemmRateTable::Table> &out) {
  std::string tablesPath = (member + "." + key).str();
  const llvm::json::Value *tables = gemm.get(key);
  if (!tables)
    return reader.fail(tablesPath, "missing");
  const llvm::json::Array *array = tables->getAsArray();
  if (!array || array->empty())
    return reader.fail(tablesPath, "expected a non-empty array");
  size_t points = grid.m.size() * grid.n.size() * grid.k.size();
  for (auto [index, entry] : llvm::enumerate(*array)) {
    std::string path = tablesPath + "[" + std::to_string(index) + "]";
    const llvm::json::Object *object = entry.getAsObject();
    if (!object)
      return reader.fail(path, "expected an object");
    GemmRateTable::Table parsed;
    std::optional<llvm::StringRef> transpose = object->getString("transpose");
    if (!transpose || transpose->size() != 2 ||
        transpose->find_first_not_of("nt") != llvm::StringRef::npos)
      return reader.fail(path + ".transpose",
                         "expected \"nn\", \"nt\", \"tn\" or \"tt\"");
    parsed.transposeA = (*transpose)[0] == 't';
    parsed.transposeB = (*transpose)[1] == 't';
    std::optional<int64_t> beta = object->getInteger("beta");
    if (!beta || (*beta != 0 && *beta != 1))
      return reader.fail(path + ".beta", "expected 0 or 1");
    parsed.accumulate = *beta == 1;
    const llvm::json::Value *rates = object->get("flops_per_s");
    const llvm::json::Array *rateArray = rates ? rates->getAsArray() : nullptr;
    if (!rateArray || rateArray->size() != points)
      return reader.fail(path + ".flops_per_s",
                         "expected an array of " + std::to_string(points) +
                             " rates (m x n x k, k fastest)");
    for (auto [i, rate] : llvm::enumerate(*rateArray)) {
      std::optional<double> number = rate.getAsNumber();
      if (!number || !std::isfinite(*number) || *number <= 0)
        return reader.fail(path + ".flops_per_s[" + std::to_string(i) + "]",
                           "expected a positive number");
      parsed.flopsPerSecond.push_back(*number);
    }
    out.push_back(std::move(parsed));
  }
  return llvm::Error::success();
}
} // namespace

namespace {
/// A link's optional "post": {"bytes": [...], "send_s": [...],
/// "late_receive_s": [...]}, sizes increasing, one time per size.
llvm::Error readPost(ProfileReader &reader, const llvm::json::Object &link,
                     const std::string &path, LinkMeasurement &out) {
  const llvm::json::Object *post = link.getObject("post");
  if (!post)
    return reader.fail(path, "expected an object");
  const llvm::json::Array *bytes = post->getArray("bytes");
  if (!bytes || bytes->empty())
    return reader.fail(path + ".bytes",
                       "expected a non-empty array of message sizes");
  for (auto [i, value] : llvm::enumerate(*bytes)) {
    std::optional<int64_t> size = value.getAsInteger();
    if (!size || *size <= 0 ||
        (!out.postBytes.empty() && *size <= out.postBytes.back()))
      return reader.fail(path + ".bytes[" + std::to_string(i) + "]",
                         "expected increasing positive sizes");
    out.postBytes.push_back(*size);
  }
  for (auto [key, seconds] :
       {std::pair{"send_s", &out.sendPostSeconds},
        std::pair{"late_receive_s", &out.lateReceivePostSeconds}}) {
    const llvm::json::Array *times = post->getArray(key);
    std::string member = path + "." + key;
    if (!times || times->size() != bytes->size())
      return reader.fail(member, "expected an array of " +
                                     std::to_string(bytes->size()) +
                                     " times, one per size");
    for (auto [i, value] : llvm::enumerate(*times)) {
      std::optional<double> number = value.getAsNumber();
      if (!number || !std::isfinite(*number) || *number < 0)
        return reader.fail(member + "[" + std::to_string(i) + "]",
                           "expected a non-negative number");
      seconds->push_back(*number);
    }
  }
  return llvm::Error::success();
}
} // namespace

llvm::Expected<DeviceProfile>
cost::parseDeviceProfile(const llvm::json::Value &json, llvm::StringRef name) {
  const llvm::json::Object *root = json.getAsObject();
  if (!root)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "expected a JSON object");
  ProfileReader reader(*root);
  std::optional<llvm::StringRef> format = root->getString("format");
  if (!format || *format != kFormat)
    return reader.fail("format", ("expected \"" + kFormat + "\"").str());
  std::optional<int64_t> version = root->getInteger("version");
  if (!version || *version != kVersion)
    return reader.fail("version",
                       "expected " + std::to_string(kVersion) +
                           " (a profile of another pipecc: measure again "
                           "with `pipecc profile`)");

  DeviceProfile profile{name.str(), "", 0, 0, 0, 0, 0, 0};
  profile.description =
      root->getString("description").value_or("measured by pipecc profile").str();
  profile.machine = root->getString("machine").value_or("").str();
  profile.blas = root->getString("blas").value_or("").str();
  std::optional<int64_t> cores = root->getInteger("cores");
  if (!cores || *cores < 1 || *cores > 1 << 20)
    return reader.fail("cores", "expected a positive integer");
  profile.cores = static_cast<int>(*cores);
  std::optional<int64_t> memory = root->getInteger("memory_bytes");
  if (!memory || *memory <= 0)
    return reader.fail("memory_bytes", "expected a positive integer");
  profile.memoryBytes = *memory;
  if (llvm::Error error = reader.positive(*root, "flops_per_s", "flops_per_s",
                                          profile.flopsPerSecond))
    return std::move(error);
  if (llvm::Error error =
          reader.positive(*root, "transcendentals_per_s",
                          "transcendentals_per_s",
                          profile.transcendentalsPerSecond))
    return std::move(error);

  const llvm::json::Object *elementwise = nullptr, *calls = nullptr,
                           *gemm = nullptr;
  if (llvm::Error error =
          reader.object(*root, "elementwise", "elementwise", elementwise))
    return std::move(error);
  if (llvm::Error error =
          reader.positive(*elementwise, "bytes_per_s",
                          "elementwise.bytes_per_s",
                          profile.memoryBytesPerSecond))
    return std::move(error);
  if (llvm::Error error = reader.positive(
          *elementwise, "reduction_bytes_per_s",
          "elementwise.reduction_bytes_per_s",
          profile.reductionBytesPerSecond))
    return std::move(error);
  if (llvm::Error error = reader.positive(
          *elementwise, "stream_bytes_per_s", "elementwise.stream_bytes_per_s",
          profile.streamBytesPerSecond))
    return std::move(error);
  if (llvm::Error error = reader.positive(
          *elementwise, "accumulate_bytes_per_s",
          "elementwise.accumulate_bytes_per_s",
          profile.accumulateBytesPerSecond))
    return std::move(error);
  if (llvm::Error error = reader.object(*root, "calls", "calls", calls))
    return std::move(error);
  if (llvm::Error error =
          reader.nonNegative(*calls, "stage_call_s", "calls.stage_call_s",
                             profile.stageCallSeconds))
    return std::move(error);
  if (llvm::Error error =
          reader.nonNegative(*calls, "runtime_call_s", "calls.runtime_call_s",
                             profile.runtimeCallSeconds))
    return std::move(error);

  const llvm::json::Value *links = root->get("links");
  const llvm::json::Array *linkArray = links ? links->getAsArray() : nullptr;
  if (!linkArray || linkArray->empty())
    return reader.fail("links", "expected a non-empty array");
  for (auto [index, entry] : llvm::enumerate(*linkArray)) {
    std::string path = "links[" + std::to_string(index) + "]";
    const llvm::json::Object *object = entry.getAsObject();
    if (!object)
      return reader.fail(path, "expected an object");
    LinkMeasurement link;
    std::optional<llvm::StringRef> transport = object->getString("transport");
    if (!transport || transport->empty())
      return reader.fail(path + ".transport", "expected a transport name");
    link.transport = transport->str();
    if (llvm::Error error = reader.nonNegative(
            *object, "latency_s", path + ".latency_s", link.latencySeconds))
      return std::move(error);
    if (llvm::Error error = reader.positive(
            *object, "bytes_per_s", path + ".bytes_per_s", link.bytesPerSecond))
      return std::move(error);
    if (object->get("busy_latency_s"))
      if (llvm::Error error = reader.nonNegative(
              *object, "busy_latency_s", path + ".busy_latency_s",
              link.busyLatencySeconds))
        return std::move(error);
    if (object->get("post"))
      if (llvm::Error error = readPost(reader, *object, path + ".post", link))
        return std::move(error);
    profile.links.push_back(std::move(link));
  }
  profile.linkLatencySeconds = profile.links.front().latencySeconds;
  profile.linkBytesPerSecond = profile.links.front().bytesPerSecond;

  if (llvm::Error error = reader.object(*root, "gemm", "gemm", gemm))
    return std::move(error);
  if (llvm::Error error = readGemm(reader, *gemm, "gemm", profile.gemm))
    return std::move(error);
  // Optional: profiles written before it have none.
  if (root->get("gemm_shared")) {
    const llvm::json::Object *shared = nullptr;
    if (llvm::Error error =
            reader.object(*root, "gemm_shared", "gemm_shared", shared))
      return std::move(error);
    if (llvm::Error error =
            readGemm(reader, *shared, "gemm_shared", profile.gemmShared))
      return std::move(error);
  }
  return profile;
}

namespace {
llvm::json::Value tablesToJSON(const std::vector<GemmRateTable::Table> &in) {
  llvm::json::Array tables;
  for (const GemmRateTable::Table &table : in)
    tables.push_back(llvm::json::Object{
        {"transpose", std::string{table.transposeA ? 't' : 'n',
                                  table.transposeB ? 't' : 'n'}},
        {"beta", table.accumulate ? 1 : 0},
        {"flops_per_s", llvm::json::Array(table.flopsPerSecond)},
    });
  return tables;
}

llvm::json::Value gemmToJSON(const GemmRateTable &gemm) {
  llvm::json::Object object{{"m", llvm::json::Array(gemm.m)},
                            {"n", llvm::json::Array(gemm.n)},
                            {"k", llvm::json::Array(gemm.k)},
                            {"tables", tablesToJSON(gemm.tables)}};
  if (!gemm.weightTables.empty()) {
    object["weight_tables"] = tablesToJSON(gemm.weightTables);
    object["pack_bytes_per_s"] = gemm.packBytesPerSecond;
  }
  if (!gemm.blasTables.empty())
    object["blas_tables"] = tablesToJSON(gemm.blasTables);
  if (!gemm.engineTables.empty())
    object["engine_tables"] = tablesToJSON(gemm.engineTables);
  return object;
}
} // namespace

llvm::json::Value cost::toJSON(const DeviceProfile &profile) {
  llvm::json::Array links;
  for (const LinkMeasurement &link : profile.links) {
    llvm::json::Object entry{{"transport", link.transport},
                             {"latency_s", link.latencySeconds},
                             {"bytes_per_s", link.bytesPerSecond}};
    if (link.busyLatencySeconds > 0)
      entry["busy_latency_s"] = link.busyLatencySeconds;
    if (!link.postBytes.empty())
      entry["post"] = llvm::json::Object{
          {"bytes", llvm::json::Array(link.postBytes)},
          {"send_s", llvm::json::Array(link.sendPostSeconds)},
          {"late_receive_s", llvm::json::Array(link.lateReceivePostSeconds)}};
    links.push_back(std::move(entry));
  }
  llvm::json::Object root{
      {"format", kFormat},
      {"version", kVersion},
      {"description", profile.description},
      {"machine", profile.machine},
      {"blas", profile.blas},
      {"cores", profile.cores},
      {"memory_bytes", profile.memoryBytes},
      {"flops_per_s", profile.flopsPerSecond},
      {"transcendentals_per_s", profile.transcendentalsPerSecond},
      {"elementwise",
       llvm::json::Object{
           {"bytes_per_s", profile.memoryBytesPerSecond},
           {"reduction_bytes_per_s", profile.reductionBytesPerSecond},
           {"stream_bytes_per_s", profile.streamBytesPerSecond},
           {"accumulate_bytes_per_s", profile.accumulateBytesPerSecond}}},
      {"calls", llvm::json::Object{{"stage_call_s", profile.stageCallSeconds},
                                   {"runtime_call_s",
                                    profile.runtimeCallSeconds}}},
      {"links", std::move(links)},
      {"gemm", gemmToJSON(profile.gemm)},
  };
  if (!profile.gemmShared.empty())
    root["gemm_shared"] = gemmToJSON(profile.gemmShared);
  return root;
}

const DeviceProfile *cost::loadDeviceProfile(llvm::StringRef nameOrPath,
                                             std::string &error) {
  for (const DeviceProfile &profile : builtinDeviceProfiles())
    if (profile.name == nameOrPath)
      return &profile;
  // Files are read once per process; passes on several threads may ask.
  static std::mutex mutex;
  static llvm::StringMap<std::unique_ptr<DeviceProfile>> files;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = files.find(nameOrPath); it != files.end())
    return it->second.get();
  if (!nameOrPath.ends_with(".json")) {
    std::string names;
    for (const DeviceProfile &profile : builtinDeviceProfiles())
      names += (names.empty() ? "" : ", ") + profile.name;
    error = "unknown device profile '" + nameOrPath.str() + "' (built-in: " +
            names + "; or a profile file.json from `pipecc profile`)";
    return nullptr;
  }
  std::string prefix = "device profile '" + nameOrPath.str() + "': ";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    error = prefix + "cannot read it: " + buffer.getError().message();
    return nullptr;
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error = prefix + "not JSON: " + llvm::toString(json.takeError());
    return nullptr;
  }
  llvm::Expected<DeviceProfile> profile =
      parseDeviceProfile(*json, nameOrPath);
  if (!profile) {
    error = prefix + llvm::toString(profile.takeError());
    return nullptr;
  }
  auto &slot = files[nameOrPath];
  slot = std::make_unique<DeviceProfile>(std::move(*profile));
  return slot.get();
}

const DeviceProfile *cost::lookupDeviceProfile(llvm::StringRef nameOrPath) {
  std::string error;
  return loadDeviceProfile(nameOrPath, error);
}

std::optional<GemmShape> cost::gemmShapeOf(mlir::Operation *op) {
  auto matmul = llvm::dyn_cast<graph::MatMulOp>(op);
  if (!matmul)
    return std::nullopt;
  auto lhs = llvm::dyn_cast<mlir::RankedTensorType>(matmul.getLhs().getType());
  auto result = llvm::dyn_cast<mlir::RankedTensorType>(matmul.getType());
  if (!lhs || !result || !lhs.hasStaticShape() || !result.hasStaticShape() ||
      result.getRank() < 2)
    return std::nullopt;
  GemmShape shape;
  int64_t rank = result.getRank();
  shape.m = result.getDimSize(rank - 2);
  shape.n = result.getDimSize(rank - 1);
  shape.k = matmul.getTransposeLhs() ? lhs.getDimSize(lhs.getRank() - 2)
                                     : lhs.getDimSize(lhs.getRank() - 1);
  shape.batch = 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    shape.batch *= result.getDimSize(d);
  shape.transposeA = matmul.getTransposeLhs();
  shape.transposeB = matmul.getTransposeRhs();
  return shape;
}

const GemmRateTable &DeviceProfile::gemmFor(int64_t ranks) const {
  return ranks > 1 && cores > 1 && !gemmShared.empty() ? gemmShared : gemm;
}

bool cost::multipliesByParameter(mlir::Operation *op) {
  auto matmul = llvm::dyn_cast<graph::MatMulOp>(op);
  if (!matmul)
    return false;
  auto rhs = llvm::dyn_cast<mlir::RankedTensorType>(matmul.getRhs().getType());
  return rhs && rhs.getRank() == 2 &&
         matmul.getRhs().getDefiningOp<graph::ParamOp>();
}

double cost::estimateSeconds(mlir::Operation *op, const DeviceProfile &device,
                             int64_t ranks, int64_t microbatches) {
  auto costly = llvm::dyn_cast<graph::CostOpInterface>(op);
  if (!costly)
    return 0;
  const GemmRateTable &table = device.gemmFor(ranks);
  if (!table.empty())
    if (std::optional<GemmShape> gemm = gemmShapeOf(op)) {
      // A batched product runs as the runtime's batched call, never on a
      // chosen path.
      if (!multipliesByParameter(op))
        return gemm->batch > 1
                   ? double(gemm->batch) *
                         table.seconds(gemm->m, gemm->n, gemm->k,
                                       gemm->transposeA, gemm->transposeB)
                   : table
                         .plainChoice(gemm->m, gemm->n, gemm->k,
                                      gemm->transposeA, gemm->transposeB)
                         .seconds;
      // B is packed at the step's first call and reused by the others.
      return double(gemm->batch) *
                 table.weightSeconds(gemm->m, gemm->n, gemm->k,
                                     gemm->transposeA, gemm->transposeB) +
             table.packSeconds(gemm->n, gemm->k) /
                 double(std::max<int64_t>(microbatches, 1));
    }
  return estimateSeconds(costly.getCost(), device);
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

double cost::optimizerSeconds(int64_t parameterBytes, int64_t tensors,
                              const DeviceProfile &device) {
  // Parameter and gradient read, parameter written and the gradient
  // cleared for the next step (Device::sgdStepAndClearF32), once per step:
  // the sweep leaves the caches. The packed weights it repacks are priced
  // in their products (estimateSeconds' packSeconds / microbatches).
  double bandwidth = device.streamBytesPerSecond > 0
                         ? device.streamBytesPerSecond
                         : device.memoryBytesPerSecond;
  return 4.0 * double(parameterBytes) / bandwidth +
         double(tensors) * device.runtimeCallSeconds;
}
