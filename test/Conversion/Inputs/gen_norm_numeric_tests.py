#!/usr/bin/env python3
"""Writes test/Conversion/normalization-run.mlir: the fused norms, their
input gradients, log-softmax, nll_loss, the new elementwise functions and
gather_nd with its scatter-add gradient,
lowered and run on constant inputs, checked against numpy (float64, printed
as float32). Uses the writer of gen_numeric_tests.py. Run it from this
folder after changing a case: python3 gen_norm_numeric_tests.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_numeric_tests as gen  # noqa: E402
from gen_numeric_tests import Case, rand, tensor_type  # noqa: E402

RNG = np.random.default_rng(11)


def tolerant_pattern(x):
    """FileCheck text for one float as printMemrefF32 prints it: the float64
    references here differ from the float32 kernels in the last digits, so
    the pattern keeps the digits that every value within a relative 2e-5
    shares (at least two significant digits; across a carry such as
    0.99999 / 1.00001, the leading digits of either end)."""
    x = float(x)
    if abs(x) < 1e-6:  # float32 rounding leaves 0 or a tiny number
        return "{{[-+.e0-9]+}}"
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    low, high = (exact_pattern(x * (1 - 2e-5)).replace("{{[0-9]*}}", ""),
                 exact_pattern(x * (1 + 2e-5)).replace("{{[0-9]*}}", ""))
    if low == high:
        return exact_pattern(x)
    if "e" in low or "e" in high:
        return "{{[-0-9.]*}}e" + f"{x:e}".split("e")[1]
    prefix = os.path.commonprefix([low, high])
    significant = prefix.lstrip("-0.").replace(".", "")
    if len(significant) >= 2:
        return prefix + "{{[0-9]*}}"
    exact = exact_pattern(x).replace("{{[0-9]*}}", "")
    return "{{(" + "|".join(sorted({low[:5], high[:5], exact})) + ")[0-9]*}}"


exact_pattern = gen.number_pattern
gen.number_pattern = tolerant_pattern


def layer_norm(x, axis, eps, g=None, b=None):
    x = x.astype(np.float64)
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if g is not None:
        y = y * g
    if b is not None:
        y = y + b
    return y


def rms_norm(x, axis, eps, g=None):
    x = x.astype(np.float64)
    axes = tuple(range(axis, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)
    return y * g if g is not None else y


def vjp(f, x, dy, h=1e-6):
    """The input gradient of sum(f(x) * dy) by central differences."""
    x = x.astype(np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        saved = x[i]
        x[i] = saved + h
        up = (f(x) * dy).sum()
        x[i] = saved - h
        down = (f(x) * dy).sum()
        x[i] = saved
        grad[i] = (up - down) / (2 * h)
    return grad


def log_softmax(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def nll(logp, labels, reduction, ignore):
    keep = labels != ignore
    picked = np.take_along_axis(
        logp, np.expand_dims(np.where(keep, labels, 0), 1), 1)
    losses = -np.squeeze(picked, 1) * keep
    if reduction == "none":
        return losses
    return losses.sum() / (keep.sum() if reduction == "mean" else 1)


def nll_grad(shape, labels, dloss, reduction, ignore):
    keep = labels != ignore
    scale = np.broadcast_to(np.asarray(dloss, np.float64), labels.shape)
    if reduction == "mean":
        scale = scale / keep.sum()
    grad = np.zeros(shape)
    np.put_along_axis(grad, np.expand_dims(np.where(keep, labels, 0), 1),
                      np.expand_dims(-scale * keep, 1), 1)
    return grad


def norms():
    # A large row mean (100) with a small spread: the single-pass variance
    # must not cancel it away.
    x = (rand(2, 3, 4) + np.float32(100.0)).astype(np.float32)
    x2 = rand(3, 5)
    g, b = rand(4), rand(4)
    g2 = rand(3, 4)
    dy = rand(2, 3, 4)
    dy2 = rand(3, 5)
    w5 = rand(5)
    tx, t2 = tensor_type(x), tensor_type(x2)
    tg, tg2 = tensor_type(g), tensor_type(g2)
    eps = 1e-5
    return [
        Case("layer_norm", [x, g, b, g2, x2], f"""
%0 = graph.layer_norm %a0 scale %a1 : {tg} bias %a2 : {tg} axis = 2 epsilon = 1.0e-05 : {tx}
%1 = graph.layer_norm %a0 scale %a3 : {tg2} axis = 1 epsilon = 1.0e-05 : {tx}
%2 = graph.layer_norm %a4 axis = 0 epsilon = 1.0e-05 : {t2}
return %0, %1, %2 : {tx}, {tx}, {t2}""",
             [layer_norm(x, 2, eps, g, b), layer_norm(x, 1, eps, g2),
              layer_norm(x2, 0, eps)]),
        Case("layer_norm_grad", [x, dy, g, x2, dy2], f"""
%0 = graph.layer_norm_grad %a0, %a1 scale %a2 : {tg} axis = 2 epsilon = 1.0e-05 : {tx}
%1 = graph.layer_norm_grad %a3, %a4 axis = 1 epsilon = 1.0e-05 : {t2}
return %0, %1 : {tx}, {t2}""",
             [vjp(lambda v: layer_norm(v, 2, eps, g), x, dy),
              vjp(lambda v: layer_norm(v, 1, eps), x2, dy2)]),
        Case("rms_norm", [x2, w5, x], f"""
%0 = graph.rms_norm %a0 scale %a1 : tensor<5xf32> axis = 1 epsilon = 1.0e-06 : {t2}
%1 = graph.rms_norm %a2 axis = 1 epsilon = 1.0e-06 : {tx}
return %0, %1 : {t2}, {tx}""",
             [rms_norm(x2, 1, 1e-6, w5), rms_norm(x, 1, 1e-6)]),
        Case("rms_norm_grad", [x2, dy2, w5], f"""
%0 = graph.rms_norm_grad %a0, %a1 scale %a2 : tensor<5xf32> axis = 1 epsilon = 1.0e-06 : {t2}
%1 = graph.rms_norm_grad %a0, %a1 axis = 0 epsilon = 1.0e-06 : {t2}
return %0, %1 : {t2}, {t2}""",
             [vjp(lambda v: rms_norm(v, 1, 1e-6, w5), x2, dy2),
              vjp(lambda v: rms_norm(v, 0, 1e-6), x2, dy2)]),
    ]


def activations():
    x = rand(2, 3, lo=-4, hi=4)
    big = (rand(4, 3) * 30).astype(np.float32)
    labels = np.array([0, -100, 1, 2], np.int64)
    x3 = rand(2, 3, 2)
    labels3 = np.array([[1, 0], [2, -1]], np.int64)
    dl = np.array(0.5, np.float32)
    dnone = rand(4)
    tx, tb, tl = tensor_type(x), tensor_type(big), tensor_type(labels)
    logp = log_softmax(big, 1)
    return [
        Case("functions", [x], f"""
%0 = graph.sigmoid %a0 : {tx}
%1 = graph.sin %a0 : {tx}
%2 = graph.cos %a0 : {tx}
return %0, %1, %2 : {tx}, {tx}, {tx}""",
             [1 / (1 + np.exp(-x.astype(np.float64))), np.sin(x), np.cos(x)]),
        Case("log_softmax", [big, x3], f"""
%0 = graph.log_softmax %a0 axis = 1 : {tb}
%1 = graph.log_softmax %a1 axis = 1 : {tensor_type(x3)}
return %0, %1 : {tb}, {tensor_type(x3)}""",
             [logp, log_softmax(x3, 1)]),
        Case("nll_loss", [big, labels, x3, labels3], f"""
%l = graph.log_softmax %a0 axis = 1 : {tb}
%0 = graph.nll_loss %l, %a1 reduction = "mean" ignore_index = -100 : {tb}, {tl} -> tensor<f32>
%1 = graph.nll_loss %l, %a1 reduction = "sum" ignore_index = -100 : {tb}, {tl} -> tensor<f32>
%2 = graph.nll_loss %l, %a1 reduction = "none" ignore_index = -100 : {tb}, {tl} -> tensor<4xf32>
%3 = graph.nll_loss %a2, %a3 reduction = "mean" ignore_index = -1 : {tensor_type(x3)}, {tensor_type(labels3)} -> tensor<f32>
return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f32>""",
             [nll(logp, labels, "mean", -100), nll(logp, labels, "sum", -100),
              nll(logp, labels, "none", -100),
              nll(x3.astype(np.float64), labels3, "mean", -1)]),
        Case("nll_loss_grad", [labels, dl, dnone, labels3], f"""
%0 = graph.nll_loss_grad %a0, %a1 reduction = "mean" ignore_index = -100 : {tl}, tensor<f32> -> {tb}
%1 = graph.nll_loss_grad %a0, %a1 reduction = "sum" ignore_index = -100 : {tl}, tensor<f32> -> {tb}
%2 = graph.nll_loss_grad %a0, %a2 reduction = "none" ignore_index = -100 : {tl}, tensor<4xf32> -> {tb}
%3 = graph.nll_loss_grad %a3, %a1 reduction = "mean" ignore_index = -1 : {tensor_type(labels3)}, tensor<f32> -> {tensor_type(x3)}
return %0, %1, %2, %3 : {tb}, {tb}, {tb}, {tensor_type(x3)}""",
             [nll_grad((4, 3), labels, dl, "mean", -100),
              nll_grad((4, 3), labels, dl, "sum", -100),
              nll_grad((4, 3), labels, dnone, "none", -100),
              nll_grad((2, 3, 2), labels3, dl, "mean", -1)]),
    ]


def gathers():
    data = rand(3, 4, 2)
    tuples = np.array([[0, 1], [2, -1], [0, 1]], np.int64)
    rows = np.array([[[1], [3]], [[0], [0]], [[-1], [2]]], np.int64)
    dy0, dy1 = rand(3, 2), rand(3, 2, 2)
    td = tensor_type(data)
    wrapped = np.where(tuples < 0, tuples + np.array([3, 4]), tuples)
    picked_rows = np.where(rows < 0, rows + 4, rows)
    scatter0 = np.zeros(data.shape)
    for t, g in zip(wrapped, dy0):
        scatter0[t[0], t[1]] += g
    scatter1 = np.zeros(data.shape)
    for b in range(3):
        for i in range(2):
            scatter1[b, picked_rows[b, i, 0]] += dy1[b, i]
    return [
        Case("gather_nd", [data, tuples, rows, dy0, dy1], f"""
%0 = graph.gather_nd %a0, %a1 batch_dims = 0 : {td}, tensor<3x2xi64> -> tensor<3x2xf32>
%1 = graph.gather_nd %a0, %a2 batch_dims = 1 : {td}, tensor<3x2x1xi64> -> tensor<3x2x2xf32>
%2 = graph.gather_nd_grad %a1, %a3 batch_dims = 0 : tensor<3x2xi64>, tensor<3x2xf32> -> {td}
%3 = graph.gather_nd_grad %a2, %a4 batch_dims = 1 : tensor<3x2x1xi64>, tensor<3x2x2xf32> -> {td}
return %0, %1, %2, %3 : tensor<3x2xf32>, tensor<3x2x2xf32>, {td}, {td}""",
             [data[wrapped[:, 0], wrapped[:, 1]],
              np.take_along_axis(data, picked_rows, axis=1),
              scatter0, scatter1]),
    ]


if __name__ == "__main__":
    gen.write("normalization-run.mlir",
              "Fused norms, their gradients, log-softmax, nll_loss and "
              "sigmoid/sin/cos, lowered and run.",
              norms() + activations() + gathers())
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "normalization-run.mlir")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("Generated by Inputs/gen_numeric_tests.py",
                             "Generated by Inputs/gen_norm_numeric_tests.py"))
