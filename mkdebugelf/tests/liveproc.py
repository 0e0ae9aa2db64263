#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A process for mkdebugelf --pid's tests: it maps two parts of a non-ELF
image, each from a nonzero file offset, and a deleted file, all
PROT_READ|PROT_EXEC, writes a perf map naming code in each, prints
"ready" and waits for its standard input to close.

Perf map entries, by file offset in IMAGE (0x4000 bytes):
  f_a   0x1100 size 0x40    in the map of [0x1000, 0x2000)
  f_b   0x3010 size 0x2000  in the map of [0x3000, 0x4000): cut at 0x4000
  f_out                     between the two maps: in no map
  f_del                     in the deleted file: not written
usage: liveproc.py IMAGE PERF_MAP
"""
import mmap
import os
import sys

image, perf_map = sys.argv[1], sys.argv[2]
PROT = mmap.PROT_READ | mmap.PROT_EXEC
with open(image, "wb") as f:
    f.write(b"NOT-AN-ELF" + bytes(0x4000 - 10))
fd = os.open(image, os.O_RDONLY)
low = mmap.mmap(fd, 0x1000, flags=mmap.MAP_SHARED, prot=PROT, offset=0x1000)
high = mmap.mmap(fd, 0x1000, flags=mmap.MAP_SHARED, prot=PROT, offset=0x3000)
gone = image + ".gone"
with open(gone, "wb") as f:
    f.write(bytes(0x1000))
gfd = os.open(gone, os.O_RDONLY)
deleted = mmap.mmap(gfd, 0x1000, flags=mmap.MAP_SHARED, prot=PROT)
os.unlink(gone)

starts = {}
with open("/proc/self/maps") as f:
    for line in f:
        fields = line.split(None, 5)
        if len(fields) < 6 or "x" not in fields[1]:
            continue
        start = int(fields[0].split("-")[0], 16)
        name = fields[5].strip()
        off = int(fields[2], 16)
        if name == image:
            starts[off] = start
        elif name.startswith(gone):
            starts["gone"] = start
with open(perf_map, "w") as f:
    f.write("%x 40 f_a\n" % (starts[0x1000] + 0x100))
    f.write("%x 2000 f_b\n" % (starts[0x3000] + 0x10))
    f.write("%x 10 f_out\n" % (starts[0x1000] + 0x10000000))
    f.write("%x 10 f_del\n" % (starts["gone"] + 0x20))
print("ready", flush=True)
sys.stdin.read()
