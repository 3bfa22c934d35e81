#!/usr/bin/env python3
"""Trains one step of small models built from the ops of transformer
decoders as the exporters write them, on CPU ranks, and checks the loss
against a float64 numpy forward pass (rtol 1e-4) and every gradient against
float64 central finite differences of it:

  ln17        LayerNormalization-17 over the last axis and over the last two
  ln13        the opset-13 decomposition (ReduceMean, Sub, Pow, ReduceMean,
              Add, Sqrt, Div, Mul, Add): fused into graph.layer_norm
  rms18       LLaMA's RMSNorm at opset 18 (Pow, ReduceMean with an axes
              input, Add, Sqrt, Reciprocal, Mul, Mul by the weight) and SiLU
              (x * Sigmoid(x)): fused into graph.rms_norm
  rotary      Cos, Sin and Neg of a computed tensor
  nll_mean    LogSoftmax + NegativeLogLikelihoodLoss (ignore_index = -100)
              with reduction mean (becomes graph.cross_entropy), sum, and
              none followed by a ReduceSum; nll_spatial on [N, C, d] logits
  gather_nd   GatherND of a computed tensor with batch_dims 0 (a repeated
              and a negative index tuple) and 1: the scatter-add gradient

Every model runs on 1 rank; rms18 and ln13 also on 2 ranks with ZB-H1
(split backward: the norms' weight gradients run in the W step).
Prints one line per run and a summary line; exits 1 on any failure.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from train_case import read_safetensors, run  # noqa: E402

EPS = 1e-5


def const(name, value):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(value))


def linear_loss(rng, shape, source):
    """loss = sum(source * r) for a fixed random r: every element counts."""
    r = rng.standard_normal(shape).astype(np.float32)
    axes = np.arange(len(shape), dtype=np.int64)
    nodes = [const("r", r), const("all_axes", axes),
             helper.make_node("Mul", [source, "r"], ["weighted"], name="wmul"),
             helper.make_node("ReduceSum", ["weighted", "all_axes"], ["loss"],
                              keepdims=0, name="loss_sum")]
    return nodes, r


def layer_norm(x, axes, g, b):
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * g + b


def ln17(rng):
    params = {"W": (0.5 * rng.standard_normal((4, 6))).astype(np.float32),
              "g": rng.standard_normal(6).astype(np.float32),
              "b": rng.standard_normal(6).astype(np.float32),
              "g2": rng.standard_normal((5, 6)).astype(np.float32),
              "b2": rng.standard_normal((5, 6)).astype(np.float32)}
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("LayerNormalization", ["h", "g", "b"], ["y1"],
                         axis=-1, epsilon=EPS, name="ln_last"),
        helper.make_node("LayerNormalization", ["y1", "g2", "b2"], ["y"],
                         axis=1, epsilon=EPS, name="ln_rows"),
    ]
    tail, r = linear_loss(rng, (8, 5, 6), "y")
    inputs = {"x": rng.standard_normal((8, 5, 4)).astype(np.float32)}

    def forward(p, x):
        y1 = layer_norm(x["x"] @ p["W"], (2,), p["g"], p["b"])
        return float((layer_norm(y1, (1, 2), p["g2"], p["b2"]) * r).sum())
    return nodes + tail, inputs, params, forward, 17


def ln13(rng):
    params = {"W": (0.5 * rng.standard_normal((4, 6))).astype(np.float32),
              "g": rng.standard_normal(6).astype(np.float32),
              "b": rng.standard_normal(6).astype(np.float32)}
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("ReduceMean", ["h"], ["mean"], axes=[-1],
                         name="ln/ReduceMean"),
        helper.make_node("Sub", ["h", "mean"], ["c"], name="ln/Sub"),
        const("two", np.array(2.0, dtype=np.float32)),
        helper.make_node("Pow", ["c", "two"], ["sq"], name="ln/Pow"),
        helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1],
                         name="ln/ReduceMean_1"),
        const("eps", np.array(EPS, dtype=np.float32)),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="ln/Add"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="ln/Sqrt"),
        helper.make_node("Div", ["c", "sd"], ["n"], name="ln/Div"),
        helper.make_node("Mul", ["n", "g"], ["s"], name="ln/Mul"),
        helper.make_node("Add", ["s", "b"], ["y"], name="ln/Add_1"),
    ]
    tail, r = linear_loss(rng, (8, 5, 6), "y")
    inputs = {"x": rng.standard_normal((8, 5, 4)).astype(np.float32)}

    def forward(p, x):
        return float((layer_norm(x["x"] @ p["W"], (2,), p["g"], p["b"])
                      * r).sum())
    return nodes + tail, inputs, params, forward, 13


def rms18(rng):
    params = {"W": (0.5 * rng.standard_normal((4, 6))).astype(np.float32),
              "w": rng.standard_normal(6).astype(np.float32)}
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        const("two", np.array(2.0, dtype=np.float32)),
        helper.make_node("Pow", ["h", "two"], ["pow_1"], name="pow_1"),
        const("last", np.array([-1], dtype=np.int64)),
        helper.make_node("ReduceMean", ["pow_1", "last"], ["mean"],
                         keepdims=1, name="mean"),
        const("eps", np.array(1e-6, dtype=np.float32)),
        helper.make_node("Add", ["mean", "eps"], ["add"], name="add"),
        helper.make_node("Sqrt", ["add"], ["sqrt"], name="sqrt"),
        helper.make_node("Reciprocal", ["sqrt"], ["rsqrt"], name="rsqrt"),
        helper.make_node("Mul", ["h", "rsqrt"], ["normed"], name="mul"),
        helper.make_node("Mul", ["w", "normed"], ["z"], name="mul_1"),
        helper.make_node("Sigmoid", ["z"], ["sig"], name="sigmoid"),
        helper.make_node("Mul", ["z", "sig"], ["y"], name="silu"),
    ]
    tail, r = linear_loss(rng, (8, 5, 6), "y")
    inputs = {"x": rng.standard_normal((8, 5, 4)).astype(np.float32)}

    def forward(p, x):
        h = x["x"] @ p["W"]
        z = h / np.sqrt((h * h).mean(axis=2, keepdims=True) + 1e-6) * p["w"]
        return float((z / (1 + np.exp(-z)) * r).sum())
    return nodes + tail, inputs, params, forward, 18


def rotary(rng):
    params = {"W": rng.standard_normal((4, 6)).astype(np.float32)}
    c1 = rng.standard_normal((5, 6)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        helper.make_node("Cos", ["h"], ["cos"], name="cos"),
        helper.make_node("Sin", ["h"], ["sin"], name="sin"),
        helper.make_node("Neg", ["sin"], ["nsin"], name="neg"),
        const("c1", c1),
        helper.make_node("Mul", ["cos", "c1"], ["a"], name="mul_cos"),
        helper.make_node("Add", ["a", "nsin"], ["y"], name="add"),
    ]
    tail, r = linear_loss(rng, (8, 5, 6), "y")
    inputs = {"x": rng.standard_normal((8, 5, 4)).astype(np.float32)}

    def forward(p, x):
        h = x["x"] @ p["W"]
        return float(((np.cos(h) * c1 - np.sin(h)) * r).sum())
    return nodes + tail, inputs, params, forward, 18


def gather_nd(rng):
    params = {"W": rng.standard_normal((4, 6)).astype(np.float32)}
    # Tuples into [8, 5] (a repeated one accumulates its gradient twice, a
    # negative one counts from the end), and per batch entry into [5].
    tuples = np.array([[0, 1], [7, 4], [0, 1], [-1, 2]], np.int64)
    rows = rng.integers(0, 5, (8, 3, 1))
    rows[0, 1, 0] = rows[0, 0, 0]
    c = rng.standard_normal((4, 6)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="mm"),
        const("tuples", tuples), const("rows", rows), const("c", c),
        helper.make_node("GatherND", ["h", "tuples"], ["g0"], name="gnd0"),
        helper.make_node("Mul", ["g0", "c"], ["g0c"], name="mul"),
        helper.make_node("GatherND", ["h", "rows"], ["g1"], batch_dims=1,
                         name="gnd1"),
        helper.make_node("ReduceSum", ["g0c"], ["s0"], keepdims=0,
                         name="sum0"),
    ]
    tail, r = linear_loss(rng, (8, 3, 6), "g1")
    tail[-1] = helper.make_node("ReduceSum", ["weighted", "all_axes"],
                                ["s1"], keepdims=0, name="loss_sum")
    tail.append(helper.make_node("Add", ["s0", "s1"], ["loss"], name="add"))
    inputs = {"x": rng.standard_normal((8, 5, 4)).astype(np.float32)}

    def forward(p, x):
        h = x["x"] @ p["W"]
        g0 = h[tuples[:, 0], tuples[:, 1]]
        g1 = np.take_along_axis(h, rows, axis=1)
        return float((g0 * c).sum() + (g1 * r).sum())
    return nodes + tail, inputs, params, forward, 13


def log_softmax(z, axis):
    m = z.max(axis=axis, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=axis, keepdims=True))


def nll(reduction, spatial=False):
    def make(rng):
        params = {"W": rng.standard_normal((4, 5)).astype(np.float32)}
        labels = rng.integers(0, 5, (8, 3) if spatial else (8,))
        labels.flat[[1, 4, 6]] = -100
        nodes = [helper.make_node("MatMul", ["x", "W"], ["z"], name="mm")]
        logits = "z"
        if spatial:  # [N, d, C] -> [N, C, d]
            nodes.append(helper.make_node("Transpose", ["z"], ["zt"],
                                          perm=[0, 2, 1], name="tr"))
            logits = "zt"
        nodes.append(helper.make_node("LogSoftmax", [logits], ["logp"],
                                      axis=1, name="logsoftmax"))
        loss = "loss" if reduction != "none" else "per_position"
        nodes.append(helper.make_node(
            "NegativeLogLikelihoodLoss", ["logp", "labels"], [loss],
            reduction=reduction, ignore_index=-100, name="nll"))
        if reduction == "none":
            nodes.append(helper.make_node("ReduceSum", [loss], ["loss"],
                                          keepdims=0, name="sum"))
        x = rng.standard_normal((8, 3, 4) if spatial else (8, 4))
        inputs = {"x": x.astype(np.float32), "labels": labels}

        def forward(p, xs):
            z = xs["x"] @ p["W"]
            logp = log_softmax(z, z.ndim - 1)
            keep = xs["labels"] != -100
            picked = np.take_along_axis(
                logp, np.where(keep, xs["labels"], 0)[..., None],
                axis=-1)[..., 0]
            total = -(picked * keep).sum()
            return float(total / keep.sum() if reduction == "mean"
                         else total)
        return nodes, inputs, params, forward, 13
    return make


MODELS = [("ln17", ln17, [1]), ("ln13", ln13, [1, 2]),
          ("rms18", rms18, [1, 2]), ("rotary", rotary, [1]),
          ("nll_mean", nll("mean"), [1]), ("nll_sum", nll("sum"), [1]),
          ("nll_none", nll("none"), [1]),
          ("nll_spatial", nll("mean", spatial=True), [1]),
          ("gather_nd", gather_nd, [1])]


def build(name, nodes, inputs, params, opset):
    graph_inputs = [helper.make_tensor_value_info(
        k, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT,
        list(v.shape)) for k, v in inputs.items()]
    graph = helper.make_graph(
        nodes, name, graph_inputs,
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(v, k) for k, v in params.items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def finite_differences(forward, params, inputs):
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    x64 = {k: (v.astype(np.float64) if v.dtype == np.float32 else v)
           for k, v in inputs.items()}
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
    return forward(p64, x64), grads


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipecc")
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", help="run only this model")
    parser.add_argument("--write-models", action="store_true",
                        help="only write <work>/<model>.onnx (for import "
                        "tests)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.write_models:
        for index, (name, make, _) in enumerate(MODELS):
            nodes, inputs, params, _, opset = make(
                np.random.default_rng(100 + index))
            onnx.save(build(name, nodes, inputs, params, opset),
                      os.path.join(args.work, name + ".onnx"))
        return 0
    failures, passed = 0, 0
    for index, (name, make, stage_counts) in enumerate(MODELS):
        if args.only and name != args.only:
            continue
        rng = np.random.default_rng(100 + index)
        nodes, inputs, params, forward, opset = make(rng)
        model = os.path.join(args.work, name + ".onnx")
        onnx.save(build(name, nodes, inputs, params, opset), model)
        data = os.path.join(args.work, name + "_data")
        os.makedirs(data, exist_ok=True)
        for key, value in inputs.items():
            np.save(os.path.join(data, key + ".npy"), value)
        want_loss, reference = finite_differences(forward, params, inputs)
        for stages in stage_counts:
            label = "%s P=%d" % (name, stages)
            out = os.path.join(args.work, "%s_p%d" % (name, stages))
            grads = out + ".grads.safetensors"
            schedule = "zb-h1" if stages > 1 else "1f1b"
            try:
                run([args.pipecc, model, "--stages", str(stages),
                     "--microbatches", "1", "--schedule", schedule,
                     "-o", out])
                run([os.path.join(out, "launch"), "--quiet", "--data", data,
                     "--dump-grads", grads])
            except RuntimeError as error:
                failures += 1
                print("FAIL %s: %s" % (label, error))
                continue
            got = read_safetensors(grads)
            bad = []
            loss = float(got["loss"])
            if abs(loss - want_loss) > 1e-4 * abs(want_loss) + 1e-6:
                bad.append("loss %.7g, numpy %.7g" % (loss, want_loss))
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
                print("ok   %s: loss %.6g, %d gradients match finite "
                      "differences" % (label, loss, len(reference)))
    print("%d passed, %d failed" % (passed, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
