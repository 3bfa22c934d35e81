#!/usr/bin/env python3
"""Compiles one end-to-end test model for the CUDA target under several
(stages, micro-batches, schedule) configurations, without running it, and
checks each output folder:

  * `launch` and `rank<k>` for every k < P exist and are executable;
  * `cuobjdump --list-elf rank<k>` lists at least one cubin for the GPU
    architecture asked for (sm_90): the rank holds machine code for it, not
    only PTX;
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
FORBIDDEN_LIBRARIES = re.compile(r"^lib(openblas|blas|cblas|mpi|open-rte|"
                                 r"open-pal)\b")


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


def check_config(args, stages, microbatches, schedule):
    out = os.path.join(args.work, "p%d_m%d_%s" % (stages, microbatches,
                                                  schedule))
    shutil.rmtree(out, ignore_errors=True)
    run([args.pipecc, args.model, "--stages", str(stages), "--microbatches",
         str(microbatches), "--schedule", schedule, "--target", "cuda",
         "--gpu-arch", args.gpu_arch, "-o", out] + args.pipecc_flag,
        timeout=args.timeout)
    problems, cubins = [], []
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
        bad = [lib for lib in needed_libraries(exe)
               if FORBIDDEN_LIBRARIES.match(lib)]
        if bad:
            problems.append("rank%d needs %s" % (rank, ", ".join(bad)))
    return problems, cubins


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--configs", required=True,
                        help="P:M:schedule[,...], e.g. 1:4:gpipe,4:4:zb-h1")
    parser.add_argument("--gpu-arch", default="sm_90")
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
            problems, cubins = check_config(args, int(stages),
                                            int(microbatches), schedule)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            problems, cubins = [str(error).strip()], []
        if problems:
            failed += 1
            print("FAIL %s: %s" % (label, "; ".join(problems)))
        else:
            passed += 1
            print("ok   %s: %s ranks, %s cubins each (%s)" % (
                label, stages, "/".join(str(c) for c in cubins),
                args.gpu_arch))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
