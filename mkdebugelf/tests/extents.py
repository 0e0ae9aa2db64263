#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check symbol extents against where a fuller build's functions start.

usage: extents.py SYMS STARTS

SYMS: "offset size name" lines (hex file offset, decimal size), the symbols
of a debug file. STARTS: hex file offsets where a build of the same image
with full symbols has a function start. A symbol is wrong if such a start
lies inside it, after its own start: it names code that belongs to another
function. Prints the number of symbols, of wrong ones, of bytes they name
wrongly, and the first wrong one.
"""
import bisect
import sys


def main():
    starts = sorted({int(line.split()[0], 16) for line in open(sys.argv[2]) if line.strip()})
    total = wrong = wrong_bytes = 0
    example = "-"
    for line in open(sys.argv[1]):
        f = line.split(None, 2)
        if len(f) < 3:
            continue
        off, size, name = int(f[0], 16), int(f[1], 0), f[2].strip()
        total += 1
        i = bisect.bisect_right(starts, off)
        if i < len(starts) and starts[i] < off + size:
            wrong += 1
            wrong_bytes += off + size - starts[i]
            if example == "-":
                example = "%s@%x+%d:over_%x" % (name, off, size, starts[i])
    print(total, wrong, wrong_bytes, example)


if __name__ == "__main__":
    main()
