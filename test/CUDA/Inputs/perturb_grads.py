#!/usr/bin/env python3
"""Writes altered copies of a --dump-grads file, for compare_grads.py's test:

  OUT/off.safetensors      one element of the largest gradient moved by
                           1e-2 (beyond the fp32 tolerances)
  OUT/missing.safetensors  the last gradient left out
  OUT/bf16.safetensors     every tensor rounded to bf16 and stored as BF16
                           (within the bf16 tolerances, beyond fp32's)

Usage: perturb_grads.py GRADS.safetensors OUT"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from compare_grads import read_safetensors  # noqa: E402


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (dtype, array_bytes, shape) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(array_bytes)]}
        offset += len(array_bytes)
        blobs.append(array_bytes)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def f32(array):
    return ("F32", np.ascontiguousarray(array, np.float32).tobytes(),
            array.shape)


def bf16(array):
    # Round to nearest even on the upper 16 bits of the float32 pattern.
    bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return ("BF16", rounded.astype(np.uint16).tobytes(), array.shape)


grads = read_safetensors(sys.argv[1])
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
largest = max((k for k in grads if k.startswith("grad.")),
              key=lambda k: grads[k].size)
off = {k: v.copy() for k, v in grads.items()}
off[largest].flat[0] += 1e-2
write(os.path.join(out, "off.safetensors"),
      {k: f32(v) for k, v in off.items()})
last = sorted(k for k in grads if k.startswith("grad."))[-1]
write(os.path.join(out, "missing.safetensors"),
      {k: f32(v) for k, v in grads.items() if k != last})
write(os.path.join(out, "bf16.safetensors"),
      {k: bf16(v) for k, v in grads.items()})
