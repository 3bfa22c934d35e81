#!/usr/bin/env python3
"""Writes a tiny language model whose token embedding is also its LM head
(tied weights, as in GPT-2), its training data and a float64 numpy
reference of its training.

  logits = relu(relu(relu(wte[idx] W1 + b1) W2 + b2) W3 + b3) wte^T
  loss   = mean cross-entropy over the labels that are not -100

The ignored labels fall unevenly: whole sequences, single tokens, none, so
micro-batches count different numbers of labels (one counts none at 8
micro-batches). With --share-layers every hidden layer uses the first
layer's weight (l0.weight, read by three layers, so by up to three
stages).

Usage: make_tied_lm.py OUT_DIR [--share-layers]
(writes model.onnx, data/, reference.npz)
reference.npz: losses [STEPS] of plain SGD (lr LR) on the one batch, and
grad.<initializer> at the initial weights.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, SEQ, VOCAB, WIDTH, LAYERS = 8, 8, 32, 16, 3
STEPS, LR, IGNORE = 3, 0.1, -100


def weight_name(layer, share):
    return "l%d.weight" % (0 if share else layer)


def make_weights(rng, share):
    weights = {"wte": rng.normal(0, 0.5, (VOCAB, WIDTH))}
    for i in range(LAYERS):
        w = rng.uniform(-0.5, 0.5, (WIDTH, WIDTH))
        if weight_name(i, share) == "l%d.weight" % i:
            weights["l%d.weight" % i] = w
        weights["l%d.bias" % i] = rng.uniform(-0.1, 0.1, (WIDTH,))
    return {k: v.astype(np.float32) for k, v in weights.items()}


def make_model(weights, share):
    nodes = [helper.make_node("Gather", ["wte", "idx"], ["emb"],
                              name="/embed/Gather", axis=0)]
    prev = "emb"
    for i in range(LAYERS):
        nodes += [
            helper.make_node("MatMul", [prev, weight_name(i, share)],
                             ["mm%d" % i],
                             name="/l%d/MatMul" % i),
            helper.make_node("Add", ["mm%d" % i, "l%d.bias" % i],
                             ["add%d" % i], name="/l%d/Add" % i),
            helper.make_node("Relu", ["add%d" % i], ["h%d" % i],
                             name="/l%d/Relu" % i)]
        prev = "h%d" % i
    nodes += [
        helper.make_node("Transpose", ["wte"], ["wte_t"],
                         name="/head/Transpose", perm=[1, 0]),
        helper.make_node("MatMul", [prev, "wte_t"], ["logits"],
                         name="/head/MatMul"),
        helper.make_node("Reshape", ["logits", "logits_shape"], ["flat"],
                         name="/loss/Reshape"),
        helper.make_node("Reshape", ["labels", "labels_shape"],
                         ["flat_labels"], name="/loss/ReshapeLabels"),
        helper.make_node("SoftmaxCrossEntropyLoss", ["flat", "flat_labels"],
                         ["loss"], name="/loss/SoftmaxCrossEntropyLoss",
                         reduction="mean", ignore_index=IGNORE)]
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    # -1: the batch dimension shrinks with the micro-batch.
    inits += [numpy_helper.from_array(np.array([-1, VOCAB], np.int64),
                                      "logits_shape"),
              numpy_helper.from_array(np.array([-1], np.int64),
                                      "labels_shape")]
    graph = helper.make_graph(
        nodes, "tied_lm",
        [helper.make_tensor_value_info("idx", TensorProto.INT64,
                                       [BATCH, SEQ]),
         helper.make_tensor_value_info("labels", TensorProto.INT64,
                                       [BATCH, SEQ])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)],
        producer_name="pipecc make_tied_lm.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def loss_and_grads(w, idx, labels, share):
    """Forward and backward in float64, by hand."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    x = w["wte"][idx]
    inputs, pre = [], []
    for i in range(LAYERS):
        inputs.append(x)
        z = x @ w[weight_name(i, share)] + w["l%d.bias" % i]
        pre.append(z)
        x = np.maximum(z, 0)
    logits = (x @ w["wte"].T).reshape(-1, VOCAB)
    flat = labels.reshape(-1)
    counted = flat != IGNORE
    count = counted.sum()
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    safe = np.where(counted, flat, 0)
    loss = -(logp[np.arange(len(flat)), safe] * counted).sum() / count
    dlogits = np.exp(logp)
    dlogits[np.arange(len(flat)), safe] -= 1
    dlogits *= counted[:, None] / count
    dlogits = dlogits.reshape(BATCH, SEQ, VOCAB)
    grads = {"wte": np.einsum("btv,btd->vd", dlogits, x)}
    dx = dlogits @ w["wte"]
    for i in reversed(range(LAYERS)):
        dz = dx * (pre[i] > 0)
        name = weight_name(i, share)
        grads[name] = grads.get(name, 0) + np.einsum("bti,btj->ij",
                                                     inputs[i], dz)
        grads["l%d.bias" % i] = dz.sum((0, 1))
        dx = dz @ w[name].T
    np.add.at(grads["wte"], idx, dx)
    return loss, grads


def main():
    out = sys.argv[1]
    share = "--share-layers" in sys.argv[2:]
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    rng = np.random.default_rng(7)
    weights = make_weights(rng, share)
    onnx.save(make_model(weights, share), os.path.join(out, "model.onnx"))

    idx = rng.integers(0, VOCAB, (BATCH, SEQ)).astype(np.int64)
    labels = np.roll(idx, -1, axis=1)
    labels[:, -1] = IGNORE          # no next token at the end
    labels[2, :] = IGNORE           # a padding sequence
    labels[5, :5] = IGNORE          # a left-padded one
    labels[6, 3] = IGNORE
    np.save(os.path.join(out, "data", "idx.npy"), idx)
    np.save(os.path.join(out, "data", "labels.npy"), labels)

    reference, losses = {}, []
    current = {k: v.astype(np.float64) for k, v in weights.items()}
    for step in range(STEPS):
        loss, grads = loss_and_grads(current, idx, labels, share)
        losses.append(loss)
        if step == 0:
            reference.update({"grad." + k: g for k, g in grads.items()})
        current = {k: v - LR * grads[k] for k, v in current.items()}
    reference["losses"] = np.array(losses)
    np.savez(os.path.join(out, "reference.npz"), **reference)


if __name__ == "__main__":
    main()
