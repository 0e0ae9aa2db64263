#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a small .NET ReadyToRun image with known methods, for mkdebugelf's
tests: each table mkdebugelf reads, and each way it may be broken.

.text is RVA 0x1000 at file offset 0x400, .rdata (CLI header, metadata,
READYTORUN_HEADER and its sections) RVA 0x3000 at file offset 0x800: a
method at RVA 0x1000 + X is at file offset 0x400 + X, linked at ImageBase
0x180000000 + RVA.

Metadata: types <Module>, App.Program (Main, Work, Work, Generic<T>),
App.Program+Inner (Run), App.Box`1 (Get); a TypeRef System.Text.Foo.
RUNTIME_FUNCTIONS (begin, end RVA):
  0 Main 1000-1020          METHODDEF_ENTRYPOINTS, MethodDef 1
  1 Work 1040-1080          MethodDef 2
  2 its funclet 1080-10a0
  3 Work 10c0-10d0          MethodDef 3, with fixups
  4 Inner::Run 1100-1140    MethodDef 5
  5 Box`1[__Canon]::Get 1140-1160     INSTANCE_METHOD_ENTRYPOINTS
  6 Generic<Int32> 1180-11a0
  7 Generic<System.Text.Foo> 11a0-11c0
  8 a method of another module 11c0-11e0
DELAYLOAD_METHODCALL_THUNKS: 1200-1240.
--hot-cold adds function 9, 1300-1320, Main's cold part (HOT_COLD_MAP);
--sentinel ends RUNTIME_FUNCTIONS with ~0, as crossgen2 may.
--typespec-loop N gives Main a parameter whose type names itself N times.
--other writes assembly Other instead (IL only), where function 8's method is:
Other.Lib::Far.

usage: mkr2r.py OUT [--machine M] [--flags F] [--composite] [--il-only]
                    [--hot-cold] [--sentinel] [--other] [--typespec-loop N]
                    [--truncate N] [--poke OFFSET:BYTE...] [--where]
--where prints the file offsets of the parts, for --poke and --truncate.
"""
import struct
import sys

TEXT_RVA, TEXT_RAW, RDATA_RVA, RDATA_RAW = 0x1000, 0x400, 0x3000, 0x800
IMAGE_BASE = 0x180000000                # crossgen2's, for a DLL


def nf_uint(v):
    """NativeFormat's variable-length unsigned."""
    if v < 1 << 7:
        return bytes([v << 1])
    if v < 1 << 14:
        return struct.pack("<H", v << 2 | 1)
    if v < 1 << 21:
        return struct.pack("<I", v << 3 | 3)[:3]
    if v < 1 << 28:
        return struct.pack("<I", v << 4 | 7)
    return bytes([15]) + struct.pack("<I", v)


def nf_int(v):
    """The signed form (small values only)."""
    if -64 <= v < 64:
        return bytes([(v << 1) & 0xff])
    assert -8192 <= v < 8192
    return struct.pack("<H", ((v << 2) | 1) & 0xffff)


def sparse_block(elems, bit=8):
    """A NativeArray block: a tree over index bits 8, 4, 2, 1; elems maps
    an index in the block to its bytes."""
    if bit == 0:                        # the walk ends at the element
        (i, data), = elems.items()
        return data
    if len(elems) == 1:                 # a leaf: its index, then the element
        (i, data), = elems.items()
        return nf_uint(i << 2) + data
    left = {i: d for i, d in elems.items() if not i & bit}
    right = {i: d for i, d in elems.items() if i & bit}
    lb = sparse_block(left, bit >> 1) if left else b""
    rb = sparse_block(right, bit >> 1) if right else b""
    flags = (1 if left else 0) | (2 if right else 0)
    size = 1
    while True:
        node = nf_uint(flags | (size + len(lb)) << 2 if right else flags)
        if len(node) == size:
            return node + lb + rb
        size = len(node)


def native_array(elems, count):
    """Header (count << 2 | 0: one-byte block offsets), block offsets, blocks."""
    nblocks = (count + 15) // 16
    out = nf_uint(count << 2)
    blocks, offs = b"", []
    for b in range(nblocks):
        e = {i - 16 * b: d for i, d in elems.items() if i // 16 == b}
        offs.append(nblocks + len(blocks) if e else 0)
        blocks += sparse_block(e) if e else b""
    assert max(offs) < 256
    return out + bytes(offs) + blocks


def ecma_uint(v):
    """ECMA-335 compressed unsigned."""
    if v < 0x80:
        return bytes([v])
    assert v < 0x4000
    return struct.pack(">H", v | 0x8000)


def metadata(other=False, typespec_loop=0):
    """Our metadata, or with @other that of assembly Other: type Other.Lib,
    methods A, B, C and Far."""
    strings = bytearray(b"\0")
    blob = bytearray(b"\0")

    def s(name):
        off = len(strings)
        strings.extend(name.encode() + b"\0")
        return off

    def sig(data):
        off = len(blob)
        blob.extend(ecma_uint(len(data)) + data)
        return off

    tables = {}
    if other:
        tables[0x00] = [struct.pack("<HHHHH", 0, s("Other.dll"), 0, 0, 0)]
        tables[0x02] = [struct.pack("<IHHHHH", 0, s("<Module>"), 0, 0, 1, 1),
                        struct.pack("<IHHHHH", 0, s("Lib"), s("Other"), 0, 1, 1)]
        tables[0x06] = [struct.pack("<IHHHHH", 0, 0, 0, s(n), 0, 1)
                        for n in ("A", "B", "C", "Far")]
        return streams(tables, strings, blob)
    tables[0x00] = [struct.pack("<HHHHH", 0, s("app.dll"), 0, 0, 0)]
    # TypeRef: resolution scope (AssemblyRef 1), name, namespace
    tables[0x01] = [struct.pack("<HHH", 1 << 2 | 2, s("Foo"), s("System.Text"))]
    # TypeDef: flags, name, namespace, extends, field list, method list
    tables[0x02] = [struct.pack("<IHHHHH", 0, s("<Module>"), 0, 0, 1, 1),
                    struct.pack("<IHHHHH", 0, s("Program"), s("App"), 0, 1, 1),
                    struct.pack("<IHHHHH", 0, s("Inner"), 0, 0, 1, 5),
                    struct.pack("<IHHHHH", 0, s("Box`1"), s("App"), 0, 1, 6)]
    # MethodDef: RVA, impl flags, flags, name, signature, param list.
    # Signatures: calling convention, [generic count], count, return, params.
    sigs = [
        b"\x00\x00\x01",                   # void Main()
        b"\x00\x01\x01\x08",               # void Work(int32)
        b"\x20\x02\x01\x1d\x0e\x10\x08",    # instance void Work(string[], int32&)
        b"\x10\x01\x01\x01\x1e\x00",         # void Generic<T>(!!0)
        # void Run(valuetype Foo<char>, method void *(uint8*)): a TypeRef
        # in an instantiation, a function pointer
        b"\x00\x02\x01\x15\x11\x05\x01\x03\x1b\x00\x01\x01\x0f\x05",
        b"\x20\x00\x13\x00",               # instance !0 Get()
    ]
    if typespec_loop:
        # void Main(class TS1), TypeSpec 1 being TS1<TS1, ...>: a name
        # that names itself, @typespec_loop times at each level
        sigs[0] = b"\x00\x01\x01\x12\x06"
        tables[0x1b] = [struct.pack("<H", sig(b"\x15\x12\x06" + bytes([typespec_loop]) +
                                            b"\x12\x06" * typespec_loop))]
    tables[0x06] = [struct.pack("<IHHHHH", 0, 0, 0, s(n), sig(g), 1)
                    for n, g in zip(("Main", "Work", "Work", "Generic", "Run", "Get"), sigs)]
    tables[0x29] = [struct.pack("<HH", 3, 2)]      # Inner nested in Program
    # AssemblyRef 1: Other (version, flags, public key, name, culture, hash)
    tables[0x23] = [struct.pack("<HHHHIHHHH", 1, 0, 0, 0, 0, 0, s("Other"), 0, 0)]
    return streams(tables, strings, blob)


def streams(tables, strings, blob):
    """The metadata root and its streams: #~, #Strings, #Blob."""
    valid = sum(1 << t for t in tables)
    tilde = struct.pack("<IBBBBQQ", 0, 2, 0, 0, 1, valid, 0)
    for t in sorted(tables):
        tilde += struct.pack("<I", len(tables[t]))
    for t in sorted(tables):
        tilde += b"".join(tables[t])
    while len(tilde) % 4:
        tilde += b"\0"
    while len(strings) % 4:
        strings.append(0)
    while len(blob) % 4:
        blob.append(0)
    version = b"v4.0.30319\0\0"
    streams = [(b"#~", tilde), (b"#Strings", bytes(strings)), (b"#Blob", bytes(blob))]
    hdr_len = 16 + len(version) + 4
    for name, _ in streams:
        hdr_len += 8 + (len(name) + 4) // 4 * 4
    out = struct.pack("<IHHII", 0x424A5342, 1, 1, 0, len(version)) + version
    out += struct.pack("<HH", 0, len(streams))
    off = hdr_len
    for name, data in streams:
        out += struct.pack("<II", off, len(data)) + name.ljust((len(name) + 4) // 4 * 4, b"\0")
        off += len(data)
    for _, data in streams:
        out += data
    return out


FUNCS = [(0x1000, 0x1020), (0x1040, 0x1080), (0x1080, 0x10A0), (0x10C0, 0x10D0),
         (0x1100, 0x1140), (0x1140, 0x1160), (0x1180, 0x11A0), (0x11A0, 0x11C0),
         (0x11C0, 0x11E0)]


def build(machine=0xFD1D, flags=0x4B, composite=False, il_only=False, where=None,
          hot_cold=False, sentinel=False, other=False, typespec_loop=0):
    rdata = bytearray()
    funcs = FUNCS + [(0x1300, 0x1320)] if hot_cold else FUNCS

    def put(data, align=4):
        while len(rdata) % align:
            rdata.append(0)
        rva = RDATA_RVA + len(rdata)
        rdata.extend(data)
        if where is not None:
            where.append(rva)
        return rva

    cli = put(bytes(72))
    md = metadata(other, typespec_loop)
    md_rva = put(md)
    if machine ^ 0xAA64 in (0, 0x7B79, 0x4644):
        # arm64: begin, packed unwind data (flag 1) holding the length / 4
        rf_table = b"".join(struct.pack("<II", b, (e - b) // 4 << 2 | 1) for b, e in funcs)
    else:
        rf_table = b"".join(struct.pack("<III", b, e, 0) for b, e in funcs)
    if sentinel:
        rf_table += b"\xff" * 4
    rf = put(rf_table)
    # MethodDef rows 1, 2, 3, 5 (index row - 1): the function index << 1, or
    # << 2 | 1 with fixups after it.
    entries = {0: nf_uint(0 << 1), 1: nf_uint(1 << 1), 2: nf_uint(3 << 2 | 1) + b"\x00",
               4: nf_uint(4 << 1)}
    mde = put(native_array(entries, 6))
    # Instantiations: method signatures then their entry.
    sigs = [
        # Box`1[__Canon]::Get: owner type, MethodDef 6
        bytes([0x40, 0x15, 0x12, 4 << 2, 1, 0x3E]) + ecma_uint(6) + nf_uint(5 << 1),
        # Program::Generic<int32>
        bytes([0x04]) + ecma_uint(4) + bytes([1, 0x08]) + nf_uint(6 << 1),
        # Program::Generic<System.Text.Foo>: a TypeRef
        bytes([0x04]) + ecma_uint(4) + bytes([1, 0x12, 1 << 2 | 1]) + nf_uint(7 << 1),
        # a method of module 1 (another assembly)
        ecma_uint(0x84) + bytes([1]) + ecma_uint(4) + bytes([1, 0x08]) + nf_uint(8 << 1),
    ]
    # One bucket: header, bucket offsets (start, end), entries, signatures.
    nr = len(sigs)
    table_len = 2 + 2 * nr              # bucket offsets, then hash byte + delta each
    body, sig_area = bytearray(), bytearray()
    sig_start = 1 + table_len           # from the header byte
    for i, sig in enumerate(sigs):
        pos = 1 + 2 + 2 * i + 1         # where this delta is, from the header byte
        body += bytes([i]) + nf_int(sig_start + len(sig_area) - pos)
        sig_area += sig
    inst = put(bytes([0 << 2 | 0, 2, 2 + 2 * nr]) + bytes(body) + bytes(sig_area))
    sections = [(102, rf, len(rf_table)), (103, mde, 16), (109, inst, 16), (106, 0x1200, 0x40)]
    if composite:
        sections.append((115, inst, 4))
    if hot_cold:
        sections.append((120, put(struct.pack("<II", 9, 0)), 8))
    owner = put(b"framework-r2r.dll\0")
    if flags & 0x20:
        sections.append((116, owner, 17))
    rtr = struct.pack("<IHHII", 0x00525452, 16, 0, flags, len(sections))
    for t, rva, size in sections:
        rtr += struct.pack("<III", t, rva, size)
    rtr_rva = put(rtr)
    # CLI header: cb, runtime version, metadata, flags, ..., ManagedNativeHeader
    struct.pack_into("<IHHIII", rdata, cli - RDATA_RVA, 72, 2, 5, md_rva, len(md), 4)
    struct.pack_into("<II", rdata, cli - RDATA_RVA + 64, 0 if il_only else rtr_rva, 72)
    while len(rdata) % 0x200:
        rdata.append(0)

    img = bytearray(RDATA_RAW + len(rdata))
    img[0:2] = b"MZ"
    struct.pack_into("<I", img, 0x3C, 0x40)
    img[0x40:0x44] = b"PE\0\0"
    struct.pack_into("<HHIIIHH", img, 0x44, machine, 2, 0, 0, 0, 240, 0x2022)
    opt = 0x58
    struct.pack_into("<H", img, opt, 0x20B)
    struct.pack_into("<Q", img, opt + 24, IMAGE_BASE)
    struct.pack_into("<II", img, opt + 32, 0x1000, 0x200)
    struct.pack_into("<II", img, opt + 56, 0x5000, 0x400)
    struct.pack_into("<I", img, opt + 108, 16)
    struct.pack_into("<II", img, opt + 112 + 14 * 8, cli, 72)
    sect = opt + 240
    img[sect:sect + 8] = b".text\0\0\0"
    struct.pack_into("<IIII", img, sect + 8, 0x400, TEXT_RVA, 0x400, TEXT_RAW)
    struct.pack_into("<I", img, sect + 36, 0x60000020)
    img[sect + 40:sect + 48] = b".rdata\0\0"
    struct.pack_into("<IIII", img, sect + 48, len(rdata), RDATA_RVA, len(rdata), RDATA_RAW)
    struct.pack_into("<I", img, sect + 76, 0x40000040)
    img[TEXT_RAW:TEXT_RAW + 0x400] = b"\xcc" * 0x400
    img[RDATA_RAW:] = rdata
    return img


def main():
    args = sys.argv[1:]
    out = args.pop(0)

    def opt(name, default):
        return int(args[args.index(name) + 1], 0) if name in args else default

    where = [] if "--where" in args else None
    img = build(opt("--machine", 0xFD1D), opt("--flags", 0x4B), "--composite" in args,
                "--il-only" in args or "--other" in args, where, "--hot-cold" in args,
                "--sentinel" in args, "--other" in args, opt("--typespec-loop", 0))
    if where is not None:
        names = ["cli", "metadata", "runtime_functions", "methoddef_entrypoints",
                 "instance_entrypoints", "owner", "rtr_header"]
        for n, rva in zip(names, where):
            print(n, hex(rva - RDATA_RVA + RDATA_RAW))
    if "--poke" in args:
        for p in args[args.index("--poke") + 1].split(","):
            off, val = p.split(":")
            img[int(off, 0)] = int(val, 0)
    if "--truncate" in args:
        img = img[:opt("--truncate", 0)]
    with open(out, "wb") as f:
        f.write(img)


if __name__ == "__main__":
    main()
