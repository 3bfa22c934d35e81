#!/usr/bin/env bash
# Builds the libFuzzer targets (test/fuzz/, clang-19 with ASan + UBSan) in
# build-fuzz/ and runs each on its seed corpus, then prints executions,
# executions per second and crashes per target. Exits 1 when any target
# crashed, hung, leaked or ran out of memory.
#
# Usage: scripts/fuzz.sh [--seconds N] [--runs N] [--jobs J] [--build-only]
#                        [onnx|npy|safetensors ...]
#   --seconds N   time per target (default 300; scripts/check.sh uses 20)
#   --runs N      stop a target after N executions instead (with --seconds
#                 as an upper bound)
#   --jobs J      run up to J targets at once (default 1)
#   --build-only  configure and build, run nothing
#   --no-build    run what build-fuzz/ holds (e.g. while another run builds)
# New inputs go to build-fuzz/corpus/<target> (the seeds in test/fuzz/corpus stay
# as they are); a crashing input is written to build-fuzz/artifacts/<target>/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPECC_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=300 runs=0 jobs=1 build_only=0 build_step=1 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --no-build) build_step=0; shift ;;
    onnx|npy|safetensors) targets+=("$1"); shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$seconds" "$runs" "$jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: error: '$n' is not a count" >&2; exit 2; }
done
[ ${#targets[@]} -gt 0 ] || targets=(onnx npy safetensors)

if [ ! -f "$build/build.ninja" ]; then
  linker=()
  command -v ld.lld >/dev/null && linker=(-DLLVM_USE_LINKER=lld)
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DPIPECC_BUILD_FUZZERS=ON -DPIPECC_BUILD_TESTS=OFF "${linker[@]}" >/dev/null
fi
[ "$build_step" = 0 ] || ninja -C "$build" "${targets[@]/#/pipecc-fuzz-}"
[ "$build_only" = 0 ] || exit 0

# Leaks are bugs too; a hang is an input that runs over 10 s.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_target() {
  local t=$1 work=$build/corpus/$1 artifacts=$build/artifacts/$1/
  mkdir -p "$work" "$artifacts"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
              -print_final_stats=1 -artifact_prefix="$artifacts"
              -dict="$root/test/fuzz/dicts/$t.dict")
  [ "$runs" = 0 ] || args+=(-runs="$runs")
  [ "$t" != onnx ] || args+=(-max_len=4096)
  local rc=0
  touch "$build/fuzz-$t.start"
  "$build/bin/pipecc-fuzz-$t" "${args[@]}" "$work" "$root/test/fuzz/corpus/$t" \
    >"$build/fuzz-$t.log" 2>&1 || rc=$?
  echo "$rc" >"$build/fuzz-$t.rc"
}

for t in "${targets[@]}"; do rm -f "$build/fuzz-$t.rc"; done
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$jobs" -le "$running" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=0
for t in "${targets[@]}"; do
  log=$build/fuzz-$t.log rc=$(cat "$build/fuzz-$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  crashes=$(find "$build/artifacts/$t" -type f -newer "$build/fuzz-$t.start" | wc -l)
  status=ok
  if [ "$rc" != 0 ]; then
    status="FAILED (exit $rc): see $log"
    failed=1
  fi
  printf 'pipecc-fuzz-%s: %s executions, %s exec/s, %s crash inputs in %s; %s\n' \
    "$t" "${execs:-?}" "${rate:-?}" "$crashes" "$build/artifacts/$t" "$status"
done
exit "$failed"
