#!/usr/bin/env python3
"""Writes random initial weights for a rank executable's --weights, from a
description of names, dtypes and shapes (weights.json, written by
scripts/gpu-bundle.sh for the benchmark, whose real weights are too big to
carry). A 2-D weight [out, in] is uniform within 1/sqrt(in), as PyTorch's
nn.Linear initialises it; a 1-D one (a bias) likewise with in = its length.
Seeded: the same description gives the same file. Numpy only.

Usage: make_weights.py WEIGHTS.json OUT.safetensors [--seed N]
"""
import argparse
import json
import struct

import numpy as np

SIZES = {"F32": 4, "BF16": 2, "F16": 2}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("description")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tensors = json.load(open(args.description))["tensors"]
    header, offset = {}, 0
    for name in sorted(tensors):
        info = tensors[name]
        if info["dtype"] not in SIZES:
            raise SystemExit("make_weights: %s: unsupported dtype %s" % (
                name, info["dtype"]))
        size = SIZES[info["dtype"]] * int(np.prod(info["shape"], dtype=np.int64))
        header[name] = {"dtype": info["dtype"], "shape": info["shape"],
                        "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # Keep the data 8-byte aligned.
    rng = np.random.default_rng(args.seed)
    with open(args.out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in sorted(tensors):
            info = tensors[name]
            shape = info["shape"]
            fan_in = shape[-1] if shape else 1
            bound = 1.0 / np.sqrt(max(fan_in, 1))
            values = rng.uniform(-bound, bound, shape).astype(np.float32)
            if info["dtype"] == "F32":
                f.write(values.tobytes())
            elif info["dtype"] == "F16":
                f.write(values.astype(np.float16).tobytes())
            else:  # BF16: round to nearest even on the upper 16 bits.
                bits = values.view(np.uint32)
                f.write(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)
                        .astype(np.uint16).tobytes())


if __name__ == "__main__":
    main()
