#!/usr/bin/env python3
"""Writes ONNX's own backend node tests whose ops pipecc imports as test data.

The onnx package carries its node tests (onnx.backend.test.case.node
.collect_testcases(): a one-node model, or the node's function expansion,
plus input and expected output arrays). This script keeps those that
pipecc's importer accepts the ops of and that are small, and writes per
case

    <out>/<case>/model.onnx   the test's model (graph inputs given the
                              static shapes of the test's input arrays;
                              integer inputs that fix shapes, such as
                              Reshape's shape, made initializers)
    <out>/<case>/data.npz     "input/<name>" and "output/<name>" arrays

plus <out>/cases.json (case, op, rtol, atol, inputs, outputs) and
<out>/excluded.txt (every other case with the reason). Whether an op is
supported is the importer's answer: a case is excluded when
`pipecc --emit=graph` refuses one of its nodes as unsupported (op type or
opset); any other import error is a failure of a supported op and the case
is kept, so the runner lists it.

Usage (system python3 with onnx and numpy):
    scripts/export_onnx_node_tests.py [--pipecc build/bin/pipecc]
        [--out test/E2E/Inputs/onnx-node-tests]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Element types the CPU runtime has buffers of.
SUPPORTED_DTYPES = {
    TensorProto.FLOAT: np.float32,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.BOOL: np.bool_,
}
# Inputs that fix a shape (axes, target shapes, slice bounds, split sizes,
# pads): ONNX's tests feed them as graph inputs, but pipecc compiles static
# shapes and needs them constant. Like onnx-mlir's backend tests with
# constant inputs, the export turns such an integer graph input into an
# initializer holding the test's values (cases.json lists them per case).
SHAPE_INPUTS = {
    "Reshape": {1}, "Unsqueeze": {1}, "Squeeze": {1}, "Slice": {1, 2, 3, 4},
    "Split": {1}, "Expand": {1}, "Tile": {1}, "Pad": {1, 3},
    "ConstantOfShape": {0}, "CumSum": {1}, "Range": {0, 1, 2}, "TopK": {1},
    "OneHot": {1}, "Resize": {1, 2, 3}, "Trilu": {1},
    "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}, "ReduceMin": {1},
    "ReduceProd": {1}, "ReduceL1": {1}, "ReduceL2": {1}, "ReduceLogSum": {1},
    "ReduceLogSumExp": {1}, "ReduceSumSquare": {1},
}
# Cases whose arrays hold more elements than this are left out: the data
# stays small (the whole set well under 2 MB).
MAX_ELEMENTS = 4096


def base_name(name):
    """test_softmax_axis_0_expanded_ver18 -> test_softmax_axis_0."""
    return re.sub(r"_expanded(_ver\d+)?$", "", name)


def op_of(case, by_name):
    """The op a case tests: its node's type, or, for a function expansion,
    the op of the case it expands."""
    nodes = case.model.graph.node
    if len(nodes) == 1 and not case.name.endswith(
            ("_expanded",)) and "_expanded_ver" not in case.name:
        return nodes[0].op_type
    sibling = by_name.get(base_name(case.name))
    if sibling is not None and len(sibling.model.graph.node) == 1:
        return sibling.model.graph.node[0].op_type
    return "+".join(sorted({n.op_type for n in nodes}))


def supported_op_types(pipecc, scratch):
    """The op types the importer knows, from its own error message."""
    graph = helper.make_graph(
        [helper.make_node("PipeccNoSuchOp", ["x"], ["y"])], "probe",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = os.path.join(scratch, "probe.onnx")
    onnx.save(helper.make_model(graph), path)
    result = subprocess.run([pipecc, path, "--emit=graph"],
                            capture_output=True, text=True)
    match = re.search(r"supported: (.*)$", result.stderr.strip())
    if not match:
        sys.exit("cannot read the supported ops from pipecc's message: " +
                 result.stderr)
    return set(match.group(1).split(", "))


def pin_input_shapes(model, inputs):
    """Gives each graph input the static shape of its test array."""
    for value in model.graph.input:
        if value.name not in inputs:
            continue
        shape = value.type.tensor_type.shape
        shape.ClearField("dim")
        for d in inputs[value.name].shape:
            shape.dim.add().dim_value = int(d)


def constant_shape_inputs(model, inputs):
    """Turns the integer graph inputs that only feed SHAPE_INPUTS positions
    into initializers; returns their names."""
    uses = {}
    for node in model.graph.node:
        for position, name in enumerate(node.input):
            uses.setdefault(name, []).append(
                position in SHAPE_INPUTS.get(node.op_type, ()))
    moved = []
    for value in list(model.graph.input):
        array = inputs.get(value.name)
        if array is None or not np.issubdtype(array.dtype, np.integer):
            continue
        if not uses.get(value.name) or not all(uses[value.name]):
            continue
        model.graph.input.remove(value)
        model.graph.initializer.append(
            numpy_helper.from_array(array, value.name))
        moved.append(value.name)
    return moved


def first_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[0] if lines else "(no message)"


def classify(case, supported, pipecc, scratch):
    """(kept, reason): reason says why a case is left out."""
    graph = case.model.graph
    unknown = sorted({n.op_type for n in graph.node if n.domain not in (
        "", "ai.onnx")} | {n.op_type for n in graph.node
                           if n.op_type not in supported})
    if unknown:
        return False, "op unsupported: " + ", ".join(unknown)
    inputs, outputs = case.data_sets[0]
    if len(inputs) != len(graph.input) or len(outputs) != len(graph.output):
        return False, "optional inputs or outputs left empty"
    for value in list(graph.input) + list(graph.output):
        if value.type.WhichOneof("value") != "tensor_type":
            return False, "non-tensor value '%s'" % value.name
        elem = value.type.tensor_type.elem_type
        if elem not in SUPPORTED_DTYPES:
            return False, "dtype %s of '%s'" % (
                TensorProto.DataType.Name(elem), value.name)
    arrays = list(inputs) + list(outputs)
    for array in arrays:
        if not isinstance(array, np.ndarray):
            return False, "non-tensor data"
        if array.size == 0:
            return False, "empty tensor"
    total = sum(a.size for a in arrays)
    if total > MAX_ELEMENTS:
        return False, "large: %d elements" % total
    return True, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipecc",
                        default=os.path.join(ROOT, "build", "bin", "pipecc"))
    parser.add_argument("--out", default=os.path.join(
        ROOT, "test", "E2E", "Inputs", "onnx-node-tests"))
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from onnx.backend.test.case.node import collect_testcases
        cases = sorted(collect_testcases(), key=lambda c: c.name)
    by_name = {c.name: c for c in cases}

    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    os.makedirs(args.out)
    kept, excluded = [], []
    with tempfile.TemporaryDirectory() as scratch:
        supported = supported_op_types(args.pipecc, scratch)
        for case in cases:
            op = op_of(case, by_name)
            ok, reason = classify(case, supported, args.pipecc, scratch)
            if not ok:
                excluded.append((case.name, op, reason))
                continue
            inputs, outputs = case.data_sets[0]
            model = onnx.ModelProto()
            model.CopyFrom(case.model)
            names_in = [v.name for v in model.graph.input]
            names_out = [v.name for v in model.graph.output]
            constants = constant_shape_inputs(model,
                                              dict(zip(names_in, inputs)))
            inputs = [a for n, a in zip(names_in, inputs)
                      if n not in constants]
            names_in = [n for n in names_in if n not in constants]
            pin_input_shapes(model, dict(zip(names_in, inputs)))
            path = os.path.join(scratch, "model.onnx")
            onnx.save(model, path)
            # The importer decides: a node it refuses as unsupported (op
            # type at this opset) leaves the case out; other errors are
            # failures of supported ops, kept for the runner to list.
            result = subprocess.run([args.pipecc, path, "--emit=graph"],
                                    capture_output=True, text=True)
            if result.returncode != 0 and "unsupported ONNX node" in \
                    result.stderr:
                excluded.append((case.name, op, "opset unsupported: " +
                                 first_line(result.stderr)))
                continue
            folder = os.path.join(args.out, case.name)
            os.makedirs(folder)
            shutil.copy(path, os.path.join(folder, "model.onnx"))
            data = {}
            for name, array in zip(names_in, inputs):
                data["input/" + name] = array
            for name, array in zip(names_out, outputs):
                data["output/" + name] = array
            np.savez_compressed(os.path.join(folder, "data.npz"), **data)
            kept.append({"case": case.name, "op": op, "rtol": case.rtol,
                         "atol": case.atol, "inputs": names_in,
                         "constant_inputs": constants,
                         "outputs": names_out})
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump({"onnx_version": onnx.__version__, "cases": kept}, f,
                  indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "excluded.txt"), "w") as f:
        f.write("# ONNX %s node tests not exported (case, op, reason); "
                "written by scripts/export_onnx_node_tests.py\n" %
                onnx.__version__)
        for name, op, reason in excluded:
            f.write("%s\t%s\t%s\n" % (name, op, reason))
    size = sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(args.out) for f in files)
    print("%d cases kept, %d excluded, %d bytes in %s" %
          (len(kept), len(excluded), size, os.path.relpath(args.out, ROOT)))


if __name__ == "__main__":
    main()
