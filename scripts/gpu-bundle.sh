#!/usr/bin/env bash
# Usage: scripts/gpu-bundle.sh DIR
#
# On the build machine: compiles the models of the GPU check for the CUDA
# target and gathers into DIR (replaced; under 60 MiB, checked) everything
# scripts/gpu-check.sh needs on a GPU machine that has only the NVIDIA
# driver, the CUDA and NCCL libraries, bash and python3 with numpy (no MPI,
# no LLVM, no compiler):
#
#   bundle.json        what gpu-check.sh runs (checks, benchmark, transports)
#   MANIFEST.sha256    sha256sum of every other file
#   gpu-check.sh, scripts/{compare_grads.py,make_weights.py,gpu_check_lib.py}
#   bin/               pipecc-cuda-device-probe, the CUDA kernel tests
#                      (GoogleTest, gtest linked statically)
#   models/<m>/p<P>/   `pipecc --target cuda --target-cpu generic` outputs
#                      (the GPU machine's CPU is not this one's): mlp_relu and
#                      tiny_gpt_untied at P = 1, 2, 4 (fp32); bench_mlp, a
#                      wide MLP, at P = 1 and 2 in bf16, its weights left
#                      out (weights.json: names and shapes; gpu-check.sh
#                      makes random ones: 285 MiB would not fit)
#   data/<m>/          the cases' inputs as .npy files
#   ref/<m>.cpu.safetensors  the CPU target's step-1 loss and gradients
#   lib/               libraries the executables need beyond the driver,
#                      the CUDA/NCCL libraries and glibc (none, ideally)
#   lib/fallback/      libstdc++ and libgcc_s of the build machine, used by
#                      gpu-check.sh only where the GPU machine's are older
#
# Fails loudly, naming what is missing: the pieces of the CUDA target it
# needs (pipecc's --target and --precision, the CUDA runtime's link file, the
# kernel tests), the shared cases, a library a rank needs that must not be
# needed there (OpenBLAS, MPI, LLVM), a rank without sm_90 code, the size.
#
# Environment: PIPECC_BUILD_DIR (default build/), PIPECC_SHARED_CASES
# (default ../shared/cases beside the checkout), PIPECC_CUDA_KERNEL_TESTS
# (the kernel test binary; default: *cuda*kernel*test* in the build folder,
# i.e. test/unittests/CudaRuntime/CudaKernelsTests),
# PIPECC_BUNDLE_WORK (scratch folder, default a fresh one in /tmp),
# PIPECC_GPU_TRANSPORT_NCCL / PIPECC_GPU_TRANSPORT_STAGED (the environment
# that chooses each transport of the CUDA runtime; default
# `PIPECC_CUDA_TRANSPORT=nccl` and `PIPECC_CUDA_TRANSPORT=staged`).
set -euo pipefail

die() { echo "gpu-bundle: error: $*" >&2; exit 1; }
note() { echo "gpu-bundle: $*"; }

[ $# -eq 1 ] || die "usage: scripts/gpu-bundle.sh DIR"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PIPECC_BUILD_DIR:-$root/build}
cases=${PIPECC_SHARED_CASES:-$root/../shared/cases}
pipecc=$build/bin/pipecc
probe=$build/bin/pipecc-cuda-device-probe
link_file=$build/lib/pipecc_runtime_cuda_link.rsp
nccl_env=${PIPECC_GPU_TRANSPORT_NCCL:-PIPECC_CUDA_TRANSPORT=nccl}
staged_env=${PIPECC_GPU_TRANSPORT_STAGED:-PIPECC_CUDA_TRANSPORT=staged}
gpu_arch=sm_90
size_limit_mib=60
out=$1
case "$out" in
  /*) ;;
  *) out=$PWD/$out ;;
esac

# DIR is replaced only when it is a bundle (or empty): never a folder of
# the user's. The bundle is assembled beside it and moved into place at the
# end, so a failure leaves no half-made bundle.
if [ -e "$out" ] && [ ! -f "$out/bundle.json" ] &&
   [ -n "$(ls -A "$out" 2>/dev/null || echo x)" ]; then
  die "$out exists and is not a GPU bundle (no bundle.json): give a new or empty folder"
fi
# --- Preflight: every missing piece at once -------------------------------
missing=()
if [ ! -x "$pipecc" ]; then
  missing+=("pipecc is not built ($pipecc): run scripts/build.sh")
else
  help=$("$pipecc" --help 2>&1 || true)
  grep -Eq -- '^ +--target[= ]' <<<"$help" ||
    missing+=("pipecc has no --target option (issue 8 item 1: the target interface and --target cpu|cuda)")
  grep -Eq -- '^ +--gpu-arch[= ]' <<<"$help" ||
    missing+=("pipecc has no --gpu-arch option (issue 8 item 1)")
  grep -Eq -- '^ +--precision[= ]' <<<"$help" ||
    missing+=("pipecc has no --precision option (issue 8 item 6: bf16, for the benchmark)")
fi
[ -f "$link_file" ] ||
  missing+=("no CUDA runtime link file $link_file (pipecc_runtime_cuda, issue 8 items 2-4; configure with PIPECC_ENABLE_CUDA=ON)")
[ -x "$probe" ] ||
  missing+=("no $probe (built when the CUDA target is: PIPECC_ENABLE_CUDA)")
kernel_tests=${PIPECC_CUDA_KERNEL_TESTS:-}
if [ -z "$kernel_tests" ] && [ -d "$build" ]; then
  kernel_tests=$(find "$build/bin" "$build/test" "$build/runtime" -type f \
    -perm -u+x -iname '*cuda*kernel*test*' ! -path '*/CMakeFiles/*' \
    2>/dev/null | sort | head -1 || true)
fi
[ -n "$kernel_tests" ] && [ -x "$kernel_tests" ] ||
  missing+=("no CUDA kernel test binary (issue 8 item 3: the named kernels' GoogleTest against their CPU references; or set PIPECC_CUDA_KERNEL_TESTS)")
for case_name in mlp_relu tiny_gpt_untied; do
  [ -f "$cases/$case_name/model.onnx" ] && [ -f "$cases/$case_name/inputs.npz" ] ||
    missing+=("shared case $cases/$case_name (model.onnx, inputs.npz): set PIPECC_SHARED_CASES")
done
cuobjdump=
for candidate in "$(command -v cuobjdump || true)" /usr/local/cuda/bin/cuobjdump \
                 "$HOME/.cache/pipecc/cuda-tools/nvidia/cu13/bin/cuobjdump"; do
  if [ -z "$cuobjdump" ] && [ -n "$candidate" ] && [ -x "$candidate" ]; then
    cuobjdump=$candidate
  fi
done
[ -n "$cuobjdump" ] || missing+=("cuobjdump (scripts/setup.sh installs it)")
python3 -c 'import numpy, onnx' 2>/dev/null ||
  missing+=("python3 with numpy and onnx (scripts/setup.sh)")
for tool in readelf ldd sha256sum strip; do
  command -v "$tool" >/dev/null || missing+=("the $tool command")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu-bundle: error: cannot build the GPU bundle; missing:" >&2
  for piece in "${missing[@]}"; do echo "  - $piece" >&2; done
  exit 1
fi

if [ -n "${PIPECC_BUNDLE_WORK:-}" ]; then
  work=$PIPECC_BUNDLE_WORK
  mkdir -p "$work"
  cleanup_work=no
else
  work=$(mktemp -d /tmp/pipecc-gpu-bundle.XXXXXX)
  cleanup_work=yes
fi
staging=$out.staging
cleanup() {
  rm -rf "$staging"
  if [ "$cleanup_work" = yes ]; then rm -rf "$work"; else rm -f "$work/bench.onnx"; fi
}
trap cleanup EXIT
rm -rf "$staging"
mkdir -p "$staging"/{bin,lib/fallback,models,data,ref,scripts}

# Compiles, reporting pipecc's own error line on failure.
compile() { # label args...
  local label=$1; shift
  local log=$work/compile.log
  if ! "$pipecc" "$@" >"$log" 2>&1; then
    echo "gpu-bundle: error: compiling $label failed: pipecc $*" >&2
    sed 's/^/  /' "$log" >&2
    exit 1
  fi
}

# Copies a compiled output folder, leaving out the big weights when asked.
copy_output() { # from to keep_weights
  mkdir -p "$2"
  local f
  for f in "$1"/*; do
    case "$(basename "$f")" in
      *.mlir) continue ;;  # IR listings: not needed to run
      *.safetensors) [ "$3" = yes ] || continue ;;
    esac
    cp "$f" "$2/"
  done
}

checks_json=()
add_check() { # name model P transport_key
  checks_json+=("{\"name\": \"$1 P=$3 $4\", \"model\": \"$1\", \"dir\": \"models/$1/p$3\", \"stages\": $3, \"transport\": \"$4\", \"data\": \"data/$1\", \"reference\": \"ref/$1.cpu.safetensors\", \"tolerance\": \"fp32\"}")
}

# --- The gradient checks: mlp_relu and tiny_gpt_untied ----------------------
for case_name in mlp_relu tiny_gpt_untied; do
  note "compiling $case_name (CPU reference, CUDA P = 1, 2, 4)"
  data=$staging/data/$case_name
  python3 "$root/scripts/npz_to_data.py" "$cases/$case_name/inputs.npz" "$data"
  compile "$case_name for the CPU reference" "$cases/$case_name/model.onnx" \
    --stages 1 --microbatches 4 --target cpu -o "$work/$case_name.cpu" --force
  if ! "$work/$case_name.cpu/launch" --steps 1 --quiet --data "$data" \
       --dump-grads "$staging/ref/$case_name.cpu.safetensors" \
       >"$work/ref.log" 2>&1; then
    sed 's/^/  /' "$work/ref.log" >&2
    die "the CPU reference run of $case_name failed"
  fi
  for p in 1 2 4; do
    schedule=1f1b
    [ "$p" = 4 ] && schedule=zb-h1
    compile "$case_name at P=$p for CUDA" "$cases/$case_name/model.onnx" \
      --stages "$p" --microbatches 4 --schedule "$schedule" --target cuda \
      --gpu-arch "$gpu_arch" --target-cpu generic -o "$work/$case_name.p$p" --force
    copy_output "$work/$case_name.p$p" "$staging/models/$case_name/p$p" yes
    if [ "$p" = 1 ]; then add_check "$case_name" "$case_name" 1 nccl
    else add_check "$case_name" "$case_name" "$p" host_staged; fi
  done
done

# --- The benchmark: a wide MLP in bf16 at P = 1 and 2 -----------------------
note "generating and compiling bench_mlp (bf16, P = 1, 2)"
python3 "$root/scripts/gen_bench_mlp.py" "$work/bench.onnx"
flops=$(python3 "$root/scripts/model_flops.py" "$work/bench.onnx")
bench_json=()
for p in 1 2; do
  m=$((4 * p))
  compile "bench_mlp at P=$p for CUDA (bf16)" "$work/bench.onnx" \
    --loss cross-entropy --label-input labels --precision bf16 \
    --stages "$p" --microbatches "$m" --schedule 1f1b --target cuda \
    --gpu-arch "$gpu_arch" --target-cpu generic -o "$work/bench.p$p" --force
  dest=$staging/models/bench_mlp/p$p
  copy_output "$work/bench.p$p" "$dest" no
  # The weights' names, dtypes and shapes (safetensors headers).
  python3 "$root/scripts/gpu_check_lib.py" describe-weights "$work/bench.p$p" \
    "$dest/weights.json"
  transport=nccl
  [ "$p" = 1 ] || transport=host_staged
  bench_json+=("{\"name\": \"bench_mlp bf16 P=$p $transport\", \"dir\": \"models/bench_mlp/p$p\", \"stages\": $p, \"microbatches\": $m, \"transport\": \"$transport\", \"weights\": \"models/bench_mlp/p$p/weights.json\", \"steps\": 30, \"warmup_steps\": 5, \"model_flops\": $flops}")
done
rm -f "$work/bench.onnx" "$work"/bench.p*/rank*.safetensors

# --- Tools -----------------------------------------------------------------
cp "$probe" "$staging/bin/"
cp "$kernel_tests" "$staging/bin/"
cp "$root/scripts/gpu-check.sh" "$staging/"
cp "$root/scripts/compare_grads.py" "$root/scripts/make_weights.py" \
  "$root/scripts/gpu_check_lib.py" \
  "$staging/scripts/"

# --- Executables: sm_90 code, and the libraries they need -------------------
# Provided on the GPU machine: glibc, the driver, the CUDA and NCCL
# libraries. Never acceptable there: BLAS, MPI, LLVM/MLIR, shared gtest.
provided='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libcuda|libnvidia-[a-z-]+|libcudart|libcublas|libcublasLt|libnccl|libnvJitLink|libnvrtc)\.so'
cxx_runtime='^(libstdc\+\+|libgcc_s)\.so'
forbidden='^(libopenblas|libscipy_openblas|libblas|libcblas|liblapack|libmpi|libopen-rte|libopen-pal|libLLVM|libMLIR|libgtest|libgmock|libomp|libgomp)'
problems=()
mapfile -t elves < <(find "$staging/bin" "$staging/models" -type f -perm -u+x \
  -exec sh -c 'head -c4 "$1" | grep -q "ELF" && echo "$1"' _ {} \; | sort)
for exe in "${elves[@]}"; do
  rel=${exe#"$staging"/}
  # Symbols only: the fatbin and everything the program reads stay.
  strip --strip-unneeded "$exe"
  case "$rel" in
    models/*/rank*)
      # Listings read whole first: `cuobjdump | grep -q` under pipefail
      # fails whenever grep's early exit kills cuobjdump with SIGPIPE.
      listing=$("$cuobjdump" --list-elf "$exe" 2>/dev/null || true)
      grep -q "\.$gpu_arch\.cubin" <<<"$listing" ||
        problems+=("$rel holds no $gpu_arch code (cuobjdump --list-elf)")
      # Kernels generated from the stage functions (the runtime's own
      # kernels are sm_90 too): test/CUDA/compile_for_cuda.py's rule.
      listing=$("$cuobjdump" --dump-resource-usage "$exe" 2>/dev/null || true)
      grep -Eq '^ *Function stage[0-9]+_' <<<"$listing" ||
        problems+=("$rel holds no kernel generated from its stage functions (cuobjdump --dump-resource-usage)") ;;
  esac
  while read -r soname arrow path _; do
    [ -n "$soname" ] || continue
    soname=${soname##*/}
    if [[ $soname =~ $forbidden ]]; then
      problems+=("$rel needs $soname, which GPU machines lack")
    elif [[ $soname =~ $provided ]]; then
      :
    elif [[ $soname =~ $cxx_runtime ]]; then
      [ -f "$staging/lib/fallback/$soname" ] || cp -L "$path" "$staging/lib/fallback/$soname"
    elif [ "$arrow" = "=>" ] && [ -f "$path" ]; then
      [ -f "$staging/lib/$soname" ] || cp -L "$path" "$staging/lib/$soname"
    else
      problems+=("$rel needs $soname, not found here (ldd)")
    fi
  done < <(ldd "$exe" 2>/dev/null | sed -E 's/^\s+//; s/ \(0x[0-9a-f]+\)$//' | grep -Ev '^(statically linked|not a dynamic executable)')
done
if [ ${#problems[@]} -gt 0 ]; then
  echo "gpu-bundle: error: the executables are not fit for the GPU machine:" >&2
  for problem in "${problems[@]}"; do echo "  - $problem" >&2; done
  exit 1
fi

# --- bundle.json, manifest, size ---------------------------------------------
join() { local IFS=,; echo "$*"; }
cat >"$staging/bundle.json" <<EOF
{
 "format": 1,
 "created": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "commit": "$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)",
 "gpu_arch": "$gpu_arch",
 "peak_tflops": 989,
 "peak_note": "H200 SXM dense bf16 peak",
 "probe": "bin/$(basename "$probe")",
 "kernel_tests": "bin/$(basename "$kernel_tests")",
 "transports": {"nccl": "$nccl_env", "host_staged": "$staged_env"},
 "checks": [$(join "${checks_json[@]}")],
 "bench": [$(join "${bench_json[@]}")]
}
EOF
python3 -m json.tool "$staging/bundle.json" >/dev/null ||
  die "internal error: bundle.json is not valid JSON"
(cd "$staging" && find . -type f ! -name MANIFEST.sha256 | sed 's|^\./||' |
  sort | xargs sha256sum >MANIFEST.sha256)
size=$(du -sb "$staging" | cut -f1)
size_mib=$(( (size + 1048575) / 1048576 ))
if [ "$size" -gt $((size_limit_mib * 1048576)) ]; then
  du -ab "$staging" | sort -n | tail -8 | sed 's/^/  /' >&2
  die "the bundle is $size_mib MiB, over the $size_limit_mib MiB limit (largest files above)"
fi
rm -rf "$out"
mv "$staging" "$out"
"$out/gpu-check.sh" --dry-run "$out"
note "bundle ready: $out ($size_mib MiB, $(wc -l <"$out/MANIFEST.sha256") files)"
