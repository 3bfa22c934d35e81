#!/usr/bin/env python3
"""Writes the object of a `gpu.binary` op (the fatbin, cubin or PTX that
gpu-module-to-binary embedded) from MLIR text to a file, so that tests can
inspect it with cuobjdump.

Usage: extract_gpu_binary.py INPUT.mlir SYMBOL OUTPUT
The object is the op's only (last) string literal, printed with MLIR's
escapes: `\\\\` for a backslash, `\\XX` (two hex digits) for any other byte
that is not printable ASCII or is a double quote."""
import re
import sys


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\":
            out.append(ord(char))
            i += 1
        elif text[i + 1] == "\\":
            out.append(ord("\\"))
            i += 2
        else:
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
    return bytes(out)


def main():
    source, symbol, output = sys.argv[1:]
    pattern = re.compile(r'^\s*gpu\.binary @' + re.escape(symbol) + r'\s')
    with open(source, encoding="ascii") as f:
        for line in f:
            if not pattern.match(line):
                continue
            end = line.rstrip().rfind('">]')
            start = line.rfind('"', 0, end)
            if end < 0 or start < 0:
                sys.exit(f"extract_gpu_binary: no object in gpu.binary @{symbol}")
            with open(output, "wb") as out:
                out.write(unescape(line[start + 1:end]))
            return
    sys.exit(f"extract_gpu_binary: no gpu.binary @{symbol} in {source}")


if __name__ == "__main__":
    main()
