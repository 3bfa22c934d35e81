#!/usr/bin/env python3
"""Writes inputs and numpy's expected outputs for the CUDA runtime's kernels
(CPU references in runtime/lib/CUDA/Reference.cpp) into the directory
argv[1], as .npy files: float32 inputs, float32 expectations computed in
float64.

The expectations take another road than the kernels where one exists, so
that a shared mistake cannot pass: backwards are full Jacobians applied to
the output gradient, and the cross-entropy gradient is a central finite
difference of the loss.
"""
import os
import sys

import numpy as np

rng = np.random.default_rng(8)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, array):
    if array.dtype.kind == "f":
        array = array.astype(np.float32)
    np.save(os.path.join(out, name + ".npy"), array)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# Softmax along the middle axis of [outer, dim, inner], and along the last.
for name, shape in (("softmax3d", (3, 7, 5)), ("softmax2d", (4, 33))):
    x = f32(*shape, scale=3.0)
    dy = f32(*shape)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    y = softmax(x64, axis=1)
    # dx = J^T dy with J = diag(y) - y y^T along axis 1, row by row.
    moved_y = np.moveaxis(y, 1, -1)
    moved_dy = np.moveaxis(dy64, 1, -1)
    jacobians = (np.einsum("...i,ij->...ij", moved_y, np.eye(shape[1]))
                 - np.einsum("...i,...j->...ij", moved_y, moved_y))
    dx = np.moveaxis(np.einsum("...ij,...i->...j", jacobians, moved_dy), -1, 1)
    save(name + "_x", x)
    save(name + "_dy", dy)
    save(name + "_y", y)
    save(name + "_dx", dx)

# Layer-norm over rows of 40, with scale and bias; epsilon 1e-5.
rows, cols, eps = 6, 40, 1e-5
x, dy = f32(rows, cols, scale=2.0) + 0.5, f32(rows, cols)
scale, bias = f32(cols) + 1.0, f32(cols)
x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
mean = x64.mean(axis=1, keepdims=True)
rstd = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=1, keepdims=True) + eps)
xhat = (x64 - mean) * rstd
y = xhat * scale + bias
# d y_j / d x_k = scale_j * rstd * (delta_jk - 1/n - xhat_j xhat_k / n)
dx = np.empty_like(x64)
for r in range(rows):
    jac = (scale[:, None] * rstd[r] *
           (np.eye(cols) - 1.0 / cols - np.outer(xhat[r], xhat[r]) / cols))
    dx[r] = jac.T @ dy64[r]
for name, value in (("x", x), ("dy", dy), ("scale", scale), ("bias", bias),
                    ("y", y), ("dx", dx), ("dscale", (dy64 * xhat).sum(0)),
                    ("dbias", dy64.sum(0))):
    save("layernorm_" + name, value)


def cross_entropy(logits, labels, ignore):
    """Mean over counted positions of -log softmax(logits, axis 1)[label]."""
    logp = np.log(softmax(logits, axis=1))
    picked = np.take_along_axis(
        logp, np.expand_dims(np.where(labels == ignore, 0, labels), 1),
        axis=1).squeeze(1)
    counted = labels != ignore
    return -(picked * counted).sum() / counted.sum(), counted.sum()


# [N, C, d1] logits with some ignored positions, and plain [N, C].
for name, shape, ignore in (("ce3d", (4, 6, 3), -100), ("ce2d", (8, 10), None)):
    logits = f32(*shape, scale=2.0)
    label_shape = (shape[0],) + shape[2:]
    labels = rng.integers(0, shape[1], size=label_shape).astype(np.int64)
    if ignore is not None:
        labels.flat[[1, 5, 7]] = ignore
    marker = -(10 ** 9) if ignore is None else ignore
    logits64 = logits.astype(np.float64)
    loss, count = cross_entropy(logits64, labels, marker)
    loss_grad = 0.75
    grad = np.zeros_like(logits64)
    h = 1e-6
    for index in np.ndindex(*shape):
        plus, minus = logits64.copy(), logits64.copy()
        plus[index] += h
        minus[index] -= h
        grad[index] = (cross_entropy(plus, labels, marker)[0]
                       - cross_entropy(minus, labels, marker)[0]) / (2 * h)
    save(name + "_logits", logits)
    save(name + "_labels", labels)
    save(name + "_loss", np.array([loss, count], dtype=np.float64))
    save(name + "_dlogits", grad * loss_grad)

# Gemm: C = epilogue(alpha op(A) op(B) + beta C0 + bias).
m, n, k = 5, 6, 7
a, b = f32(m, k), f32(k, n)
c0, gemm_bias = f32(m, n), f32(n)
a64, b64, c064 = (v.astype(np.float64) for v in (a, b, c0))
pre = 1.5 * (a64 @ b64) - 0.5 * c064 + gemm_bias
gelu = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre ** 3)))
for name, value in (("a", a), ("b", b), ("c0", c0), ("bias", gemm_bias),
                    ("plain", a64 @ b64), ("bias_gelu", gelu),
                    ("bias_relu", np.maximum(pre, 0))):
    save("gemm_" + name, value)
