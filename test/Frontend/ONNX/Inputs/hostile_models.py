#!/usr/bin/env python3
"""Writes models whose text (domains, node names, op types, tensor names,
attribute values) is what an attacker would put there: newlines that forge
a `pipecc:` line, quotes, backslashes, terminal escapes, bytes that are not
UTF-8, NUL bytes, and names that ONNX forbids to repeat.

Usage: hostile_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FORGED = "\npipecc: compiled OK"


def save(model, path, patches=None):
    """Writes `model`; `patches` maps placeholder names to the raw bytes that
    replace them (same length), which the protobuf API would refuse."""
    data = model.SerializeToString()
    for placeholder, raw in (patches or {}).items():
        key = placeholder.encode()
        assert len(key) == len(raw) and key in data, placeholder
        data = data.replace(key, raw)
    with open(path, "wb") as f:
        f.write(data)


def make(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs,
                              list(initializers))
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset)])


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    x = tensor("x", [4, 8])

    # The legality gate names the node, its op type and its domain.
    save(make([helper.make_node("Relu", ["x"], ["y"], name="n1",
                                domain="evil" + FORGED),
               helper.make_node("Frob\x1b[2J", ["y"], ["z"],
                                name="bad'" + FORGED + "\\")],
              [x], [tensor("z", [4, 8])]),
         os.path.join(out, "gate.onnx"))
    # The same model under a hostile file name.
    save(make([helper.make_node("Frob", ["x"], ["z"])], [x],
              [tensor("z", [4, 8])]),
         os.path.join(out, "m\nerror: forged.onnx"))

    # A node reads a name nobody defines.
    save(make([helper.make_node("Relu", ["ghost" + FORGED], ["y"],
                                name="r" + FORGED)],
              [x], [tensor("y", [4, 8])]),
         os.path.join(out, "input.onnx"))

    # A model that imports, with a hostile input name (for --summary).
    save(make([helper.make_node("Relu", ["x" + FORGED], ["y"], name="r")],
              [tensor("x" + FORGED, [4, 8])], [tensor("y", [4, 8])]),
         os.path.join(out, "summary.onnx"))

    # A pattern refuses an attribute value.
    labels = helper.make_tensor_value_info("labels", TensorProto.INT64, [4])
    save(make([helper.make_node("SoftmaxCrossEntropyLoss", ["x", "labels"],
                                ["loss"], name="sce" + FORGED,
                                reduction="sum" + FORGED)],
              [x, labels], [tensor("loss", [])]),
         os.path.join(out, "attribute.onnx"))

    # Names that are not UTF-8, or hold a NUL byte.
    def matmul_model(weight_name, input_name="x", node_name="mm"):
        init = numpy_helper.from_array(np.ones((8, 3), np.float32),
                                       weight_name)
        return make([helper.make_node("MatMul", [input_name, weight_name],
                                      ["y"], name=node_name)],
                    [tensor(input_name, [4, 8])], [tensor("y", [4, 3])],
                    [init])
    save(matmul_model("w@@@"), os.path.join(out, "init_not_utf8.onnx"),
         {"w@@@": b"w\xff\n'"})
    save(matmul_model("w@@"), os.path.join(out, "init_nul.onnx"),
         {"w@@": b"w\x00x"})
    save(matmul_model("w", input_name="x@@"),
         os.path.join(out, "input_not_utf8.onnx"), {"x@@": b"x\xc3("})
    save(matmul_model("w", node_name="mm@@"),
         os.path.join(out, "node_not_utf8.onnx"), {"mm@@": b"mm\xed\xa0"})
    # Two initializers whose names differ only in bytes that are not UTF-8
    # would both become "w\ufffd" in a weights file.
    model = matmul_model("w@1")
    model.graph.initializer.append(
        numpy_helper.from_array(np.zeros((8, 3), np.float32), "w@2"))
    save(model, os.path.join(out, "init_merge.onnx"),
         {"w@1": b"w\xfe1", "w@2": b"w\xff1"})
    # A weight read on two stages (tied): its gradient's all-reduce names
    # it.
    tied = "W" + FORGED
    save(make([helper.make_node("MatMul", ["x", tied], ["h"], name="mm1"),
               helper.make_node("Relu", ["h"], ["r"], name="relu"),
               helper.make_node("MatMul", ["r", tied], ["y"], name="mm2")],
              [x], [tensor("y", [4, 8])],
              [numpy_helper.from_array(np.ones((8, 8), np.float32), tied)]),
         os.path.join(out, "tied.onnx"))
    # ONNX forbids two initializers of one name.
    model = matmul_model("w")
    model.graph.initializer.append(
        numpy_helper.from_array(np.zeros((8, 3), np.float32), "w"))
    save(model, os.path.join(out, "init_twice.onnx"))


if __name__ == "__main__":
    main()
