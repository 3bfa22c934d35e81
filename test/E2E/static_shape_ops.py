#!/usr/bin/env python3
"""Trains, for one step on one CPU rank, an opset-18 model that applies the
shape and mask ops to computed tensors (so they lower instead of folding):
CumSum (inclusive, and exclusive + reverse), Trilu, Expand, Concat, Pad
with a non-zero value and axes, Max, Greater/Where, IsNaN, Cast to double
and back, Unsqueeze/Squeeze and Flatten. Checks the step-1 loss against a
float64 numpy forward pass and every gradient against central finite
differences of it. Prints one line per check; exits 1 on any failure.
"""
import argparse
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from train_case import read_safetensors, run  # noqa: E402


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(params):
    n = helper.make_node
    nodes = [
        # IsNaN of the data input (no gradient flows through it).
        n("IsNaN", ["x"], ["nan"], name="isnan"),
        n("Where", ["nan", "zero_f", "x"], ["x_clean"], name="where_nan"),
        n("Mul", ["x_clean", "w"], ["h"], name="mul"),
        n("CumSum", ["h", "one"], ["h1"], name="cumsum"),
        n("CumSum", ["h", "zero"], ["h2"], name="cumsum_rev", exclusive=1,
          reverse=1),
        n("Trilu", ["h", "minus_one"], ["h3"], name="trilu", upper=1),
        n("Expand", ["b", "shape46"], ["e"], name="expand"),
        n("Concat", ["h1", "c"], ["cat"], name="concat", axis=1),
        n("Pad", ["h3", "pads", "half", "pad_axes"], ["pad"], name="pad"),
        n("Add", ["cat", "pad"], ["s"], name="add"),
        # A computed mask: s where s > 0.1, else s / 2, once as a Where
        # (whose gradient recomputes the comparison) and once as
        # s * (0.5 + 0.5 * float(s > 0.1)).
        n("Greater", ["s", "tenth"], ["pos"], name="greater"),
        n("Mul", ["s", "half"], ["s_half"], name="mul_half"),
        n("Where", ["pos", "s", "s_half"], ["u"], name="where"),
        n("Cast", ["pos"], ["pos_f"], name="cast_mask", to=TensorProto.FLOAT),
        n("Mul", ["pos_f", "half"], ["pos_half"], name="mul_mask"),
        n("Add", ["pos_half", "half"], ["scale"], name="add_mask"),
        n("Mul", ["s", "scale"], ["t0"], name="scale"),
        n("Add", ["t0", "u"], ["t"], name="add_t"),
        n("Flatten", ["t"], ["tf"], name="flatten", axis=1),
        n("Max", ["h2", "e"], ["m"], name="max"),
        n("Cast", ["m"], ["m64"], name="cast64", to=TensorProto.DOUBLE),
        n("Cast", ["m64"], ["m32"], name="cast32", to=TensorProto.FLOAT),
        n("Unsqueeze", ["m32", "zero"], ["mu"], name="unsqueeze"),
        n("Squeeze", ["mu", "zero"], ["ms"], name="squeeze"),
        n("Mul", ["tf", "tf"], ["tt"], name="square_t"),
        n("Mul", ["ms", "ms"], ["mm"], name="square_m"),
        n("ReduceSum", ["tt"], ["lt"], name="sum_t", keepdims=0),
        n("ReduceSum", ["mm"], ["lm"], name="sum_m", keepdims=0),
        n("Add", ["lt", "lm"], ["loss"], name="loss"),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    inits += [ints("one", 1), ints("zero", [0]), ints("minus_one", -1),
              ints("shape46", [4, 6]), ints("pads", [1, 2]),
              ints("pad_axes", [1])]
    # Float constants are Constant nodes: a float initializer that a
    # gradient reaches would be a trained parameter.
    for name, value in [("half", 0.5), ("tenth", 0.1), ("zero_f", 0.0)]:
        nodes.insert(0, helper.make_node(
            "Constant", [], [name], name=name,
            value=numpy_helper.from_array(np.array(value, np.float32))))
    graph = helper.make_graph(
        nodes, "static_shape_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def forward(p, x):
    h = x["x"] * p["w"]
    h1 = np.cumsum(h, 1)
    h2 = np.flip(np.cumsum(np.flip(h, 0), 0), 0) - h  # exclusive, reverse
    rows, cols = np.indices(h.shape)
    h3 = np.where(cols - rows >= -1, h, 0)
    e = np.broadcast_to(p["b"], (4, 6))
    cat = np.concatenate([h1, p["c"]], 1)
    pad = np.pad(h3, [(0, 0), (1, 2)], constant_values=0.5)
    s = cat + pad
    t = 2 * np.where(s > 0.1, s, s * 0.5)
    m = np.maximum(h2, e)
    return float((t * t).sum() + (m * m).sum())


def finite_differences(params, inputs):
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    x64 = {k: v.astype(np.float64) for k, v in inputs.items()}
    grads = {}
    for name, value in p64.items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            h = 1e-6 * max(1.0, abs(value[index]))
            saved = value[index]
            value[index] = saved + h
            up = forward(p64, x64)
            value[index] = saved - h
            down = forward(p64, x64)
            value[index] = saved
            grad[index] = (up - down) / (2 * h)
        grads["grad." + name] = grad
    return grads


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(11)
    params = {"w": rng.standard_normal((4, 6)).astype(np.float32),
              "b": rng.standard_normal((1, 6)).astype(np.float32),
              "c": rng.standard_normal((4, 3)).astype(np.float32)}
    inputs = {"x": rng.standard_normal((4, 6)).astype(np.float32)}
    path = os.path.join(args.work, "static_shape_ops.onnx")
    onnx.checker.check_model(model(params))
    onnx.save(model(params), path)
    data = os.path.join(args.work, "data")
    os.makedirs(data, exist_ok=True)
    for key, value in inputs.items():
        np.save(os.path.join(data, key + ".npy"), value)
    out = os.path.join(args.work, "out")
    grads_file = os.path.join(args.work, "grads.safetensors")
    run([args.pipecc, path, "--stages", "1", "--microbatches", "1", "-o",
         out, "--force"])
    stdout = run([os.path.join(out, "launch"), "--steps", "1", "--data",
                  data, "--dump-grads", grads_file])
    failures = 0
    loss = float(re.search(r"^step 1 loss (\S+)", stdout, re.M).group(1))
    want = forward({k: v.astype(np.float64) for k, v in params.items()},
                   {k: v.astype(np.float64) for k, v in inputs.items()})
    if abs(loss - want) > 1e-4 * abs(want):
        failures += 1
        print("FAIL loss %.7g, numpy %.7g" % (loss, want))
    else:
        print("ok   loss matches numpy")
    got = read_safetensors(grads_file)
    for key, want in finite_differences(params, inputs).items():
        have = got.get(key)
        scale = np.max(np.abs(want)) + 1e-6
        if have is None or np.max(np.abs(have - want)) > 1e-3 * scale:
            failures += 1
            print("FAIL %s: %s" % (key, "missing" if have is None else
                                   np.max(np.abs(have - want))))
        else:
            print("ok   %s matches finite differences" % key)
    print("%d failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
