#!/usr/bin/env python3
"""Every pipeline schedule on 4 CPU ranks trains a reference case with the
step-1 gradients of one rank: compiles the case's model once at P = 1 (the
reference, itself checked against PyTorch's loss and gradients with the
case's checker) and once per schedule at P = 4, all with the same number of
micro-batches, runs ONE training step of each with --dump-grads under each
transport (--transports, default mpi and socket: their messages are posted
and waited for asynchronously in different ways), and checks the loss and
every gradient within rtol 1e-5, atol 1e-7 of P = 1 (as train_case.py
does).

Prints one line per configuration and a summary; exits 1 on any failure.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_case import read_safetensors, run, write_case_data  # noqa: E402

# (schedule, chunks per rank): issue 9's whole family; interleaved 1F1B and
# ZB-V hold two virtual stages per rank.
SCHEDULES = [("gpipe", 1), ("1f1b", 1), ("zb-h1", 1), ("zb-h2", 1),
             ("interleaved-1f1b", 2), ("zb-v", 2), ("auto", 1)]

RTOL, ATOL = 1e-5, 1e-7


def train_one_step(args, data_dir, ranks, schedule, chunks,
                   transports=(None,)):
    """The step-1 loss and gradients under each transport (None: the
    default), as a list in the order of `transports`."""
    name = "p%d_m%d_%s_v%d" % (ranks, args.microbatches, schedule, chunks)
    out = os.path.join(args.work, name)
    shutil.rmtree(out, ignore_errors=True)
    command = [args.pipecc, os.path.join(args.case, args.model), "--stages",
               str(ranks), "--microbatches", str(args.microbatches),
               "--schedule", schedule, "-o", out]
    if chunks != 1:
        command += ["--chunks", str(chunks)]
    run(command)
    results = []
    for transport in transports:
        grads = os.path.join(args.work, "%s.%s.grads.safetensors" % (
            name, transport or "default"))
        command = [os.path.join(out, "launch"), "--steps", "1", "--quiet",
                   "--data", data_dir, "--lr", "0.1", "--dump-grads", grads]
        if transport:
            command += ["--transport", transport]
        run(command)
        results.append(read_safetensors(grads))
    return results


def compare(reference, tensors):
    problems = []
    for key, want in reference.items():
        got = tensors.get(key)
        if got is None or got.shape != want.shape:
            problems.append("%s missing or misshapen" % key)
        elif not np.allclose(got, want, rtol=RTOL, atol=ATOL):
            problems.append("%s differs from P=1 (max abs error %.3g)" % (
                key, np.max(np.abs(got - want))))
    extra = sorted(set(tensors) - set(reference))
    if extra:
        problems.append("tensors P=1 does not have: %s" % ", ".join(extra))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--case", required=True)
    parser.add_argument("--model", default="model.onnx")
    parser.add_argument("--work", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--microbatches", type=int, required=True)
    parser.add_argument("--transports", default="mpi,socket",
                        help="comma-separated transports each P > 1 step "
                        "runs under")
    parser.add_argument("--checker",
                        help="the cases' checker (default: CASE/../check.py)")
    args = parser.parse_args()

    transports = args.transports.split(",")
    data_dir = write_case_data(args.case, args.work)
    checker = args.checker or os.path.join(args.case, "..", "check.py")

    # The reference: one rank, checked against PyTorch.
    label = "P=1 M=%d reference" % args.microbatches
    try:
        reference = train_one_step(args, data_dir, 1, "gpipe", 1)[0]
    except RuntimeError as error:
        print("FAIL %s: %s" % (label, error))
        print("0 passed, 1 failed")
        return 1
    results = os.path.join(args.work, "p1.results.npz")
    np.savez(results, **reference)
    check = subprocess.run([sys.executable, checker, args.case, results],
                           capture_output=True, text=True)
    if check.returncode != 0:
        print("FAIL %s: the case's checker refused it:\n%s%s" % (
            label, check.stdout, check.stderr))
        print("0 passed, 1 failed")
        return 1
    print("ok   %s: loss %.6f, %d gradients match PyTorch" % (
        label, float(reference["loss"]), len(reference) - 1))

    passed, failures = 0, []
    for schedule, chunks in SCHEDULES:
        label = "P=%d M=%d %s%s" % (args.ranks, args.microbatches, schedule,
                                    " v=%d" % chunks if chunks != 1 else "")
        try:
            runs = train_one_step(args, data_dir, args.ranks, schedule,
                                  chunks, transports)
        except RuntimeError as error:
            failures.append(label)
            print("FAIL %s: %s" % (label, error))
            continue
        problems = []
        for transport, tensors in zip(transports, runs):
            problems += ["%s: %s" % (transport, problem)
                         for problem in compare(reference, tensors)]
        if problems:
            failures.append(label)
            print("FAIL %s: %s" % (label, "; ".join(problems)))
            continue
        passed += 1
        print("ok   %s: loss and %d gradients equal P=1's under %s (rtol %g)"
              % (label, len(runs[0]) - 1, " and ".join(transports), RTOL))
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
