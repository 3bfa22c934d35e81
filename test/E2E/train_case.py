#!/usr/bin/env python3
"""End-to-end check of a reference case: compiles the case's model for every
(stages, micro-batches, schedule) asked for, trains it on CPU ranks with
mpirun, and checks

  * P = 1 against PyTorch's loss, gradients, weights after one SGD step and
    loss after 3 SGD steps (expected.npz), with the case's own checker
    (shared/cases/check.py);
  * P > 1 against P = 1 with the same number of micro-batches: the step-1
    loss and every gradient within rtol 1e-5 (atol 1e-7).

Prints one line per configuration and a final summary line; exits 1 on any
failure.
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

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64,
          "I32": np.int32}


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
        tensors[name] = np.frombuffer(
            data[begin:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def write_case_data(case, work):
    """The case's inputs.npz as one .npy per input in WORK/data (what
    out/launch --data reads); returns that folder."""
    data_dir = os.path.join(work, "data")
    os.makedirs(data_dir, exist_ok=True)
    inputs = np.load(os.path.join(case, "inputs.npz"))
    for key in inputs.files:
        np.save(os.path.join(data_dir, key + ".npy"), inputs[key])
    return data_dir


def run(cmd, **kwargs):
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError("command failed (%d): %s\n%s%s" % (
            result.returncode, " ".join(cmd), result.stdout, result.stderr))
    return result.stdout


def train(args, model, data_dir, stages, microbatches, schedule):
    name = "p%d_m%d_%s" % (stages, microbatches, schedule)
    out = os.path.join(args.work, name)
    shutil.rmtree(out, ignore_errors=True)
    run([args.pipecc, model, "--stages", str(stages), "--microbatches",
         str(microbatches), "--schedule", schedule, "-o", out] +
        args.pipecc_flag)
    grads = os.path.join(args.work, name + ".grads.safetensors")
    stdout = run([os.path.join(out, "launch"), "--steps", str(args.steps),
                  "--data", data_dir, "--lr", "0.1", "--dump-grads", grads])
    losses = [float(m.group(1)) for m in
              re.finditer(r"^step \d+ loss (\S+)", stdout, re.MULTILINE)]
    if len(losses) != args.steps:
        raise RuntimeError("expected %d step lines, got:\n%s" % (args.steps,
                                                                 stdout))
    # One SGD step, saving the trained weights.
    saved = os.path.join(args.work, name + ".after_sgd.safetensors")
    run([os.path.join(out, "launch"), "--steps", "1", "--quiet", "--data",
         data_dir, "--lr", "0.1", "--save", saved])
    return name, read_safetensors(grads), losses, read_safetensors(saved)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--model", default="model.onnx")
    parser.add_argument("--work", required=True)
    parser.add_argument("--stages", default="1,2,4")
    parser.add_argument("--microbatches", default="1,4,8")
    parser.add_argument("--schedules", default="gpipe,1f1b")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--pipecc-flag", action="append", default=[],
                        help="an extra pipecc option, e.g. "
                             "--pipecc-flag=--freeze=NAME (repeatable)")
    parser.add_argument("--checker",
                        help="the cases' checker (default: CASE/../check.py)")
    args = parser.parse_args()

    data_dir = write_case_data(args.case, args.work)
    model = os.path.join(args.case, args.model)
    checker = args.checker or os.path.join(args.case, "..", "check.py")

    stage_list = [int(s) for s in args.stages.split(",")]
    mb_list = [int(m) for m in args.microbatches.split(",")]
    schedules = args.schedules.split(",")
    failures, passed = [], 0
    reference = {}
    for m in mb_list:
        for p in stage_list:
            # On one rank every schedule is the same program: P = 1 runs
            # once per M, with the first schedule, as the reference.
            for schedule in (schedules[:1] if p == 1 else schedules):
                label = "P=%d M=%d %s" % (p, m, schedule)
                try:
                    name, tensors, losses, after_sgd = train(
                        args, model, data_dir, p, m, schedule)
                except RuntimeError as error:
                    failures.append(label)
                    print("FAIL %s: %s" % (label, error))
                    continue
                problems = []
                if p == 1:
                    results = {"loss": tensors["loss"],
                               "loss_step3": np.float32(losses[3])}
                    results.update({k: v for k, v in tensors.items()
                                    if k.startswith("grad.")})
                    results.update({"after_sgd." + k: v
                                    for k, v in after_sgd.items()})
                    path = os.path.join(args.work, name + ".results.npz")
                    np.savez(path, **results)
                    check = subprocess.run(
                        [sys.executable, checker, args.case, path],
                        capture_output=True, text=True)
                    if check.returncode != 0:
                        problems.append("reference check failed:\n" +
                                        check.stdout + check.stderr)
                    reference.setdefault(m, (tensors, after_sgd))
                else:
                    base = reference.get(m)
                    if base is None:
                        problems.append("no P=1 run to compare with")
                    else:
                        expected = dict(base[0])
                        expected.update({"after_sgd." + k: v
                                         for k, v in base[1].items()})
                        actual = dict(tensors)
                        actual.update({"after_sgd." + k: v
                                       for k, v in after_sgd.items()})
                        for key, want in expected.items():
                            got = actual.get(key)
                            if got is None or got.shape != want.shape:
                                problems.append("%s missing or misshapen" % key)
                            elif not np.allclose(got, want, rtol=1e-5,
                                                 atol=1e-7):
                                err = np.max(np.abs(got - want))
                                problems.append("%s differs from P=1 (max abs "
                                                "error %.3g)" % (key, err))
                if problems:
                    failures.append(label)
                    print("FAIL %s: %s" % (label, "; ".join(problems)))
                else:
                    passed += 1
                    print("ok   %s: loss %.6f, loss after 3 steps %.6f, %d "
                          "gradients, %d weights after one step" % (
                              label, float(tensors["loss"]), losses[3],
                              len(tensors) - 1, len(after_sgd)))
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
