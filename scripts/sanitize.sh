#!/usr/bin/env bash
# The whole test suite (check-pipecc) under AddressSanitizer and
# UndefinedBehaviorSanitizer: configures build-asan/ with the default
# compiler and PIPECC_SANITIZERS=address,undefined, which also links every
# rank executable pipecc builds with the sanitizer runtimes (the runtime's
# link file), builds, and runs the suite. Slow: about an hour on 2 cores.
#
# Usage: scripts/sanitize.sh [ninja targets...]   (default: check-pipecc)
#
# Leak checking is off (ASAN_OPTIONS=detect_leaks=0): OpenMPI leaks by design
# in every MPI program, and LLVM keeps some allocations until exit. The
# fuzzers (scripts/fuzz.sh) do check for leaks in the readers and importer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPECC_ASAN_BUILD_DIR:-$root/build-asan}

if [ ! -f "$build/build.ninja" ]; then
  linker=()
  command -v ld.lld >/dev/null && linker=(-DLLVM_USE_LINKER=lld)
  # -O1 keeps the sanitized build's compile time and stack traces reasonable.
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DPIPECC_SANITIZERS=address,undefined \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py "${linker[@]}"
fi
# lit passes the *SAN_OPTIONS on to the tests, and mpirun to the ranks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(check-pipecc)
ninja -C "$build" "${targets[@]}"
