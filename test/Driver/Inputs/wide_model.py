#!/usr/bin/env python3
"""Writes a small classifier with wide layers: little code, large weights
(about 4 MiB with the default width), for tests of failing writes and of
interrupting a compile.

Usage: wide_model.py OUT.onnx [WIDTH]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, INPUTS, CLASSES = 8, 256, 10


def main():
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    rng = np.random.default_rng(6)
    w0 = rng.uniform(-0.05, 0.05, (width, INPUTS)).astype(np.float32)
    w1 = rng.uniform(-0.05, 0.05, (CLASSES, width)).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w0"], ["h"], name="fc0", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w1"], ["logits"], name="fc1",
                         transB=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                         ["loss"], name="loss", reduction="mean"),
    ]
    graph = helper.make_graph(
        nodes, "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [BATCH, INPUTS]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [BATCH])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
