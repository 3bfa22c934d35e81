//===- DeviceStagingTest.cpp - The core on a device that is not the host --===//
//
// A whole rank (runRank) on a stand-in device whose memory the host cannot
// touch: the arena is mapped PROT_NONE and opened only inside the device's
// own copy functions. Any place where the core dereferences a buffer
// instead of going through the Device crashes the test. The step writes
// its "kernel" results through the device too, as generated GPU code
// would; the saved weights and dumped gradients must equal the host
// arithmetic.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Context.h"
#include "pipecc/Runtime/Safetensors.h"
#include "TestUtil.h"

#include <cstring>
#include <map>
#include <sys/mman.h>
#include <unistd.h>

using namespace pipecc::rt;
using namespace pipecc::rt::testing;

namespace {

/// What ProtectedDevice saw of the data inputs' pinned copies.
struct PinRecord {
  std::map<const char *, int64_t> pinned;
  int pins = 0, unpins = 0, immutableCopies = 0, copiesOutsidePins = 0;
  int copiesToHost = 0;
} pinRecord;

class ProtectedDevice final : public Device {
public:
  const char *name() const override { return "protected"; }
  bool isHost() const override { return false; }
  void *allocate(int64_t bytes) override {
    size_t size = pageRound(bytes);
    void *memory =
        mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
      fail("mmap failed");
    regions_[memory] = size;
    return memory;
  }
  void deallocate(void *memory) override {
    munmap(memory, regions_.at(memory));
    regions_.erase(memory);
  }
  void copyToDevice(void *device, const void *host, int64_t bytes) override {
    open();
    std::memcpy(device, host, static_cast<size_t>(bytes));
    close();
  }
  void copyToHost(void *host, const void *device, int64_t bytes) override {
    ++pinRecord.copiesToHost;
    open();
    std::memcpy(host, device, static_cast<size_t>(bytes));
    close();
  }
  void copyOnDevice(void *dst, const void *src, int64_t bytes) override {
    open();
    std::memmove(dst, src, static_cast<size_t>(bytes));
    close();
  }
  void fill(void *device, int value, int64_t bytes) override {
    open();
    std::memset(device, value, static_cast<size_t>(bytes));
    close();
  }
  Stream createStream() override { return nullptr; }
  void destroyStream(Stream) override {}
  void synchronize(Stream) override {}
  Event createEvent() override { return nullptr; }
  void destroyEvent(Event) override {}
  void recordEvent(Event, Stream) override {}
  void waitEvent(Stream, Event) override {}
  int64_t peakMemoryBytes() const override { return 4242; }

  // Data inputs: pinned once, copied from there without waiting, unpinned
  // at the end (counted in the globals below, which outlive the device).
  void pinForCopies(const void *host, int64_t bytes) override;
  void unpinForCopies(const void *host) override;
  void copyImmutableToDevice(void *device, const void *host,
                             int64_t bytes) override;

private:
  static size_t pageRound(int64_t bytes) {
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + page - 1) /
           page * page;
  }
  void open() {
    for (auto &[memory, size] : regions_)
      mprotect(memory, size, PROT_READ | PROT_WRITE);
  }
  void close() {
    for (auto &[memory, size] : regions_)
      mprotect(memory, size, PROT_NONE);
  }
  std::map<void *, size_t> regions_;
};

ProtectedDevice *theDevice = nullptr;
std::string stepProblem;


void ProtectedDevice::pinForCopies(const void *host, int64_t bytes) {
  pinRecord.pinned[static_cast<const char *>(host)] = bytes;
  ++pinRecord.pins;
}
void ProtectedDevice::unpinForCopies(const void *host) {
  pinRecord.unpins += pinRecord.pinned.erase(static_cast<const char *>(host));
}
void ProtectedDevice::copyImmutableToDevice(void *device, const void *host,
                                            int64_t bytes) {
  ++pinRecord.immutableCopies;
  const char *at = static_cast<const char *>(host);
  bool inside = false;
  for (auto [start, size] : pinRecord.pinned)
    inside = inside || (at >= start && at + bytes <= start + size);
  if (!inside)
    ++pinRecord.copiesOutsidePins;
  copyToDevice(device, host, bytes);
}

enum Buffer { W, GradW, X, Scratch, Labels };
const int64_t kWShape[] = {3};
const int64_t kXShape[] = {2, 3};
const int64_t kLabelsShape[] = {2};
const pipecc_rt_buffer_desc kBuffers[] = {
    {"w", PIPECC_RT_ROLE_PARAMETER, PIPECC_RT_F32, 0, 1, kWShape, 12, -1, 0,
     0, -1},
    {"grad.w", PIPECC_RT_ROLE_GRADIENT, PIPECC_RT_F32, 0, 1, kWShape, 12, W, 0,
     0, -1},
    {"x", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_F32, 1, 2, kXShape, 24, -1, 0,
     0, -1},
    {"scratch", PIPECC_RT_ROLE_SCRATCH, PIPECC_RT_F32, 0, 0, nullptr, 16, -1,
     0, 0, -1},
    {"labels", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_I64, 1, 1, kLabelsShape,
     16, -1, 5, 0, -1},
};

/// Micro-batch mb's "gradient" {mb + 1, 0, -1} and loss mb + 1.5, written
/// by "kernels" (device copies), reported from device memory.
void step(pipecc_rt_context *ctx) {
  for (int mb = 0; mb < 2; ++mb) {
    pipecc_rt_load_microbatch(ctx, X, mb);
    pipecc_rt_load_microbatch(ctx, Labels, mb);
    // Read from the host array: no copy back from the device.
    int copiesBefore = pinRecord.copiesToHost;
    pipecc_rt_check_class_ids(ctx, Labels, mb, 5, 0, 0);
    if (pinRecord.copiesToHost != copiesBefore)
      stepProblem = "check_class_ids read the device copy back";
    float x[6];
    theDevice->copyToHost(x, pipecc_rt_buffer_microbatch(ctx, X, mb),
                          sizeof x);
    for (int i = 0; i < 6; ++i)
      if (x[i] != static_cast<float>(pipecc_rt_synthetic_value(
                      "x", PIPECC_RT_F32, 0, mb * 6 + i)))
        stepProblem = "micro-batch " + std::to_string(mb) + " data differs";
    auto *scratch = static_cast<float *>(pipecc_rt_buffer(ctx, Scratch));
    float values[4] = {mb + 1.0f, 0.0f, -1.0f, mb + 1.5f};
    theDevice->copyToDevice(scratch, values, sizeof values);
    pipecc_rt_accumulate_gradient(ctx, GradW, mb, scratch);
    pipecc_rt_report_loss_at(ctx, mb, scratch + 3);
  }
}

std::unique_ptr<Transport> oneRank(TransportKind, int *, char ***) {
  return createSocketTransport(SocketConfig{});
}

std::unique_ptr<Device> protectedDevice(const Transport &) {
  auto device = std::make_unique<ProtectedDevice>();
  theDevice = device.get();
  return device;
}

std::vector<float> tensor(const SafetensorsFile &file,
                          const std::string &name) {
  const TensorInfo *info = file.find(name);
  if (!info)
    return {};
  std::vector<float> values(static_cast<size_t>(info->bytes() / 4));
  std::memcpy(values.data(), file.data(*info), values.size() * 4);
  return values;
}

/// Runs the one-rank program on the protected device from weights {1, 2, 3}
/// in `dir` with `options` after the weights; returns runRank's status.
int runOnProtectedDevice(TempDir &dir, std::vector<std::string> options) {
  const float initial[3] = {1, 2, 3};
  SafetensorsWriter weights;
  weights.add("w", DType::F32, {3}, initial);
  weights.writeFile(dir.file("w.safetensors"));

  pipecc_rt_rank_program program{PIPECC_RT_ABI_VERSION, 0, 1, 2, 0, 0.5f,
                                 0.0f, 0, 5, kBuffers, step, 0, "cpu"};
  std::vector<std::string> args = {"rank0", "--synthetic", "--quiet",
                                   "--weights", dir.file("w.safetensors")};
  args.insert(args.end(), options.begin(), options.end());
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  RankSetup setup;
  setup.createTransport = oneRank;
  setup.createDevice = protectedDevice;
  return runRank(static_cast<int>(argv.size()), argv.data(), &program, setup);
}

TEST(DeviceStaging, ARankTrainsOnADeviceTheHostCannotTouch) {
  TempDir dir;
  EXPECT_EQ(runOnProtectedDevice(dir, {"--save", dir.file("saved.safetensors"),
                                       "--dump-grads",
                                       dir.file("grads.safetensors")}),
            0);
  EXPECT_EQ(stepProblem, "");

  // Gradient of the step: (g0 + g1) / M; SGD with lr 0.5.
  SafetensorsFile grads = SafetensorsFile::load(dir.file("grads.safetensors"));
  EXPECT_EQ(tensor(grads, "loss"), std::vector<float>{2.0f});
  EXPECT_EQ(tensor(grads, "grad.w"), (std::vector<float>{1.5f, 0.0f, -1.0f}));
  SafetensorsFile saved = SafetensorsFile::load(dir.file("saved.safetensors"));
  EXPECT_EQ(tensor(saved, "w"), (std::vector<float>{0.25f, 2.0f, 3.5f}));
}

// Data inputs are pinned once and unpinned at the end; every micro-batch's
// load copies from inside a pinned range through copyImmutableToDevice
// (which may return before the copy is done: CUDA no longer waits there
// for the work queued before it); class ids are checked on the host copy.
TEST(DeviceStaging, DataInputsArePinnedAndLoadedWithoutWaiting) {
  TempDir dir;
  pinRecord = PinRecord{};
  stepProblem.clear();
  EXPECT_EQ(runOnProtectedDevice(dir, {"--steps", "3"}), 0);
  EXPECT_EQ(stepProblem, "");
  EXPECT_EQ(pinRecord.pins, 2);   // x and labels
  EXPECT_EQ(pinRecord.unpins, 2); // when the rank ends
  EXPECT_EQ(pinRecord.immutableCopies, 3 * 2 * 2);
  EXPECT_EQ(pinRecord.copiesOutsidePins, 0);
}

// Two steps: the optimizer's pass (here the Device defaults: check, update,
// fill through the device) clears the accumulator, so the second step's
// gradient is again (g0 + g1) / M, not twice it.
TEST(DeviceStaging, TheOptimizerClearsGradientsForTheNextStep) {
  TempDir dir;
  EXPECT_EQ(runOnProtectedDevice(
                dir, {"--steps", "2", "--save", dir.file("saved.safetensors")}),
            0);
  SafetensorsFile saved = SafetensorsFile::load(dir.file("saved.safetensors"));
  EXPECT_EQ(tensor(saved, "w"), (std::vector<float>{-0.5f, 2.0f, 4.0f}));
}

} // namespace
