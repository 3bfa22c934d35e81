#!/usr/bin/env python3
"""Writes the .npy fixtures of NpyReaderTest.cpp into the directory argv[1].

Made with numpy at test time (rather than checked in as binaries) so the
reader is checked against numpy's own writer, all three format versions.
"""
import os
import sys

import numpy as np


def write(path, array, version):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    f32 = (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1).astype(np.float32)
    write(os.path.join(out, "f32_v1.npy"), f32, (1, 0))
    i64 = np.array([-3, 0, 2**40, 7, -(2**62)], dtype=np.int64)
    write(os.path.join(out, "i64_v2.npy"), i64, (2, 0))
    i32 = (np.arange(8, dtype=np.int32) - 4).reshape(4, 1, 2)
    write(os.path.join(out, "i32_v3.npy"), i32, (3, 0))
    write(os.path.join(out, "scalar.npy"), np.float32(2.5).reshape(()), (1, 0))
    write(os.path.join(out, "empty.npy"), np.zeros((0, 3), np.float32), (1, 0))
    batch = np.arange(24, dtype=np.float32).reshape(12, 2)
    np.save(os.path.join(out, "batch.npy"), batch)
    np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(f32.reshape(3, 2)))
    np.save(os.path.join(out, "big_endian.npy"), f32.astype(">f4"))
    np.save(os.path.join(out, "float64.npy"), f32.astype(np.float64))


if __name__ == "__main__":
    main()
