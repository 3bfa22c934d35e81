//===- Blas.cpp - Matmuls of the CPU target (OpenBLAS) --------------------===//
//
// In pipecc_runtime_cpu: the core runtime links no BLAS. The BLAS is
// OpenBLAS, from the scipy-openblas32 wheel (symbols prefixed scipy_) or the
// system's (no prefix): cmake/PipeccBlas.cmake sets
// PIPECC_BLAS_SYMBOL_PREFIX and PIPECC_BLAS_PACKAGE.
//
//===----------------------------------------------------------------------===//
#include "Gemm/PackedGemm.h"
#include "Gemm/Parallel.h"
#include "PackedWeights.h"
#include "pipecc/Runtime/Error.h"
#include "pipecc/Runtime/Runtime.h"

#include <cblas.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#ifndef PIPECC_BLAS_SYMBOL_PREFIX
#define PIPECC_BLAS_SYMBOL_PREFIX
#endif
#ifndef PIPECC_BLAS_PACKAGE
#define PIPECC_BLAS_PACKAGE "OpenBLAS"
#endif
#define PIPECC_BLAS_CONCAT2(prefix, name) prefix##name
#define PIPECC_BLAS_CONCAT(prefix, name) PIPECC_BLAS_CONCAT2(prefix, name)
/// The BLAS's name for OpenBLAS function `name`.
#define BLAS(name) PIPECC_BLAS_CONCAT(PIPECC_BLAS_SYMBOL_PREFIX, name)

using namespace pipecc::rt;

namespace {
void checkGemmArguments(bool transA, bool transB, int64_t m, int64_t n,
                        int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  if (m < 0 || n < 0 || k < 0)
    fail("sgemm: negative dimension (M=", m, ", N=", n, ", K=", k, ")");
  for (int64_t value : {m, n, k, lda, ldb, ldc})
    if (value > INT_MAX)
      fail("sgemm: dimension or leading dimension ", value,
           " exceeds the BLAS integer range");
  // Row-major: a stored matrix with R rows and C columns needs ld >= C.
  int64_t aColumns = transA ? m : k;
  int64_t bColumns = transB ? k : n;
  if (lda < (aColumns > 1 ? aColumns : 1) ||
      ldb < (bColumns > 1 ? bColumns : 1) || ldc < (n > 1 ? n : 1))
    fail("sgemm: leading dimension too small (lda=", lda, " needs >= ",
         aColumns, ", ldb=", ldb, " needs >= ", bColumns, ", ldc=", ldc,
         " needs >= ", n, ")");
}

pipecc_rt_blas_counters counters;

/// pipecc_rt_sgemm_weight's packed copies, and whether it uses them
/// (pipecc_rt_blas_set_packed_weights).
PackedWeightCache packedWeights;
bool packedWeightsWanted = true;

/// The engine's kernel for this CPU while packed weights are on, else null
/// (then pipecc_rt_sgemm_weight is pipecc_rt_sgemm).
const gemm::Kernel *packedWeightKernel() {
  static const gemm::Kernel *kernel = gemm::selectPackedGemmKernel();
  return packedWeightsWanted ? kernel : nullptr;
}

/// The threads of each product (pipecc_rt_blas_set_threads).
int32_t productThreads = 1;

/// Who runs --threads N. With the engine on (a kernel, packed weights), it
/// runs every product on N threads and the BLAS keeps one: two pools that
/// each spin between products would fight for the cores (the GPT at P = 1
/// took 121-200 ms a step that way, against 58 on one thread). Else the
/// BLAS's threads (docs/design.md, "The engine's threads").
void applyThreads() {
  const gemm::Kernel *kernel = packedWeightKernel();
  gemm::setThreads(kernel ? productThreads : 1);
  BLAS(openblas_set_num_threads)(kernel ? 1 : productThreads);
}

/// Whether the BLAS's CPUID dispatch picked AVX-512 kernels (OpenBLAS's
/// SkylakeX, Cooperlake and SapphireRapids targets).
bool blasRunsAvx512() {
  static const bool avx512 = [] {
    std::string core = BLAS(openblas_get_corename)();
    for (char &c : core)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return core == "skylakex" || core == "cooperlake" ||
           core == "sapphirerapids";
  }();
  return avx512;
}

/// Whether the engine's kernel is wider than the BLAS's: OpenBLAS 0.3.34
/// gives AMD Zen 5 (family 0x1A, AVX-512) its Haswell kernels, half the
/// AVX-512 kernel's rate (docs/design.md, "The AVX-512 kernel"). Then the
/// engine runs every product.
bool engineIsWider(const gemm::Kernel &kernel) {
  return gemm::vectorBits(kernel) > 256 && !blasRunsAvx512();
}

/// Whether a weight gradient (dY^T X: op(A) stored transposed, B not)
/// is deep enough for the AVX-512 kernel to beat OpenBLAS's own AVX-512
/// kernels: at least one whole k-block of micro-batch rows. Measured on
/// the benchmark GPT at P = 1, M = 1 (K = 512 rows; docs/design.md, "The
/// deep weight gradients run in the engine"): 130-135 GFLOP/s in the step
/// against OpenBLAS's 110-131; shallower ones (K = 64) are split.
bool deepWeightGradient(const gemm::Kernel &kernel, bool transA, bool transB,
                        int64_t k) {
  return gemm::vectorBits(kernel) > 256 && transA && !transB &&
         k >= gemm::kBlockDepth(kernel);
}

/// Whether a product whose B is not a weight runs in the engine (B packed
/// in the call): the shallow products it runs faster than a BLAS, the deep
/// weight gradients of the AVX-512 kernel, and every product where its
/// kernel is wider.
bool engineRunsProduct(const gemm::Kernel &kernel, bool transA, bool transB,
                       int64_t m, int64_t n, int64_t k) {
  // With threads, every product (applyThreads).
  return gemm::threads() > 1 || gemm::runsShallow(kernel, m, n, k) ||
         deepWeightGradient(kernel, transA, transB, k) ||
         (k > 0 && engineIsWider(kernel));
}

double clockSeconds(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

double monotonicSeconds() { return clockSeconds(CLOCK_MONOTONIC); }

/// pipecc_rt_blas_count_cpu_time.
bool countCpuTime = false;

/// One product's key in the per-product counters: what ran it and how.
struct ProductKey {
  int32_t path;
  bool transA, transB;
  float beta;
  int64_t m, n, k, batch = 1;
  bool operator==(const pipecc_rt_gemm_product &held) const {
    return held.path == path && held.trans_a == transA &&
           held.trans_b == transB && held.accumulate == (beta != 0) &&
           held.m == m && held.n == n && held.k == k && held.batch == batch;
  }
};

/// pipecc_rt_blas_record_products' table, in the order first seen; a
/// linear scan from the last hit (a step's products come in runs of one
/// shape, and a rank meets tens of shapes).
struct ProductTable {
  bool recording = false;
  std::vector<pipecc_rt_gemm_product> products;
  size_t last = 0;
  void add(const ProductKey &key, double seconds) {
    size_t count = products.size();
    for (size_t i = 0; i < count; ++i) {
      size_t at = (last + i) % count;
      if (key == products[at]) {
        last = at;
        products[at].calls += 1;
        products[at].seconds += seconds;
        return;
      }
    }
    products.push_back({key.path, key.transA, key.transB, key.beta != 0,
                        key.m, key.n, key.k, key.batch, 1, seconds});
    last = count;
  }
};
ProductTable productTable;

/// Runs `product` (key.batch GEMMs of key's M x N x K) timed and counted
/// in the BLAS counters, and in the per-product ones while they record:
/// one rule for every path; an empty C runs and counts nothing.
template <typename Product>
void counted(const ProductKey &key, Product product) {
  if (key.m == 0 || key.n == 0 || key.batch == 0)
    return;
  // Two clock reads (about 20 ns each, vDSO) against a GEMM of the sizes
  // models meet (microseconds to milliseconds). The CPU-time reads (system
  // calls, only when asked) lie inside them, so that a product's CPU time
  // never exceeds its wall time.
  double start = monotonicSeconds();
  double cpuStart = countCpuTime ? clockSeconds(CLOCK_THREAD_CPUTIME_ID) : 0;
  product();
  if (countCpuTime)
    counters.cpu_seconds += clockSeconds(CLOCK_THREAD_CPUTIME_ID) - cpuStart;
  double seconds = monotonicSeconds() - start;
  counters.seconds += seconds;
  counters.calls += key.batch;
  counters.flops += 2 * key.m * key.n * key.k * key.batch;
  if (productTable.recording)
    productTable.add(key, seconds);
}

void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc) {
  counted({PIPECC_RT_GEMM_BLAS, transA, transB, beta, m, n, k}, [&] {
    BLAS(cblas_sgemm)(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                      transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                      static_cast<int>(n), static_cast<int>(k), alpha, a,
                      static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
                      static_cast<int>(ldc));
  });
}

/// C = alpha * op(A) * op(B) + beta * C through the packed copy of the
/// parameter B (packed during this product, its first use since the last
/// pipecc_rt_weights_changed, unless a wait packed it before); the packing
/// counts in the call's time.
void gemmWeight(const gemm::Kernel &kernel, bool transA, bool transB,
                int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                int64_t lda, const float *b, int64_t ldb, float beta,
                float *c, int64_t ldc, const gemm::Epilogue &epilogue = {}) {
  counted({PIPECC_RT_GEMM_PACKED_WEIGHT, transA, transB, beta, m, n, k}, [&] {
    packedWeights.multiply(kernel, transA, transB, m, n, k, alpha, a, lda, b,
                           ldb, beta, c, ldc, epilogue);
  });
}

/// A plain product through the engine, both operands packed in the call
/// (the products engineRunsProduct gives it: weight gradients, mostly).
void engineGemm(const gemm::Kernel &kernel, bool transA, bool transB,
                int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                int64_t lda, const float *b, int64_t ldb, float beta,
                float *c, int64_t ldc, const gemm::Epilogue &epilogue = {}) {
  counted({PIPECC_RT_GEMM_ENGINE, transA, transB, beta, m, n, k}, [&] {
    gemm::gemm(kernel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta,
               c, ldc, epilogue);
  });
}

/// Where a plain product runs: the runtime's rule (engineRunsProduct), or
/// the path the compiler chose from a device profile.
enum class PlainPath { Rule, Blas, Engine };

/// A product whose B is not a weight, with its epilogue: in the engine
/// where `path` or else engineRunsProduct says so (the epilogue in its last
/// store), else the BLAS's product and the epilogue in a pass over C.
/// `kernel` is packedWeightKernel()'s (null: the BLAS). With threads the
/// rule decides: a chosen path was timed on one thread.
void plainGemm(const gemm::Kernel *kernel, bool transA, bool transB,
               int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc, const gemm::Epilogue &epilogue = {},
               PlainPath path = PlainPath::Rule) {
  if (gemm::threads() > 1)
    path = PlainPath::Rule;
  bool engine = kernel && (path == PlainPath::Rule
                               ? engineRunsProduct(*kernel, transA, transB,
                                                   m, n, k)
                               : path == PlainPath::Engine);
  if (engine) {
    engineGemm(*kernel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta,
               c, ldc, epilogue);
    return;
  }
  blasGemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  gemm::applyEpilogue(m, n, c, ldc, epilogue);
}

/// "OpenBLAS 0.3.34.481.3 (scipy-openblas32), Haswell kernels": the version
/// is the first two words of the library's configuration string, the
/// kernels those its CPUID dispatch picked.
std::string describeBlas() {
  std::string config = BLAS(openblas_get_config)();
  size_t first = config.find(' ');
  size_t second =
      first == std::string::npos ? first : config.find(' ', first + 1);
  std::string version = config.substr(0, second);
  return version + " (" + PIPECC_BLAS_PACKAGE + "), " +
         BLAS(openblas_get_corename)() + " kernels";
}

/// describeBlas() plus what pipecc_rt_sgemm_weight does.
std::string describeBlasAndWeights() {
  std::string text = describeBlas();
  if (const gemm::Kernel *kernel = packedWeightKernel())
    return text + "; weights packed once per step (" +
           gemm::kernelName(*kernel) + ")" +
           (engineIsWider(*kernel)
                ? ", the other products too (the BLAS's kernels are narrower)"
            : gemm::threads() > 1
                ? ", the other products too (on the engine's threads)"
                : "");
  if (!gemm::selectPackedGemmKernel())
    return text + "; weights packed per call (no packed-weight kernel for "
                  "this CPU)";
  return text + "; weights packed per call";
}
} // namespace

extern "C" {

void pipecc_rt_sgemm(int32_t trans_a, int32_t trans_b, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    plainGemm(packedWeightKernel(), trans_a, trans_b, m, n, k, alpha, a, lda,
              b, ldb, beta, c, ldc);
  });
}

void pipecc_rt_sgemm_weight(int32_t trans_a, int32_t trans_b, int64_t m,
                            int64_t n, int64_t k, float alpha, const float *a,
                            int64_t lda, const float *b, int64_t ldb,
                            float beta, float *c, int64_t ldc) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    const gemm::Kernel *kernel = packedWeightKernel();
    if (kernel && k > 0)
      gemmWeight(*kernel, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                 beta, c, ldc);
    else
      blasGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

void pipecc_rt_sgemm_epilogue(int32_t trans_a, int32_t trans_b, int64_t m,
                              int64_t n, int64_t k, float alpha,
                              const float *a, int64_t lda, const float *b,
                              int64_t ldb, float beta, float *c, int64_t ldc,
                              const float *bias, int32_t flags) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    if (flags & ~(PIPECC_RT_GEMM_RELU | PIPECC_RT_GEMM_WEIGHT_B |
                  PIPECC_RT_GEMM_ON_BLAS | PIPECC_RT_GEMM_ON_ENGINE))
      fail("sgemm_epilogue: unknown flags ", flags);
    int32_t onPath = flags & (PIPECC_RT_GEMM_ON_BLAS | PIPECC_RT_GEMM_ON_ENGINE);
    if (onPath == (PIPECC_RT_GEMM_ON_BLAS | PIPECC_RT_GEMM_ON_ENGINE) ||
        (onPath && (flags & PIPECC_RT_GEMM_WEIGHT_B)))
      fail("sgemm_epilogue: flags ", flags,
           " ask for more than one path of the product");
    gemm::Epilogue epilogue{bias, (flags & PIPECC_RT_GEMM_RELU) != 0};
    const gemm::Kernel *kernel = packedWeightKernel();
    if (kernel && (flags & PIPECC_RT_GEMM_WEIGHT_B) && k > 0) {
      gemmWeight(*kernel, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                 beta, c, ldc, epilogue);
    } else {
      plainGemm(kernel, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                beta, c, ldc, epilogue,
                onPath == PIPECC_RT_GEMM_ON_BLAS     ? PlainPath::Blas
                : onPath == PIPECC_RT_GEMM_ON_ENGINE ? PlainPath::Engine
                                                     : PlainPath::Rule);
    }
  });
}

void pipecc_rt_weights_changed(void) { packedWeights.invalidate(); }

int32_t pipecc_rt_pack_stale_weight(void) {
  int32_t packed = 0;
  guardCall([&] {
    if (const gemm::Kernel *kernel = packedWeightKernel())
      packed = packedWeights.packOneStale(*kernel);
  });
  return packed;
}

int64_t pipecc_rt_weight_repack_grain(const float *param) {
  int64_t grain = 0;
  guardCall([&] {
    if (const gemm::Kernel *kernel = packedWeightKernel())
      grain = packedWeights.repackGrain(*kernel, param);
  });
  return grain;
}

void pipecc_rt_weight_written(const float *param, int64_t begin,
                              int64_t end) {
  guardCall([&] {
    if (const gemm::Kernel *kernel = packedWeightKernel())
      packedWeights.rowsWritten(*kernel, param, begin, end);
  });
}

int32_t pipecc_rt_blas_set_packed_weights(int32_t enabled) {
  packedWeightsWanted = enabled != 0;
  if (!packedWeightsWanted)
    packedWeights.release();
  guardCall([] { applyThreads(); });
  return packedWeightKernel() != nullptr;
}

void pipecc_rt_packed_weight_stats(pipecc_rt_packed_weight_counters *out) {
  if (out)
    *out = {packedWeights.packs(), packedWeights.bytes()};
}

void pipecc_rt_sgemm_batched(int32_t trans_a, int32_t trans_b, int64_t m,
                             int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, int64_t stride_a,
                             const float *b, int64_t ldb, int64_t stride_b,
                             float beta, float *c, int64_t ldc,
                             int64_t stride_c, int64_t batch) {
  guardCall([&] {
    checkGemmArguments(trans_a, trans_b, m, n, k, lda, ldb, ldc);
    if (batch < 0 || stride_a < 0 || stride_b < 0 || stride_c < 0)
      fail("sgemm_batched: negative batch or stride");
    if (batch > 1 && stride_c == 0 && m > 0 && n > 0)
      fail("sgemm_batched: stride_c of 0 would make every batch write the "
           "same C");
    const gemm::Kernel *kernel = packedWeightKernel();
    if (kernel && batch > 1 && gemm::runsBatched(*kernel, m, n, k)) {
      // Small products (attention's per head): the engine prefetches the
      // next product's operands while one runs; each counts as one call.
      counted({PIPECC_RT_GEMM_ENGINE_BATCHED, trans_a != 0, trans_b != 0, beta,
               m, n, k, batch},
              [&] {
                gemm::gemmBatched(*kernel, trans_a, trans_b, m, n, k, alpha,
                                  a, lda, stride_a, b, ldb, stride_b, beta, c,
                                  ldc, stride_c, batch);
              });
      return;
    }
    for (int64_t i = 0; i < batch; ++i)
      plainGemm(kernel, trans_a, trans_b, m, n, k, alpha, a + i * stride_a,
                lda, b + i * stride_b, ldb, beta, c + i * stride_c, ldc);
  });
}

void pipecc_rt_blas_stats(pipecc_rt_blas_counters *out) {
  if (out)
    *out = counters;
}

void pipecc_rt_blas_reset_stats(void) { counters = {}; }

void pipecc_rt_blas_count_cpu_time(int32_t enabled) {
  countCpuTime = enabled != 0;
}

void pipecc_rt_blas_record_products(int32_t enabled) {
  productTable = {};
  productTable.recording = enabled != 0;
}

int64_t pipecc_rt_blas_products(pipecc_rt_gemm_product *out,
                                int64_t capacity) {
  int64_t held = static_cast<int64_t>(productTable.products.size());
  if (out)
    std::copy_n(productTable.products.begin(),
                std::clamp<int64_t>(capacity, 0, held), out);
  return held;
}

const char *pipecc_rt_blas_description(void) {
  static std::string description;
  description = describeBlasAndWeights();
  return description.c_str();
}

int32_t pipecc_rt_blas_set_threads(int32_t threads) {
  guardCall([&] {
    productThreads = threads < 1 ? 1 : threads;
    applyThreads();
  });
  return pipecc_rt_blas_threads();
}

int32_t pipecc_rt_blas_threads(void) {
  return packedWeightKernel() ? gemm::threads()
                              : BLAS(openblas_get_num_threads)();
}

} // extern "C"
