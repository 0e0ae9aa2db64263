#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write damaged copies of a PDB, one failure mode each, for mkdebugelf's tests.

Usage: badpdb.py GOOD.pdb OUTDIR
Writes OUTDIR/NAME.pdb for each NAME below and prints "NAME|message" lines,
the message mkdebugelf must give for it. Also writes OUTDIR/stripped.pdb,
sound: its modules without symbol streams, as in a stripped PDB, whose
functions only the publics name.
"""
import struct
import sys


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def put32(b, o, v):
    struct.pack_into('<I', b, o, v)


class Msf:
    """Where things are in an MSF 7.00 file: file offsets, for patching."""

    def __init__(self, data):
        self.data = data
        self.bs = u32(data, 32)
        self.nblocks = u32(data, 40)
        self.dir_len = u32(data, 44)
        self.map_block = u32(data, 52)
        n = (self.dir_len + self.bs - 1) // self.bs
        self.dir_blocks = [u32(data, self.map_block * self.bs + 4 * i) for i in range(n)]

    def dir_offset(self, at):
        """The file offset of byte @at of the stream directory."""
        return self.dir_blocks[at // self.bs] * self.bs + at % self.bs

    def dir32(self, at):
        return u32(self.data, self.dir_offset(at))

    def streams(self):
        """[(size, directory offset of its block list, [blocks])]"""
        nr = self.dir32(0)
        at = 4 + 4 * nr
        out = []
        for s in range(nr):
            size = self.dir32(4 + 4 * s)
            n = 0 if size == 0xffffffff else (size + self.bs - 1) // self.bs
            out.append((size, at, [self.dir32(at + 4 * i) for i in range(n)]))
            at += 4 * n
        return out

    def stream_offset(self, s, at):
        """The file offset of byte @at of stream @s."""
        blocks = self.streams()[s][2]
        return blocks[at // self.bs] * self.bs + at % self.bs


def modules(m):
    """The offset in the DBI stream of each module's ModInfo"""
    dbi = 3
    mod_len = u32(m.data, m.stream_offset(dbi, 24))
    at = 64
    while at < 64 + mod_len:
        yield at
        names = at + 64
        for _ in range(2):
            while m.data[m.stream_offset(dbi, names)] != 0:
                names += 1
            names += 1
        at = (names + 3) & ~3


def first_module(m):
    """(stream, sym_len, offset of its ModInfo's sym_len) of the first module with symbols"""
    for at in modules(m):
        stream = struct.unpack_from('<H', m.data, m.stream_offset(3, at + 34))[0]
        sym_len = u32(m.data, m.stream_offset(3, at + 36))
        if stream != 0xffff and sym_len:
            return stream, sym_len, m.stream_offset(3, at + 36)
    raise SystemExit('no module with symbols')


def main():
    good = open(sys.argv[1], 'rb').read()
    out = sys.argv[2]
    m = Msf(good)
    cases = []

    def case(name, message, data):
        open(f'{out}/{name}.pdb', 'wb').write(bytes(data))
        cases.append(f'{name}|{message}')

    case('truncated', 'truncated PDB file', good[:len(good) // 2])
    b = bytearray(good)
    b[0] ^= 0x20
    case('not-msf', 'not a PDB file', b)
    b = bytearray(good)
    put32(b, 32, 1000)
    case('block-size', 'bad MSF block size', b)
    b = bytearray(good)
    put32(b, 44, m.bs * m.bs)
    case('dir-size', 'bad stream directory size or place', b)
    b = bytearray(good)
    put32(b, m.dir_offset(0), 0x10000000)
    case('nr-streams', 'more streams than it has room for', b)
    streams = m.streams()
    big = max((s for s in range(len(streams)) if s != 3), key=lambda s: len(streams[s][2]))
    b = bytearray(good)
    put32(b, m.dir_offset(streams[big][1]), m.nblocks + 5)
    case('block-range', 'a block past the end of the file', b)
    b = bytearray(good)
    put32(b, m.dir_offset(streams[big][1]), streams[3][2][0])
    case('block-twice', 'a block in two streams', b)
    b = bytearray(good)
    put32(b, m.dir_offset(4 + 4 * big), 0x7fffffff)
    case('stream-size', 'block lists past its end', b)
    stream, sym_len, sym_len_at = first_module(m)
    b = bytearray(good)
    put32(b, sym_len_at, streams[stream][0] + 1)
    case('module-len', "a module's symbols run past its stream's end", b)
    b = bytearray(good)
    struct.pack_into('<H', b, m.stream_offset(stream, 4), 0xfff0)
    case('record-len', "a symbol record runs past its stream's end", b)
    b = bytearray(good)
    put32(b, m.stream_offset(3, 24), 0x7ffffff0)
    case('module-list', 'module list past its end', b)
    b = bytearray(good)
    for at in modules(m):
        struct.pack_into('<H', b, m.stream_offset(3, at + 34), 0xffff)
    open(f'{out}/stripped.pdb', 'wb').write(bytes(b))
    print('\n'.join(cases))


main()
