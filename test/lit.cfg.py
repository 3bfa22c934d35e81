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

# The CUDA toolkit's compilers (the CUDA stage-lowering tests run ptxas
# through gpu-module-to-binary and list the fatbin with cuobjdump; no GPU
# needed). cuobjdump may come from the toolkit, PATH, or the pip wheel
# nvidia-cuda-cuobjdump under ~/.cache/pipecc/cuda-tools.
import shutil

_cuda_bin = os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/bin"
_cuobjdump = next((path for path in [
    os.path.join(_cuda_bin, "cuobjdump"), shutil.which("cuobjdump"),
    os.path.expanduser("~/.cache/pipecc/cuda-tools/nvidia/cu13/bin/cuobjdump")]
    if path and os.access(path, os.X_OK)), None)
if os.access(os.path.join(_cuda_bin, "ptxas"), os.X_OK) and _cuobjdump:
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%cuobjdump", _cuobjdump))
# The CUDA runtime was built (PIPECC_ENABLE_CUDA with the core runtime): CUDA
# rank executables can be linked. Running their kernels needs cuda-device.
if os.path.exists(os.path.join(config.pipecc_obj_root, "lib",
                               "pipecc_runtime_cuda_link.rsp")):
    config.available_features.add("cuda-runtime")
