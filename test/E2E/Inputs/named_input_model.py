#!/usr/bin/env python3
"""Writes a one-layer model whose data input has the name given, for tests
of how input names become data file names (docs/cli.md, "Data files").

Usage: named_input_model.py NAME OUT.onnx
The model: y = MatMul(<NAME> [4, 3], W [3, 2]); compile it with
`--loss mse --label-input target`.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    name, out = sys.argv[1], sys.argv[2]
    w = np.arange(6, dtype=np.float32).reshape(3, 2) / 10
    graph = helper.make_graph(
        [helper.make_node("MatMul", [name, "W"], ["y"], name="mm")],
        "named_input",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [4, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
