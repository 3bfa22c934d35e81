#!/usr/bin/env python3
"""Writes a model in which three nodes (MatMul, Relu, MatMul, one after the
other) share the name 'dup', followed by a Tanh named 'last'.

Usage: dup_names.py OUT.onnx
"""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

nodes = [
    helper.make_node("MatMul", ["x", "W1"], ["h"], name="dup"),
    helper.make_node("Relu", ["h"], ["r"], name="dup"),
    helper.make_node("MatMul", ["r", "W2"], ["z"], name="dup"),
    helper.make_node("Tanh", ["z"], ["y"], name="last"),
]
graph = helper.make_graph(
    nodes, "dup_names",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
    [numpy_helper.from_array(np.ones((8, 6), np.float32), "W1"),
     numpy_helper.from_array(np.ones((6, 3), np.float32), "W2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
