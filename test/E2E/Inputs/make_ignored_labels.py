#!/usr/bin/env python3
"""The bundled example (test/examples/mlp) with 10 of its 256 labels set to
-100, the label its SoftmaxCrossEntropyLoss ignores, and a float64 numpy
reference of its training: six ignored labels open the first batch (a
micro-batch of 4 or of 8 samples that counts none or two), the others fall
in later batches.

Usage: make_ignored_labels.py EXAMPLE_DIR OUT_DIR
Writes OUT_DIR/data/{x,labels}.npy and OUT_DIR/reference.npz: `losses` of
STEPS plain SGD steps (lr LR, step k on batch k) and `grad.<initializer>`
of step 1.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

IGNORED = [0, 1, 2, 3, 4, 5, 77, 130, 131, 200]
BATCH, STEPS, LR, IGNORE = 32, 3, 0.1, -100


def loss_and_grads(w, layers, x, labels):
    """Gemm (transB=1) + Relu layers and a mean cross-entropy over the
    counted labels, forward and backward in float64."""
    inputs, pre = [], []
    for i in range(layers):
        inputs.append(x)
        z = x @ w["layers.%d.weight" % i].T + w["layers.%d.bias" % i]
        pre.append(z)
        x = np.maximum(z, 0) if i + 1 < layers else z
    counted = labels != IGNORE
    count = counted.sum()
    shifted = x - x.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    safe = np.where(counted, labels, 0)
    loss = -(logp[np.arange(len(labels)), safe] * counted).sum() / count
    dz = np.exp(logp)
    dz[np.arange(len(labels)), safe] -= 1
    dz *= counted[:, None] / count
    grads = {}
    for i in reversed(range(layers)):
        if i + 1 < layers:
            dz = dz * (pre[i] > 0)
        grads["layers.%d.weight" % i] = dz.T @ inputs[i]
        grads["layers.%d.bias" % i] = dz.sum(0)
        dz = dz @ w["layers.%d.weight" % i]
    return loss, grads


def main():
    example, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    model = onnx.load(os.path.join(example, "model.onnx"))
    weights = {i.name: numpy_helper.to_array(i).astype(np.float64)
               for i in model.graph.initializer}
    layers = len(weights) // 2
    x = np.load(os.path.join(example, "x.npy"))
    labels = np.load(os.path.join(example, "labels.npy"))
    labels[IGNORED] = IGNORE
    np.save(os.path.join(out, "data", "x.npy"), x)
    np.save(os.path.join(out, "data", "labels.npy"), labels)

    reference, losses = {}, []
    for step in range(STEPS):
        batch = slice(step * BATCH, (step + 1) * BATCH)
        loss, grads = loss_and_grads(weights, layers,
                                     x[batch].astype(np.float64),
                                     labels[batch])
        losses.append(loss)
        if step == 0:
            reference.update({"grad." + k: g for k, g in grads.items()})
        weights = {k: v - LR * grads[k] for k, v in weights.items()}
    reference["losses"] = np.array(losses)
    np.savez(os.path.join(out, "reference.npz"), **reference)


if __name__ == "__main__":
    main()
