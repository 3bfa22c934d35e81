#!/usr/bin/env python3
"""Checks that a checkpoint holds every initializer of the model, under its
exact name, as a user saving one would expect:

  * a Gemm whose beta is 0 never reads its bias, and one initializer is
    read by no node: neither can affect the loss, both must still be
    loaded, and saved with their original values;
  * names hold a quote, a backslash, a newline, a tab, accented letters and
    an emoji: what the compiler writes to rank<k>.safetensors and
    pipeline.json, and what `launch --save` writes, must be the model's
    names byte for byte.

Compiles for 2 ranks, runs one step on synthetic data, prints one line per
check and exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from train_case import read_safetensors, run  # noqa: E402

BIAS = 'bias "\u00e9"\n\U0001F600'
UNUSED = "unused\\\u00fc\t"


def build_model(rng):
    params = {
        "W1": rng.standard_normal((8, 6)).astype(np.float32),
        "b1": rng.standard_normal(6).astype(np.float32),
        "W2": rng.standard_normal((6, 3)).astype(np.float32),
        BIAS: rng.standard_normal(3).astype(np.float32),
        UNUSED: rng.standard_normal(5).astype(np.float32),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "W2", BIAS], ["y"], name="fc2",
                         beta=0.0),
    ]
    graph = helper.make_graph(
        nodes, "checkpoint",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
        [numpy_helper.from_array(v, k) for k, v in params.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    return model, params


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    model, params = build_model(np.random.default_rng(7))
    path = os.path.join(args.work, "model.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    out = os.path.join(args.work, "out")
    run([args.pipecc, path, "--loss", "mse", "--label-input", "target",
         "--stages", "2", "-o", out])
    saved = os.path.join(args.work, "s.safetensors")
    run([os.path.join(out, "launch"), "--steps", "1", "--synthetic",
         "--quiet", "--save", saved])

    failures = []

    def check(label, ok, detail=""):
        print("%s %s%s" % ("PASS" if ok else "FAIL", label,
                           (": " + detail) if not ok and detail else ""))
        if not ok:
            failures.append(label)

    written = {}
    for rank in range(2):
        written.update(read_safetensors(
            os.path.join(out, "rank%d.safetensors" % rank)))
    check("compiled weights hold every initializer by its exact name",
          set(written) == set(params), repr(sorted(written)))
    check("compiled weights hold the initial values",
          all(np.array_equal(written[k], v) for k, v in params.items()
              if k in written))
    with open(os.path.join(out, "pipeline.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    listed = {p["name"]: p for p in manifest["parameters"]}
    check("pipeline.json lists every initializer",
          set(listed) == set(params), repr(sorted(listed)))
    check("unread initializers are frozen",
          all(not listed[k]["trainable"] for k in (BIAS, UNUSED)
              if k in listed))

    tensors = read_safetensors(saved)
    check("--save holds every initializer by its exact name",
          set(tensors) == set(params), repr(sorted(tensors)))
    for name in (BIAS, UNUSED):
        check("--save keeps %r unchanged" % name,
              name in tensors and np.array_equal(tensors[name],
                                                 params[name]))
    check("--save holds trained weights",
          "W2" in tensors and not np.array_equal(tensors["W2"],
                                                 params["W2"]))

    # A runtime error that names a tensor stays one line: the name's
    # newline is escaped, so it cannot forge a line of its own.
    partial = os.path.join(args.work, "partial.safetensors")
    entries, blob = {}, b""
    for name, value in params.items():
        if name == BIAS:
            continue
        data = value.astype("<f4").tobytes()
        entries[name] = {"dtype": "F32", "shape": list(value.shape),
                         "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    header = json.dumps(entries).encode()
    header += b" " * (-len(header) % 8)
    with open(partial, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + blob)
    result = subprocess.run(
        [os.path.join(out, "launch"), "--steps", "1", "--synthetic",
         "--quiet", "--weights", partial],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = result.stderr.decode("utf-8", "replace")
    missing = [line for line in err.splitlines() if "missing tensor" in line]
    check("a missing tensor fails the run", result.returncode != 0,
          "exit %d" % result.returncode)
    check("the missing tensor's error is one line with the name escaped",
          len(missing) == 1 and "\\x0a" in missing[0]
          and not any(line.startswith("\U0001F600") for line in
                      err.splitlines()), err)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
