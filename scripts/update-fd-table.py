#!/usr/bin/env python3
"""Writes the finite-difference check table into docs/testing.md.

Usage: python3 scripts/update-fd-table.py [--check] [--binary GradCheckTests]
       [--doc docs/testing.md]
The table is what `GradCheckTests --fd-table` prints for the case table
(test/unittests/GradCheck/GradCheckCases.cpp), placed between the
`fd-table` markers of the doc. With --check, nothing is written: the script
fails, naming the doc, when the table there differs (test/Docs/fd-table.test).
"""

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- fd-table begin: scripts/update-fd-table.py writes this table -->"
END = "<!-- fd-table end -->"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--binary", default=os.path.join(
        ROOT, "build", "test", "unittests", "GradCheck", "GradCheckTests"))
    parser.add_argument("--doc", default=os.path.join(ROOT, "docs",
                                                      "testing.md"))
    args = parser.parse_args()

    table = subprocess.run([args.binary, "--fd-table"], check=True,
                           capture_output=True, text=True).stdout
    with open(args.doc, encoding="utf-8") as f:
        doc = f.read()
    begin, end = doc.find(BEGIN), doc.find(END)
    if begin < 0 or end < begin:
        sys.exit(f"update-fd-table: {args.doc} has no fd-table markers")
    updated = doc[:begin + len(BEGIN)] + "\n" + table + doc[end:]
    if args.check:
        if updated != doc:
            sys.exit(f"update-fd-table: the table in {args.doc} is stale; "
                     "run scripts/update-fd-table.py")
        return
    if updated != doc:
        with open(args.doc, "w", encoding="utf-8") as f:
            f.write(updated)


if __name__ == "__main__":
    main()
