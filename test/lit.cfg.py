# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "pipecc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "Unit", "unittests", "fuzz", "CMakeLists.txt",
                   "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pipecc_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"

config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%pipecc_src", config.pipecc_src_root))
config.substitutions.append(("%pipecc_obj", config.pipecc_obj_root))

# A sanitized build (scripts/sanitize.sh) links bigger rank executables and
# must come first among preloaded libraries: tests that depend on either say
# so with this feature.
if getattr(config, "pipecc_sanitizers", ""):
    config.available_features.add("sanitized-build")

# The PyTorch-exported reference cases live beside the checkout (../shared);
# tests that read them say `REQUIRES: shared-cases`.
if os.path.isdir(config.shared_cases_dir):
    config.available_features.add("shared-cases")
    config.substitutions.append(("%shared_cases", config.shared_cases_dir))

# The packed-weight GEMM engine (runtime/lib/CPU/Gemm) runs on CPUs with
# AVX2 and FMA (its AVX-512 kernel where the CPU also has AVX-512F);
# elsewhere the runtime leaves packing to the BLAS.
try:
    with open("/proc/cpuinfo") as _cpuinfo:
        _flags = next((line.split(":", 1)[1].split()
                       for line in _cpuinfo if line.startswith("flags")), [])
except OSError:
    _flags = []
if "avx2" in _flags and "fma" in _flags:
    config.available_features.add("packed-weight-kernel")

tool_dirs = [config.pipecc_tools_dir, config.llvm_tools_dir]
tools = ["pipecc", "pipecc-opt",
         ToolSubst("%pipecc_runtime_mpi_test", command=os.path.join(
             config.pipecc_tools_dir, "pipecc-runtime-mpi-test"),
             unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# MPI tests run several ranks on a 2-core machine, possibly as root.
mpirun = ["mpirun", "--oversubscribe"]
if hasattr(os, "geteuid") and os.geteuid() == 0:
    mpirun.append("--allow-run-as-root")
config.substitutions.append(("%mpirun", " ".join(mpirun)))
for var in ["OMPI_MCA_plm", "HOME", "TMPDIR",
            # scripts/sanitize.sh; lit.llvm drops ASAN_OPTIONS (a missing comma).
            "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

# --- The CUDA target (issue 8; canonical definitions of the CUDA features) --
# Features:
#   pipecc-cuda    pipecc was built with the CUDA target (PIPECC_ENABLE_CUDA
#                  found the toolkit and NCCL): `--target cuda` links ranks.
#   cuda-toolkit   nvcc, ptxas and cuobjdump are at hand (the toolkit's bin/,
#                  PATH, or the cuobjdump that scripts/setup.sh installs).
#   cuda-device    a GPU runs code here: pipecc-cuda-device-probe runs a
#                  kernel on device 0 (else `nvidia-smi -L` lists a GPU).
#                  PIPECC_CUDA_DEVICE=0 or 1 overrides the probe. Off on CI.
# Substitutions: %nvcc, %ptxas, %cuobjdump (full paths), %pipecc_cuda
# (pipecc --target cuda --gpu-arch sm_90), %cuda_device_probe, and the
# command prefixes choosing the CUDA runtime's transport (runtime/lib/CUDA:
# PIPECC_CUDA_TRANSPORT), %cuda_nccl (one rank per GPU) and
# %cuda_host_staged (several ranks sharing a GPU, through host memory).
import shutil
import subprocess


def _cuda_tool(name, configured=""):
    """A CUDA tool's path: CMake's finding, the toolkit's bin/, then PATH."""
    if configured and os.path.isfile(configured) and os.access(configured,
                                                               os.X_OK):
        return configured
    for folder in [config.cuda_toolkit_bin_dir, "/usr/local/cuda/bin"]:
        candidate = os.path.join(folder, name) if folder else ""
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _cuda_device_usable():
    forced = os.environ.get("PIPECC_CUDA_DEVICE")
    if forced in ("0", "1"):
        return forced == "1"
    probe = os.path.join(config.pipecc_tools_dir, "pipecc-cuda-device-probe")
    commands = [[probe]] if os.access(probe, os.X_OK) else []
    if shutil.which("nvidia-smi"):
        commands.append(["nvidia-smi", "-L"])
    for command in commands:
        try:
            result = subprocess.run(command, capture_output=True, text=True,
                                    timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if result.returncode == 0 and ("GPU " in result.stdout or
                                       command[0] == probe):
            return True
        if command[0] == probe:
            return False  # The probe's answer is final: it ran a kernel.
    return False


_cuda_tools = {name: _cuda_tool(name, configured) for name, configured in
               [("nvcc", ""), ("ptxas", ""),
                ("cuobjdump", getattr(config, "cuobjdump", ""))]}
if all(_cuda_tools.values()):
    config.available_features.add("cuda-toolkit")
for _name, _path in _cuda_tools.items():
    if _path:
        config.substitutions.append(("%" + _name, _path))
if getattr(config, "pipecc_cuda_enabled", "OFF").upper() in ("ON", "TRUE",
                                                              "1"):
    config.available_features.add("pipecc-cuda")
    config.substitutions.append(("%pipecc_cuda", os.path.join(
        config.pipecc_tools_dir, "pipecc") + " --target cuda --gpu-arch sm_90"))
    config.substitutions.append(("%cuda_device_probe", os.path.join(
        config.pipecc_tools_dir, "pipecc-cuda-device-probe")))
    config.substitutions.append(("%cuda_nccl",
                                 "env PIPECC_CUDA_TRANSPORT=nccl"))
    config.substitutions.append(("%cuda_host_staged",
                                 "env PIPECC_CUDA_TRANSPORT=staged"))
if _cuda_device_usable():
    config.available_features.add("cuda-device")
for var in ["PIPECC_CUDA_DEVICE", "CUDA_VISIBLE_DEVICES"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# --- end of the CUDA target block --------------------------------------------
# The CUDA runtime was built (PIPECC_ENABLE_CUDA with the core runtime): CUDA
# rank executables can be linked. Running their kernels needs cuda-device.
if os.path.exists(os.path.join(config.pipecc_obj_root, "lib",
                               "pipecc_runtime_cuda_link.rsp")):
    config.available_features.add("cuda-runtime")
