#!/usr/bin/env python3
"""Writes the seed corpora of the .npy and safetensors fuzzers (test/fuzz/corpus)
and copies the small ONNX models of the frontend tests into corpus/onnx.
Run it again after changing the lists below; the output is deterministic."""
import json
import os
import shutil
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
corpus = os.path.join(here, "corpus")


def write(kind, name, data):
    folder = os.path.join(corpus, kind)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def npy(array, version=None):
    import io
    out = io.BytesIO()
    if version is None:
        np.save(out, array)
    else:
        np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def npy_seeds():
    write("npy", "f32_2x3.npy", npy(np.arange(6, dtype=np.float32).reshape(2, 3)))
    write("npy", "i64_4.npy", npy(np.arange(4, dtype=np.int64)))
    write("npy", "i32_scalar.npy", npy(np.array(7, dtype=np.int32)))
    write("npy", "f32_0x2.npy", npy(np.zeros((0, 2), dtype=np.float32)))
    write("npy", "f32_v2.npy", npy(np.ones((2, 2), dtype=np.float32), (2, 0)))
    write("npy", "i64_v3.npy", npy(np.arange(3, dtype=np.int64), (3, 0)))
    write("npy", "fortran.npy",
          npy(np.asfortranarray(np.ones((2, 2), dtype=np.float32))))
    write("npy", "f64.npy", npy(np.ones(2, dtype=np.float64)))
    # Regression: 2^62 floats in 0 bytes (the byte count wrapped to 0).
    header = (b"{'descr': '<f4', 'fortran_order': False, "
              b"'shape': (1073741824, 1073741824, 4), }")
    header += b" " * ((64 - (10 + len(header) + 1) % 64) % 64) + b"\n"
    write("npy", "overflow_bytes.npy",
          b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header)


def safetensors(tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    f32 = lambda *v: struct.pack("<%df" % len(v), *v)
    write("safetensors", "two.safetensors", safetensors(
        {"w": ("F32", [2, 2], f32(1, 2, 3, 4)), "b": ("F32", [2], f32(5, 6))},
        {"format": "pt", "step": "3"}))
    write("safetensors", "types.safetensors", safetensors(
        {"i": ("I64", [1], struct.pack("<q", -1)),
         "j": ("I32", [2], struct.pack("<2i", 1, 2)),
         "s": ("F32", [], f32(0.5)),
         "e": ("F32", [0, 3], b"")}))
    write("safetensors", "escaped.safetensors", safetensors(
        {"layer.0/w\u00e9\"\\": ("F32", [1], f32(1))}))
    write("safetensors", "empty.safetensors", safetensors({}))
    # Regression: 2^62 floats in 0 bytes (the byte count wrapped to 0).
    write("safetensors", "overflow_bytes.safetensors", safetensors(
        {"a": ("F32", [4611686018427387904], b"")}))


def onnx_seeds():
    inputs = os.path.join(here, "..", "test", "Frontend", "ONNX", "Inputs")
    for name in ["cross_entropy.onnx", "free_batch.onnx", "gemm_variants.onnx",
                 "initializer_types.onnx", "mlp_chain.onnx", "reductions.onnx",
                 "reductions_opset18.onnx", "reshape_shape_subgraph.onnx",
                 "sce_weights.onnx", "softmax_opset11.onnx",
                 "transpose_matmul.onnx", "unsupported.onnx",
                 "add_three_inputs.onnx"]:
        shutil.copyfile(os.path.join(inputs, name),
                        os.path.join(corpus, "onnx", name))
    # Regression (test/Frontend/ONNX/fuzz-regressions.test): a node without
    # outputs at an opset newer than libonnx's schemas was an internal error.
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], [], name="sum", keepdims=0)],
        "no_outputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    write("onnx", "regress_node_without_outputs.onnx",
          model.SerializeToString())


if __name__ == "__main__":
    npy_seeds()
    safetensors_seeds()
    onnx_seeds()
    sys.exit(0)
