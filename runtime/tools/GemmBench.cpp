//===- GemmBench.cpp - The packed-B GEMM against the BLAS, same run -------===//
//
// pipecc-gemm-bench (a benchmark, not a test; `ninja pipecc-gemm-bench`,
// not part of `all`): times gemmPackedB (B packed once) and the runtime's
// pipecc_rt_sgemm (the BLAS, which packs B on every call) on a pipeline
// micro-batch's matmuls with a weight, in one invocation, one thread:
//   X * W^T  (trans_b = 1, the forward)   and   dY * W  (trans_b = 0, the
//   input gradient), M rows, W N x K (K x N for trans_b = 0).
// The weights are cold as in a step: calls rotate through enough distinct
// weights (each with its packed copy) to pass 64 MiB; A and C are reused.
// Each shape prints the median GFLOP/s of the repeats (engine and BLAS
// alternating, so that a disturbance hits both; in thread CPU time), then
// the weight gradients dY^T X (beta = 1 into a cold N x K accumulator, K of
// 32, 64 and 256 rows or --grad-rows; engine: gemm(), B packed per call),
// then the time of packB for one weight (done once per weight and step),
// then a weight's first product of a step, ms per call: the product alone
// on a packed copy, packB then the product, and gemmPackingB (packed
// during it).
//
// Usage: pipecc-gemm-bench [--repeats R] [--calls C] [--kernel NAME]
//            [--kc D] [--mc R] [--weights W] [--n N] [--k K]
//            [--grad-rows R]... [--grad-beta 0|1] [M ...]
//            (default M: 32 64 256)
//   --kernel NAME  a kernel of this CPU by the start of its name ("avx2",
//                "avx512"; default: selectPackedGemmKernel()'s)
//   --kc, --mc   the kernel's blocking, overridden for tuning
//   --weights W  distinct weights rotated (default: 16, or more to pass
//                64 MiB; 1 times hot operands)
//   --grad-rows R  the weight gradients' K (repeatable; default 32 64 256)
//   --grad-beta B  their beta: 1 (default, added into the accumulator) or
//                0 (written: a step's first micro-batch)
//
//===----------------------------------------------------------------------===//
#include "CPU/Gemm/Kernel.h"
#include "CPU/Gemm/PackedGemm.h"
#include "pipecc/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <ctime>
#include <vector>

using namespace pipecc::rt::gemm;

namespace {
/// This thread's CPU time: on a shared machine, time descheduled is not the
/// kernel's (caches shared with the other processes still are).
double now() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t h = values.size() / 2;
  return values.size() % 2 ? values[h] : 0.5 * (values[h - 1] + values[h]);
}

[[noreturn]] void usage(const char *message) {
  std::fprintf(stderr,
               "pipecc-gemm-bench: %s\nusage: pipecc-gemm-bench [--repeats "
               "R] [--calls C] [--kernel NAME] [--kc D] [--mc R]\n"
               "    [--weights W] [--n N] [--k K] [--grad-rows R]... "
               "[--grad-beta 0|1] [M ...]\n",
               message);
  std::exit(2);
}

int64_t positive(const char *text) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (!end || *end || value <= 0)
    usage((std::string("not a positive integer: ") + text).c_str());
  return value;
}
} // namespace

int main(int argc, char **argv) {
  int64_t repeats = 5, calls = 32, n = 1024, k = 1024, kc = 0, mc = 0,
          weightsWanted = 0;
  std::vector<int64_t> ms, gradRows;
  float gradBeta = 1.0f;
  std::string kernelWanted;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> int64_t {
      if (i + 1 >= argc)
        usage((arg + " needs a value").c_str());
      return positive(argv[++i]);
    };
    if (arg == "--repeats")
      repeats = value();
    else if (arg == "--calls")
      calls = value();
    else if (arg == "--kc")
      kc = value();
    else if (arg == "--mc")
      mc = value();
    else if (arg == "--weights")
      weightsWanted = value();
    else if (arg == "--kernel") {
      if (i + 1 >= argc)
        usage("--kernel needs a value");
      kernelWanted = argv[++i];
    } else if (arg == "--n")
      n = value();
    else if (arg == "--k")
      k = value();
    else if (arg == "--grad-rows")
      gradRows.push_back(value());
    else if (arg == "--grad-beta") {
      std::string beta = i + 1 < argc ? argv[++i] : "";
      if (beta != "0" && beta != "1")
        usage("--grad-beta takes 0 or 1");
      gradBeta = beta == "1" ? 1.0f : 0.0f;
    }
    else if (!arg.empty() && arg[0] == '-')
      usage(("unknown option " + arg).c_str());
    else
      ms.push_back(positive(argv[i]));
  }
  if (ms.empty())
    ms = {32, 64, 256};
  const Kernel *selected = selectPackedGemmKernel();
  if (!kernelWanted.empty()) {
    selected = nullptr;
    std::string names;
    for (const Kernel *candidate : runnableKernels()) {
      std::string name = kernelName(*candidate);
      names += (names.empty() ? "" : ", ") + name;
      if (name.compare(0, kernelWanted.size(), kernelWanted) == 0)
        selected = candidate;
    }
    if (!selected)
      usage(("no kernel of this CPU is named " + kernelWanted + "... (" +
             (names.empty() ? "none" : names) + ")").c_str());
  }
  if (!selected) {
    std::printf("pipecc-gemm-bench: no packed-GEMM kernel for this CPU\n");
    return 0;
  }
  Kernel kernel = *selected;
  if (kc)
    kernel.kc = kc;
  if (mc)
    kernel.mc = (mc + kernel.mr - 1) / kernel.mr * kernel.mr;
  pipecc_rt_blas_set_threads(1);
  // The BLAS column is the BLAS: the runtime's sgemm without the engine
  // (which it would otherwise use where its kernel is wider).
  pipecc_rt_blas_set_packed_weights(0);

  const int64_t poolBytes = int64_t(64) << 20;
  int64_t weightBytes = n * k * int64_t(sizeof(float));
  int64_t count = weightsWanted
                      ? weightsWanted
                      : std::max<int64_t>(16, (poolBytes + weightBytes - 1) /
                                                  weightBytes);
  std::printf("kernel %s (kc %lld, mc %lld); BLAS %s; %lld weights %lldx%lld "
              "rotated (%lld MiB, each packed too); median of %lld repeats "
              "of %lld calls\n",
              kernelName(kernel), (long long)kernel.kc, (long long)kernel.mc,
              pipecc_rt_blas_description(), (long long)count, (long long)n,
              (long long)k, (long long)(count * weightBytes >> 20),
              (long long)repeats, (long long)calls);
  std::vector<std::vector<float>> weights(count,
                                          std::vector<float>(n * k));
  unsigned seed = 1;
  auto uniform = [&] {
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1u << 24) - 0.5f;
  };
  for (auto &w : weights)
    for (float &x : w)
      x = uniform();
  std::vector<PackedMatrix> packed(count);

  // `calls` products X * B by the packed copies in turn, from copy `next`.
  auto packedProducts = [&](int64_t m, const float *a, float *c,
                            int64_t &next) {
    for (int64_t call = 0; call < calls; ++call)
      gemmPackedB(kernel, false, m, 1.0f, a, k, packed[next++ % count], 0.0f,
                  c, n);
  };

  std::printf("%-24s %10s %10s %7s %12s\n", "shape", "engine", "BLAS",
              "ratio", "max |diff|");
  for (bool transB : {true, false}) {
    // B = W^T (W is N x K) or B = W (K x N).
    int64_t ldb = transB ? k : n;
    for (int64_t i = 0; i < count; ++i)
      packB(kernel, transB, k, n, weights[i].data(), ldb, packed[i]);
    for (int64_t m : ms) {
      std::vector<float> a(m * k), c(m * n), reference(m * n);
      for (float &x : a)
        x = uniform();
      // The same result, first (a wrong engine is no benchmark).
      gemmPackedB(kernel, false, m, 1.0f, a.data(), k, packed[0], 0.0f,
                  c.data(), n);
      pipecc_rt_sgemm(0, transB, m, n, k, 1.0f, a.data(), k,
                      weights[0].data(), ldb, 0.0f, reference.data(), n);
      double diff = 0;
      for (int64_t i = 0; i < m * n; ++i)
        diff = std::max(diff, double(std::fabs(c[i] - reference[i])));
      std::vector<double> engine, blas;
      int64_t next = 0;
      for (int64_t r = 0; r < repeats; ++r) {
        double start = now();
        packedProducts(m, a.data(), c.data(), next);
        double middle = now();
        for (int64_t call = 0; call < calls; ++call)
          pipecc_rt_sgemm(0, transB, m, n, k, 1.0f, a.data(), k,
                          weights[next++ % count].data(), ldb, 0.0f,
                          c.data(), n);
        double end = now();
        double flops = 2.0 * double(m) * double(n) * double(k) * calls;
        engine.push_back(flops / (middle - start) * 1e-9);
        blas.push_back(flops / (end - middle) * 1e-9);
      }
      char shape[64];
      std::snprintf(shape, sizeof shape, "%lldx%lldx%lld %s", (long long)m,
                    (long long)n, (long long)k,
                    transB ? "X*W^T" : "dY*W");
      std::printf("%-24s %10.1f %10.1f %7.2f %12.3g\n", shape,
                  median(engine), median(blas),
                  median(engine) / median(blas), diff);
    }
  }
  // Weight gradients, dW += dY^T X (trans_a, beta = 1): K is the
  // micro-batch's rows, C the N x K accumulator, cold (rotated through
  // the pool as a step finds it). The engine's gemm() packs both operands
  // per call (shallow loop order when packed B fits L2); the runtime
  // gives it the shallow ones and, on AVX-512, the deep ones
  // (docs/design.md, "The deep weight gradients run in the engine").
  if (gradRows.empty())
    gradRows = {32, 64, 256};
  for (int64_t rows : gradRows) {
    int64_t accBytes = n * k * int64_t(sizeof(float));
    int64_t accs = std::max<int64_t>(2, (poolBytes + accBytes - 1) / accBytes);
    std::vector<std::vector<float>> acc(accs, std::vector<float>(n * k, 0));
    std::vector<float> dy(rows * n), x(rows * k);
    for (float &v : dy)
      v = uniform();
    for (float &v : x)
      v = uniform();
    std::vector<double> engine, blas;
    int64_t next = 0;
    for (int64_t r = 0; r < repeats; ++r) {
      double start = now();
      for (int64_t call = 0; call < calls; ++call)
        gemm(kernel, true, false, n, k, rows, 1.0f, dy.data(), n, x.data(),
             k, gradBeta, acc[next++ % accs].data(), k);
      // The BLAS itself: pipecc_rt_sgemm gives the engine the shallow and
      // (on AVX-512) the deep weight gradients, unless it is turned off.
      pipecc_rt_blas_set_packed_weights(0);
      double middle = now();
      for (int64_t call = 0; call < calls; ++call)
        pipecc_rt_sgemm(1, 0, n, k, rows, 1.0f, dy.data(), n, x.data(), k,
                        gradBeta, acc[next++ % accs].data(), k);
      double end = now();
      pipecc_rt_blas_set_packed_weights(1);
      double flops = 2.0 * double(rows) * double(n) * double(k) * calls;
      engine.push_back(flops / (middle - start) * 1e-9);
      blas.push_back(flops / (end - middle) * 1e-9);
    }
    char shape[64];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lld dY^T*X", (long long)n,
                  (long long)k, (long long)rows);
    std::printf("%-24s %10.1f %10.1f %7.2f %12s\n", shape, median(engine),
                median(blas), median(engine) / median(blas), "-");
  }
  // packB of one weight (cold, as once per step), both layouts.
  for (bool transB : {true, false}) {
    std::vector<double> seconds;
    int64_t next = 0;
    for (int64_t r = 0; r < repeats; ++r) {
      double start = now();
      for (int64_t i = 0; i < count; ++i, ++next)
        packB(kernel, transB, k, n, weights[next % count].data(),
              transB ? k : n, packed[next % count]);
      seconds.push_back((now() - start) / double(count));
    }
    double s = median(seconds);
    std::printf("packB %lldx%lld trans_b=%d: %.3f ms per weight (%.1f GB/s "
                "read+written)\n",
                (long long)n, (long long)k, int(transB), s * 1e3,
                2.0 * double(weightBytes) / s * 1e-9);
  }
  // A step's first product by each weight (P = 1, or a rank with no wait to
  // pack in): op(B) packed in the same call, by packB then gemmPackedB, or
  // during the product (gemmPackingB), against the product alone on a
  // packed copy; cold weights as above.
  for (bool transB : {true, false}) {
    int64_t ldb = transB ? k : n;
    for (int64_t m : ms) {
      std::vector<float> a(m * k), c(m * n);
      for (float &x : a)
        x = uniform();
      std::vector<double> alone, separate, during;
      int64_t next = 0;
      for (int64_t r = 0; r < repeats; ++r) {
        double start = now();
        packedProducts(m, a.data(), c.data(), next);
        double first = now();
        for (int64_t call = 0; call < calls; ++call, ++next) {
          packB(kernel, transB, k, n, weights[next % count].data(), ldb,
                packed[next % count]);
          gemmPackedB(kernel, false, m, 1.0f, a.data(), k,
                      packed[next % count], 0.0f, c.data(), n);
        }
        double second = now();
        for (int64_t call = 0; call < calls; ++call, ++next)
          gemmPackingB(kernel, false, m, 1.0f, a.data(), k, transB, k, n,
                       weights[next % count].data(), ldb,
                       packed[next % count], 0.0f, c.data(), n);
        double end = now();
        alone.push_back((first - start) / double(calls));
        separate.push_back((second - first) / double(calls));
        during.push_back((end - second) / double(calls));
      }
      std::printf("%lldx%lldx%lld %s packing B: product alone %.3f ms, "
                  "packB then product %.3f ms, packed during it %.3f ms\n",
                  (long long)m, (long long)n, (long long)k,
                  transB ? "X*W^T" : "dY*W", median(alone) * 1e3,
                  median(separate) * 1e3, median(during) * 1e3);
    }
  }
  return 0;
}
