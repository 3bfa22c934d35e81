#!/usr/bin/env python3
"""Runs a command and succeeds only if it exits with the given code.

Usage: expect_exit.py CODE COMMAND [ARG...]
(lit's `not` accepts any failure; some tests promise exactly exit code 1.)
"""

import subprocess
import sys

code = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL, timeout=300)
if result.returncode != code:
    sys.exit(f"expected exit code {code}, got {result.returncode}")
