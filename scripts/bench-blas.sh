#!/usr/bin/env bash
# Measures single-thread sgemm of every BLAS candidate on this machine over
# the benchmark MLP's GEMM shapes (scripts/bench_blas.c) in interleaved
# rounds, and prints the table of docs/design.md, "The BLAS": the median
# GFLOP per CPU-second, and in parentheses the wall-clock median.
# A benchmark, not a test: about 10 s a round.
#
# Usage: scripts/bench-blas.sh [ROUNDS (default 10)]
# Candidates, each when present:
#   Debian OpenBLAS (libopenblas0) with the kernels it picks, and held to
#     Prescott (what 0.3.21 picks on Intel models it does not list);
#   scipy-openblas32 (scripts/setup.sh; PIPECC_SCIPY_OPENBLAS_DIR);
#   Debian BLIS (libblis4-openmp or libblis4);
#   MKL: MKL_LIB_DIR=<the lib folder of an unpacked `mkl` wheel>
#     (pip download --no-deps mkl; not installed by setup.sh), run with its
#     sequential layer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-10}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench-blas: ROUNDS must be a positive integer" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/bench_blas" "$root/scripts/bench_blas.c" -ldl

arch_lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
scipy_dir=${PIPECC_SCIPY_OPENBLAS_DIR:-$HOME/.cache/pipecc/scipy-openblas32/scipy_openblas32}
candidates=()   # name|library|sgemm|set-threads|environment
debian=$arch_lib/openblas-pthread/libopenblas.so.0
if [ -f "$debian" ]; then
  candidates+=("debian-openblas|$debian|cblas_sgemm|openblas_set_num_threads|")
  candidates+=("debian-prescott|$debian|cblas_sgemm|openblas_set_num_threads|OPENBLAS_CORETYPE=Prescott")
fi
[ -f "$scipy_dir/lib/libscipy_openblas.so" ] && candidates+=(
  "scipy-openblas32|$scipy_dir/lib/libscipy_openblas.so|scipy_cblas_sgemm|scipy_openblas_set_num_threads|")
for blis in "$arch_lib/blis-openmp/libblis.so.4" "$arch_lib/blis-pthread/libblis.so.4" \
            "$arch_lib/blis-serial/libblis.so.4"; do
  if [ -f "$blis" ]; then
    candidates+=("debian-blis|$blis|cblas_sgemm|bli_thread_set_num_threads|")
    break
  fi
done
if [ -n "${MKL_LIB_DIR:-}" ]; then
  mkl=$(ls "$MKL_LIB_DIR"/libmkl_rt.so.* 2>/dev/null | head -1)
  [ -n "$mkl" ] || { echo "bench-blas: no libmkl_rt.so.* in $MKL_LIB_DIR" >&2; exit 1; }
  candidates+=("mkl|$mkl|cblas_sgemm|MKL_Set_Num_Threads|MKL_THREADING_LAYER=SEQUENTIAL LD_LIBRARY_PATH=$MKL_LIB_DIR")
fi
[ ${#candidates[@]} -gt 0 ] || { echo "bench-blas: no BLAS found" >&2; exit 1; }

echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores;" \
  "$rounds rounds of 5 trials; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  for c in "${candidates[@]}"; do
    IFS='|' read -r name lib sgemm threads envs <<< "$c"
    # shellcheck disable=SC2086
    env $envs "$work/bench_blas" "$lib" "$sgemm" "$threads" 5 | sed "s/^/$name /"
  done
done > "$work/raw.txt"

python3 - "$work/raw.txt" <<'PY'
import collections, re, statistics, sys
cpu, wall, kernels, order, names = (collections.defaultdict(list),
    collections.defaultdict(list), {}, [], [])
for line in open(sys.argv[1]):
    name, rest = line.split(" ", 1)
    if name not in names:
        names.append(name)
    if rest.startswith("kernels "):
        kernels[name] = rest.split()[1]
        continue
    m = re.match(r"(\S+) +(\S+) (\S\S) beta=(\S+) wall-median (\S+) .* "
                 r"cpu-median (\S+)", rest)
    gemm = f"{m[1]} {m[2]} {m[3]}{' (beta 1)' if m[4] == '1' else ''}"
    if gemm not in order:
        order.append(gemm)
    wall[name, gemm].append(float(m[5]))
    cpu[name, gemm].append(float(m[6]))
heads = [f"{n} ({kernels[n]})" if n in kernels else n for n in names]
print("| GEMM (M x N x K, row-major) | " + " | ".join(heads) + " |")
print("|---" * (len(names) + 1) + "|")
for gemm in order:
    print(f"| {gemm} | " + " | ".join(
        f"{statistics.median(cpu[n, gemm]):.0f} "
        f"({statistics.median(wall[n, gemm]):.0f})" for n in names) + " |")
PY
