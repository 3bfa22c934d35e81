#!/usr/bin/env bash
# Usage: gpu-check.sh DIR OUT        (on the GPU machine)
#        gpu-check.sh --dry-run DIR  (anywhere: validates the bundle only)
#
# Runs the GPU check from a bundle made by scripts/gpu-bundle.sh (DIR) on a
# machine with one GPU, the NVIDIA driver, the CUDA and NCCL libraries (the
# toolkit's or the Python wheels'), bash and python3 with numpy: no MPI, no
# LLVM, no compiler. Within 8 minutes (each step has its own timeout and the
# whole run a deadline of 7.5 minutes; a step the deadline leaves no time for
# fails as "no time left"):
#
#   1. the bundle's integrity (MANIFEST.sha256), every library the
#      executables need resolvable (ldd; lib/fallback's C++ runtime is used
#      only where the machine's is too old), the device probe;
#   2. the CUDA kernel tests (GoogleTest) against their CPU references;
#   3. mlp_relu and tiny_gpt_untied, one training step at P = 1 over NCCL
#      and P = 2 and 4 over the host-staged transport (ranks sharing the
#      GPU): loss and gradients against the CPU target's (compare_grads.py,
#      fp32 tolerances);
#   4. the bf16 benchmark, a wide MLP at P = 1 (NCCL) and 2 (host-staged) on
#      random weights and synthetic data: samples/s (median of the steps
#      after the warm-up), achieved TFLOP/s = samples/s x model FLOPs per
#      sample (scripts/model_flops.py: the matrix products' 6 x weights,
#      computed from the model's shapes when the bundle was made), and MFU
#      against the H200's dense bf16 peak of 989 TFLOP/s. At P = 2 both
#      ranks share the one GPU, so MFU there is of the one GPU.
#   5. where each benchmark run's step goes: every rank's median step of
#      `launch --timers` (compute, wait, optimizer), and at P = 1 the
#      kernels by time from Nsight Compute (`ncu`, 2 steps) where it is
#      installed and can read the GPU's counters (information only).
#
# Writes to OUT: gpu-check.log (everything), summary.txt (one line per
# step and `N passed, N failed`), bench.json, and per P = 1 benchmark
# ncu-<run>.txt (ncu's output) and kernels-<run>.txt (the 15 kernels that
# take the most time, per step). Exit status 0 when every
# step passed. Fails loudly: a missing file, library or device stops the
# run with a line naming it.
#
# --dry-run validates DIR without a GPU: the manifest, every file the run
# uses, each executable's needed libraries (none beyond what a GPU machine
# provides or lib/ holds; no MPI, BLAS or LLVM), the references, the size.
set -uo pipefail

usage() { echo "usage: gpu-check.sh DIR OUT | gpu-check.sh --dry-run DIR" >&2; exit 2; }
dry_run=no
if [ "${1:-}" = "--dry-run" ]; then dry_run=yes; shift; fi
if [ $dry_run = yes ]; then [ $# -eq 1 ] || usage; else [ $# -eq 2 ] || usage; fi
bundle=$(cd "$1" 2>/dev/null && pwd) || { echo "gpu-check: error: no bundle folder $1" >&2; exit 1; }
lib=$bundle/scripts/gpu_check_lib.py
for tool in python3 timeout sha256sum ldd; do
  command -v $tool >/dev/null || { echo "gpu-check: error: $tool is missing" >&2; exit 1; }
done
[ -f "$bundle/bundle.json" ] ||
  { echo "gpu-check: error: $bundle has no bundle.json: not a bundle made by scripts/gpu-bundle.sh" >&2; exit 1; }
[ -f "$lib" ] || { echo "gpu-check: error: $lib is missing" >&2; exit 1; }

if [ $dry_run = yes ]; then
  echo "gpu-check: dry run of $bundle"
  python3 "$lib" validate "$bundle"
  status=$?
  echo "gpu-check: the run would do:"
  python3 "$lib" plan "$bundle" | awk -F'|' '{print "  " $1 ": " $2}'
  python3 -c 'import numpy' 2>/dev/null ||
    echo "gpu-check: note: python3 here has no numpy (the GPU machine's must)"
  exit $status
fi

out=$2
mkdir -p "$out" || { echo "gpu-check: error: cannot create $out" >&2; exit 1; }
out=$(cd "$out" && pwd)
log=$out/gpu-check.log
summary=$out/summary.txt
: >"$log"; : >"$summary"
echo "[]" >"$out/bench.json"
work=$(mktemp -d /tmp/pipecc-gpu-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
deadline=$((start + 450))
passed=0
failed=0

say() { echo "$*" | tee -a "$log"; }
result() { # ok|FAIL text
  say "$1 $2"
  echo "$1 $2" >>"$summary"
  if [ "$1" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
finish() {
  say "gpu-check: $passed passed, $failed failed ($(( $(date +%s) - start )) s)"
  echo "$passed passed, $failed failed" >>"$summary"
  [ "$failed" = 0 ]
  exit $?
}
abort() { result FAIL "$*"; say "gpu-check: stopping: the steps after this need it"; finish; }
# Seconds a step may take: its own limit, or what the deadline leaves.
budget() {
  local left=$((deadline - $(date +%s) - 10))
  [ "$left" -lt "$1" ] && echo "$left" || echo "$1"
}
# Runs a command under a timeout, its output appended to the log (and, with
# STEP_OUTPUT set, also kept in that file).
step() { # limit label command...
  local limit label rc capture
  limit=$(budget "$1"); label=$2; shift 2
  if [ "$limit" -lt 5 ]; then
    say "-- $label: no time left"
    return 124
  fi
  say "-- $label (timeout ${limit}s): $*"
  capture=${STEP_OUTPUT:-$work/step.out}
  timeout --kill-after=5 "$limit" "$@" >"$capture" 2>&1
  rc=$?
  cat "$capture" >>"$log"
  if [ $rc = 124 ] || [ $rc = 137 ]; then say "   timed out after ${limit}s"; fi
  return $rc
}

say "gpu-check: bundle $bundle, output $out, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
{
  echo "host: $(uname -a)"
  echo "python3: $(python3 --version 2>&1)"
  grep -E '"(commit|created)"' "$bundle/bundle.json"
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 ||
    echo "nvidia-smi: not available"
} >>"$log" 2>&1

# --- 1. Integrity, libraries, device ----------------------------------------
if (cd "$bundle" && sha256sum --quiet -c MANIFEST.sha256 >>"$log" 2>&1); then
  result ok "bundle integrity (MANIFEST.sha256)"
else
  abort "bundle integrity: files differ from MANIFEST.sha256 (see gpu-check.log)"
fi
python3 -c 'import numpy' 2>/dev/null || abort "python3 has no numpy"

# Library folders: the bundle's, CUDA's, the driver's, and NVIDIA's Python
# wheels (nvidia-nccl-cu13, nvidia-cublas, ...) where NCCL and cuBLAS may
# be the only copies on the machine.
lib_dirs=("$bundle/lib")
for dir in "${CUDA_HOME:-/usr/local/cuda}"/lib64 "${CUDA_HOME:-/usr/local/cuda}"/lib \
           "${CUDA_HOME:-/usr/local/cuda}"/targets/x86_64-linux/lib /usr/local/nvidia/lib64 \
           /usr/local/nvidia/lib; do
  [ -d "$dir" ] && lib_dirs+=("$dir")
done
while IFS= read -r dir; do
  [ -d "$dir" ] && lib_dirs+=("$dir")
done < <(python3 - <<'EOF' 2>/dev/null
import os
try:
    import nvidia
except ImportError:
    raise SystemExit(0)
for base in nvidia.__path__:
    for name in sorted(os.listdir(base)):
        for sub in ("lib", os.path.join("cu13", "lib")):
            path = os.path.join(base, name, sub)
            if os.path.isdir(path):
                print(path)
EOF
)
export LD_LIBRARY_PATH="$(IFS=:; echo "${lib_dirs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
say "   LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
mapfile -t elves < <(cd "$bundle" && find bin models -type f -perm -u+x ! -name launch | sort)
unresolved() {
  local exe
  for exe in "${elves[@]}"; do
    ldd "$bundle/$exe" 2>&1 | grep -E 'not found' | sed "s|^|$exe: |"
  done
}
missing_libs=$(unresolved)
if grep -q "GLIBCXX\|CXXABI\|GCC_" <<<"$missing_libs"; then
  say "   the machine's C++ runtime is older than the build machine's: using lib/fallback"
  export LD_LIBRARY_PATH="$bundle/lib/fallback:$LD_LIBRARY_PATH"
  missing_libs=$(unresolved)
fi
if [ -n "$missing_libs" ]; then
  echo "$missing_libs" | sed 's/^/   /' | tee -a "$log"
  abort "libraries: some that the executables need are not on this machine (above)"
fi
result ok "libraries: every executable's resolve (ldd)"

mapfile -t plan < <(python3 "$lib" plan "$bundle")
for line in "${plan[@]}"; do
  IFS='|' read -r kind a _ <<<"$line"
  [ "$kind" = probe ] && probe=$bundle/$a
  [ "$kind" = kernels ] && kernels=$bundle/$a
done
if step 60 "device probe" "$probe"; then
  result ok "device: $(grep -m1 '^device 0:' "$log" | sed 's/^device 0: //')"
else
  abort "device: pipecc-cuda-device-probe found no usable GPU ($(grep -m1 'no usable device' "$log"))"
fi

# --- 2. Kernel tests ---------------------------------------------------------
# The kernel tests skip themselves where no GPU is found: here a skip fails.
# The transport tests fork one process per rank, and CUDA cannot be used in
# a child forked after the parent initialized it: so they run in a process of
# their own, apart from the kernel tests that initialize CUDA in-process.
for suite in "kernels|-CudaTransports.*" "transports|CudaTransports.*"; do
  IFS='|' read -r what filter <<<"$suite"
  kernel_log=$work/kernel-tests-$what.log
  if STEP_OUTPUT=$kernel_log step 120 "CUDA $what tests" "$kernels" --gtest_brief=1 \
       "--gtest_filter=$filter"; then
    # One skip is by design on a single GPU: NCCL across two ranks.
    skipped=$(grep -c 'Skipped$' "$kernel_log" || true)
    if grep -q '\[  SKIPPED \]' "$kernel_log" &&
       ! { [ "$what" = transports ] && [ "$skipped" -le 1 ] &&
           grep -q 'fewer than two GPUs' "$kernel_log"; }; then
      result FAIL "$what tests: some were skipped (no usable GPU for them?)"
    else
      result ok "$what tests: $(grep -E '\[  PASSED  \]' "$kernel_log" | tail -1 | sed 's/.*PASSED  \] //')"
    fi
  else
    result FAIL "$what tests (see gpu-check.log)"
  fi
done

# --- 3. Training steps against the CPU target ----------------------------
bench_results=()
for line in "${plan[@]}"; do
  IFS='|' read -r kind name dir stages transport data reference tolerance <<<"$line"
  [ "$kind" = check ] || continue
  dump=$work/$(echo "$name" | tr ' =' '__').safetensors
  # shellcheck disable=SC2086 # the transport's environment is words
  if ! step 90 "$name: one step" env $transport "$bundle/$dir/launch" --steps 1 --quiet \
       --data "$bundle/$data" --dump-grads "$dump"; then
    result FAIL "$name: the training step failed (see gpu-check.log)"
    continue
  fi
  if step 60 "$name: gradients against the CPU target" python3 \
       "$bundle/scripts/compare_grads.py" "$bundle/$reference" "$dump" \
       --tolerance "$tolerance" --label "$name"; then
    result ok "$name: $(grep -F "$name: worst relative L2" "$log" | tail -1 | sed "s/^$name: //")"
  else
    result FAIL "$name: gradients differ from the CPU target's (see gpu-check.log)"
  fi
done

# --- 4. The bf16 benchmark -------------------------------------------------
for line in "${plan[@]}"; do
  IFS='|' read -r kind name dir stages transport weights steps warmup flops peak <<<"$line"
  [ "$kind" = bench ] || continue
  weights_file=$work/$(sha256sum "$bundle/$weights" | cut -c1-16).safetensors
  if [ ! -f "$weights_file" ] &&
     ! step 120 "$name: random weights" python3 "$bundle/scripts/make_weights.py" \
       "$bundle/$weights" "$weights_file"; then
    result FAIL "$name: could not write its random weights"
    continue
  fi
  run_log=$work/$(echo "$name" | tr ' =' '__').log
  # shellcheck disable=SC2086 # the transport's environment is words
  STEP_OUTPUT=$run_log step 180 "$name: $steps steps" env $transport \
    "$bundle/$dir/launch" --steps "$steps" --synthetic --weights "$weights_file"
  rc=$?
  if [ $rc != 0 ]; then
    result FAIL "$name: the run failed (exit $rc, see gpu-check.log)"
    continue
  fi
  if report=$(python3 "$lib" bench-report "$run_log" "$flops" "$warmup" "$peak" 2>>"$log"); then
    bench_results+=("{\"name\": \"$name\", \"result\": $report}")
    result ok "$name: $(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("%.1f samples/s (median of steps %d-%d), %.1f TFLOP/s, MFU %.1f%% of %g TFLOP/s; loss %.4f -> %.4f" % (
    r["samples_per_s"], r["timed_steps"][0], r["timed_steps"][1], r["tflops"],
    100 * r["mfu"], r["peak_tflops"], r["first_loss"], r["last_loss"]))' "$report")"
  else
    result FAIL "$name: no step lines to measure (see gpu-check.log)"
  fi
done
(IFS=,; echo "[${bench_results[*]}]") >"$out/bench.json"

# --- 5. Where the benchmark's step goes -------------------------------------
# Each rank's median step split by `--timers` (a result); at P = 1 also the
# kernels by time (ncu, where it is installed and can read the GPU's
# counters: information, never a failure).
# PIPECC_NCU names the profiler (set and empty: none).
if [ -n "${PIPECC_NCU+set}" ]; then
  ncu=$PIPECC_NCU
else
  ncu=$(command -v ncu || true)
  [ -z "$ncu" ] && [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ncu" ] && ncu=${CUDA_HOME:-/usr/local/cuda}/bin/ncu
fi
for line in "${plan[@]}"; do
  IFS='|' read -r kind name dir stages transport weights _ <<<"$line"
  [ "$kind" = bench ] || continue
  weights_file=$work/$(sha256sum "$bundle/$weights" | cut -c1-16).safetensors
  [ -f "$weights_file" ] || continue
  slug=$(echo "$name" | tr ' =' '__')
  timers_log=$work/$slug.timers.log
  # shellcheck disable=SC2086 # the transport's environment is words
  if STEP_OUTPUT=$timers_log step 120 "$name: step times" env $transport \
       "$bundle/$dir/launch" --steps 6 --synthetic --weights "$weights_file" --timers &&
     report=$(python3 "$lib" timers-report "$timers_log" 2>>"$log"); then
    result ok "$name: $report"
  else
    result FAIL "$name: no step times (see gpu-check.log)"
  fi
  if [ "$stages" != 1 ]; then continue; fi
  if [ -z "$ncu" ]; then
    say "   $name: kernel times skipped: no ncu on this machine"
    continue
  fi
  ncu_log=$out/ncu-$slug.txt
  # shellcheck disable=SC2086 # the transport's environment is words
  if STEP_OUTPUT=$ncu_log step 240 "$name: kernel times (ncu, 2 steps)" env $transport \
       "$ncu" --clock-control none --target-processes all \
       --metrics gpu__time_duration.sum --print-summary per-kernel \
       "$bundle/$dir/launch" --steps 2 --synthetic --weights "$weights_file" &&
     python3 "$lib" kernel-summary "$ncu_log" 2 15 >"$out/kernels-$slug.txt" 2>>"$log"; then
    say "   $name: $(head -1 "$out/kernels-$slug.txt"); top kernels in kernels-$slug.txt"
  else
    say "   $name: no kernel times (ncu could not profile here; see gpu-check.log)"
  fi
done
finish
