#!/usr/bin/env python3
"""Assembles a bundle in scripts/gpu-bundle.sh's layout from CPU-target
outputs, to test scripts/gpu-check.sh without the CUDA target or a GPU:
the same files, bundle.json and MANIFEST.sha256, but CPU rank executables,
a shell-script device probe and kernel tests (test doubles), and an
environment variable that the CPU ranks ignore for both transports.

Usage: make_fake_bundle.py OUT --check P=OUTDIR [--check ...]
         --data DIR --reference GRADS.safetensors
         [--bench OUTDIR --weights WEIGHTS.json --flops-json FLOPS.json]
         [--tool ELF]
         [--rank ELF]

--tool ELF stands in for the probe and kernel tests (for --dry-run, which
wants ELF files); --rank ELF replaces every rank executable (e.g. `true`,
which needs only glibc, to make a bundle that validates). A program name
is looked up on PATH.
"""
import argparse
import hashlib
import json
import os
import shutil
import stat

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PROBE = """#!/bin/sh
echo "device 0: CPU test double, sm_90, 0 SMs, 0.0 GiB"
echo "device 0 ran the probe kernel"
"""
KERNEL_TESTS = """#!/bin/sh
echo "[  PASSED  ] 0 tests (test double)."
"""


def copy_output(src, dest, rank_override):
    os.makedirs(dest)
    for name in os.listdir(src):
        if name.endswith(".mlir") or name.startswith("."):
            continue
        if name.startswith("rank") and not name.endswith(".safetensors") \
                and rank_override:
            shutil.copy(rank_override, os.path.join(dest, name))
        else:
            shutil.copy(os.path.join(src, name), os.path.join(dest, name))


def write_executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP |
             stat.S_IXOTH)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--check", action="append", default=[])
    parser.add_argument("--data", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--bench")
    parser.add_argument("--weights")
    parser.add_argument("--flops-json",
                        help="model_flops.py's output for the benchmark")
    parser.add_argument("--tool")
    parser.add_argument("--rank")
    args = parser.parse_args()
    # A program name (`true`) stands for its path.
    for name in ["tool", "rank"]:
        value = getattr(args, name)
        if value and not os.path.isfile(value):
            setattr(args, name, shutil.which(value))

    out = args.out
    shutil.rmtree(out, ignore_errors=True)
    for folder in ["bin", "lib", "models", "data", "ref", "scripts"]:
        os.makedirs(os.path.join(out, folder))
    for name in ["compare_grads.py", "make_weights.py", "gpu_check_lib.py"]:
        shutil.copy(os.path.join(ROOT, "scripts", name),
                    os.path.join(out, "scripts", name))
    shutil.copy(os.path.join(ROOT, "scripts", "gpu-check.sh"),
                os.path.join(out, "gpu-check.sh"))
    for name, text in [("probe", PROBE), ("kernel-tests", KERNEL_TESTS)]:
        path = os.path.join(out, "bin", name)
        if args.tool:
            shutil.copy(args.tool, path)
        else:
            write_executable(path, text)
    for name in os.listdir(args.data):
        if name.endswith(".npy"):
            shutil.copy(os.path.join(args.data, name),
                        os.path.join(out, "data", name))
    shutil.copy(args.reference, os.path.join(out, "ref", "cpu.safetensors"))

    checks = []
    for spec in args.check:
        stages, src = spec.split("=", 1)
        transport = "nccl" if stages == "1" else "host_staged"
        copy_output(src, os.path.join(out, "models", "m", "p" + stages),
                    args.rank)
        checks.append({"name": "m P=%s %s" % (stages, transport),
                       "model": "m", "dir": "models/m/p" + stages,
                       "stages": int(stages), "transport": transport,
                       "data": "data", "reference": "ref/cpu.safetensors",
                       "tolerance": "fp32"})
    bench = []
    if args.bench:
        copy_output(args.bench, os.path.join(out, "models", "bench", "p1"),
                    args.rank)
        shutil.copy(args.weights, os.path.join(out, "models", "bench", "p1",
                                               "weights.json"))
        bench.append({"name": "bench P=1 nccl", "dir": "models/bench/p1",
                      "stages": 1, "microbatches": 4, "transport": "nccl",
                      "weights": "models/bench/p1/weights.json", "steps": 3,
                      "warmup_steps": 1,
                      "model_flops": json.load(open(args.flops_json))})
        for name in os.listdir(os.path.join(out, "models", "bench", "p1")):
            if name.endswith(".safetensors"):
                os.remove(os.path.join(out, "models", "bench", "p1", name))
    bundle = {"format": 1, "created": "test", "commit": "test",
              "gpu_arch": "sm_90", "peak_tflops": 989,
              "probe": "bin/probe", "kernel_tests": "bin/kernel-tests",
              # Variables the CPU ranks ignore, standing in for the CUDA
              # runtime's PIPECC_CUDA_TRANSPORT.
              "transports": {"nccl": "PIPECC_TEST_TRANSPORT=nccl",
                             "host_staged": "PIPECC_TEST_TRANSPORT=staged"},
              "checks": checks, "bench": bench}
    with open(os.path.join(out, "bundle.json"), "w") as f:
        json.dump(bundle, f, indent=1)
    lines = []
    for folder, _, files in sorted(os.walk(out)):
        for name in sorted(files):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            lines.append("%s  %s\n" % (digest, os.path.relpath(path, out)))
    with open(os.path.join(out, "MANIFEST.sha256"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
