#!/usr/bin/env bash
# Configures and builds pipecc into build/ (Ninja, ccache, lld when present).
# Usage: scripts/build.sh [ninja targets...]   (default: the tools and tests)
# PIPECC_ENABLE_CUDA=AUTO|ON|OFF (default AUTO) chooses whether a new build
# folder builds the CUDA target (AUTO: when the CUDA toolkit is found).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPECC_BUILD_DIR:-$root/build}

if [ ! -f "$build/build.ninja" ]; then
  linker=()
  command -v ld.lld >/dev/null && linker=(-DLLVM_USE_LINKER=lld)
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py "${linker[@]}" \
    -DPIPECC_ENABLE_CUDA="${PIPECC_ENABLE_CUDA:-AUTO}"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pipecc pipecc-opt)
ninja -C "$build" "${targets[@]}"
