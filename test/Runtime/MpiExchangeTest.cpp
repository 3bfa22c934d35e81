//===- MpiExchangeTest.cpp - A hand-written two-rank pipeline -------------===//
//
// Stands in for compiler output: a two-stage model trained through
// pipecc_rt_main, with the rank program chosen by MPI rank (the same binary
// runs as both ranks). Run it with
//   mpirun --allow-run-as-root --oversubscribe -np 2 \
//     pipecc-runtime-mpi-test --work-dir DIR [runtime options] [test options]
//
// Model, 4 micro-batches of 2 samples, x: [8, 3] f32, label: [8] i64:
//   rank 0: y = x . w            (w: "stage0.w" [3])     -> send y
//   rank 1: z = s * y            (s: "stage1.s" [1])
//           loss = mean(0.5 * (z - label)^2)             -> send dy back
// Rank 0 runs all forwards, then all backwards (GPipe order), keeping x per
// micro-batch in a per-micro-batch buffer. Each step also checks an
// allreduce over both ranks, a sendrecv swap and non-blocking messages in
// flight both ways, waited for out of order.
//
// The test writes its inputs into DIR (weights DIR/rank<k>.safetensors,
// data DIR/x.npy and DIR/label.npy), runs pipecc_rt_main, then rank 0
// recomputes the training in double precision and checks the files written
// by --dump-grads and --save against it, printing "dump check ok" / "save
// check ok".
//
// Test options (consumed here, not passed to the runtime):
//   --work-dir DIR      required
//   --bad-shape         write x.npy with 4 features instead of 3
//   --drop-weight       leave stage1.s out of rank 1's weights
//   --bad-message       rank 0 sends 3 floats where rank 1 expects 2
// and, without MPI: --print-launch-script N   prints out/launch for N ranks
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/LaunchScript.h"
#include "pipecc/Runtime/NpyReader.h"
#include "pipecc/Runtime/Runtime.h"
#include "pipecc/Runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mpi.h>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace pipecc::rt;

namespace {

constexpr int kMicrobatches = 4;
constexpr int kMicrobatchSize = 2;
constexpr int kFeatures = 3;
constexpr int kSamples = kMicrobatches * kMicrobatchSize;
constexpr int kForwardTag = 0;   // + micro-batch
constexpr int kBackwardTag = 16; // + micro-batch
constexpr int kSwapTag = 99;

const float kInitialW[kFeatures] = {0.5f, -0.25f, 0.125f};
const float kInitialS = 1.5f;

bool badMessage = false;

void check(bool condition, const char *what) {
  if (!condition)
    pipecc_rt_abort(nullptr, what);
}

/// Checks the allreduce and sendrecv paths; same on both ranks.
void checkCollectives(pipecc_rt_context *ctx, int64_t scratchId) {
  int rank = pipecc_rt_rank(ctx);
  float *scratch = static_cast<float *>(pipecc_rt_buffer(ctx, scratchId));
  for (int i = 0; i < 4; ++i)
    scratch[i] = static_cast<float>(rank + 1) * (i + 1);
  const int32_t group[] = {1, 0};
  pipecc_rt_allreduce_sum_f32(ctx, scratch, 4, group, 2);
  for (int i = 0; i < 4; ++i)
    check(scratch[i] == 3.0f * (i + 1), "allreduce gave a wrong sum");
  int32_t mine = rank * 10 + 7, theirs = -1;
  pipecc_rt_sendrecv_bytes(ctx, &mine, sizeof mine, 1 - rank, kSwapTag,
                           &theirs, sizeof theirs, 1 - rank, kSwapTag);
  check(theirs == (1 - rank) * 10 + 7, "sendrecv swapped wrong values");
  // Both ranks send 8 MiB to each other first: blocking sends would
  // deadlock (rendezvous protocol); non-blocking ones must not.
  std::vector<float> outgoing(1 << 21, static_cast<float>(rank));
  std::vector<float> incoming(outgoing.size(), -1.0f);
  int64_t sent = pipecc_rt_isend_bytes(ctx, outgoing.data(),
                                       outgoing.size() * 4, 1 - rank, 98);
  int64_t received = pipecc_rt_irecv_bytes(ctx, incoming.data(),
                                           incoming.size() * 4, 1 - rank, 98);
  pipecc_rt_wait(ctx, sent);
  pipecc_rt_wait(ctx, received);
  check(incoming.front() == 1 - rank && incoming.back() == 1 - rank,
        "non-blocking exchange delivered wrong data");
  // Several messages in flight both ways at once, of different sizes and
  // tags, waited for out of order (receives before sends, last posted
  // first); rank 1 posts its receives only after its sends, so rank 0's
  // messages arrive before their receives exist.
  constexpr int kInFlight = 3;
  const int64_t lengths[kInFlight] = {1 << 20, 5, 1 << 18};
  std::vector<std::vector<float>> out(kInFlight), in(kInFlight);
  int64_t sends[kInFlight], recvs[kInFlight];
  auto postReceives = [&] {
    for (int i = 0; i < kInFlight; ++i) {
      in[i].assign(static_cast<size_t>(lengths[i]), -1.0f);
      recvs[i] = pipecc_rt_irecv_bytes(ctx, in[i].data(), lengths[i] * 4,
                                       1 - rank, 90 + i);
    }
  };
  if (rank == 0)
    postReceives();
  for (int i = 0; i < kInFlight; ++i) {
    out[i].assign(static_cast<size_t>(lengths[i]),
                  static_cast<float>(100 * rank + i));
    sends[i] = pipecc_rt_isend_bytes(ctx, out[i].data(), lengths[i] * 4,
                                     1 - rank, 90 + i);
  }
  if (rank == 1)
    postReceives();
  for (int i = kInFlight - 1; i >= 0; --i)
    pipecc_rt_wait(ctx, recvs[i]);
  for (int i = kInFlight - 1; i >= 0; --i)
    pipecc_rt_wait(ctx, sends[i]);
  for (int i = 0; i < kInFlight; ++i)
    check(in[i].front() == 100 * (1 - rank) + i &&
              in[i].back() == 100 * (1 - rank) + i,
          "messages in flight both ways delivered wrong data");
  if (rank == 0 && pipecc_rt_step_index(ctx) == 0)
    std::printf("collectives ok\n");
}

//===--- rank 0 -----------------------------------------------------------===//

enum Rank0Buffer { X0, W0, GradW0, Y0, DY0, Scratch0, NumRank0Buffers };
const int64_t kXShape[] = {kMicrobatchSize, kFeatures};
const int64_t kWShape[] = {kFeatures};
const int64_t kYShape[] = {kMicrobatchSize};
const pipecc_rt_buffer_desc kRank0Buffers[] = {
    {"x", PIPECC_RT_ROLE_DATA_INPUT, PIPECC_RT_F32, 1, 2, kXShape,
     kMicrobatchSize * kFeatures * 4, -1, 0, 0, -1},
    {"stage0.w", PIPECC_RT_ROLE_PARAMETER, PIPECC_RT_F32, 0, 1, kWShape,
     kFeatures * 4, -1, 0, 0, -1},
    {"grad.stage0.w", PIPECC_RT_ROLE_GRADIENT, PIPECC_RT_F32, 0, 1, kWShape,
     kFeatures * 4, W0, 0, 0, -1},
    {"y", PIPECC_RT_ROLE_ACTIVATION, PIPECC_RT_F32, 0, 1, kYShape,
     kMicrobatchSize * 4, -1, 0, 0, -1},
    {"dy", PIPECC_RT_ROLE_ACTIVATION, PIPECC_RT_F32, 0, 1, kYShape,
     kMicrobatchSize * 4, -1, 0, 0, -1},
    {"scratch", PIPECC_RT_ROLE_SCRATCH, PIPECC_RT_F32, 0, 0, nullptr, 16, -1,
     0, 0, -1},
};

void rank0Step(pipecc_rt_context *ctx) {
  auto *w = static_cast<float *>(pipecc_rt_buffer(ctx, W0));
  auto *gradW = static_cast<float *>(pipecc_rt_buffer(ctx, GradW0));
  auto *y = static_cast<float *>(pipecc_rt_buffer(ctx, Y0));
  auto *dy = static_cast<float *>(pipecc_rt_buffer(ctx, DY0));
  for (int m = 0; m < kMicrobatches; ++m) {
    pipecc_rt_load_microbatch(ctx, X0, m);
    auto *x = static_cast<float *>(pipecc_rt_buffer_microbatch(ctx, X0, m));
    // y[2x1] = x[2x3] . w[3x1]
    pipecc_rt_sgemm(0, 0, kMicrobatchSize, 1, kFeatures, 1.0f, x, kFeatures,
                    w, 1, 0.0f, y, 1);
    if (badMessage) {
      float wrong[3] = {0, 0, 0};
      pipecc_rt_send_bytes(ctx, wrong, sizeof wrong, 1, kForwardTag + m);
    } else {
      pipecc_rt_send(ctx, Y0, m, 1, kForwardTag + m);
    }
  }
  for (int m = 0; m < kMicrobatches; ++m) {
    pipecc_rt_recv(ctx, DY0, m, 1, kBackwardTag + m);
    auto *x = static_cast<float *>(pipecc_rt_buffer_microbatch(ctx, X0, m));
    // gradW[1x3] += dy^T[1x2] . x[2x3]
    pipecc_rt_sgemm(1, 0, 1, kFeatures, kMicrobatchSize, 1.0f, dy, 1, x,
                    kFeatures, 1.0f, gradW, kFeatures);
  }
  checkCollectives(ctx, Scratch0);
}

//===--- rank 1 (written in C, see Rank1Stage.c) --------------------------===//

} // namespace

extern "C" {
extern const pipecc_rt_buffer_desc pipecc_test_rank1_buffers[];
extern const int64_t pipecc_test_rank1_num_buffers;
void pipecc_test_rank1_step(pipecc_rt_context *ctx);
void pipecc_test_check_collectives(pipecc_rt_context *ctx, int64_t scratch) {
  checkCollectives(ctx, scratch);
}
}

namespace {

pipecc_rt_rank_program makeProgram(int rank) {
  pipecc_rt_rank_program program{};
  program.abi_version = PIPECC_RT_ABI_VERSION;
  program.rank = rank;
  program.num_ranks = 2;
  program.microbatches = kMicrobatches;
  program.microbatch_size = 0; // derived from the data inputs
  program.default_lr = 0.05f;
  program.gradient_scale = 0; // 1 / microbatches
  program.flags = 0;
  if (rank == 0) {
    program.num_buffers = NumRank0Buffers;
    program.buffers = kRank0Buffers;
    program.step = rank0Step;
  } else {
    program.num_buffers = pipecc_test_rank1_num_buffers;
    program.buffers = pipecc_test_rank1_buffers;
    program.step = pipecc_test_rank1_step;
  }
  return program;
}

//===--- inputs and the double-precision reference ------------------------===//

std::vector<float> makeX() {
  std::vector<float> x(kSamples * kFeatures);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((static_cast<int>(i * 7) % 11) - 5) / 4.0f;
  return x;
}

std::vector<int64_t> makeLabels() {
  std::vector<int64_t> labels(kSamples);
  for (int i = 0; i < kSamples; ++i)
    labels[i] = i % 3;
  return labels;
}

struct Reference {
  double w[kFeatures], s;
  double loss = 0, gradW[kFeatures] = {0, 0, 0}, gradS = 0;
};

/// One step on the whole batch: the mean over micro-batches of the mean
/// over samples equals the mean over all samples.
void referenceStep(Reference &ref, const std::vector<float> &x,
                   const std::vector<int64_t> &labels, double lr) {
  ref.loss = 0;
  ref.gradS = 0;
  for (double &g : ref.gradW)
    g = 0;
  for (int i = 0; i < kSamples; ++i) {
    double y = 0;
    for (int j = 0; j < kFeatures; ++j)
      y += x[i * kFeatures + j] * ref.w[j];
    double r = ref.s * y - static_cast<double>(labels[i]);
    ref.loss += 0.5 * r * r / kSamples;
    ref.gradS += r * y / kSamples;
    for (int j = 0; j < kFeatures; ++j)
      ref.gradW[j] += r * ref.s * x[i * kFeatures + j] / kSamples;
  }
  for (int j = 0; j < kFeatures; ++j)
    ref.w[j] -= lr * ref.gradW[j];
  ref.s -= lr * ref.gradS;
}

bool close(double actual, double expected) {
  return std::fabs(actual - expected) <= 1e-5 + 1e-4 * std::fabs(expected);
}

bool checkTensor(const SafetensorsFile &file, const std::string &name,
                 const double *expected, int count) {
  const TensorInfo *tensor = file.find(name);
  if (!tensor || tensor->bytes() != count * 4) {
    std::printf("missing or misshapen tensor %s\n", name.c_str());
    return false;
  }
  const float *data = reinterpret_cast<const float *>(file.data(*tensor));
  bool ok = true;
  for (int i = 0; i < count; ++i)
    if (!close(data[i], expected[i])) {
      std::printf("%s[%d] = %.7f, expected %.7f\n", name.c_str(), i, data[i],
                  expected[i]);
      ok = false;
    }
  return ok;
}

std::string optionValue(const std::vector<std::string> &args,
                        const std::string &name, const std::string &fallback) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size())
      return args[i + 1];
    if (args[i].rfind(name + "=", 0) == 0)
      return args[i].substr(name.size() + 1);
  }
  return fallback;
}

} // namespace

int main(int argc, char **argv) {
  // Lets lit tests render out/launch the way the compiler does.
  if (argc == 3 && std::string(argv[1]) == "--print-launch-script") {
    std::fputs(renderLaunchScript(std::atoi(argv[2])).c_str(), stdout);
    return 0;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  std::string workDir;
  bool badShape = false, dropWeight = false;
  std::vector<std::string> runtimeArgs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--work-dir" && i + 1 < argc)
      workDir = argv[++i];
    else if (arg == "--bad-shape")
      badShape = true;
    else if (arg == "--drop-weight")
      dropWeight = true;
    else if (arg == "--bad-message")
      badMessage = true;
    else
      runtimeArgs.push_back(arg);
  }
  if (workDir.empty()) {
    std::fprintf(stderr, "usage: %s --work-dir DIR [options]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  mkdir(workDir.c_str(), 0755);

  std::vector<float> x = makeX();
  std::vector<int64_t> labels = makeLabels();
  SafetensorsWriter weights;
  if (rank == 0) {
    weights.add("stage0.w", DType::F32, {kFeatures}, kInitialW);
    if (badShape) {
      std::vector<float> wide(kSamples * 4, 0.0f);
      writeNpy(workDir + "/x.npy", DType::F32, {kSamples, 4}, wide.data());
    } else {
      writeNpy(workDir + "/x.npy", DType::F32, {kSamples, kFeatures},
               x.data());
    }
  } else {
    if (!dropWeight)
      weights.add("stage1.s", DType::F32, {1}, &kInitialS);
    writeNpy(workDir + "/label.npy", DType::I64, {kSamples}, labels.data());
  }
  weights.writeFile(workDir + "/rank" + std::to_string(rank) +
                    ".safetensors");
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<std::string> args = {argv[0], "--weights",
                                   workDir + "/rank{rank}.safetensors"};
  args.insert(args.end(), runtimeArgs.begin(), runtimeArgs.end());
  std::vector<char *> cargs;
  for (std::string &arg : args)
    cargs.push_back(arg.data());
  cargs.push_back(nullptr);

  pipecc_rt_rank_program program = makeProgram(rank);
  int status = pipecc_rt_main(static_cast<int>(args.size()), cargs.data(),
                              &program);

  if (rank == 0 && status == 0) {
    int steps = std::stoi(optionValue(runtimeArgs, "--steps", "1"));
    double lr = std::stod(optionValue(runtimeArgs, "--lr", "0.05"));
    std::string dumpPath = optionValue(runtimeArgs, "--dump-grads", "");
    std::string savePath = optionValue(runtimeArgs, "--save", "");
    bool synthetic = optionValue(runtimeArgs, "--synthetic", "") != "" ||
                     std::find(runtimeArgs.begin(), runtimeArgs.end(),
                               "--synthetic") != runtimeArgs.end();
    Reference ref;
    for (int j = 0; j < kFeatures; ++j)
      ref.w[j] = kInitialW[j];
    ref.s = kInitialS;
    if (synthetic) {
      // The runtime's documented synthetic data, recomputed from its formula.
      for (int i = 0; i < kSamples * kFeatures; ++i)
        x[i] = static_cast<float>(
            pipecc_rt_synthetic_value("x", PIPECC_RT_F32, 0, i));
      for (int i = 0; i < kSamples; ++i)
        labels[i] = static_cast<int64_t>(
            pipecc_rt_synthetic_value("label", PIPECC_RT_I64, 3, i));
    }
    for (int step = 0; step < steps; ++step) {
      referenceStep(ref, x, labels, lr);
      if (step == 0 && !dumpPath.empty()) {
        SafetensorsFile dump = SafetensorsFile::load(dumpPath);
        bool ok = checkTensor(dump, "loss", &ref.loss, 1) &&
                  checkTensor(dump, "grad.stage0.w", ref.gradW, kFeatures) &&
                  checkTensor(dump, "grad.stage1.s", &ref.gradS, 1);
        std::printf("dump check %s (%zu tensors)\n", ok ? "ok" : "FAILED",
                    dump.tensors().size());
      }
      if (step == 0)
        std::printf("reference loss %.6f\n", ref.loss);
    }
    if (!savePath.empty()) {
      SafetensorsFile saved = SafetensorsFile::load(savePath);
      bool ok = checkTensor(saved, "stage0.w", ref.w, kFeatures) &&
                checkTensor(saved, "stage1.s", &ref.s, 1);
      std::printf("save check %s (%zu tensors)\n", ok ? "ok" : "FAILED",
                  saved.tensors().size());
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return status;
}
