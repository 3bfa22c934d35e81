#!/usr/bin/env python3
"""Writes each array of a case's inputs.npz as DIR/<name>.npy, the data
folder a rank executable reads with --data (names here are plain
identifiers, which the data file naming leaves as they are).

Usage: npz_to_data.py INPUTS.npz DIR"""
import os
import sys

import numpy as np

inputs = np.load(sys.argv[1])
os.makedirs(sys.argv[2], exist_ok=True)
for key in inputs.files:
    np.save(os.path.join(sys.argv[2], key + ".npy"), inputs[key])
