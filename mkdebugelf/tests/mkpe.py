#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a small PE32+ DLL with known symbols, for mkdebugelf's tests.

.text is RVA 0x1000 at file offset 0x400, so a function at RVA 0x1000 + X is
at file offset 0x400 + X, and at address 0x180001000 + X (ImageBase + RVA). Exports: exp_bar (0x10), exp_foo (0x40) and a
forwarder; COFF symbols: exp_foo again, static_a (0x80), a long name (0xc0)
through the string table, and two statics named dup (0x100, 0x140).

With --aligned, .text is at file offset 0x1000 instead, on a page boundary
as its RVA: a loader (Wine) can mmap() it rather than copy it.

With --pdata, an exception directory (.pdata, RVA 0x3000 at file offset
0xc00) gives x64 function ranges, PDATA below, some with no name, one made
of a function and a chained part; and two more COFF symbols: asm_leaf
(0x180, no type, as assembly routines have, and no .pdata entry) and a
section symbol .text (no type, an auxiliary record), which names nothing.

usage: mkpe.py OUT [--truncate N] [--bad-sections] [--no-coff] [--aligned] [--pdata]
"""
import struct
import sys

TEXT_RVA, TEXT_RAW, EDATA_RVA, EDATA_RAW, SYMTAB = 0x1000, 0x400, 0x2000, 0x600, 0x800
IMAGE_BASE = 0x180000000
LONG = "a_rather_long_static_function_name"
# (name, offset in .text, storage class: 2 external, 3 static)
COFF = [("exp_foo", 0x40, 2), ("static_a", 0x80, 3), (LONG, 0xC0, 3),
        ("dup", 0x100, 3), ("dup", 0x140, 3)]
PDATA_RVA, PDATA_RAW = 0x3000, 0xC00
# x64 function ranges in .text: (begin, end, chained to entry N or None)
PDATA = [(0x10, 0x30, None),     # exp_bar, up to 0x30 (its symbol: to 0x40)
         (0x30, 0x38, None),     # no name: raw
         (0x40, 0x60, None),     # exp_foo
         (0x60, 0x70, 2),        # exp_foo's chained part: still exp_foo
         (0x70, 0x80, None),     # no name: raw
         (0x80, 0x90, None),     # static_a
         (0x90, 0xC0, None),     # no name: raw
         (0x100, 0x120, None),   # dup
         (0x140, 0x150, None),   # dup#2
         (0x1A0, 0x1B0, None)]   # no name, after asm_leaf (which has none)


def add_pdata(img):
    """The exception directory: RUNTIME_FUNCTIONs, then their UNWIND_INFOs."""
    xdata = 0x100
    for i, (begin, end, chained) in enumerate(PDATA):
        unwind = xdata + 16 * i
        if chained is None:
            img[PDATA_RAW + unwind:PDATA_RAW + unwind + 4] = bytes([1, 0, 0, 0])
        else:
            # version 1, UNW_FLAG_CHAININFO, no codes; the entry chained to
            img[PDATA_RAW + unwind:PDATA_RAW + unwind + 4] = bytes([1 | 4 << 3, 0, 0, 0])
            b, e, _ = PDATA[chained]
            struct.pack_into("<III", img, PDATA_RAW + unwind + 4, TEXT_RVA + b, TEXT_RVA + e,
                             PDATA_RVA + xdata + 16 * chained)
        struct.pack_into("<III", img, PDATA_RAW + 12 * i, TEXT_RVA + begin, TEXT_RVA + end,
                         PDATA_RVA + unwind)


def build(bad_sections=False, coff=True, aligned=False, pdata=False):
    img = bytearray(0x1200 if aligned else 0xE00 if pdata else 0xA00)
    coff_syms = COFF + [("asm_leaf", 0x180, 2, 0, 0), (".text", 0, 3, 0, 1)] if pdata else COFF
    img[0:2] = b"MZ"
    struct.pack_into("<I", img, 0x3C, 0x40)
    img[0x40:0x44] = b"PE\0\0"
    nsyms = sum(1 + (s[4] if len(s) > 3 else 0) for s in coff_syms) if coff else 0
    struct.pack_into("<HHIIIHH", img, 0x44, 0x8664, 3 if pdata else 2, 0,
                     SYMTAB if coff else 0, nsyms, 240, 0x2022)
    opt = 0x58
    struct.pack_into("<HxxxxxxxxxxxxxxxxxxxxxxQ", img, opt, 0x20B, IMAGE_BASE)
    struct.pack_into("<II", img, opt + 32, 0x1000, 0x200)   # section/file alignment
    struct.pack_into("<II", img, opt + 56, 0x3000, 0x400)   # image/headers size
    struct.pack_into("<I", img, opt + 108, 16)               # data directories
    struct.pack_into("<II", img, opt + 112, EDATA_RVA, 0x100)  # export table
    sect = opt + 240
    text_raw = 0x10000 if bad_sections else 0x1000 if aligned else TEXT_RAW
    img[sect:sect + 8] = b".text\0\0\0"
    struct.pack_into("<IIII", img, sect + 8, 0x200, TEXT_RVA, 0x200, text_raw)
    struct.pack_into("<I", img, sect + 36, 0x60000020)
    img[sect + 40:sect + 48] = b".edata\0\0"
    struct.pack_into("<IIII", img, sect + 48, 0x200, EDATA_RVA, 0x200, EDATA_RAW)
    struct.pack_into("<I", img, sect + 76, 0x40000040)
    if pdata:
        struct.pack_into("<II", img, opt + 136, PDATA_RVA, 12 * len(PDATA))
        img[sect + 80:sect + 88] = b".pdata\0\0"
        struct.pack_into("<IIII", img, sect + 88, 0x200, PDATA_RVA, 0x200, PDATA_RAW)
        struct.pack_into("<I", img, sect + 116, 0x40000040)
        add_pdata(img)
    img[TEXT_RAW:TEXT_RAW + 0x200] = b"\xc3" * 0x200
    if aligned:
        img[0x1000:0x1200] = b"\xc3" * 0x200

    # Export directory, then its arrays and strings, all in .edata.
    e = EDATA_RAW
    funcs, names, ords, strs = 0x40, 0x60, 0x80, 0xA0
    struct.pack_into("<IIHHIIIIIII", img, e, 0, 0, 0, 0, EDATA_RVA + strs, 1, 3, 3,
                     EDATA_RVA + funcs, EDATA_RVA + names, EDATA_RVA + ords)
    # exp_bar, exp_foo, and a forwarder (its RVA points into the directory)
    struct.pack_into("<III", img, e + funcs, TEXT_RVA + 0x10, TEXT_RVA + 0x40,
                     EDATA_RVA + strs + 0x30)
    off = strs
    for s in (b"test.dll", b"exp_bar", b"exp_foo", b"fwd", b"OTHER.fn"):
        img[e + off:e + off + len(s) + 1] = s + b"\0"
        off += 0x10
    struct.pack_into("<III", img, e + names, EDATA_RVA + strs + 0x10,
                     EDATA_RVA + strs + 0x20, EDATA_RVA + strs + 0x30)
    struct.pack_into("<HHH", img, e + ords, 0, 1, 2)

    if coff:
        strtab = bytearray(4)
        o = SYMTAB
        for name, value, cls, *rest in coff_syms:
            typ, naux = rest if rest else (0x20, 0)
            raw = name.encode()
            if len(raw) <= 8:
                img[o:o + 8] = raw.ljust(8, b"\0")
            else:
                struct.pack_into("<II", img, o, 0, len(strtab))
                strtab += raw + b"\0"
            struct.pack_into("<IhHBB", img, o + 8, value, 1, typ, cls, naux)
            o += 18 * (1 + naux)    # auxiliary records left zero
        struct.pack_into("<I", strtab, 0, len(strtab))
        img[o:o + len(strtab)] = strtab
    return img


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    img = build("--bad-sections" in args, "--no-coff" not in args, "--aligned" in args,
                "--pdata" in args)
    if "--truncate" in args:
        img = img[:int(args[args.index("--truncate") + 1], 0)]
    with open(out, "wb") as f:
        f.write(img)


if __name__ == "__main__":
    main()
