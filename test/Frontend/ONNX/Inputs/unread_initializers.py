#!/usr/bin/env python3
"""Writes models with initializers no op reads: a Gemm's C with beta = 0,
an f32 and an int64 initializer no node names (unread.onnx), and an f64
one (unread_f64.onnx).

Usage: unread_initializers.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def write(path, extra):
    nodes = [helper.make_node("Gemm", ["x", "W", "bias"], ["y"], name="fc",
                              beta=0.0)]
    inits = [numpy_helper.from_array(np.ones((8, 3), np.float32), "W"),
             numpy_helper.from_array(np.full(3, 2, np.float32), "bias")]
    inits += [numpy_helper.from_array(v, k) for k, v in extra.items()]
    graph = helper.make_graph(
        nodes, "unread",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
write(os.path.join(out, "unread.onnx"),
      {"unused": np.full(5, 3, np.float32),
       "unused_i64": np.arange(3, dtype=np.int64)})
write(os.path.join(out, "unread_f64.onnx"),
      {"unused_f64": np.ones(2, np.float64)})
