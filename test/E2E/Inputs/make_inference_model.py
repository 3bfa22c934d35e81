#!/usr/bin/env python3
"""A small model for test/E2E/inference.test, its data and its check.

make_inference_model.py DIR          writes DIR/model.onnx and DIR/data/
make_inference_model.py DIR --check  compares DIR/results/ with numpy

Outputs: y = x + x (float32), x:copy = Identity(x) (a graph input returned
as it is; ':' is escaped in the file name), shape = Shape(x) (int64,
folded), s2 = s * s (a scalar input and output).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, save

folder = sys.argv[1]
x = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 4
s = np.array(1.5, dtype=np.float32)
expected = {"y": x + x, "x:copy": x, "shape": np.array([3, 4], np.int64),
            "s2": s * s}
files = {"y": "y.npy", "x:copy": "x%3Acopy.npy", "shape": "shape.npy",
         "s2": "s2.npy"}

if "--check" in sys.argv:
    for name, want in expected.items():
        got = np.load(os.path.join(folder, "results", files[name]))
        ok = got.dtype == want.dtype and got.shape == want.shape and \
            np.array_equal(got, want)
        print(name, got.dtype, got.shape, "ok" if ok else "DIFFERS: %r" % got)
    sys.exit(0)

value = helper.make_tensor_value_info
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "x"], ["y"]),
     helper.make_node("Identity", ["x"], ["x:copy"]),
     helper.make_node("Shape", ["x"], ["shape"]),
     helper.make_node("Mul", ["s", "s"], ["s2"])],
    "kinds",
    [value("x", TensorProto.FLOAT, [3, 4]), value("s", TensorProto.FLOAT, [])],
    [value("y", TensorProto.FLOAT, [3, 4]),
     value("x:copy", TensorProto.FLOAT, [3, 4]),
     value("shape", TensorProto.INT64, [2]),
     value("s2", TensorProto.FLOAT, [])])
os.makedirs(os.path.join(folder, "data"), exist_ok=True)
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
     os.path.join(folder, "model.onnx"))
np.save(os.path.join(folder, "data", "x.npy"), x)
np.save(os.path.join(folder, "data", "s.npy"), s)
