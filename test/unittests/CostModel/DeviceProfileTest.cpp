//===- DeviceProfileTest.cpp - Measured device profiles -------------------===//
//
// The profile file round-trips through its reader and writer; malformed
// files fail naming the member; the GEMM rate table interpolates between
// grid points by shape and picks its table by transposition; pipelines of
// several ranks take the rates measured with every core computing; products
// by a parameter take the packed-weight rates and a share of one packing.
//
//===----------------------------------------------------------------------===//

#include "pipecc/CostModel/DeviceProfile.h"
#include "pipecc/Dialect/Graph/GraphOps.h"
#include "../Graph/GraphTestUtil.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace pipecc::cost;

namespace {
/// A rate that is a power law of the shape, so that interpolation in log
/// space between grid points is exact: rate = 1e9 * m^0.5 * n^0.25 * k^0.125.
double powerLaw(double m, double n, double k, double scale = 1e9) {
  return scale * std::pow(m, 0.5) * std::pow(n, 0.25) * std::pow(k, 0.125);
}

DeviceProfile measuredProfile() {
  DeviceProfile profile{"measured.json", "a test machine", 5e10, 2e8, 3e10,
                        4e9, 7e-6, 1LL << 33};
  profile.cores = 2;
  profile.reductionBytesPerSecond = 2e10;
  profile.streamBytesPerSecond = 1.5e10;
  profile.accumulateBytesPerSecond = 1.2e10;
  profile.stageCallSeconds = 3e-9;
  profile.runtimeCallSeconds = 2e-8;
  profile.links = {{"socket", 7e-6, 4e9}, {"mpi", 2e-6, 8e9}};
  profile.machine = "test cpu";
  profile.blas = "pipecc_rt_sgemm";
  profile.gemm.m = {16, 64, 256};
  profile.gemm.n = {16, 64};
  profile.gemm.k = {16, 256};
  for (auto [ta, tb, beta, scale] :
       {std::tuple{false, false, false, 1e9}, std::tuple{false, true, false, 2e9},
        std::tuple{true, false, false, 3e9},
        std::tuple{false, false, true, 4e9}}) {
    GemmRateTable::Table table;
    table.transposeA = ta;
    table.transposeB = tb;
    table.accumulate = beta;
    for (int64_t m : profile.gemm.m)
      for (int64_t n : profile.gemm.n)
        for (int64_t k : profile.gemm.k)
          table.flopsPerSecond.push_back(powerLaw(m, n, k, scale));
    profile.gemm.tables.push_back(table);
  }
  return profile;
}

std::string errorOf(const llvm::json::Value &json) {
  llvm::Expected<DeviceProfile> parsed = parseDeviceProfile(json, "bad.json");
  if (parsed)
    return "";
  return llvm::toString(parsed.takeError());
}

TEST(DeviceProfileTest, FileRoundTrips) {
  DeviceProfile profile = measuredProfile();
  llvm::json::Value json = toJSON(profile);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "again.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->name, "again.json");
  EXPECT_EQ(read->description, profile.description);
  EXPECT_EQ(read->cores, 2);
  EXPECT_EQ(read->memoryBytes, profile.memoryBytes);
  EXPECT_DOUBLE_EQ(read->flopsPerSecond, profile.flopsPerSecond);
  EXPECT_DOUBLE_EQ(read->memoryBytesPerSecond, profile.memoryBytesPerSecond);
  EXPECT_DOUBLE_EQ(read->streamBytesPerSecond, profile.streamBytesPerSecond);
  EXPECT_DOUBLE_EQ(read->accumulateBytesPerSecond,
                   profile.accumulateBytesPerSecond);
  EXPECT_DOUBLE_EQ(read->runtimeCallSeconds, profile.runtimeCallSeconds);
  // The first link is the one the cost model prices messages with.
  EXPECT_DOUBLE_EQ(read->linkLatencySeconds, 7e-6);
  EXPECT_DOUBLE_EQ(read->linkBytesPerSecond, 4e9);
  ASSERT_EQ(read->links.size(), 2u);
  EXPECT_EQ(read->links[1].transport, "mpi");
  EXPECT_EQ(read->gemm.m, profile.gemm.m);
  ASSERT_EQ(read->gemm.tables.size(), 4u);
  EXPECT_TRUE(read->gemm.tables[2].transposeA);
  EXPECT_TRUE(read->gemm.tables[3].accumulate);
  EXPECT_EQ(read->gemm.tables[1].flopsPerSecond,
            profile.gemm.tables[1].flopsPerSecond);
  // Writing what was read gives the same file.
  EXPECT_EQ(json, toJSON(*read));
}

TEST(DeviceProfileTest, MalformedFilesNameTheMember) {
  llvm::json::Value good = toJSON(measuredProfile());
  EXPECT_EQ(errorOf(good), "");
  auto with = [&](auto edit) {
    llvm::json::Value copy = good;
    edit(*copy.getAsObject());
    return errorOf(copy);
  };
  EXPECT_EQ(with([](llvm::json::Object &o) { o["format"] = "onnx"; }),
            "member 'format': expected \"pipecc-device-profile\"");
  EXPECT_EQ(with([](llvm::json::Object &o) { o.erase("cores"); }),
            "member 'cores': expected a positive integer");
  EXPECT_EQ(with([](llvm::json::Object &o) {
              o.getObject("elementwise")->erase("bytes_per_s");
            }),
            "member 'elementwise.bytes_per_s': missing");
  EXPECT_EQ(with([](llvm::json::Object &o) {
              (*o.getObject("gemm"))["m"] = llvm::json::Array{16, 8};
            }),
            "member 'gemm.m[1]': expected a positive integer above the "
            "previous one");
  EXPECT_EQ(with([](llvm::json::Object &o) {
              auto &table =
                  *(*o.getObject("gemm")->getArray("tables"))[0].getAsObject();
              table["flops_per_s"] = llvm::json::Array{1.0};
            }),
            "member 'gemm.tables[0].flops_per_s': expected an array of 12 "
            "rates (m x n x k, k fastest)");
  EXPECT_EQ(with([](llvm::json::Object &o) {
              (*o.getArray("links"))[0].getAsObject()->erase("latency_s");
            }),
            "member 'links[0].latency_s': missing");
  EXPECT_EQ(errorOf(llvm::json::Array{}), "expected a JSON object");
}

// links[].busy_latency_s (pipecc profile's latency beside a busy process
// per core) is optional: absent in older files (0), read, written back,
// and checked like the other members.
TEST(DeviceProfileTest, BusyLatencyIsOptionalAndRoundTrips) {
  DeviceProfile profile = measuredProfile();
  EXPECT_EQ(profile.links.front().busyLatencySeconds, 0);
  llvm::json::Value without = toJSON(profile);
  EXPECT_EQ(without.getAsObject()
                ->getArray("links")
                ->front()
                .getAsObject()
                ->get("busy_latency_s"),
            nullptr);
  profile.links.front().busyLatencySeconds = 3.5e-3;
  llvm::json::Value json = toJSON(profile);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "busy.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_DOUBLE_EQ(read->links.front().busyLatencySeconds, 3.5e-3);
  EXPECT_EQ(json, toJSON(*read));
  (*(*json.getAsObject()->getArray("links"))[0].getAsObject())
      ["busy_latency_s"] = -1.0;
  EXPECT_EQ(errorOf(json),
            "member 'links[0].busy_latency_s': expected a non-negative "
            "number");
}

// links[].post (pipecc profile's core time of posting a message, by size)
// is optional: absent in older files, read, written back, and checked.
TEST(DeviceProfileTest, PostTimesAreOptionalAndRoundTrip) {
  DeviceProfile profile = measuredProfile();
  EXPECT_EQ(toJSON(profile)
                .getAsObject()
                ->getArray("links")
                ->front()
                .getAsObject()
                ->get("post"),
            nullptr);
  LinkMeasurement &link = profile.links.front();
  link.postBytes = {8, 65536};
  link.sendPostSeconds = {2e-6, 1.5e-5};
  link.lateReceivePostSeconds = {0.0, 1e-6};
  llvm::json::Value json = toJSON(profile);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "post.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_EQ(read->links.front().postBytes, link.postBytes);
  EXPECT_EQ(read->links.front().sendPostSeconds, link.sendPostSeconds);
  EXPECT_EQ(read->links.front().lateReceivePostSeconds,
            link.lateReceivePostSeconds);
  EXPECT_EQ(json, toJSON(*read));
  auto post = [&](llvm::json::Value &value) -> llvm::json::Object & {
    return *(*value.getAsObject()->getArray("links"))[0]
                .getAsObject()
                ->getObject("post");
  };
  llvm::json::Value unordered = json;
  post(unordered)["bytes"] = llvm::json::Array{8, 8};
  EXPECT_EQ(errorOf(unordered), "member 'links[0].post.bytes[1]': expected "
                                "increasing positive sizes");
  llvm::json::Value short_ = json;
  post(short_)["send_s"] = llvm::json::Array{1e-6};
  EXPECT_EQ(errorOf(short_), "member 'links[0].post.send_s': expected an "
                             "array of 2 times, one per size");
  llvm::json::Value negative = json;
  post(negative)["late_receive_s"] = llvm::json::Array{0.0, -1.0};
  EXPECT_EQ(errorOf(negative), "member 'links[0].post.late_receive_s[1]': "
                               "expected a non-negative number");
}

TEST(DeviceProfileTest, LoadNamesTheFileAndTheMember) {
  std::string error;
  EXPECT_NE(loadDeviceProfile("host-cpu", error), nullptr);
  EXPECT_EQ(loadDeviceProfile("tpu", error), nullptr);
  EXPECT_NE(error.find("unknown device profile 'tpu'"), std::string::npos);
  EXPECT_EQ(loadDeviceProfile("/nonexistent/p.json", error), nullptr);
  EXPECT_NE(error.find("device profile '/nonexistent/p.json': cannot read"),
            std::string::npos)
      << error;

  llvm::SmallString<128> path;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("profile", "json", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    llvm::json::Value json = toJSON(measuredProfile());
    json.getAsObject()->erase("links");
    out << json;
  }
  EXPECT_EQ(loadDeviceProfile(path, error), nullptr);
  EXPECT_EQ(error, "device profile '" + std::string(path) +
                       "': member 'links': expected a non-empty array");
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    out << toJSON(measuredProfile());
  }
  const DeviceProfile *loaded = loadDeviceProfile(path, error);
  ASSERT_NE(loaded, nullptr) << error;
  EXPECT_EQ(loaded->name, std::string(path));
  EXPECT_EQ(lookupDeviceProfile(path), loaded); // read once, kept
  llvm::sys::fs::remove(path);
}

TEST(DeviceProfileTest, GemmRatesInterpolateOverShape) {
  GemmRateTable gemm = measuredProfile().gemm;
  auto rateOf = [&](int64_t m, int64_t n, int64_t k, bool ta = false,
                    bool tb = false, bool acc = false) {
    return 2.0 * m * n * k / gemm.seconds(m, n, k, ta, tb, acc);
  };
  // On the grid: the measured rate.
  EXPECT_NEAR(rateOf(64, 16, 256), powerLaw(64, 16, 256), 1e-6 * powerLaw(64, 16, 256));
  // Between grid points, in every dimension at once: the power law (log
  // rate is linear in log size between points).
  for (auto [m, n, k] : {std::tuple{32, 32, 64}, std::tuple{128, 20, 100},
                         std::tuple{200, 60, 17}})
    EXPECT_NEAR(rateOf(m, n, k), powerLaw(m, n, k), 1e-9 * powerLaw(m, n, k))
        << m << "x" << n << "x" << k;
  // Above the grid: the largest point's rate.
  EXPECT_NEAR(rateOf(1024, 64, 256), powerLaw(256, 64, 256),
              1e-6 * powerLaw(256, 64, 256));
  // Below the grid: the smallest point's time (call overhead bound).
  EXPECT_NEAR(gemm.seconds(4, 16, 16, false, false),
              gemm.seconds(16, 16, 16, false, false), 1e-15);
  EXPECT_EQ(gemm.seconds(0, 16, 16, false, false), 0);
}

TEST(DeviceProfileTest, GemmTablesByTransposition) {
  GemmRateTable gemm = measuredProfile().gemm;
  double nn = gemm.seconds(64, 64, 256, false, false);
  EXPECT_NEAR(gemm.seconds(64, 64, 256, false, true), nn / 2, 1e-15);
  EXPECT_NEAR(gemm.seconds(64, 64, 256, true, false), nn / 3, 1e-15);
  EXPECT_NEAR(gemm.seconds(64, 64, 256, false, false, true), nn / 4, 1e-15);
  // Not measured: tt takes nn; tn with beta = 1 takes tn's beta = 0.
  EXPECT_NEAR(gemm.seconds(64, 64, 256, true, true), nn, 1e-15);
  EXPECT_NEAR(gemm.seconds(64, 64, 256, true, false, true), nn / 3, 1e-15);
}

/// measuredProfile() with a `gemm_shared` table: every rate `slowdown`
/// times lower (the ranks of a pipeline computing at once).
DeviceProfile sharedProfile(double slowdown) {
  DeviceProfile profile = measuredProfile();
  profile.gemmShared = profile.gemm;
  for (GemmRateTable::Table &table : profile.gemmShared.tables)
    for (double &rate : table.flopsPerSecond)
      rate /= slowdown;
  return profile;
}

TEST(DeviceProfileTest, SharedGemmTableIsOptional) {
  // Profiles written before `gemm_shared` load, and are written back
  // without it.
  DeviceProfile old = measuredProfile();
  llvm::json::Value json = toJSON(old);
  EXPECT_EQ(json.getAsObject()->get("gemm_shared"), nullptr);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "old.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  EXPECT_TRUE(read->gemmShared.empty());
  // Without a shared table every pipeline takes the one-rank rates.
  EXPECT_EQ(&read->gemmFor(4), &read->gemm);

  DeviceProfile shared = sharedProfile(1.25);
  llvm::json::Value sharedJson = toJSON(shared);
  llvm::Expected<DeviceProfile> again =
      parseDeviceProfile(sharedJson, "shared.json");
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  ASSERT_EQ(again->gemmShared.tables.size(), 4u);
  EXPECT_EQ(again->gemmShared.tables[1].flopsPerSecond,
            shared.gemmShared.tables[1].flopsPerSecond);
  EXPECT_EQ(sharedJson, toJSON(*again));

  // A malformed shared table names its own member.
  llvm::json::Value bad = sharedJson;
  (*bad.getAsObject()->getObject("gemm_shared"))["k"] =
      llvm::json::Array{16, 0};
  EXPECT_EQ(errorOf(bad), "member 'gemm_shared.k[1]': expected a positive "
                          "integer above the previous one");
  bad = sharedJson;
  (*bad.getAsObject())["gemm_shared"] = 3;
  EXPECT_EQ(errorOf(bad), "member 'gemm_shared': expected an object");
}

TEST(DeviceProfileTest, PipelinesOfSeveralRanksTakeTheSharedRates) {
  DeviceProfile profile = sharedProfile(1.25);
  // One rank computes alone; two or more compute at once on the cores.
  EXPECT_EQ(&profile.gemmFor(1), &profile.gemm);
  EXPECT_EQ(&profile.gemmFor(2), &profile.gemmShared);
  EXPECT_EQ(&profile.gemmFor(8), &profile.gemmShared);
  double alone = profile.gemmFor(1).seconds(64, 64, 256, false, true);
  EXPECT_NEAR(profile.gemmFor(4).seconds(64, 64, 256, false, true),
              1.25 * alone, 1e-12 * alone);
  // A one-core machine runs one rank at a time: the one-rank rates.
  profile.cores = 1;
  EXPECT_EQ(&profile.gemmFor(4), &profile.gemm);
}

/// measuredProfile() with weight tables (nn and nt, 3 times the plain nn
/// rates) and packing at 1e9 bytes/s.
DeviceProfile weightProfile() {
  DeviceProfile profile = measuredProfile();
  for (bool transposeB : {false, true}) {
    GemmRateTable::Table table = profile.gemm.tables.front();
    table.transposeB = transposeB;
    for (double &rate : table.flopsPerSecond)
      rate *= 3;
    profile.gemm.weightTables.push_back(table);
  }
  profile.gemm.packBytesPerSecond = 1e9;
  return profile;
}

TEST(DeviceProfileTest, WeightTablesAreOptionalAndRoundTrip) {
  // Without weight tables a product by a parameter is priced as any other
  // and packing costs nothing.
  GemmRateTable plain = measuredProfile().gemm;
  EXPECT_EQ(plain.weightSeconds(64, 64, 256, false, true),
            plain.seconds(64, 64, 256, false, true));
  EXPECT_EQ(plain.packSeconds(64, 256), 0);
  EXPECT_EQ(toJSON(measuredProfile()).getAsObject()->getObject("gemm")->get(
                "weight_tables"),
            nullptr);

  DeviceProfile profile = weightProfile();
  GemmRateTable &gemm = profile.gemm;
  double nn = gemm.seconds(64, 64, 256, false, false);
  EXPECT_NEAR(gemm.weightSeconds(64, 64, 256, false, false), nn / 3, 1e-15);
  EXPECT_NEAR(gemm.weightSeconds(64, 64, 256, false, true), nn / 3, 1e-15);
  // 4 bytes per element of the k x n parameter, once.
  EXPECT_DOUBLE_EQ(gemm.packSeconds(64, 256), 4.0 * 64 * 256 / 1e9);

  llvm::json::Value json = toJSON(profile);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "w.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  ASSERT_EQ(read->gemm.weightTables.size(), 2u);
  EXPECT_TRUE(read->gemm.weightTables[1].transposeB);
  EXPECT_DOUBLE_EQ(read->gemm.packBytesPerSecond, 1e9);
  EXPECT_EQ(json, toJSON(*read));

  llvm::json::Value bad = json;
  bad.getAsObject()->getObject("gemm")->erase("pack_bytes_per_s");
  EXPECT_EQ(errorOf(bad), "member 'gemm.pack_bytes_per_s': missing");
  bad = json;
  (*(*bad.getAsObject()->getObject("gemm")->getArray("weight_tables"))[0]
        .getAsObject())["beta"] = 2;
  EXPECT_EQ(errorOf(bad), "member 'gemm.weight_tables[0].beta': expected 0 "
                          "or 1");
}

/// measuredProfile() with the weight gradient (tn, beta 1) timed on each
/// path: the BLAS `blasScale` and the engine `engineScale` times the plain
/// tn rates, the engine 4 times faster than the BLAS on products of 256 rows
/// and more, 2 times slower below.
DeviceProfile pathProfile() {
  DeviceProfile profile = measuredProfile();
  GemmRateTable &gemm = profile.gemm;
  GemmRateTable::Table blas = gemm.tables[2], engine = gemm.tables[2];
  blas.accumulate = engine.accumulate = true;
  size_t point = 0;
  for (int64_t m : gemm.m)
    for (int64_t n : gemm.n)
      for (int64_t k : gemm.k) {
        (void)n, (void)k;
        engine.flopsPerSecond[point++] *= m >= 256 ? 4 : 0.5;
      }
  gemm.blasTables.push_back(blas);
  gemm.engineTables.push_back(engine);
  return profile;
}

TEST(DeviceProfileTest, PlainProductsRunOnTheFasterMeasuredPath) {
  // Without path tables the runtime's rule decides, at the rule's rates.
  GemmRateTable rule = measuredProfile().gemm;
  GemmRateTable::PlainChoice unmeasured =
      rule.plainChoice(256, 64, 16, true, false, true);
  EXPECT_EQ(unmeasured.path, PlainGemmPath::Rule);
  EXPECT_EQ(unmeasured.seconds, rule.seconds(256, 64, 16, true, false, true));

  GemmRateTable gemm = pathProfile().gemm;
  double tn = gemm.seconds(256, 64, 16, true, false);
  GemmRateTable::PlainChoice wide = gemm.plainChoice(256, 64, 16, true, false,
                                                     true);
  EXPECT_EQ(wide.path, PlainGemmPath::Engine);
  EXPECT_NEAR(wide.seconds, tn / 4, 1e-15);
  GemmRateTable::PlainChoice narrow =
      gemm.plainChoice(16, 64, 16, true, false, true);
  EXPECT_EQ(narrow.path, PlainGemmPath::Blas);
  EXPECT_NEAR(narrow.seconds, gemm.seconds(16, 64, 16, true, false), 1e-15);
  // beta = 0 takes the same transposition's tables (the graph's weight
  // gradient, added into the accumulator once lowered).
  EXPECT_EQ(gemm.plainChoice(256, 64, 16, true, false).path,
            PlainGemmPath::Engine);
  // Another transposition was not timed per path: the rule.
  EXPECT_EQ(gemm.plainChoice(256, 64, 16, false, true).path,
            PlainGemmPath::Rule);

  // Written and read back; a malformed table names its member.
  DeviceProfile profile = pathProfile();
  llvm::json::Value json = toJSON(profile);
  llvm::Expected<DeviceProfile> read = parseDeviceProfile(json, "p.json");
  ASSERT_TRUE(static_cast<bool>(read)) << llvm::toString(read.takeError());
  ASSERT_EQ(read->gemm.engineTables.size(), 1u);
  EXPECT_EQ(read->gemm.engineTables[0].flopsPerSecond,
            profile.gemm.engineTables[0].flopsPerSecond);
  EXPECT_EQ(json, toJSON(*read));
  (*(*json.getAsObject()->getObject("gemm")->getArray("blas_tables"))[0]
        .getAsObject())["transpose"] = "x";
  EXPECT_EQ(errorOf(json), "member 'gemm.blas_tables[0].transpose': expected "
                           "\"nn\", \"nt\", \"tn\" or \"tt\"");
}

class EstimateSecondsTest : public pipecc::graph::testing::GraphIRTest {};

TEST_F(EstimateSecondsTest, ProductsByAParameterTakeThePackedRates) {
  auto module = parse(R"mlir(
    func.func @f(%x: tensor<64x256xf32>, %a: tensor<256x64xf32>)
        -> (tensor<64x64xf32>, tensor<64x64xf32>) {
      %w = graph.param "w" trainable : tensor<64x256xf32> = dense<1.0>
      %y = graph.matmul %x, %w transpose_rhs : tensor<64x256xf32>, tensor<64x256xf32> -> tensor<64x64xf32>
      %z = graph.matmul %x, %a : tensor<64x256xf32>, tensor<256x64xf32> -> tensor<64x64xf32>
      return %y, %z : tensor<64x64xf32>, tensor<64x64xf32>
    })mlir");
  ASSERT_TRUE(module);
  llvm::SmallVector<mlir::Operation *> products;
  module->walk([&](pipecc::graph::MatMulOp op) { products.push_back(op); });
  ASSERT_EQ(products.size(), 2u);
  mlir::Operation *byWeight = products[0], *byActivation = products[1];
  EXPECT_TRUE(multipliesByParameter(byWeight));
  EXPECT_FALSE(multipliesByParameter(byActivation));

  DeviceProfile profile = weightProfile();
  const GemmRateTable &gemm = profile.gemm;
  // x W^T: the packed rate, plus a quarter of one packing of W (64 x 256)
  // in each of 4 micro-batches.
  EXPECT_NEAR(estimateSeconds(byWeight, profile, 1, 4),
              gemm.weightSeconds(64, 64, 256, false, true) +
                  gemm.packSeconds(64, 256) / 4,
              1e-15);
  // x A with A an activation: the plain product, nothing packed.
  EXPECT_NEAR(estimateSeconds(byActivation, profile, 1, 4),
              gemm.seconds(64, 64, 256, false, false), 1e-15);
  // Without weight tables both are plain products.
  DeviceProfile plain = measuredProfile();
  EXPECT_NEAR(estimateSeconds(byWeight, plain, 1, 4),
              plain.gemm.seconds(64, 64, 256, false, true), 1e-15);
}

// The optimizer's sweep moves four times the parameter bytes at the
// stream rate (parameter and gradient read, parameter written, gradient
// cleared for the next step: Device::sgdStepAndClearF32), plus a runtime
// call per tensor; without a stream rate, at the memory rate.
TEST(DeviceProfileTest, OptimizerSweepsFourStreamsOfTheParameters) {
  DeviceProfile profile = measuredProfile();
  EXPECT_DOUBLE_EQ(optimizerSeconds(3000000, 5, profile),
                   4.0 * 3e6 / 1.5e10 + 5 * 2e-8);
  profile.streamBytesPerSecond = 0;
  EXPECT_DOUBLE_EQ(optimizerSeconds(3000000, 5, profile),
                   4.0 * 3e6 / 3e10 + 5 * 2e-8);
}

TEST(DeviceProfileTest, BuiltinProfilesKeepTheRoofline) {
  const DeviceProfile *host = lookupDeviceProfile("host-cpu");
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->gemm.empty());
  EXPECT_EQ(host->cores, 0);
  pipecc::graph::OpCost cost;
  cost.flops = 4e10;
  cost.bytesRead = 1;
  EXPECT_DOUBLE_EQ(estimateSeconds(cost, *host), 1.0);
}
} // namespace
