"""check_safetensors.py FILE NAME EXPECTED.npy: tensor NAME of the
safetensors FILE equals the array in EXPECTED.npy, bit for bit."""
import json
import struct
import sys

import numpy as np

path, name, expected_path = sys.argv[1:4]
with open(path, "rb") as f:
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
    data = f.read()
entry = header[name]
begin, end = entry["data_offsets"]
value = np.frombuffer(data[begin:end], dtype="<f4").reshape(entry["shape"])
expected = np.load(expected_path)
same = value.shape == expected.shape and np.array_equal(
    value.view(np.uint32), expected.view(np.uint32))
print(f"{name}: {'equal' if same else 'DIFFERENT'}")
sys.exit(0 if same else 1)
