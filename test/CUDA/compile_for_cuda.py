#!/usr/bin/env python3
"""Compiles one end-to-end test model for the CUDA target under several
(stages, micro-batches, schedule) configurations, without running it, and
checks each output folder:

  * `launch` and `rank<k>` for every k < P exist and are executable;
  * `cuobjdump --list-elf rank<k>` lists a cubin for the GPU architecture
    asked for (sm_90), and `cuobjdump --dump-resource-usage` shows, in sm_90
    machine code, at least one kernel generated from the rank's stage
    functions (named `stage<s>_<kind>_kernel...` by the gpu outlining; the
    runtime library's own kernels, also sm_90, do not count);
  * no rank needs OpenBLAS or MPI (readelf's NEEDED entries): CUDA ranks
    run on GPU nodes that carry only the driver and the CUDA and NCCL
    libraries (issue 8, item 5).

Prints one line per configuration and a summary line
(`N passed, N failed`); exits 1 on any failure.

    compile_for_cuda.py --pipecc build/bin/pipecc --cuobjdump cuobjdump \\
        --model m.onnx --configs 1:4:gpipe,2:4:1f1b,4:4:zb-h1 --work /tmp/w
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# Libraries a CUDA rank must not need (the GPU machine lacks them).
FORBIDDEN_LIBRARIES = re.compile(r"^lib(openblas|scipy_openblas|blas|cblas|mpi|"
                                 r"open-rte|open-pal)\b")


def run(cmd, timeout):
    result = subprocess.run(cmd, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            result.returncode, " ".join(cmd), result.stdout, result.stderr))
    return result.stdout


def needed_libraries(path):
    out = run(["readelf", "-d", path], timeout=60)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def generated_kernels(listing, gpu_arch, pattern):
    """Names of the kernels matching `pattern` in the sm_XX machine code of
    a `cuobjdump --dump-resource-usage` listing."""
    names, arch, in_elf = [], None, False
    for line in listing.splitlines():
        line = line.strip()
        if line.startswith("Fatbin "):
            in_elf, arch = line.startswith("Fatbin elf code"), None
        elif line.startswith("arch = "):
            arch = line[len("arch = "):]
        elif in_elf and arch == gpu_arch and line.startswith("Function "):
            name = line[len("Function "):].rstrip(":")
            if re.match(pattern, name):
                names.append(name)
    return names


def check_config(args, stages, microbatches, schedule):
    out = os.path.join(args.work, "p%d_m%d_%s" % (stages, microbatches,
                                                  schedule))
    shutil.rmtree(out, ignore_errors=True)
    run([args.pipecc, args.model, "--stages", str(stages), "--microbatches",
         str(microbatches), "--schedule", schedule, "--target", "cuda",
         "--gpu-arch", args.gpu_arch, "-o", out] + args.pipecc_flag,
        timeout=args.timeout)
    problems, cubins, kernels = [], [], []
    launch = os.path.join(out, "launch")
    if not os.access(launch, os.X_OK):
        problems.append("no executable launch")
    for rank in range(stages):
        exe = os.path.join(out, "rank%d" % rank)
        if not os.access(exe, os.X_OK):
            problems.append("no executable rank%d" % rank)
            continue
        listing = subprocess.run([args.cuobjdump, "--list-elf", exe],
                                 capture_output=True, text=True, timeout=60)
        elves = re.findall(r"^ELF file\s+\d+: (\S+)", listing.stdout,
                           re.MULTILINE)
        wanted = [e for e in elves if e.endswith("." + args.gpu_arch +
                                                 ".cubin")]
        if not wanted:
            problems.append("rank%d holds no %s cubin (cuobjdump --list-elf: "
                            "%s)" % (rank, args.gpu_arch,
                                     (listing.stdout + listing.stderr).strip()
                                     or "nothing"))
        cubins.append(len(wanted))
        usage = subprocess.run([args.cuobjdump, "--dump-resource-usage", exe],
                               capture_output=True, text=True, timeout=60)
        names = generated_kernels(usage.stdout, args.gpu_arch,
                                  args.kernel_pattern)
        if not names:
            problems.append("rank%d holds no generated kernel (%s) in %s "
                            "code" % (rank, args.kernel_pattern,
                                      args.gpu_arch))
        kernels.append(len(names))
        bad = [lib for lib in needed_libraries(exe)
               if FORBIDDEN_LIBRARIES.match(lib)]
        if bad:
            problems.append("rank%d needs %s" % (rank, ", ".join(bad)))
    return problems, cubins, kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--configs", required=True,
                        help="P:M:schedule[,...], e.g. 1:4:gpipe,4:4:zb-h1")
    parser.add_argument("--gpu-arch", default="sm_90")
    parser.add_argument("--kernel-pattern", default=r"stage\d+_",
                        help="regex naming the kernels generated from stage "
                             "functions")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds per compile")
    parser.add_argument("--pipecc-flag", action="append", default=[],
                        help="an extra pipecc option (repeatable)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    passed, failed = 0, 0
    for config in args.configs.split(","):
        stages, microbatches, schedule = config.split(":")
        label = "P=%s M=%s %s" % (stages, microbatches, schedule)
        try:
            problems, cubins, kernels = check_config(
                args, int(stages), int(microbatches), schedule)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            problems = [str(error).strip()]
        if problems:
            failed += 1
            print("FAIL %s: %s" % (label, "; ".join(problems)))
        else:
            passed += 1
            print("ok   %s: %s ranks, %s cubins, %s generated kernels (%s)" % (
                label, stages, "/".join(str(c) for c in cubins),
                "/".join(str(k) for k in kernels), args.gpu_arch))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
