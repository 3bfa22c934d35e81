//===- ProfileHost.cpp - Measures this machine for `pipecc profile` -------===//
//
// pipecc-profile-host: the measuring half of `pipecc profile`, built beside
// the runtime's link files and linked like a rank executable, so that the
// matmuls it times are the ranks' own (pipecc_rt_sgemm, whichever BLAS
// pipecc_runtime_cpu links), its element-wise loops the runtime's kernels
// and its messages the socket transport's. It prints one device profile
// (the JSON of docs/cli.md, "Device profile files") to stdout; pipecc checks
// it and writes the file.
//
// Usage: pipecc-profile-host [--quick] [--ranks N]
//        pipecc-profile-host --products [--hot] < LIST
//   --quick    a small grid and few repeats (a few seconds; for tests)
//   --products times the products listed on stdin, one per line "ROLE M K
//              N [BATCH]" (ROLE forward: X W^T through the packed-weight
//              entry point; input: dY W likewise; weight: dY^T X added
//              into an accumulator, beta = 1, on the BLAS and on the
//              engine, the faster counted; batched: BATCH products by
//              pipecc_rt_sgemm_batched), and prints per line the line and
//              its best GFLOP/s with hot operands and with the large one
//              cold (rotated through 64 MiB: the weight, the accumulator,
//              or the batch's operands), in CPU time: scripts/bench_cpu.py's
//              pipecc side of the machine's sgemm peak for a model
//   --hot      with --products, hot operands only (half the time; the cold
//              rate prints as -): the benchmark's reading of how fast the
//              machine is just before and after a run
//   --ranks N  processes in the message measurement (even, default 2):
//              pairs (0,1), (2,3), ... ping-pong at once; the slowest pair
//              is recorded
//
// Computations are timed in CPU time, the best of repeats: the machine may
// be shared, and a rank of a pipeline is predicted as if it had its core
// (the simulator shares cores among ranks). Messages are timed on the wall
// clock, which is what a rank waits.
//
//===----------------------------------------------------------------------===//
#include "pipecc/Runtime/Device.h"
#include "pipecc/Runtime/Runtime.h"
#include "pipecc/Runtime/Transport.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <sched.h>
#include <signal.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace pipecc::rt;

namespace {
double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// CPU time of this process: what a computation costs when it has a core,
/// however many other processes the machine runs meanwhile (the BLAS runs
/// one thread here).
double cpuNow() {
  timespec time;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time);
  return double(time.tv_sec) + 1e-9 * double(time.tv_nsec);
}

/// CPU times of `body` (seconds per run), one per sample, for at least
/// `minRepeats` samples and `minSeconds` in all. A sample runs `body` often
/// enough to last 100 us, above the CPU clock's granularity.
template <typename Body>
std::vector<double> samplesOf(Body body, int minRepeats, double minSeconds) {
  double start = now();
  body();
  double once = std::max(now() - start, 1e-9);
  int inner = std::max(1, static_cast<int>(std::ceil(1e-4 / once)));
  std::vector<double> samples;
  double spent = 0;
  for (int i = 0; i < 1000 * minRepeats &&
                  (i < minRepeats || spent < minSeconds || samples.empty());
       ++i) {
    double begin = cpuNow();
    for (int j = 0; j < inner; ++j)
      body();
    double seconds = (cpuNow() - begin) / inner;
    spent += seconds * inner;
    if (seconds > 0)
      samples.push_back(seconds);
  }
  return samples;
}

/// The best CPU time of `body` (samplesOf's smallest): for loops over hot
/// buffers, whose best sample is their usual one.
template <typename Body>
double bestOf(Body body, int minRepeats, double minSeconds) {
  std::vector<double> samples = samplesOf(body, minRepeats, minSeconds);
  return *std::min_element(samples.begin(), samples.end());
}

/// The median of `samples` (not empty; reordered).
double median(std::vector<double> &samples) {
  auto middle = samples.begin() + samples.size() / 2;
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

struct Settings {
  bool quick = false;
  int ranks = 2;
  /// The message measurement runs beside a busy process per core
  /// (measureBusyLatency): small messages only, the median of its trials.
  bool busy = false;
};

/// The matmul grid and the configurations (transposition, beta) timed.
struct GemmGrid {
  std::vector<int64_t> axis;
  struct Config {
    const char *transpose;
    int beta;
    /// PIPECC_RT_GEMM_ON_BLAS or _ON_ENGINE: the product on that path
    /// (pipecc_rt_sgemm_epilogue), whatever the runtime's rule picks.
    int32_t path = 0;
  };
  std::vector<Config> configs = {{"nn", 0}, {"nt", 0}, {"tn", 0},
                                 {"nn", 1}, {"nt", 1}, {"tn", 1}};

  explicit GemmGrid(const Settings &settings)
      : axis(settings.quick
                 ? std::vector<int64_t>{16, 64, 256}
                 : std::vector<int64_t>{16, 32, 64, 128, 256, 512, 1024}) {}

  /// Operands for every grid point: `sets` copies that together exceed the
  /// last-level cache. In a rank's step each matmul meets its weights after
  /// the other layers have passed through the caches: successive calls take
  /// the next copy, so a shape whose operands outgrow the cache is timed as
  /// the step meets it (cold), not as a loop over hot operands would.
  struct Operands {
    int64_t setFloats, sets, next = 0;
    std::vector<float> a, b, c;
    /// The path tables' accumulators: 64 MiB of them, beyond the last-level
    /// cache as a step's are (every layer's, one after the other). Made at
    /// the first path product: the loader processes never time one.
    std::vector<float> accumulators;
    int64_t nextAccumulator = 0;
    explicit Operands(int64_t largest)
        : setFloats(largest * largest),
          sets(std::max<int64_t>(2,
                                 (int64_t(64) << 20) /
                                     (3 * setFloats * int64_t(sizeof(float))))),
          a(sets * setFloats), b(sets * setFloats), c(sets * setFloats) {
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = float(i % 7) * 0.1f;
        b[i] = float(i % 5) * 0.1f;
      }
    }
    /// One product on the next copy; `weight`: through
    /// pipecc_rt_sgemm_weight (B a parameter, packed at its first use).
    void sgemm(const Config &config, int64_t m, int64_t n, int64_t k,
               bool weight = false) {
      bool transA = config.transpose[0] == 't';
      bool transB = config.transpose[1] == 't';
      int64_t lda = transA ? m : k, ldb = transB ? k : n;
      int64_t set = next++ % sets * setFloats;
      // A weight gradient reads dY and X just computed (hot) and adds into
      // an accumulator the step last touched a whole pass ago (from memory:
      // 64 MiB of them in turn). On this Zen 5, with the accumulators in
      // the last-level cache or all three operands cold, OpenBLAS came out
      // ahead for the MLP's 1024 x 1024 x 32, which ran 6-10 % slower there
      // than in the engine in the step.
      if (config.path) {
        if (accumulators.empty())
          accumulators.resize(std::max<int64_t>(
              (int64_t(64) << 20) / sizeof(float), 2 * setFloats));
        int64_t slots = int64_t(accumulators.size()) / (m * n);
        float *accumulator =
            accumulators.data() + nextAccumulator++ % slots * (m * n);
        pipecc_rt_sgemm_epilogue(transA, transB, m, n, k, 1.0f, a.data(), lda,
                                 b.data(), ldb, float(config.beta),
                                 accumulator, n, nullptr, config.path);
      } else
        (weight ? pipecc_rt_sgemm_weight : pipecc_rt_sgemm)(
            transA, transB, m, n, k, 1.0f, a.data() + set, lda,
            b.data() + set, ldb, float(config.beta), c.data() + set, n);
    }
  };
  /// The weight gradient dY^T X (added into its accumulator) on each path:
  /// which is faster differs between CPUs and BLAS builds, so the compiler
  /// picks by these (GemmRateTable::plainChoice).
  std::vector<Config> pathConfigs = {{"tn", 1, PIPECC_RT_GEMM_ON_BLAS},
                                     {"tn", 1, PIPECC_RT_GEMM_ON_ENGINE}};
  /// The products whose B is a parameter (pipecc_rt_sgemm_weight): a
  /// Linear layer's forward (x W^T) and input gradient (dY W).
  std::vector<Config> weightConfigs = {{"nn", 0}, {"nt", 0}};
};

/// Runs the grid's matmuls on operands of its own until killed: the load of
/// the other ranks of a pipeline, each computing on its own core.
[[noreturn]] void loadCore(const GemmGrid &grid) {
  GemmGrid::Operands operands(grid.axis.back());
  for (;;)
    for (const GemmGrid::Config &config : grid.configs)
      for (int64_t m : grid.axis)
        for (int64_t n : grid.axis)
          for (int64_t k : grid.axis)
            operands.sgemm(config, m, n, k);
}

/// The `gemm` member: single-thread pipecc_rt_sgemm rates over the grid,
/// and pipecc_rt_sgemm_weight's (B a parameter, already packed) with the
/// bytes per second of packing a B.
/// Each point is the median of its samples over three sweeps of the grid:
/// the time of a usual call, where the best sample is a rare one (cold
/// operands spread more than hot loops; the best ran 10 to 30 % faster
/// than the median and than the same calls inside a rank's step). With
/// `loaders` > 0, as many other processes run matmuls meanwhile, one per
/// further core, as the ranks of a pipeline do: they share the caches and
/// the memory bus.
std::string gemmJson(const Settings &settings, int loaders, double &bestRate) {
  GemmGrid grid(settings);
  const std::vector<int64_t> &axis = grid.axis;
  // Repeats spread over sweeps of the whole grid see a shared machine's
  // bursts of other work at different points.
  int sweeps = settings.quick ? 1 : 3;
  int repeats = settings.quick ? 1 : 2;
  double minSeconds = settings.quick ? 2e-4 : 1e-3;
  std::vector<pid_t> helpers;
  for (int i = 0; i < loaders; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("pipecc-profile-host: fork");
      break;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() == 1)
        _exit(0);
      loadCore(grid);
    }
    helpers.push_back(pid);
  }
  GemmGrid::Operands operands(axis.back());
  size_t points = axis.size() * axis.size() * axis.size();
  // Plain tables first, then the weight tables (B packed: every copy's B is
  // packed by a first call, then the calls are timed), then the paths'.
  size_t plain = grid.configs.size();
  size_t weights = plain + grid.weightConfigs.size();
  std::vector<GemmGrid::Config> configs = grid.configs;
  configs.insert(configs.end(), grid.weightConfigs.begin(),
                 grid.weightConfigs.end());
  configs.insert(configs.end(), grid.pathConfigs.begin(),
                 grid.pathConfigs.end());
  std::vector<std::vector<std::vector<double>>> samples(
      configs.size(), std::vector<std::vector<double>>(points));
  // Packing: seconds of a first call beyond a packed one, per byte of B.
  std::vector<double> packRates;
  for (int sweep = 0; sweep < sweeps; ++sweep)
    for (size_t t = 0; t < configs.size(); ++t) {
      bool weight = t >= plain && t < weights;
      size_t point = 0;
      for (int64_t m : axis)
        for (int64_t n : axis)
          for (int64_t k : axis) {
            double firstCall = 0;
            if (weight) {
              // A new shape on the same copies: their packed Bs are stale.
              pipecc_rt_weights_changed();
              for (int64_t i = 0; i < operands.sets; ++i) {
                double begin = cpuNow();
                operands.sgemm(configs[t], m, n, k, true);
                firstCall += (cpuNow() - begin) / double(operands.sets);
              }
            }
            std::vector<double> more =
                samplesOf([&] { operands.sgemm(configs[t], m, n, k, weight); },
                          repeats, minSeconds);
            samples[t][point].insert(samples[t][point].end(), more.begin(),
                                     more.end());
            // Shapes whose packing is long enough to time (B of 256 x 256
            // and more).
            if (weight && n * k >= 256 * 256) {
              std::vector<double> packed = more;
              double packing = firstCall - median(packed);
              if (packing > 0)
                packRates.push_back(4.0 * double(n * k) / packing);
            }
            ++point;
          }
    }
  pipecc_rt_weights_changed();
  for (pid_t helper : helpers) {
    kill(helper, SIGKILL);
    waitpid(helper, nullptr, 0);
  }
  auto axisText = [&] {
    std::string text;
    for (size_t i = 0; i < axis.size(); ++i)
      text += (i ? ", " : "") + std::to_string(axis[i]);
    return text;
  };
  std::string out = "{\"m\": [" + axisText() + "], \"n\": [" + axisText() +
                    "], \"k\": [" + axisText() + "], \"tables\": [";
  bestRate = 0;
  for (size_t t = 0; t < configs.size(); ++t) {
    if (t == plain)
      out += "], \"weight_tables\": [";
    // One table per path: the BLAS's, then the engine's.
    if (t >= weights)
      out += configs[t].path == PIPECC_RT_GEMM_ON_BLAS
                 ? "], \"blas_tables\": ["
                 : "], \"engine_tables\": [";
    bool first = t == 0 || t == plain || t >= weights;
    out += std::string(first ? "" : ", ") + "{\"transpose\": \"" +
           configs[t].transpose +
           "\", \"beta\": " + std::to_string(configs[t].beta) +
           ", \"flops_per_s\": [";
    size_t point = 0;
    for (int64_t m : axis)
      for (int64_t n : axis)
        for (int64_t k : axis) {
          double rate = 2.0 * double(m) * double(n) * double(k) /
                        median(samples[t][point++]);
          if (t < plain)
            bestRate = std::max(bestRate, rate);
          char text[32];
          std::snprintf(text, sizeof text, "%s%.6g", point > 1 ? ", " : "",
                        rate);
          out += text;
        }
    out += "]}";
  }
  // Without a timeable packing (a CPU whose weights fall back to the plain
  // product) packing costs nothing beyond the calls.
  char pack[64];
  std::snprintf(pack, sizeof pack, "], \"pack_bytes_per_s\": %.6g}",
                packRates.empty() ? 1e15 : median(packRates));
  return out + pack;
}

/// A stage function as the rank program calls it: through a pointer, with
/// buffers.
__attribute__((noinline)) void emptyStage(float **buffers, int64_t count) {
  asm volatile("" : : "r"(buffers), "r"(count) : "memory");
}

#if defined(__x86_64__)
/// y[i] = exp(x[i]) in AVX2 lanes, the shape of the ranks' exp (range
/// reduction by ln 2, a degree-6 polynomial, the exponent added in the
/// integer lanes: the compiler's ApproximateMath, vectorized). std::exp
/// would time one libm call per element, several times the ranks' cost.
__attribute__((target("avx2,fma"))) void expLanes(const float *x, float *y,
                                                  int64_t n) {
  const __m256 high = _mm256_set1_ps(88.3762626647949f);
  const __m256 low = _mm256_set1_ps(-88.3762626647949f);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  const __m256 ln2High = _mm256_set1_ps(0.693359375f);
  const __m256 ln2Low = _mm256_set1_ps(-2.12194440e-4f);
  const float coefficients[] = {1.9875691500e-4f, 1.3981999507e-3f,
                                8.3334519073e-3f, 4.1665795894e-2f,
                                1.6666665459e-1f, 5.0000001201e-1f};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_max_ps(_mm256_min_ps(_mm256_loadu_ps(x + i), high), low);
    __m256 k = _mm256_floor_ps(_mm256_fmadd_ps(v, log2e, _mm256_set1_ps(0.5f)));
    __m256 r = _mm256_fnmadd_ps(k, ln2High, v);
    r = _mm256_fnmadd_ps(k, ln2Low, r);
    __m256 p = _mm256_set1_ps(coefficients[0]);
    for (int c = 1; c < 6; ++c)
      p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(coefficients[c]));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r),
                        _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i scale = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(p, _mm256_castsi256_ps(scale)));
  }
  for (; i < n; ++i)
    y[i] = std::exp(x[i]);
}
#endif

/// y[i] = exp(x[i]) as the ranks compute it: in vector lanes where the CPU
/// has AVX2 and FMA (the ranks' code is compiled for the host), else libm.
void expOfEach(const float *x, float *y, int64_t n) {
#if defined(__x86_64__)
  static const bool lanes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (lanes) {
    expLanes(x, y, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::exp(x[i]);
}

struct Elementwise {
  double bytesPerSecond = 0, reductionBytesPerSecond = 0,
         transcendentalsPerSecond = 0, stageCallSeconds = 0,
         runtimeCallSeconds = 0;
};

Elementwise measureElementwise(const Settings &settings) {
  Elementwise result;
  // An activation's size: what element-wise loops of a step sweep.
  int64_t n = settings.quick ? (1 << 18) : (1 << 20);
  int repeats = settings.quick ? 2 : 5;
  double minSeconds = settings.quick ? 1e-3 : 2e-2;
  std::vector<float> x(n, 1.0f), y(n, 0.5f);
  // The runtime's fused read-read-write loop (the optimizer's update).
  double update =
      bestOf([&] { pipecc_rt_sgd_update_f32(x.data(), y.data(), n, 1e-6f); },
             repeats, minSeconds);
  result.bytesPerSecond = 3.0 * 4.0 * double(n) / update;
  volatile float sink = 0;
  double reduce = bestOf(
      [&] {
        float sum = 0;
        for (int64_t i = 0; i < n; ++i)
          sum += x[i];
        sink = sum;
      },
      repeats, minSeconds);
  result.reductionBytesPerSecond = 4.0 * double(n) / reduce;
  int64_t expCount = n / 4;
  for (int64_t i = 0; i < expCount; ++i)
    x[i] = float(i % 1000) * -1e-2f;
  double exps = bestOf([&] { expOfEach(x.data(), y.data(), expCount); },
                       repeats, minSeconds);
  result.transcendentalsPerSecond = double(expCount) / exps;
  (void)sink;

  int calls = settings.quick ? 10000 : 200000;
  void (*volatile stage)(float **, int64_t) = emptyStage;
  float *buffers[8] = {x.data(), y.data()};
  double stageLoop = bestOf(
      [&] {
        for (int i = 0; i < calls; ++i)
          stage(buffers, 8);
      },
      repeats, 0);
  result.stageCallSeconds = stageLoop / calls;
  double runtimeLoop = bestOf(
      [&] {
        for (int i = 0; i < calls; ++i)
          pipecc_rt_scale_f32(x.data(), 1, 1.0f);
      },
      repeats, 0);
  result.runtimeCallSeconds = runtimeLoop / calls;
  return result;
}

/// Large sweeps (the optimizer over every parameter): beyond the caches.
double measureStream(const Settings &settings) {
  int64_t n = settings.quick ? (1 << 20) : (1 << 23);
  std::vector<float> x(n, 1.0f), y(n, 0.5f);
  double update =
      bestOf([&] { pipecc_rt_sgd_update_f32(x.data(), y.data(), n, 1e-6f); },
             settings.quick ? 2 : 5, 0);
  return 3.0 * 4.0 * double(n) / update;
}

/// The runtime's addition of a micro-batch's weight gradient into its
/// accumulator (Device::accumulateF32, with its finiteness check). A step
/// adds every parameter's gradient, with weights and activations between:
/// buffers beyond the last-level cache.
double measureAccumulate(const Settings &settings) {
  int64_t n = settings.quick ? (1 << 18) : (1 << 24);
  std::vector<float> sum(n, 0.0f), gradient(n, 1e-3f);
  std::unique_ptr<Device> host = createHostDevice();
  double seconds =
      bestOf([&] { host->accumulateF32(sum.data(), gradient.data(), n); },
             settings.quick ? 2 : 5, 0);
  return 3.0 * 4.0 * double(n) / seconds;
}

/// The message sizes posting is timed at (links[].post).
const int64_t kPostBytes[] = {8, 4 << 10, 64 << 10, 128 << 10, 256 << 10,
                              1 << 20};
constexpr int kPostSizes = sizeof kPostBytes / sizeof kPostBytes[0];

struct LinkResult {
  double latencySeconds = 0, bytesPerSecond = 0;
  /// Core seconds of posting a message of kPostBytes[i]: a send
  /// (startSend), and a receive whose message already came (startRecv).
  double sendPostSeconds[kPostSizes] = {};
  double lateReceivePostSeconds[kPostSizes] = {};
};

/// Times posting (not completing) messages between `leader` and its peer,
/// as a pipeline's ranks post them: the leader's startSend of data it just
/// wrote while the peer computes (its transport's thread must take the core
/// to read), and the peer's startRecv of a message its transport already
/// holds (a marker sent after it on the same stream came first); the
/// medians, the peer's sent to the leader.
void timePosts(Transport &transport, int peer, bool leader, char *buffer,
               const Settings &settings, LinkResult &result) {
  int rounds = settings.quick ? 5 : 40;
  char marker = 0;
  for (int size = 0; size < kPostSizes; ++size) {
    int64_t bytes = kPostBytes[size];
    std::vector<double> sends, receives;
    for (int i = 0; i < rounds; ++i) {
      if (leader) {
        transport.recv(&marker, 1, peer, 6);
        std::memset(buffer, i, static_cast<size_t>(bytes));
        double start = now();
        int64_t handle = transport.startSend(buffer, bytes, peer, 3);
        sends.push_back(now() - start);
        transport.wait(handle);
        transport.send(buffer, bytes, peer, 4);
        transport.send(&marker, 1, peer, 5);
      } else {
        transport.send(&marker, 1, peer, 6);
        int64_t handle = transport.startRecv(buffer, bytes, peer, 3);
        // Computes meanwhile, for longer than the message takes.
        double until = now() + 2e-4 + 2.0 * double(bytes) / 1e9;
        volatile double sink = 1;
        while (now() < until)
          for (int j = 0; j < 64; ++j)
            sink = sink * 0.999 + 1e-3;
        transport.wait(handle);
        transport.recv(&marker, 1, peer, 5);
        double start = now();
        handle = transport.startRecv(buffer, bytes, peer, 4);
        receives.push_back(now() - start);
        transport.wait(handle);
      }
    }
    if (leader)
      result.sendPostSeconds[size] = median(sends);
    else
      result.lateReceivePostSeconds[size] = median(receives);
  }
  if (leader)
    transport.recv(result.lateReceivePostSeconds,
                   sizeof result.lateReceivePostSeconds, peer, 7);
  else
    transport.send(result.lateReceivePostSeconds,
                   sizeof result.lateReceivePostSeconds, peer, 7);
}

/// links[].post: {"bytes": [...], "send_s": [...], "late_receive_s": [...]}.
std::string postJson(const LinkResult &link) {
  // Sizes in ten digits, so that they come out whole.
  auto array = [](const char *format, auto value) {
    std::string text = "[";
    for (int size = 0; size < kPostSizes; ++size) {
      char number[32];
      std::snprintf(number, sizeof number, format, double(value(size)));
      text += (size ? ", " : "") + std::string(number);
    }
    return text + "]";
  };
  return "{\"bytes\": " +
         array("%.10g", [](int i) { return kPostBytes[i]; }) +
         ", \"send_s\": " +
         array("%.6g", [&](int i) { return link.sendPostSeconds[i]; }) +
         ", \"late_receive_s\": " +
         array("%.6g",
               [&](int i) { return link.lateReceivePostSeconds[i]; }) +
         "}";
}

/// One pair's ping-pong over `transport`; rank `self` with `peer`.
LinkResult pingPong(Transport &transport, int peer, bool leader,
                    const Settings &settings) {
  int rounds = settings.quick ? 50 : 1000;
  int64_t large = settings.quick ? (1 << 20) : (1 << 22);
  int largeRounds = settings.quick ? 4 : 20;
  std::vector<char> buffer(large);
  auto exchange = [&](int64_t bytes, int count) {
    for (int i = 0; i < count; ++i) {
      if (leader) {
        transport.send(buffer.data(), bytes, peer, 1);
        transport.recv(buffer.data(), bytes, peer, 1);
      } else {
        transport.recv(buffer.data(), bytes, peer, 1);
        transport.send(buffer.data(), bytes, peer, 1);
      }
    }
  };
  exchange(8, 10); // warm up
  LinkResult result;
  if (settings.busy) {
    // Each round trip waits for time slices: a few milliseconds. The
    // median trial: the typical wait, not the luckiest.
    std::vector<double> trials;
    int busyRounds = settings.quick ? 5 : 40;
    for (int trial = 0; trial < 5; ++trial) {
      double start = now();
      exchange(8, busyRounds);
      trials.push_back((now() - start) / (2.0 * busyRounds));
    }
    std::sort(trials.begin(), trials.end());
    result.latencySeconds = trials[trials.size() / 2];
    result.bytesPerSecond = 1;
    return result;
  }
  // One way is half a round trip.
  double small = 1e30, big = 1e30;
  for (int trial = 0; trial < 3; ++trial) {
    double start = now();
    exchange(8, rounds);
    small = std::min(small, (now() - start) / (2.0 * rounds));
    start = now();
    exchange(large, largeRounds);
    big = std::min(big, (now() - start) / (2.0 * largeRounds));
  }
  result.latencySeconds = small;
  result.bytesPerSecond = double(large) / std::max(big - small, 1e-9);
  timePosts(transport, peer, leader, buffer.data(), settings, result);
  return result;
}

/// Starts `ranks` processes on the socket transport; rank 0 (this process)
/// returns the slowest pair's link.
LinkResult measureSocket(const Settings &settings) {
  char folder[] = "/tmp/pipecc-profile.XXXXXX";
  if (!mkdtemp(folder)) {
    std::perror("pipecc-profile-host: mkdtemp");
    std::exit(1);
  }
  std::vector<pid_t> children;
  int rank = 0;
  for (int r = 1; r < settings.ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("pipecc-profile-host: fork");
      std::exit(1);
    }
    if (pid == 0) {
      rank = r;
      children.clear();
      break;
    }
    children.push_back(pid);
  }
  LinkResult link;
  try {
    SocketConfig config;
    config.rank = rank;
    config.size = settings.ranks;
    config.rendezvous = folder;
    config.bootstrapTimeoutSeconds = 30;
    std::unique_ptr<Transport> transport = createSocketTransport(config);
    int peer = rank ^ 1;
    link = pingPong(*transport, peer, rank % 2 == 0, settings);
    // Pairs report to rank 0, which keeps the slowest.
    double mine[2] = {link.latencySeconds, 1.0 / link.bytesPerSecond};
    for (int r = 2; r < settings.ranks; r += 2) {
      if (rank == 0) {
        double theirs[2];
        transport->recv(theirs, sizeof theirs, r, 2, Channel::Control);
        mine[0] = std::max(mine[0], theirs[0]);
        mine[1] = std::max(mine[1], theirs[1]);
      } else if (rank == r) {
        transport->send(mine, sizeof mine, 0, 2, Channel::Control);
      }
    }
    // The slowest pair's latency and bandwidth; the post times stay rank
    // 0's own pair's.
    link.latencySeconds = mine[0];
    link.bytesPerSecond = 1.0 / mine[1];
    transport->finalize();
  } catch (const std::exception &error) {
    std::fprintf(stderr, "pipecc-profile-host: rank %d: %s\n", rank,
                 error.what());
    if (rank != 0)
      _exit(1);
    for (pid_t child : children)
      kill(child, SIGTERM);
    std::exit(1);
  }
  if (rank != 0)
    _exit(0);
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  rmdir(folder);
  if (failed) {
    std::fprintf(stderr, "pipecc-profile-host: %d message rank(s) failed\n",
                 failed);
    std::exit(1);
  }
  return link;
}

int usableCores();

/// The one-way latency of a small socket message while every core also
/// runs a busy process (as when a pipeline has more ranks than cores and
/// the others compute): the receiver, asleep in its wait, runs when the
/// scheduler next gives it a core. `links[].busy_latency_s`.
double measureBusyLatency(const Settings &settings) {
  std::vector<pid_t> hogs;
  for (int i = 0; i < usableCores(); ++i) {
    pid_t pid = fork();
    if (pid < 0)
      break;
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() == 1)
        _exit(0);
      for (volatile unsigned spin = 0;; spin = spin + 1) {
      }
    }
    hogs.push_back(pid);
  }
  Settings busy = settings;
  busy.busy = true;
  busy.ranks = 2;
  double latency = measureSocket(busy).latencySeconds;
  for (pid_t hog : hogs) {
    kill(hog, SIGKILL);
    waitpid(hog, nullptr, 0);
  }
  return latency;
}

int usableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return std::max(1, CPU_COUNT(&set));
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::string machineName() {
  FILE *info = std::fopen("/proc/cpuinfo", "r");
  std::string name;
  if (info) {
    char line[512];
    while (std::fgets(line, sizeof line, info))
      if (std::strncmp(line, "model name", 10) == 0) {
        const char *colon = std::strchr(line, ':');
        name = colon ? colon + 1 : line;
        break;
      }
    std::fclose(info);
  }
  std::string clean;
  for (char c : name)
    if (c != '\n' && c != '"' && c != '\\')
      clean += c;
  size_t start = clean.find_first_not_of(' ');
  return start == std::string::npos ? "unknown" : clean.substr(start);
}
} // namespace

/// One product of --products: hot and cold GFLOP/s (cold 0 with hotOnly).
std::pair<double, double> timeProduct(const std::string &role, int64_t m,
                                      int64_t k, int64_t n, int64_t batch,
                                      bool hotOnly) {
  const int64_t coldBytes = int64_t(64) << 20;
  // The operand that is cold in a step, and the bytes of one copy of it.
  int64_t rotatedFloats = role == "weight"    ? m * n
                          : role == "batched" ? batch * (m * k + k * n)
                                              : k * n;
  int64_t copies =
      hotOnly ? 1
              : std::max<int64_t>(2, (coldBytes + 4 * rotatedFloats - 1) /
                                         (4 * rotatedFloats));
  std::vector<std::vector<float>> rotated(copies,
                                          std::vector<float>(rotatedFloats));
  unsigned seed = 1;
  for (auto &copy : rotated)
    for (float &x : copy) {
      seed = seed * 1664525u + 1013904223u;
      x = float(seed >> 8) / float(1u << 24) - 0.5f;
    }
  // A (and, for a weight gradient, B too: k x n).
  std::vector<float> a(std::max(m, n) * k, 0.25f);
  std::vector<float> c(batch * m * n);
  double flops = 2.0 * double(m) * double(k) * double(n) * double(batch);
  size_t next = 0;
  // A weight gradient on the BLAS, then on the engine (the compiler may
  // send it to either: GemmRateTable::plainChoice); its best rate is the
  // faster path's.
  int32_t path = PIPECC_RT_GEMM_ON_BLAS;
  auto run = [&](bool cold) {
    std::vector<float> &x = rotated[cold ? next : 0];
    if (cold)
      next = (next + 1) % rotated.size();
    if (role == "forward") // X (m x k) W^T, W n x k
      pipecc_rt_sgemm_weight(0, 1, m, n, k, 1.0f, a.data(), k, x.data(), k,
                             0.0f, c.data(), n);
    else if (role == "input") // dY (m x k) W, W k x n
      pipecc_rt_sgemm_weight(0, 0, m, n, k, 1.0f, a.data(), k, x.data(), n,
                             0.0f, c.data(), n);
    else if (role == "weight") // dY^T X into the m x n accumulator
      pipecc_rt_sgemm_epilogue(1, 0, m, n, k, 1.0f, a.data(), m, a.data(), n,
                               1.0f, x.data(), n, nullptr, path);
    else // batched: A_i (m x k) B_i (k x n)
      pipecc_rt_sgemm_batched(0, 0, m, n, k, 1.0f, x.data(), k, m * k,
                              x.data() + batch * m * k, n, k * n, 0.0f,
                              c.data(), n, m * n, batch);
  };
  double hot = bestOf([&] { run(false); }, 5, 0.2);
  double cold = 0;
  if (!hotOnly) {
    // Every copy once first (each weight's packed copy made, as in a step's
    // first micro-batch), then the best of the rotation.
    for (size_t i = 0; i < rotated.size(); ++i)
      run(true);
    cold = bestOf([&] { run(true); }, 5, 0.2);
  }
  if (role == "weight") {
    path = PIPECC_RT_GEMM_ON_ENGINE;
    hot = std::min(hot, bestOf([&] { run(false); }, 5, 0.2));
    if (!hotOnly)
      cold = std::min(cold, bestOf([&] { run(true); }, 5, 0.2));
  }
  // The packed copies of this product's weights go with its buffers: kept,
  // they would pile up over the list (up to 64 MiB per line) and a later
  // buffer at a freed address could find a copy of other values.
  pipecc_rt_blas_set_packed_weights(0);
  pipecc_rt_blas_set_packed_weights(1);
  return {flops / hot / 1e9, hotOnly ? 0.0 : flops / cold / 1e9};
}

/// --products: reads "ROLE M K N [BATCH]" lines, prints each with its rates.
int timeProducts(bool hotOnly) {
  char line[256];
  int lineNumber = 0;
  while (std::fgets(line, sizeof line, stdin)) {
    ++lineNumber;
    char role[32];
    long long m = 0, k = 0, n = 0, batch = 1;
    int fields =
        std::sscanf(line, "%31s %lld %lld %lld %lld", role, &m, &k, &n, &batch);
    if (fields <= 0)
      continue;
    std::string name = role;
    bool known = name == "forward" || name == "input" || name == "weight" ||
                 name == "batched";
    if (fields < 4 || !known || m <= 0 || k <= 0 || n <= 0 || batch <= 0 ||
        m * k > (1LL << 28) || k * n > (1LL << 28) || m * n > (1LL << 28) ||
        batch * (m * k + k * n) > (1LL << 28)) {
      std::fprintf(stderr,
                   "pipecc-profile-host: --products line %d: expected "
                   "\"forward|input|weight|batched M K N [BATCH]\" with "
                   "positive sizes of at most 2^28 floats per operand\n",
                   lineNumber);
      return 1;
    }
    std::pair<double, double> rates =
        timeProduct(name, m, k, n, batch, hotOnly);
    if (hotOnly)
      std::printf("%s %lld %lld %lld %lld %.2f -\n", role, m, k, n, batch,
                  rates.first);
    else
      std::printf("%s %lld %lld %lld %lld %.2f %.2f\n", role, m, k, n, batch,
                  rates.first, rates.second);
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  Settings settings;
  bool products = false, hotOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      settings.quick = true;
    } else if (arg == "--products") {
      products = true;
    } else if (arg == "--hot") {
      hotOnly = true;
    } else if (arg == "--ranks" && i + 1 < argc) {
      char *end = nullptr;
      long ranks = std::strtol(argv[++i], &end, 10);
      if (!end || *end || ranks < 2 || ranks > 64 || ranks % 2) {
        std::fprintf(stderr,
                     "pipecc-profile-host: --ranks %s: expected an "
                     "even number in [2, 64]\n",
                     argv[i]);
        return 1;
      }
      settings.ranks = static_cast<int>(ranks);
    } else {
      std::fprintf(stderr,
                   "pipecc-profile-host: unknown argument '%s'; usage: "
                   "pipecc-profile-host [--quick] [--ranks N] | --products "
                   "[--hot]\n",
                   argv[i]);
      return 1;
    }
  }
  // One thread, as a rank of a pipeline on its own core. BLAS libraries
  // read their thread count when they load, before main: start again with
  // it set.
  if (!std::getenv("PIPECC_PROFILE_THREADS_SET")) {
    setenv("PIPECC_PROFILE_THREADS_SET", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("pipecc-profile-host: cannot restart itself");
    return 1;
  }
  if (hotOnly && !products) {
    std::fprintf(stderr, "pipecc-profile-host: --hot times --products only\n");
    return 1;
  }
  if (products) {
    pipecc_rt_blas_set_threads(1);
    return timeProducts(hotOnly);
  }
  // Messages first: the children fork before the BLAS starts any thread.
  LinkResult socket = measureSocket(settings);
  double busyLatency = measureBusyLatency(settings);
  double bestRate = 0, sharedBestRate = 0;
  std::string gemm = gemmJson(settings, /*loaders=*/0, bestRate);
  // The same grid while every other core runs matmuls too: the rates of a
  // pipeline whose ranks compute at once (docs/cli.md, `gemm_shared`).
  int cores = usableCores();
  std::string shared =
      cores > 1 ? gemmJson(settings, cores - 1, sharedBestRate) : "";
  Elementwise elementwise = measureElementwise(settings);
  double stream = measureStream(settings);
  double accumulate = measureAccumulate(settings);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  long long memory = pages > 0 && pageSize > 0
                         ? static_cast<long long>(pages) * pageSize
                         : 1LL << 30;
  std::string post = postJson(socket);
  std::printf(
      "{\"format\": \"pipecc-device-profile\", \"version\": 1,\n"
      " \"description\": \"measured by pipecc profile%s\",\n"
      " \"machine\": \"%s\", \"blas\": \"pipecc_rt_sgemm\",\n"
      " \"cores\": %d, \"memory_bytes\": %lld,\n"
      " \"flops_per_s\": %.6g, \"transcendentals_per_s\": %.6g,\n"
      " \"elementwise\": {\"bytes_per_s\": %.6g, \"reduction_bytes_per_s\": "
      "%.6g, \"stream_bytes_per_s\": %.6g, \"accumulate_bytes_per_s\": "
      "%.6g},\n"
      " \"calls\": {\"stage_call_s\": %.6g, \"runtime_call_s\": %.6g},\n"
      " \"links\": [{\"transport\": \"socket\", \"latency_s\": %.6g, "
      "\"bytes_per_s\": %.6g, \"busy_latency_s\": %.6g,\n   \"post\": %s}],\n"
      " \"gemm\": %s%s%s}\n",
      settings.quick ? " --quick" : "", machineName().c_str(), cores, memory,
      bestRate, elementwise.transcendentalsPerSecond,
      elementwise.bytesPerSecond, elementwise.reductionBytesPerSecond, stream,
      accumulate, elementwise.stageCallSeconds, elementwise.runtimeCallSeconds,
      socket.latencySeconds, socket.bytesPerSecond, busyLatency, post.c_str(),
      gemm.c_str(),
      shared.empty() ? "" : ",\n \"gemm_shared\": ", shared.c_str());
  return 0;
}
