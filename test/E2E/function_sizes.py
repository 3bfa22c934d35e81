#!/usr/bin/env python3
"""Reads LLVM-dialect modules (pipecc --emit=lower) on stdin and prints the
largest function by loops (`llvm.cond_br`, one per loop the lowering makes)
and by ops, and the number of functions. Exits 1 when a function has more
than --max-loops loops or --max-ops ops: LLVM's optimisation time grows
with the square of those (docs/design.md, "Compile time").
"""
import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-loops", type=int, required=True)
    parser.add_argument("--max-ops", type=int, required=True)
    args = parser.parse_args()
    sizes = {}
    name = None
    for line in sys.stdin:
        header = re.match(r"\s*llvm\.func @([\w.$-]+)\(.*\{\s*$", line)
        if header:
            name = header.group(1)
            sizes[name] = [0, 0]
            continue
        if name is None:
            continue
        if re.match(r"\s*\}\s*$", line) and not line.startswith("    "):
            name = None
            continue
        if re.match(r"\s*(%[\w#:, ]+= )?llvm\.", line):
            sizes[name][1] += 1
            if "llvm.cond_br" in line:
                sizes[name][0] += 1
    if not sizes:
        sys.exit("function_sizes.py: no llvm.func with a body on stdin")
    loops = max(sizes.items(), key=lambda item: item[1][0])
    ops = max(sizes.items(), key=lambda item: item[1][1])
    print("functions: %d" % len(sizes))
    print("most loops: %d (%s)" % (loops[1][0], loops[0]))
    print("most ops: %d (%s)" % (ops[1][1], ops[0]))
    failed = False
    for fn, (n_loops, n_ops) in sorted(sizes.items()):
        if n_loops > args.max_loops or n_ops > args.max_ops:
            print("too large: %s: %d loops, %d ops" % (fn, n_loops, n_ops))
            failed = True
    print("FAIL" if failed else "OK")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
