#!/usr/bin/env python3
"""Writes the wide MLP of the GPU benchmark (scripts/gpu-bundle.sh) as ONNX:

  x [batch, width] -> layers x (Linear width->width, ReLU)
                   -> Linear width->classes -> logits [batch, classes]

Linear layers are `Gemm(transB=1)` with PyTorch's layout (weight
[out, in], bias [out]), initialised as PyTorch's nn.Linear does
(uniform within 1/sqrt(in)), seed 0. Compile it with `--loss cross-entropy
--label-input labels`. Defaults: width 4096, 4 hidden layers, 1024 classes,
batch 8192: 71.3 M parameters, 285 MiB of float32 weights (the .onnx is as
big: write it to a scratch folder, not the repository).

Usage: gen_bench_mlp.py OUT.onnx [--width W] [--layers L] [--classes C]
                                 [--batch B]
Needs numpy and onnx.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def linear(rng, name, fan_in, fan_out):
    bound = 1.0 / np.sqrt(fan_in)
    weight = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
    bias = rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)
    return [numpy_helper.from_array(weight, name + ".weight"),
            numpy_helper.from_array(bias, name + ".bias")]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--classes", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8192)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    nodes, initializers, value = [], [], "x"
    for i in range(args.layers + 1):
        last = i == args.layers
        name = "layers.%d" % i
        initializers += linear(rng, name, args.width,
                               args.classes if last else args.width)
        out = "logits" if last else "/%s/Gemm" % name
        nodes.append(helper.make_node(
            "Gemm", [value, name + ".weight", name + ".bias"], [out],
            name="/%s/Gemm" % name, transB=1))
        if not last:
            nodes.append(helper.make_node("Relu", [out], [out + "_relu"],
                                          name="/%s/Relu" % name))
            value = out + "_relu"
    graph = helper.make_graph(
        nodes, "bench_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [args.batch, args.width])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [args.batch, args.classes])],
        initializers)
    model = helper.make_model(graph, producer_name="pipecc gen_bench_mlp",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
