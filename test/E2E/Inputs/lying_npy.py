#!/usr/bin/env python3
"""Writes a .npy file whose header claims far more data than follows it.

Usage: lying_npy.py OUT.npy
Header: float32, shape (68719476736, 16) (256 GiB); data: 64 bytes.
"""

import sys

header = b"{'descr': '<f4', 'fortran_order': False, " \
         b"'shape': (68719476736, 16), }"
header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
with open(sys.argv[1], "wb") as out:
    out.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") +
              header + bytes(64))
