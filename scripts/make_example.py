#!/usr/bin/env python3
"""Writes the bundled example: a small MLP classifier shaped like a PyTorch
export (Gemm with transB=1, Relu, SoftmaxCrossEntropyLoss, opset 13), with
deterministic weights and a data set whose labels a model can learn.

Usage: scripts/make_example.py [OUT_DIR]   (default test/examples/mlp)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, WIDTHS, CLASSES = 32, [32, 64, 64, 48], 10


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "test", "examples", "mlp")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(2026)
    widths = WIDTHS + [CLASSES]
    nodes, inits = [], []
    prev = "x"
    for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:])):
        bound = 1.0 / np.sqrt(fan_in)  # PyTorch's nn.Linear default
        w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        b = rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"layers.{i}.weight"),
                  numpy_helper.from_array(b, f"layers.{i}.bias")]
        gemm = f"/layers.{i}/Gemm_output_0"
        nodes.append(helper.make_node(
            "Gemm", [prev, f"layers.{i}.weight", f"layers.{i}.bias"], [gemm],
            name=f"/layers.{i}/Gemm", alpha=1.0, beta=1.0, transB=1))
        prev = gemm
        if i < len(widths) - 2:
            relu = f"/Relu_{i}_output_0"
            nodes.append(helper.make_node("Relu", [prev], [relu],
                                          name=f"/Relu_{i}"))
            prev = relu
    nodes.append(helper.make_node(
        "SoftmaxCrossEntropyLoss", [prev, "labels"], ["loss"],
        name="/loss_fn/SoftmaxCrossEntropyLoss", reduction="mean",
        ignore_index=-100))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [BATCH, WIDTHS[0]]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [BATCH])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="pipecc make_example.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))

    # Labels come from a fixed random linear teacher, so the loss can fall.
    samples = 8 * BATCH
    x = rng.standard_normal((samples, WIDTHS[0])).astype(np.float32)
    teacher = rng.standard_normal((WIDTHS[0], CLASSES)).astype(np.float32)
    labels = np.argmax(x @ teacher, axis=1).astype(np.int64)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "labels.npy"), labels)


if __name__ == "__main__":
    main()
