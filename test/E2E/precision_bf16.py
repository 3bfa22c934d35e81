#!/usr/bin/env python3
"""Trains a reference case at --precision fp32 and --precision bf16 for one
step on each number of stages asked for, and checks bf16 against fp32:

  * the manifest records the precision;
  * the step-1 loss within --loss-rtol of fp32's;
  * every gradient within --grad-tol of fp32's, measured against the
    gradient's scale: max |g_bf16 - g_fp32| <= tol * max |g_fp32|;
  * bf16 is not fp32 in disguise: some gradient differs from fp32 by more
    than 1e-4 of its scale (fp32 runs that only reorder sums agree within
    1e-5, see train_case.py).

The tolerances are stated by the caller (the .test file says why). Prints
one line per configuration and a summary; exits 1 on any failure.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_case import read_safetensors, run  # noqa: E402

DIFFERS = 1e-4


def train(args, stages, precision):
    name = "p%d_%s" % (stages, precision)
    out = os.path.join(args.work, name)
    shutil.rmtree(out, ignore_errors=True)
    run([args.pipecc, os.path.join(args.case, args.model), "--stages",
         str(stages), "--microbatches", str(args.microbatches),
         "--precision", precision, "-o", out] + args.pipecc_flag)
    with open(os.path.join(out, "pipeline.json")) as f:
        recorded = json.load(f).get("precision")
    grads = os.path.join(args.work, name + ".grads.safetensors")
    stdout = run([os.path.join(out, "launch"), "--steps", "1", "--data",
                  args.data, "--lr", "0.1", "--dump-grads", grads])
    losses = re.findall(r"^step 1 loss (\S+)", stdout, re.MULTILINE)
    if len(losses) != 1:
        raise RuntimeError("no step line in:\n" + stdout)
    return recorded, float(losses[0]), read_safetensors(grads)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--model", default="model.onnx")
    parser.add_argument("--work", required=True)
    parser.add_argument("--stages", default="1,2")
    parser.add_argument("--microbatches", type=int, default=2)
    parser.add_argument("--loss-rtol", type=float, required=True)
    parser.add_argument("--grad-tol", type=float, required=True)
    parser.add_argument("--pipecc-flag", action="append", default=[],
                        help="an extra pipecc option, e.g. "
                             "--pipecc-flag=-O0 (repeatable)")
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    args.data = os.path.join(args.work, "data")
    os.makedirs(args.data, exist_ok=True)
    inputs = np.load(os.path.join(args.case, "inputs.npz"))
    for key in inputs.files:
        np.save(os.path.join(args.data, key + ".npy"), inputs[key])

    failures, passed = [], 0
    for stages in [int(s) for s in args.stages.split(",")]:
        label = "P=%d M=%d" % (stages, args.microbatches)
        try:
            p32, loss32, grads32 = train(args, stages, "fp32")
            p16, loss16, grads16 = train(args, stages, "bf16")
        except RuntimeError as error:
            failures.append(label)
            print("FAIL %s: %s" % (label, error))
            continue
        problems = []
        if (p32, p16) != ("fp32", "bf16"):
            problems.append("manifest precision %r and %r" % (p32, p16))
        if abs(loss16 - loss32) > args.loss_rtol * abs(loss32):
            problems.append("loss %.6f, fp32 %.6f" % (loss16, loss32))
        worst, worst_key = 0.0, None
        for key, want in grads32.items():
            if not key.startswith("grad."):
                continue
            got = grads16.get(key)
            if got is None or got.shape != want.shape:
                problems.append("%s missing or misshapen" % key)
                continue
            scale = float(np.max(np.abs(want)))
            error = float(np.max(np.abs(got.astype(np.float64) - want)))
            relative = error / scale if scale > 0 else error
            if relative > worst:
                worst, worst_key = relative, key
            if relative > args.grad_tol:
                problems.append("%s differs from fp32 by %.3g of its scale"
                                % (key, relative))
        if worst <= DIFFERS:
            problems.append("bf16 gradients equal fp32's (largest difference "
                            "%.3g of the scale): bf16 was not applied" %
                            worst)
        if problems:
            failures.append(label)
            print("FAIL %s: %s" % (label, "; ".join(problems)))
        else:
            passed += 1
            print("ok   %s: loss fp32 %.6f bf16 %.6f, largest gradient "
                  "difference %.3g of scale (%s), %d gradients" % (
                      label, loss32, loss16, worst, worst_key,
                      sum(k.startswith("grad.") for k in grads32)))
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
