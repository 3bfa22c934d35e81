"""Writes OUT/model.onnx whose large float32 initializers live in an
external data file (OUT/weights.bin): `w` (512x512, 1 MiB, trained) and
`scale` (512x512, 1 MiB, frozen with --freeze), plus a small external `b`.
loss = mean((x @ w @ scale + b)^2). Also writes OUT/w.npy (w's values) to
check the weights file against."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
tensors = {
    "w": rng.standard_normal((512, 512)).astype(np.float32),
    "scale": rng.standard_normal((512, 512)).astype(np.float32),
    "b": rng.standard_normal((512,)).astype(np.float32),
}
initializers = []
with open(os.path.join(out, "weights.bin"), "wb") as f:
    for name, value in tensors.items():
        f.write(b"\0" * (-f.tell() % 64))
        offset = f.tell()
        f.write(value.tobytes())
        t = TensorProto(name=name, data_type=TensorProto.FLOAT,
                        dims=value.shape)
        t.data_location = TensorProto.EXTERNAL
        for key, val in (("location", "weights.bin"), ("offset", str(offset)),
                         ("length", str(value.nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, val
        initializers.append(t)
np.save(os.path.join(out, "w.npy"), tensors["w"])
nodes = [
    helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
    helper.make_node("MatMul", ["h", "scale"], ["s"], name="mix"),
    helper.make_node("Add", ["s", "b"], ["y"], name="add"),
    helper.make_node("Mul", ["y", "y"], ["sq"], name="square"),
    helper.make_node("ReduceMean", ["sq"], ["loss"], name="mean", keepdims=0),
]
graph = helper.make_graph(
    nodes, "mapped",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 512])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
    initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "model.onnx"))
