#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A process laid out as Wine lays out a PE image it can't map from its file:
the first page (the headers) mapped from IMAGE at file offset 0, the rest of
SIZE bytes anonymous memory, PROT_READ|PROT_EXEC. Prints the base address in
hex, then waits for its standard input to close.

usage: winecopy.py IMAGE SIZE
"""
import ctypes
import mmap
import os
import sys

image, size = sys.argv[1], int(sys.argv[2], 0)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
MAP_FIXED, MAP_PRIVATE, MAP_ANONYMOUS = 0x10, 0x02, 0x20
PROT = mmap.PROT_READ | mmap.PROT_EXEC
base = libc.mmap(None, size, PROT, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
fd = os.open(image, os.O_RDONLY)
if base in (None, ctypes.c_void_p(-1).value) or \
   libc.mmap(base, 0x1000, mmap.PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != base:
    sys.exit("mmap failed: %s" % os.strerror(ctypes.get_errno()))
print("%x" % base, flush=True)
sys.stdin.read()
