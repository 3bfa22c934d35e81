#!/usr/bin/env python3
"""Trains a reference case at --precision fp32 and --precision bf16 for one
step on each number of stages asked for, and checks bf16 against fp32:

  * the manifest records the precision;
  * the step-1 loss within --loss-rtol of fp32's;
  * every gradient within --grad-tol of fp32's, measured against the
    gradient's scale: max |g_bf16 - g_fp32| <= tol * max |g_fp32|; with
    --mlp-reference, of numpy's computation of the mlp_relu case with the
    same bf16 roundings instead;
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


def round_bf16(a):
    """The bfloat16 nearest each float32 value (ties to even), as float32."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def mlp_reference(args):
    """Gradients of the mlp_relu case (Linear layers `layers.<i>` with ReLU
    between them, mean cross-entropy) computed by numpy with the roundings
    --precision bf16 specifies (docs/design.md, "Precision"): the weights,
    inputs, matmul results and bias sums rounded to bf16, the matmuls on
    bf16 values accumulated in f32, the loss and its gradient with respect
    to the logits in f32 (rounded once where a matmul reads it), weight
    gradients rounded to bf16 and bias gradients summed in f32, micro-batch
    gradients accumulated in f32."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(os.path.join(args.case, args.model))
    init = {t.name: numpy_helper.to_array(t).astype(np.float32)
            for t in model.graph.initializer}
    count = sum(1 for name in init if re.fullmatch(r"layers\.\d+\.weight",
                                                     name))
    weights = [round_bf16(init["layers.%d.weight" % i]) for i in range(count)]
    biases = [round_bf16(init["layers.%d.bias" % i]) for i in range(count)]
    inputs = np.load(os.path.join(args.case, "inputs.npz"))
    x, labels = inputs["x"].astype(np.float32), inputs["labels"]
    grads = {}
    for chunk in np.split(np.arange(len(x)), args.microbatches):
        h = round_bf16(x[chunk])
        acts = []
        for i in range(count):
            acts.append(h)
            z = round_bf16(round_bf16(h @ weights[i].T) + biases[i])
            h = np.maximum(z, 0) if i + 1 < count else z
        logits = h - h.max(axis=1, keepdims=True)
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        g = p.astype(np.float32)
        g[np.arange(len(chunk)), labels[chunk]] -= 1
        g = round_bf16(g)
        for i in reversed(range(count)):
            step = {"layers.%d.weight" % i: round_bf16(g.T @ acts[i]),
                    "layers.%d.bias" % i: g.sum(axis=0, dtype=np.float32)}
            for name, value in step.items():
                grads["grad." + name] = grads.get("grad." + name, 0) + value
            if i > 0:
                g = np.where(acts[i] > 0, round_bf16(g @ weights[i]), 0)
                g = g.astype(np.float32)
    return {k: v / np.float32(len(x)) for k, v in grads.items()}


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
    parser.add_argument("--mlp-reference", action="store_true",
                        help="compare bf16 gradients with numpy's bf16 "
                             "computation of the mlp_relu case instead of "
                             "with fp32's gradients")
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

    reference = mlp_reference(args) if args.mlp_reference else None
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
        worst, worst_key, differs = 0.0, None, 0.0
        for key, want in grads32.items():
            if not key.startswith("grad."):
                continue
            got = grads16.get(key)
            if got is not None and got.shape == want.shape:
                differs = max(differs, float(np.max(np.abs(got - want))) /
                              max(float(np.max(np.abs(want))), 1e-30))
            if reference is not None:
                want = reference[key]
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
        if differs <= DIFFERS:
            problems.append("bf16 gradients equal fp32's (largest difference "
                            "%.3g of the scale): bf16 was not applied" %
                            differs)
        if problems:
            failures.append(label)
            print("FAIL %s: %s" % (label, "; ".join(problems)))
        else:
            passed += 1
            print("ok   %s: loss fp32 %.6f bf16 %.6f, largest gradient "
                  "difference from %s %.3g of scale (%s), %d gradients" % (
                      label, loss32, loss16,
                      "fp32" if reference is None else "numpy bf16", worst,
                      worst_key,
                      sum(k.startswith("grad.") for k in grads32)))
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
