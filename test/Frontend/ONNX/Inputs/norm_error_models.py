#!/usr/bin/env python3
"""Writes the models whose LayerNormalization, LogSoftmax, Sigmoid or
NegativeLogLikelihoodLoss pipecc refuses (test/Frontend/ONNX/norms.test);
those at opset 18 reach pipecc's own checks, not ONNX shape inference.

Usage: python3 norm_error_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    f32 = lambda name, shape: helper.make_tensor_value_info(  # noqa: E731
        name, TensorProto.FLOAT, shape)
    i64 = lambda name, shape: helper.make_tensor_value_info(  # noqa: E731
        name, TensorProto.INT64, shape)
    w = lambda name, *shape: numpy_helper.from_array(  # noqa: E731
        np.ones(shape, np.float32), name)
    # A scale that varies along a non-normalised dimension.
    save(out, "ln_scale", [helper.make_node(
        "LayerNormalization", ["x", "g"], ["y"], axis=-1, name="ln")],
        [f32("x", [2, 3, 4])], [f32("y", [2, 3, 4])], [w("g", 3, 4)])
    # The Mean output read by another node.
    save(out, "ln_mean", [
        helper.make_node("LayerNormalization", ["x", "g"], ["y", "m"],
                         axis=-1, name="ln"),
        helper.make_node("Add", ["y", "m"], ["z"], name="add")],
        [f32("x", [2, 4])], [f32("z", [2, 4])], [w("g", 4)])
    save(out, "ln_axis", [helper.make_node(
        "LayerNormalization", ["x", "g"], ["y"], axis=3, name="ln")],
        [f32("x", [2, 4])], [f32("y", [2, 4])], [w("g", 4)])
    save(out, "nll_weight", [helper.make_node(
        "NegativeLogLikelihoodLoss", ["x", "t", "wt"], ["loss"], name="nll")],
        [f32("x", [4, 3]), i64("t", [4])], [f32("loss", [])], [w("wt", 3)])
    save(out, "nll_reduction", [helper.make_node(
        "NegativeLogLikelihoodLoss", ["x", "t"], ["loss"], reduction="avg",
        name="nll")], [f32("x", [4, 3]), i64("t", [4])], [f32("loss", [])])
    save(out, "nll_labels", [helper.make_node(
        "NegativeLogLikelihoodLoss", ["x", "t"], ["loss"], name="nll")],
        [f32("x", [4, 3]), i64("t", [3])], [f32("loss", [])], opset=18)
    save(out, "logsoftmax_11", [helper.make_node(
        "LogSoftmax", ["x"], ["y"], axis=1, name="lsm")],
        [f32("x", [2, 3, 4])], [f32("y", [2, 3, 4])], opset=11)
    save(out, "sigmoid_int", [helper.make_node(
        "Sigmoid", ["x"], ["y"], name="sig")],
        [i64("x", [2])], [i64("y", [2])], opset=18)


if __name__ == "__main__":
    main()
