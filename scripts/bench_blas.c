/* Single-thread sgemm rate of one BLAS over the benchmark MLP's GEMM shapes
 * (scripts/bench-blas.sh runs it for each candidate; docs/design.md, "The
 * BLAS"). The library is opened with dlopen so that one binary measures
 * every candidate, each with its own symbol names:
 *
 *   bench_blas LIBRARY SGEMM_SYMBOL SET_THREADS_SYMBOL [TRIALS]
 *
 * prints one line per GEMM: the median, lowest and highest wall-clock
 * GFLOP/s of TRIALS trials of about 1 GFLOP each, and the median GFLOP per
 * CPU-second, which other processes sharing the cores do not pull down. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*SgemmFn)(int, int, int, int, int, int, float, const float *,
                        int, const float *, int, float, float *, int);
typedef void (*SetThreadsFn)(int);
typedef char *(*NameFn)(void);

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112, kMaxTrials = 64 };

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void measure(SgemmFn sgemm, const char *name, int m, int n, int k,
                    int transA, int transB, float beta, int trials) {
  float *a = malloc(sizeof(float) * (size_t)m * k);
  float *b = malloc(sizeof(float) * (size_t)k * n);
  float *c = calloc((size_t)m * n, sizeof(float));
  if (!a || !b || !c) {
    fprintf(stderr, "bench_blas: out of memory\n");
    exit(1);
  }
  for (long i = 0; i < (long)m * k; ++i)
    a[i] = 1e-3f * (float)(i % 7);
  for (long i = 0; i < (long)k * n; ++i)
    b[i] = 1e-3f * (float)(i % 5);
  int lda = transA ? m : k, ldb = transB ? k : n;
  int ta = transA ? kTrans : kNoTrans, tb = transB ? kTrans : kNoTrans;
  double flop = 2.0 * m * n * k;
  int reps = (int)(1e9 / flop) + 1;
  double wall[kMaxTrials], cpu[kMaxTrials];
  sgemm(kRowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, beta, c, n); /* warm */
  for (int t = 0; t < trials; ++t) {
    double w = seconds(CLOCK_MONOTONIC);
    double p = seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (int r = 0; r < reps; ++r)
      sgemm(kRowMajor, ta, tb, m, n, k, 1, a, lda, b, ldb, beta, c, n);
    wall[t] = flop * reps / (seconds(CLOCK_MONOTONIC) - w) * 1e-9;
    cpu[t] = flop * reps / (seconds(CLOCK_PROCESS_CPUTIME_ID) - p) * 1e-9;
  }
  qsort(wall, trials, sizeof(double), compareDoubles);
  qsort(cpu, trials, sizeof(double), compareDoubles);
  printf("%-13s %dx%dx%d %c%c beta=%g wall-median %.1f min %.1f max %.1f "
         "cpu-median %.1f\n",
         name, m, n, k, transA ? 'T' : 'N', transB ? 'T' : 'N', beta,
         wall[trials / 2], wall[0], wall[trials - 1], cpu[trials / 2]);
  free(a);
  free(b);
  free(c);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: bench_blas LIBRARY SGEMM_SYMBOL "
                    "SET_THREADS_SYMBOL [TRIALS]\n");
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    fprintf(stderr, "bench_blas: %s\n", dlerror());
    return 1;
  }
  SgemmFn sgemm = (SgemmFn)dlsym(library, argv[2]);
  SetThreadsFn setThreads = (SetThreadsFn)dlsym(library, argv[3]);
  if (!sgemm || !setThreads) {
    fprintf(stderr, "bench_blas: %s lacks %s or %s\n", argv[1], argv[2],
            argv[3]);
    return 1;
  }
  int trials = argc > 4 ? atoi(argv[4]) : 5;
  if (trials < 1 || trials > kMaxTrials) {
    fprintf(stderr, "bench_blas: TRIALS must be 1 to %d\n", kMaxTrials);
    return 2;
  }
  setThreads(1);
  /* What the library says it picked (OpenBLAS, BLIS). */
  const char *corename[] = {"openblas_get_corename",
                            "scipy_openblas_get_corename"};
  for (int i = 0; i < 2; ++i) {
    NameFn f = (NameFn)dlsym(library, corename[i]);
    if (f)
      printf("kernels %s\n", f());
  }
  typedef int (*ArchIdFn)(void);
  typedef const char *(*ArchNameFn)(int);
  ArchIdFn archId = (ArchIdFn)dlsym(library, "bli_arch_query_id");
  ArchNameFn archName = (ArchNameFn)dlsym(library, "bli_arch_string");
  if (archId && archName)
    printf("kernels %s\n", archName(archId()));
  /* A Linear layer of width 1024 at batch 256 and micro-batch 32. */
  for (int batch = 256; batch >= 32; batch /= 8) {
    measure(sgemm, "forward", batch, 1024, 1024, 0, 1, 0, trials);
    measure(sgemm, "input-grad", batch, 1024, 1024, 0, 0, 0, trials);
    measure(sgemm, "weight-grad", 1024, 1024, batch, 1, 0, 0, trials);
    measure(sgemm, "weight-grad+=", 1024, 1024, batch, 1, 0, 1, trials);
  }
  return 0;
}
