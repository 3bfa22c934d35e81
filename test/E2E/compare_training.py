#!/usr/bin/env python3
"""Trains one model under several (stages, micro-batches, schedule)
configurations and checks each against a float64 reference (reference.npz:
`losses` of plain SGD steps, `grad.<initializer>` at the initial weights)
and against the first configuration with one stage and the same number of
micro-batches:

  * the printed loss of every step within rtol 1e-5 of the reference;
  * the step-1 gradients within rtol 1e-4, atol 1e-6 of the reference, and
    within rtol 1e-5, atol 1e-7 of the one-stage run;
  * with --tied NAME[,NAME...]: on more than one stage, each NAME is held
    by several ranks (rank<k>.safetensors), and after the steps every
    rank's copy (--save with {rank}) is bit-identical.

Prints one line per configuration and a summary; exits 1 on any failure.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        assert info["dtype"] == "F32"
        tensors[name] = np.frombuffer(data[begin:end], np.float32).reshape(
            info["shape"])
    return tensors


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            result.returncode, " ".join(cmd), result.stdout, result.stderr))
    return result.stdout


def close(got, want, rtol, atol):
    return got.shape == want.shape and np.allclose(got, want, rtol=rtol,
                                                   atol=atol)


def check(args, reference, baselines, stages, microbatches, schedule, cuts):
    name = "p%d_m%d_%s" % (stages, microbatches, schedule)
    out = os.path.join(args.work, name)
    shutil.rmtree(out, ignore_errors=True)
    run([args.pipecc, args.model, "--stages", str(stages), "--microbatches",
         str(microbatches), "--schedule", schedule, "-o", out] +
        (["--cut-after", cuts] if cuts else []))
    grads_path = os.path.join(args.work, name + ".grads.safetensors")
    saved = os.path.join(args.work, name + ".rank{rank}.safetensors")
    stdout = run([os.path.join(out, "launch"), "--steps",
                  str(len(reference["losses"])), "--data", args.data, "--lr",
                  str(args.lr), "--dump-grads", grads_path, "--save", saved])
    losses = np.array([float(m.group(1)) for m in re.finditer(
        r"^step \d+ loss (\S+)", stdout, re.MULTILINE)])
    grads = read_safetensors(grads_path)
    problems = []
    if not close(losses, reference["losses"], 1e-5, 0):
        problems.append("losses %s, expected %s" % (
            losses, reference["losses"]))
    for key in reference.files:
        if not key.startswith("grad."):
            continue
        got = grads.get(key)
        if got is None or not close(got, reference[key], 1e-4, 1e-6):
            problems.append("%s differs from the reference" % key)
    base = baselines.setdefault(microbatches, grads) if stages == 1 else \
        baselines.get(microbatches)
    if base is not None and base is not grads:
        for key, want in base.items():
            if not close(grads.get(key, np.zeros(0)), want, 1e-5, 1e-7):
                problems.append("%s differs from P=1" % key)
    note = ""
    for tied in args.tied.split(",") if args.tied else []:
        holders = [rank for rank in range(stages) if tied in
                   read_safetensors(os.path.join(
                       out, "rank%d.safetensors" % rank))]
        copies = [read_safetensors(saved.replace("{rank}", str(rank)))[tied]
                  for rank in holders]
        if stages > 1 and len(holders) < 2:
            problems.append("%s is held by ranks %s only" % (tied, holders))
        if any(copy.tobytes() != copies[0].tobytes() for copy in copies):
            problems.append("the copies of %s differ" % tied)
        note += ", %s on ranks %s, copies identical" % (tied, holders)
    label = "P=%d M=%d %s%s" % (stages, microbatches, schedule,
                                " cut after " + cuts if cuts else "")
    if problems:
        print("FAIL %s: %s" % (label, "; ".join(problems)))
        return False
    print("ok   %s: losses %s%s" % (
        label, " ".join("%.6f" % loss for loss in losses), note))
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--configs", required=True,
                        help="P:M:schedule[:cuts],... (P=1 first for each "
                        "M; cuts: ONNX node names joined by +)")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--tied")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    reference = np.load(args.reference)
    baselines, failures, passed = {}, 0, 0
    for config in args.configs.split(","):
        stages, microbatches, schedule, *cuts = config.split(":")
        try:
            ok = check(args, reference, baselines, int(stages),
                       int(microbatches), schedule,
                       cuts[0].replace("+", ",") if cuts else None)
        except RuntimeError as error:
            print("FAIL %s: %s" % (config, error))
            ok = False
        passed += ok
        failures += not ok
    print("%d passed, %d failed" % (passed, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
