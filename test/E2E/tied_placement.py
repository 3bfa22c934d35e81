#!/usr/bin/env python3
"""Prints which ranks of a compiled pipeline hold a parameter, from the
rank<k>.safetensors files pipecc writes: a tied embedding that the first
stage reads (token embedding) and the last stage reads (LM head) is held by
the first and the last rank.

    tied_placement.py OUT_DIR NAME   ->   NAME: ranks 0,1 of 2
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_case import read_safetensors  # noqa: E402


def main():
    out, name = sys.argv[1], sys.argv[2]
    ranks = sorted(int(m.group(1)) for m in (
        re.fullmatch(r"rank(\d+)\.safetensors", f) for f in os.listdir(out))
        if m)
    holders = [str(k) for k in ranks if name in read_safetensors(
        os.path.join(out, "rank%d.safetensors" % k))]
    print("%s: ranks %s of %d" % (name, ",".join(holders) or "none",
                                  len(ranks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
