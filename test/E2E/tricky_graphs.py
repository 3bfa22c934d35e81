#!/usr/bin/env python3
"""Trains small models whose structure stresses the stage split, on 1 to 4
CPU ranks, and checks every gradient against float64 central finite
differences of a numpy forward pass (P = 1) and against P = 1 (P > 1):

  shared_grad  loss = sum((mean(x W1, 0) + b1 + b2)^2): b1 and b2 have one
               and the same gradient value, computed on a later stage than
               b1's; the data input is named 'a3', like a generated tensor.
  skip         h1 = tanh(x W1), h2 = tanh(h1 W2), h3 = tanh(h2 W3),
               y = (h3 + h1) W4, MSE against an input named 'g8': the skip
               value and its gradient are forwarded across stages.

Prints one line per run and a summary line; exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from train_case import read_safetensors, run  # noqa: E402


def shared_grad(rng):
    w1 = rng.standard_normal((4, 6)).astype(np.float32)
    b1 = rng.standard_normal(6).astype(np.float32)
    b2 = rng.standard_normal(6).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["a3", "W1"], ["h"], name="mm"),
        helper.make_node("ReduceMean", ["h"], ["s"], axes=[0], keepdims=0,
                         name="mean"),
        helper.make_node("Add", ["s", "b1"], ["t"], name="add1"),
        helper.make_node("Add", ["t", "b2"], ["u"], name="add2"),
        helper.make_node("Mul", ["u", "u"], ["uu"], name="square"),
        helper.make_node("Constant", [], ["axes"], name="axes",
                         value=numpy_helper.from_array(np.array([0]))),
        helper.make_node("ReduceSum", ["uu", "axes"], ["loss"], keepdims=0,
                         name="sum"),
    ]
    inputs = {"a3": rng.standard_normal((8, 4)).astype(np.float32)}
    params = {"W1": w1, "b1": b1, "b2": b2}

    def forward(p, x):
        u = (x["a3"] @ p["W1"]).mean(0) + p["b1"] + p["b2"]
        return float((u * u).sum())
    return nodes, inputs, params, forward, {"a3": [8, 4]}, []


def skip(rng):
    shapes = {"W1": (4, 8), "W2": (8, 8), "W3": (8, 8), "W4": (8, 3)}
    params = {k: (0.5 * rng.standard_normal(v)).astype(np.float32)
              for k, v in shapes.items()}
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["z1"], name="mm1"),
        helper.make_node("Tanh", ["z1"], ["h1"], name="tanh1"),
        helper.make_node("MatMul", ["h1", "W2"], ["z2"], name="mm2"),
        helper.make_node("Tanh", ["z2"], ["h2"], name="tanh2"),
        helper.make_node("MatMul", ["h2", "W3"], ["z3"], name="mm3"),
        helper.make_node("Tanh", ["z3"], ["h3"], name="tanh3"),
        helper.make_node("Add", ["h3", "h1"], ["r"], name="skip_add"),
        helper.make_node("MatMul", ["r", "W4"], ["y"], name="head"),
    ]
    inputs = {"x": rng.standard_normal((8, 4)).astype(np.float32),
              "g8": rng.standard_normal((8, 3)).astype(np.float32)}

    def forward(p, x):
        h1 = np.tanh(x["x"] @ p["W1"])
        h3 = np.tanh(np.tanh(h1 @ p["W2"]) @ p["W3"])
        y = (h3 + h1) @ p["W4"]
        return float(((y - x["g8"]) ** 2).mean())
    return nodes, inputs, params, forward, {"x": [8, 4]}, [
        "--loss", "mse", "--label-input", "g8"]


def build(name, nodes, inputs, params, input_shapes, attach):
    graph_inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                    for k, v in input_shapes.items()]
    output = "y" if attach else "loss"
    shape = [8, 3] if attach else []
    graph = helper.make_graph(
        nodes, name, graph_inputs,
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(v, k) for k, v in params.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def finite_differences(forward, params, inputs):
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
    rng = np.random.default_rng(7)
    failures, passed = 0, 0
    # shared_grad squares a batch mean: micro-batches would change the
    # function itself, so it runs as one micro-batch.
    for name, make, microbatches in [("shared_grad", shared_grad, 1),
                                     ("skip", skip, 2)]:
        nodes, inputs, params, forward, shapes, attach = make(rng)
        model = os.path.join(args.work, name + ".onnx")
        onnx.save(build(name, nodes, inputs, params, shapes, attach), model)
        data = os.path.join(args.work, name + "_data")
        os.makedirs(data, exist_ok=True)
        for key, value in inputs.items():
            np.save(os.path.join(data, key + ".npy"), value)
        reference = finite_differences(forward, params, inputs)
        for stages in (1, 2, 3, 4):
            label = "%s P=%d" % (name, stages)
            out = os.path.join(args.work, "%s_p%d" % (name, stages))
            grads = out + ".grads.safetensors"
            try:
                run([args.pipecc, model, "--stages", str(stages),
                     "--microbatches", str(microbatches), "--schedule",
                     "1f1b", "-o", out]
                    + attach)
                run([os.path.join(out, "launch"), "--quiet", "--data", data,
                     "--dump-grads", grads])
            except RuntimeError as error:
                failures += 1
                print("FAIL %s: %s" % (label, error))
                continue
            got = read_safetensors(grads)
            bad = []
            for key, want in reference.items():
                have = got.get(key)
                scale = np.max(np.abs(want)) + 1e-6
                if have is None:
                    bad.append(key + " missing")
                elif np.max(np.abs(have - want)) > 1e-3 * scale:
                    bad.append("%s off by %.3g (scale %.3g)" % (
                        key, np.max(np.abs(have - want)), scale))
            if bad:
                failures += 1
                print("FAIL %s: %s" % (label, "; ".join(bad)))
            else:
                passed += 1
                print("ok   %s: %d gradients match finite differences" % (
                    label, len(reference)))
    print("%d passed, %d failed" % (passed, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
