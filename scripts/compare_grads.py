#!/usr/bin/env python3
"""Compares two `--dump-grads` files (safetensors: `loss` and
`grad.<parameter>`), e.g. a CUDA-target run against the CPU target's.

Every tensor of REFERENCE must be in ACTUAL with the same shape and pass

  * every element: |actual - reference| <= atol + rtol * |reference|;
  * gradients, the whole tensor: ||actual - reference||_2 <=
    l2 * ||reference||_2 (relative L2 error);

with the tolerances of shared/cases/check.py by default (the same that the
CPU target meets against PyTorch): loss rtol 1e-5 atol 1e-6, gradients
rtol 1e-4 atol 1e-5 and relative L2 1e-4. `--tolerance bf16` loosens them
for a bf16 run against an fp32 reference (loss rtol 2e-2, gradients
rtol 5e-2 atol 1e-3, relative L2 2e-2: bf16 keeps 8 significant bits).

Prints one line per failing tensor, the worst relative L2 error and the
plain summary line `N passed, N failed` (tensors); exits 1 on any failure,
2 on unreadable input. Needs numpy only (it runs on the GPU machine too).

    compare_grads.py REFERENCE.safetensors ACTUAL.safetensors [--label L]
"""
import argparse
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
          "I64": np.int64, "I32": np.int32}
TOLERANCES = {
    # name: (loss rtol, loss atol, grad rtol, grad atol, grad relative L2)
    "fp32": (1e-5, 1e-6, 1e-4, 1e-5, 1e-4),
    "bf16": (2e-2, 1e-3, 5e-2, 1e-3, 2e-2),
}


def read_safetensors(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] == "BF16":  # Widen bf16 to float32 by its bits.
            begin, end = info["data_offsets"]
            bits = np.frombuffer(data[begin:end], np.uint16).astype(np.uint32)
            tensors[name] = (bits << 16).view(np.float32).reshape(
                info["shape"])
            continue
        if info["dtype"] not in DTYPES:
            raise ValueError("%s: tensor '%s' has dtype %s" % (
                path, name, info["dtype"]))
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(
            data[begin:end], DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.
                                     RawDescriptionHelpFormatter)
    parser.add_argument("reference")
    parser.add_argument("actual")
    parser.add_argument("--tolerance", choices=sorted(TOLERANCES),
                        default="fp32")
    parser.add_argument("--label", default="",
                        help="a prefix for the summary line")
    args = parser.parse_args()
    try:
        reference = read_safetensors(args.reference)
        actual = read_safetensors(args.actual)
    except (OSError, ValueError, KeyError, struct.error) as error:
        print("compare_grads: error: %s" % error)
        return 2
    loss_rtol, loss_atol, rtol, atol, l2_tol = TOLERANCES[args.tolerance]

    passed, failed, worst = 0, 0, (0.0, "")
    for name, want in sorted(reference.items()):
        got = actual.get(name)
        if got is None or got.shape != want.shape:
            print("FAIL %s: %s" % (name, "missing" if got is None else
                                   "shape %s, expected %s" % (
                                       list(got.shape), list(want.shape))))
            failed += 1
            continue
        want64, got64 = want.astype(np.float64), got.astype(np.float64)
        is_loss = not name.startswith("grad.")
        r, a = (loss_rtol, loss_atol) if is_loss else (rtol, atol)
        diff = np.abs(got64 - want64)
        problems = []
        if not np.all(np.isfinite(got64)):
            problems.append("non-finite values")
        bad = diff > a + r * np.abs(want64)
        if np.any(bad):
            index = np.unravel_index(np.argmax(diff - r * np.abs(want64)),
                                     want.shape)
            problems.append("%d of %d elements off, worst at %s: %.9g vs "
                            "%.9g" % (int(bad.sum()), want.size,
                                      list(map(int, index)),
                                      got64[index], want64[index]))
        norm = np.linalg.norm(want64)
        rel_l2 = np.linalg.norm(got64 - want64) / norm if norm > 0 else \
            float(np.linalg.norm(got64))
        if not is_loss and rel_l2 > l2_tol:
            problems.append("relative L2 error %.3g > %.3g" % (rel_l2,
                                                               l2_tol))
        if rel_l2 >= worst[0]:
            worst = (rel_l2, name)
        if problems:
            print("FAIL %s: %s" % (name, "; ".join(problems)))
            failed += 1
        else:
            passed += 1
    for name in sorted(set(actual) - set(reference)):
        print("FAIL %s: not in the reference" % name)
        failed += 1
    prefix = args.label + ": " if args.label else ""
    if worst[0] > 0:
        print("%sworst relative L2 error %.3g (%s), %s tolerances" % (
            prefix, worst[0], worst[1], args.tolerance))
    else:
        print("%sworst relative L2 error 0 (every tensor equal), %s "
              "tolerances" % (prefix, args.tolerance))
    print("%s%d passed, %d failed" % (prefix, passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
