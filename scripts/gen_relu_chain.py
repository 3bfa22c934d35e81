#!/usr/bin/env python3
"""Writes mlp_relu with a chain of extra Relu nodes after its first Relu.

Usage: python3 scripts/gen_relu_chain.py N OUT.onnx [BASE.onnx]
(BASE defaults to ../shared/cases/mlp_relu/model.onnx beside the checkout).
Relu is idempotent, so the model computes exactly what the base model does:
its expected.npz still holds. Used by scripts/bench-compile.sh and the
compile-time regression test; the outputs are not committed (N = 4000 is
half a megabyte of weights plus the chain). Needs the `onnx` package.
"""

import os
import sys

import onnx
from onnx import helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BASE = os.path.join(os.path.dirname(ROOT), "shared", "cases",
                            "mlp_relu", "model.onnx")


def insert_relu_chain(model, count):
    """Puts `count` Relu nodes after the graph's first Relu."""
    nodes = list(model.graph.node)
    first = next((i for i, n in enumerate(nodes) if n.op_type == "Relu"), None)
    if first is None:
        raise SystemExit("gen_relu_chain: the base model has no Relu node")
    head = nodes[first].output[0]
    chain, previous = [], head
    for k in range(count):
        output = f"{head}_chain{k}"
        chain.append(helper.make_node("Relu", [previous], [output],
                                      name=f"/chain/Relu_{k}"))
        previous = output
    # Readers of the first Relu's output read the end of the chain instead.
    for node in nodes[first + 1:]:
        for j, name in enumerate(node.input):
            if name == head:
                node.input[j] = previous
    del model.graph.node[:]
    model.graph.node.extend(nodes[:first + 1] + chain + nodes[first + 1:])
    return model


def main(argv):
    if len(argv) not in (3, 4):
        raise SystemExit(__doc__)
    count = int(argv[1])
    if count < 0:
        raise SystemExit("gen_relu_chain: N must be >= 0")
    base = argv[3] if len(argv) == 4 else DEFAULT_BASE
    model = insert_relu_chain(onnx.load(base), count)
    onnx.checker.check_model(model)
    onnx.save(model, argv[2])


if __name__ == "__main__":
    main(sys.argv)
