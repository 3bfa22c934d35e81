#!/usr/bin/env python3
"""Model FLOPs of one training sample of an ONNX model, for the GPU
benchmark's TFLOP/s and MFU (scripts/gpu-bundle.sh, gpu-check.sh).

Counts the matrix products with a weight: each Gemm or MatMul one of whose
operands is a 2-D float initializer W of K x N elements (Gemm's transB
read), applied to R rows per sample (the product of the other operand's
dimensions except the last, divided by its first, the batch dimension):

  forward         2 * R * K * N
  weight gradient 2 * R * K * N
  input gradient  2 * R * K * N, unless the other operand is a graph input
                  (nothing upstream needs its gradient)

Bias additions, activations, the loss and the optimizer are left out (they
are O(K + N) per row, not O(K * N)), as are products of two activations
(attention scores), which a model without them, like the benchmark's wide
MLP, does not have. This is the usual "6 x parameters" model-FLOPs count
(PaLM's MFU), made exact for the first layer.

Prints JSON: {"flops_per_sample": F, "batch": B, "matmuls": n,
"weights": P (elements of those weights)}.

Usage: model_flops.py MODEL.onnx   (needs the onnx package)
"""
import json
import sys

import onnx
from onnx import numpy_helper, shape_inference


def dims(value_info):
    shape = value_info.type.tensor_type.shape
    return [d.dim_value if d.HasField("dim_value") else None
            for d in shape.dim]


def main():
    model = onnx.load(sys.argv[1])
    try:
        model = shape_inference.infer_shapes(model)
    except Exception:  # Shapes of graph inputs are enough for an MLP.
        pass
    graph = model.graph
    weights = {init.name: numpy_helper.to_array(init).shape
               for init in graph.initializer if len(init.dims) == 2}
    shapes = {vi.name: dims(vi) for vi in list(graph.input) +
              list(graph.value_info) + list(graph.output)}
    inputs = {vi.name for vi in graph.input} - {i.name for i in
                                                graph.initializer}
    batch = next((shapes[name][0] for name in shapes if name in inputs), None)
    if not batch:
        raise SystemExit("model_flops: no graph input with a static batch "
                         "dimension")
    flops, matmuls, parameters = 0, 0, 0
    for node in graph.node:
        if node.op_type not in ("Gemm", "MatMul"):
            continue
        a, b = node.input[0], node.input[1]
        if b in weights:
            activation, (k, n) = a, weights[b]
            trans_b = any(attr.name == "transB" and attr.i for attr in
                          node.attribute)
            if trans_b:
                k, n = n, k
        elif a in weights:
            activation, (k, n) = b, weights[a]
        else:
            continue
        shape = shapes.get(activation)
        if not shape or any(d is None for d in shape):
            raise SystemExit("model_flops: unknown shape of '%s' (input of "
                             "node '%s')" % (activation, node.name))
        rows = 1
        for d in shape[:-1]:
            rows *= d
        rows_per_sample = rows / batch
        passes = 2 if activation in inputs else 3
        flops += passes * 2 * rows_per_sample * k * n
        matmuls += 1
        parameters += k * n
    json.dump({"flops_per_sample": flops, "batch": batch, "matmuls": matmuls,
               "weights": parameters}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
