#!/usr/bin/env python3
"""one_cpu.py COMMAND ARGS...: runs COMMAND confined to the first CPU this
process may use (its children inherit the mask)."""
import os
import sys

os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.execvp(sys.argv[1], sys.argv[1:])
