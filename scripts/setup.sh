#!/usr/bin/env bash
# Installs every system and Python package pipecc's build and tests need.
# Idempotent: when everything is present it only checks and returns.
set -euo pipefail

APT_PACKAGES=(
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools clang-19 lld-19
  libclang-rt-19-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libopenmpi-dev openmpi-bin libopenblas-dev ninja-build ccache
  cmake g++ libgtest-dev python3
)
PY_PACKAGES=(numpy onnx)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
need_py=()
for m in "${PY_PACKAGES[@]}"; do
  "$PY" -c "import $m" 2>/dev/null || need_py+=("$m")
done
if [ ${#need_py[@]} -gt 0 ]; then
  echo "setup: pip installing ${need_py[*]}"
  "$PY" -m pip install -q "${need_py[@]}"
fi

# The CPU target's BLAS: OpenBLAS as the scipy-openblas32 wheel (OpenBLAS
# 0.3.34, every x86-64 kernel, chosen at run time by CPUID features; symbols
# prefixed scipy_), in a folder of its own that CMake looks in (see
# docs/design.md, "The BLAS"). Debian's OpenBLAS (above) stays the fallback.
blas_dir=${HOME}/.cache/pipecc/scipy-openblas32
blas_version=0.3.34.481.3
if [ "$(uname -m)" = x86_64 ] \
   && ! grep -qx "$blas_version" "$blas_dir/VERSION" 2>/dev/null; then
  echo "setup: pip installing scipy-openblas32==$blas_version into $blas_dir"
  rm -rf "$blas_dir"
  "$PY" -m pip install -q --no-deps --target "$blas_dir" \
    "scipy-openblas32==$blas_version"
  echo "$blas_version" > "$blas_dir/VERSION"
fi

# The CUDA target (optional: built when CUDA is at /usr/local/cuda or
# CUDA_PATH). Its tests list the GPU code in rank executables with
# cuobjdump, which some CUDA installs lack: then NVIDIA's pip package
# provides it, in a folder of its own that CMake looks in.
cuda=${CUDA_PATH:-/usr/local/cuda}
cuda_tools=${HOME}/.cache/pipecc/cuda-tools
if [ -x "$cuda/bin/nvcc" ] && [ ! -x "$cuda/bin/cuobjdump" ] \
   && ! command -v cuobjdump >/dev/null \
   && [ ! -x "$cuda_tools/nvidia/cu13/bin/cuobjdump" ]; then
  echo "setup: pip installing nvidia-cuda-cuobjdump into $cuda_tools"
  "$PY" -m pip install -q --target "$cuda_tools" "nvidia-cuda-cuobjdump==13.2.51"
fi
echo "setup: toolchain ready"
