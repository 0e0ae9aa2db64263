#!/usr/bin/env python3
"""The sample analysis of scripts/pe-e2e.sh.

Reads `perf script -F ip,sym,symoff,dsoff` output (one sample a line, the
same perf.data in the same order for every run compared) and takes what it
checks against from mingw-w64's binutils (objdump, nm, addr2line), a PE
reader independent of perf's and mkdebugelf's: section tables, .pdata,
exports, COFF symbols, DWARF.

  pe_e2e.py c-layout DLL DLL_SYMS OUTDIR      (writes OUTDIR/c-layout.json, c-perfmap.in)
  pe_e2e.py m-layout DLL DLL_SYMS OUTDIR      (writes OUTDIR/m-layout.json)
  pe_e2e.py c-check OUTDIR c|m DLL PATCHED STOCK
  pe_e2e.py c-nomap OUTDIR c|m DLL PATCHED DEBUG_STOCK
  pe_e2e.py a-compare DLLDIR EXE PLAIN STOCK_PLAIN DEBUG_STOCK DEBUG_PATCHED
  pe_e2e.py b-dwarf EXE EXE_G PLAIN
  pe_e2e.py dll-dwarf DLLDIR PLAIN

Each prints what it measured; the exit status is 1 when a requirement is not
met (the reason on the last line), 2 for bad input.
"""
import bisect
import collections
import json
import os
import re
import subprocess
import sys

TOOL = 'x86_64-w64-mingw32-'
LINE = re.compile(r'^\s*([0-9a-f]+)\s+(.+?)\s+\((.+?)(?:\+0x([0-9a-f]+))?\)$')
SYMOFF = re.compile(r'^(.+)\+0x([0-9a-f]+)$')
UNKNOWN = '[unknown]'


class Sample:
    __slots__ = ('ip', 'name', 'symoff', 'dso', 'off')

    def __init__(self, line):
        m = LINE.match(line)
        if not m:
            raise ValueError('not a perf script line: %r' % line)
        self.ip = int(m.group(1), 16)
        self.dso = m.group(3)
        self.off = int(m.group(4), 16) if m.group(4) else None
        sm = SYMOFF.match(m.group(2))
        if sm:
            self.name, self.symoff = sm.group(1), int(sm.group(2), 16)
        else:
            self.name, self.symoff = m.group(2), None

    def named(self):
        return self.name != UNKNOWN

    def start(self):
        """The file offset perf's symbol starts at, None if unnamed."""
        if not self.named() or self.off is None:
            return None
        return self.off - (self.symoff or 0)

    def __str__(self):
        sym = self.name if self.symoff is None else '%s+%#x' % (self.name, self.symoff)
        return '%s at %s+%#x' % (sym, os.path.basename(self.dso), self.off or 0)


def samples(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return [Sample(line.rstrip('\n')) for line in f if line.strip()]


def run(*argv, stdin=None):
    return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                          check=True).stdout


def is_pe(path):
    try:
        with open(path, 'rb') as f:
            return f.read(2) == b'MZ'
    except OSError:
        return False


class PE:
    """What binutils says of a PE file: sections, image base, .pdata, exports."""

    def __init__(self, path):
        self.path = path
        self.sections = []      # (name, vma, file offset, size)
        for line in run(TOOL + 'objdump', '-h', path).splitlines():
            f = line.split()
            if len(f) >= 7 and f[0].isdigit():
                self.sections.append((f[1], int(f[3], 16), int(f[5], 16), int(f[2], 16)))
        p = run(TOOL + 'objdump', '-p', path)
        self.image_base = int(re.search(r'^ImageBase\s+([0-9a-f]+)', p, re.M).group(1), 16)
        self.file_align = int(re.search(r'^FileAlignment\s+([0-9a-f]+)', p, re.M).group(1), 16)
        self.funcs = []         # .pdata: (begin VA, end VA)
        table = p.split('The Function Table', 1)
        if len(table) == 2:
            for line in table[1].splitlines()[2:]:
                f = line.split()
                if len(f) != 4 or not f[0].endswith(':'):
                    break
                self.funcs.append((int(f[1], 16), int(f[2], 16)))
        self.exports = {}       # name: VA
        rvas = {}
        m = re.search(r'^Export Address Table -- Ordinal Base (\d+)\n(.*?)\n\n', p, re.M | re.S)
        if m:
            for e in re.finditer(r'\[\s*(\d+)\] \+base\[\s*\d+\] ([0-9a-f]+) Export RVA', m.group(2)):
                rvas[int(e.group(1))] = int(e.group(2), 16)
        m = re.search(r'^\[Ordinal/Name Pointer\] Table\n(.*?)(?:\n\n|\Z)', p, re.M | re.S)
        if m:
            for e in re.finditer(r'\[\s*(\d+)\] (\S+)', m.group(1)):
                if int(e.group(1)) in rvas:
                    self.exports[e.group(2)] = self.image_base + rvas[int(e.group(1))]

    def va(self, off):
        """The VA of file offset @off, None if no section's data holds it."""
        for _, vma, fo, size in self.sections:
            if fo <= off < fo + size:
                return vma + off - fo
        return None

    def offset(self, va):
        for _, vma, fo, size in self.sections:
            if vma <= va < vma + size:
                return fo + va - vma
        return None

    def func_at(self, va):
        return next(((b, e) for b, e in self.funcs if b == va), None)

    def crosses(self, start, va):
        """Does a .pdata function, a code symbol or an export begin in (@start, @va]?"""
        if not hasattr(self, 'begins'):
            names = self.names()
            self.begins = sorted({b for b, _ in self.funcs} | set(names))
        i = bisect.bisect_right(self.begins, start)
        return i < len(self.begins) and self.begins[i] <= va

    def names(self):
        """{VA: [names]} of the functions objdump -t lists and of the exports.

        COFF functions (type 0x20), and names of no type without auxiliary
        entries (assembly routines), external or static; not labels (class
        6, such as the branch targets inside an assembly routine) nor section
        names.
        """
        names = collections.defaultdict(list)
        sym = re.compile(r'^\[\s*\d+\]\(sec\s+(-?\d+)\)\(fl 0x[0-9a-f]+\)\(ty\s+([0-9a-f]+)\)'
                         r'\(scl\s+(\d+)\) \(nx (\d+)\) 0x([0-9a-f]+) (.+)$')
        for line in run(TOOL + 'objdump', '-t', self.path).splitlines():
            m = sym.match(line)
            if not m:
                continue
            sec, ty, scl, nx = int(m.group(1)), int(m.group(2), 16), int(m.group(3)), int(m.group(4))
            name = m.group(6)
            if scl not in (2, 3) or not 0 < sec <= len(self.sections):
                continue
            if (ty & 0x30) != 0x20 and (ty or nx or name.startswith('.')):
                continue
            names[self.sections[sec - 1][1] + int(m.group(5), 16)].append(name)
        for n, va in self.exports.items():
            names[va].append(n)
        return names


def coff_symbols(path):
    """nm's symbols of @path: {VA: [names]} (empty if stripped)."""
    syms = collections.defaultdict(list)
    p = subprocess.run([TOOL + 'nm', path], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[int(f[0], 16)].append(f[2])
    return syms


def pct(a, b):
    return '%.1f%%' % (100.0 * a / b) if b else 'n/a'


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


# Compiler clones keep their function's DWARF name: own_cmp.isra.0 is own_cmp
CLONE = re.compile(r'(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$')


def norm(name):
    return CLONE.sub('', name)


def dwarf_functions(path, vas):
    """addr2line: {VA: the outermost function containing it ('??' if none)}."""
    out = run(TOOL + 'addr2line', '-f', '-i', '-a', '-e', path,
              stdin=''.join('%#x\n' % va for va in vas))
    funcs = {}
    recs = re.split(r'^(0x[0-9a-f]+)$', out, flags=re.M)
    for i in range(1, len(recs), 2):
        body = recs[i + 1].strip().splitlines()
        # function and file:line per inlining level, the outermost last
        funcs[int(recs[i], 16)] = body[-2] if len(body) >= 2 else '??'
    return funcs


# Part C ---------------------------------------------------------------------

C_FUNCS = ('pe_export', 'pe_static_a', 'pe_static_b', 'pe_static_c')
C_EXPORT = 'pe_export'
C_DECOY = 'perf_map_decoy_for_pe_export'
# perf test -w mapimage: its perf map's names for its three code slots
M_SLOTS = ((0x1000, 'mapimage_one'), (0x1100, 'mapimage_two'), (0x1200, 'mapimage_four'))
M_EXPORT = 'slot_export'


def pe_layout(dll, dll_syms):
    """The PE (stripped, one export), and {name: .pdata range} from the build with symbols."""
    pe, ref = PE(dll), PE(dll_syms)
    if coff_symbols(dll):
        fail('%s has COFF symbols: not stripped' % dll)
    if len(pe.exports) != 1:
        fail('%s exports %s, expected one function' % (dll, sorted(pe.exports)))
    if pe.funcs != ref.funcs or pe.image_base != ref.image_base:
        fail('%s and %s differ in .pdata or ImageBase' % (dll, dll_syms))
    names = {n: va for va, ns in coff_symbols(dll_syms).items() for n in ns}
    export, va = next(iter(pe.exports.items()))
    if names.get(export) != va:
        fail('%s: the export %s is at %#x, nm says %s' % (dll, export, va, names.get(export)))
    funcs = {}
    for name, va in names.items():
        f = pe.func_at(va)
        if f:
            funcs[name] = (pe.offset(f[0]), f[1] - f[0])
    if pe.file_align != 0x1000 or any(pe.va(off) - pe.image_base != off
                                      for off, _ in funcs.values()):
        fail('%s: code not at its RVA in the file (FileAlignment %#x)' % (dll, pe.file_align))
    return pe, export, funcs


def write_layout(outdir, prefix, rows, decoys):
    """rows: (expected name, file offset, size, where the name comes from)"""
    with open(os.path.join(outdir, prefix + '-layout.json'), 'w') as f:
        json.dump({'funcs': rows, 'decoys': decoys}, f)


def c_layout(dll, dll_syms, outdir):
    """The driver's DLL: its functions' offsets, and the driver's perf map."""
    _, export, funcs = pe_layout(dll, dll_syms)
    missing = [n for n in C_FUNCS if n not in funcs]
    if export != C_EXPORT or missing:
        fail('%s: export %s, no .pdata entry at %s' % (dll, export, missing))
    rows = [(n, funcs[n][0], funcs[n][1], 'the PE export' if n == C_EXPORT else 'the perf map')
            for n in C_FUNCS]
    write_layout(outdir, 'c', rows, [C_DECOY])
    # The perf map names the static functions, and the export with another
    # name: an object's own symbols come first, so that one must never show
    with open(os.path.join(outdir, 'c-perfmap.in'), 'w') as f:
        for name, off, size, _ in rows:
            f.write('%x %x %s\n' % (off, size, C_DECOY if name == C_EXPORT else name))
    print(' '.join('%x' % off for _, off, _, _ in rows))


def m_layout(dll, dll_syms, outdir):
    """A DLL laid out for mapimage: its functions where mapimage runs its slots."""
    _, export, funcs = pe_layout(dll, dll_syms)
    at = {off: n for n, (off, _) in funcs.items()}
    if export != M_EXPORT or any(off not in at for off, _ in M_SLOTS) or \
            at[M_SLOTS[0][0]] != M_EXPORT:
        fail('%s: not laid out for mapimage: export %s, functions at %s' %
             (dll, export, ', '.join('%s %#x' % (n, o) for o, n in sorted(at.items()))))
    rows = [(M_EXPORT if off == M_SLOTS[0][0] else name, off, funcs[at[off]][1],
             'the PE export' if off == M_SLOTS[0][0] else 'the perf map')
            for off, name in M_SLOTS]
    write_layout(outdir, 'm', rows, [M_SLOTS[0][1]])


def c_check(outdir, prefix, dll, patched, stock):
    with open(os.path.join(outdir, prefix + '-layout.json')) as f:
        layout = json.load(f)
    rows, decoys = layout['funcs'], layout['decoys']

    def where(s):
        return next((r for r in rows if r[1] <= s.off < r[1] + r[2]), None)

    counts = collections.Counter()
    bad = []
    for s in samples(patched):
        if s.dso != dll:
            continue
        r = where(s)
        if not r:
            counts['outside the functions run'] += 1
            bad.append(('outside the functions run', s))
            continue
        name, off, _, src = r
        if s.name == name and s.start() == off:
            counts['%s: named from %s' % (name, src)] += 1
        else:
            what = ('the perf map\'s name for the export' if s.name in decoys else
                    'unnamed' if not s.named() else 'misnamed')
            counts['%s: %s' % (name, what)] += 1
            bad.append((what, s))
    st = [s for s in samples(stock) if s.dso == dll]
    st_named = sum(s.named() for s in st)
    print('patched perf, samples in %s:' % os.path.basename(dll))
    for k in sorted(counts):
        print('  %6d  %s' % (counts[k], k))
    print('stock perf: %d samples in it, %d named' % (len(st), st_named))
    for what, s in bad[:10]:
        print('  e.g. %s: %s' % (what, s))
    few = [r[0] for r in rows if sum(v for k, v in counts.items() if k.startswith(r[0] + ':')) < 100]
    if few:
        fail('fewer than 100 samples in %s' % ', '.join(few))
    if bad:
        fail('%d of the DLL\'s samples not named as its .pdata ranges, export and perf map say'
             % len(bad))
    if st_named:
        fail('stock perf named %d samples in the DLL' % st_named)


def c_nomap(outdir, prefix, dll, plain, debug):
    """No perf map: the export alone named, by perf's PE reader and by the debug file."""
    with open(os.path.join(outdir, prefix + '-layout.json')) as f:
        rows = json.load(f)['funcs']
    counts = collections.Counter()
    bad = []
    for p, d in zip(samples(plain), samples(debug)):
        if p.ip != d.ip:
            fail('the two perf script runs do not list the same samples')
        if p.dso != dll:
            continue
        r = next((r for r in rows if r[1] <= p.off < r[1] + r[2]), None)
        if not r:
            continue
        exported = r[3] == 'the PE export'
        for who, s in (('PE reader', p), ('debug file', d)):
            ok = (s.name, s.start()) == (r[0], r[1]) if exported else not s.named()
            counts['%s: %s: %s' % (r[0], who, 'named' if s.named() else 'unnamed')] += 1
            if not ok:
                bad.append('%s: %s' % (who, s))
    print('no perf map (removed), samples in %s (patched perf; stock perf with '
          'mkdebugelf\'s debug file):' % os.path.basename(dll))
    for k in sorted(counts):
        print('  %6d  %s' % (counts[k], k))
    for b in bad[:10]:
        print('  e.g. ' + b)
    if bad:
        fail('%d samples named otherwise than "the export alone"' % len(bad))


# Part A ---------------------------------------------------------------------

def a_compare(dlldir, exe, plain, stock_plain, debug_stock, debug_patched):
    runs = [samples(p) for p in (plain, stock_plain, debug_stock, debug_patched)]
    if len({len(r) for r in runs}) != 1 or any(
            a.ip != b.ip for r in runs[1:] for a, b in zip(runs[0], r)):
        fail('the four perf script runs do not list the same samples')
    pe_dsos = {s.dso for s in runs[0] if s.dso.startswith('/') and is_pe(s.dso)}
    wine = sorted(d for d in pe_dsos if d.startswith(dlldir + '/'))
    ok = True

    def share(r, dsos):
        t = [s for s in r if s.dso in dsos]
        return len(t), sum(s.named() for s in t)

    total = len(runs[0])
    t, n = share(runs[0], set(wine))
    _, n_stock = share(runs[1], set(wine))
    _, n_debug = share(runs[2], set(wine))
    print('%d samples, %d (%s) in %d of Wine\'s PE files (%s)' %
          (total, t, pct(t, total), len(wine), dlldir))
    per = collections.Counter(s.dso for s in runs[0] if s.dso in wine)
    for d, c in per.most_common(6):
        print('  %6d  %s' % (c, os.path.basename(d)))
    print('named in them: patched perf, no debug file %d (%s); stock perf %d (%s); '
          'stock perf with mkdebugelf\'s debug files %d (%s)' %
          (n, pct(n, t), n_stock, pct(n_stock, t), n_debug, pct(n_debug, t)))
    if t < 300 or 100 * n < 95 * t:
        print('FAIL: fewer than 95% of the samples in Wine\'s PE files named (or under 300 samples)')
        ok = False
    te, ne = share(runs[0], {exe})
    print('%s: %d samples, %d (%s) named from its COFF symbols' %
          (os.path.basename(exe), te, ne, pct(ne, te)))
    if te < 300 or 100 * ne < 95 * te:
        print('FAIL: fewer than 95% of the program\'s samples named (or under 300 samples)')
        ok = False

    # Sample by sample: the PE reader against mkdebugelf's debug files
    classes = collections.Counter()
    examples = collections.defaultdict(list)
    accepted = ('same name and symbol start', 'same symbol, mkdebugelf\'s #N suffix',
                'unnamed by both')
    for p, d in zip(runs[0], runs[2]):
        if p.dso not in pe_dsos:
            continue
        if not p.named() and not d.named():
            k = accepted[2]
        elif p.name == d.name and p.start() == d.start():
            k = accepted[0]
        elif p.named() and re.sub(r'#\d+$', '', d.name) == p.name and p.start() == d.start():
            k = accepted[1]
        elif not p.named():
            k = 'unnamed by the PE reader, named by the debug file'
        elif not d.named():
            k = 'named by the PE reader, unnamed by the debug file'
        elif p.start() == d.start():
            k = 'another name at the same start (alias chosen differently)'
        else:
            k = 'different symbols (another start)'
        where = 'program' if p.dso == exe else 'Wine'
        classes[(where, k)] += 1
        e = '%s | debug file: %s' % (p, d)
        if len(examples[(where, k)]) < 3 and k != accepted[0] and e not in examples[(where, k)]:
            examples[(where, k)].append(e)
    print('PE reader (patched perf, no debug file) against mkdebugelf\'s debug files '
          '(stock perf), samples in PE files:')
    for (where, k), c in sorted(classes.items()):
        print('  %6d  %s: %s' % (c, where, k))
        for e in examples[(where, k)]:
            print('            e.g. %s' % e)
    differ = sum(c for (_, k), c in classes.items() if k not in accepted)
    if differ:
        print('FAIL: %d samples named otherwise by the PE reader than by the debug files' % differ)
        ok = False

    # The patched perf with the debug files: they come first, as in stock perf
    diff = [(a, b) for a, b in zip(runs[2], runs[3])
            if a.dso in pe_dsos and (a.name, a.symoff) != (b.name, b.symoff)]
    print('patched perf with the debug files: %d of the samples in PE files named otherwise '
          'than by stock perf with them' % len(diff))
    for a, b in diff[:3]:
        print('  e.g. stock %s | patched %s' % (a, b))
    if diff:
        print('FAIL: the patched perf does not use the debug files as stock perf does')
        ok = False
    if not ok:
        fail('part A: see above')


# Part B ---------------------------------------------------------------------

def b_dwarf(exe, exe_g, plain):
    pe = PE(exe)
    ss = [s for s in samples(plain) if s.dso == exe]
    vas = {s.off: pe.va(s.off) for s in ss}
    funcs = dwarf_functions(exe_g, sorted({v for v in vas.values() if v is not None}))
    classes = collections.Counter()
    unchecked = collections.Counter()
    bad = []
    for s in ss:
        va = vas[s.off]
        d = funcs.get(va, '??')
        if not s.named():
            k = 'unnamed by perf'
        elif pe.crosses(pe.va(s.start()), va):
            k = 'MISNAMED'
            bad.append('%s (VA %#x): a symbol or .pdata function starts between' % (s, va))
        elif d == '??':
            k = 'named, no DWARF there (no other symbol or .pdata function between)'
            unchecked[s.name] += 1
        elif norm(s.name) == norm(d):
            k = 'named as the DWARF function containing it'
        else:
            k = 'MISNAMED'
            bad.append('%s (VA %#x): DWARF says %s' % (s, va, d))
        classes[k] += 1
    print('%s: %d samples, checked against the DWARF of %s (addr2line -f -i, the outermost '
          'function; VA = file offset + section VMA - its file offset):' %
          (os.path.basename(exe), len(ss), os.path.basename(exe_g)))
    for k, c in sorted(classes.items()):
        print('  %6d  %s' % (c, k))
    if unchecked:
        print('  those, by name: ' + ', '.join('%s %d' % kv for kv in unchecked.most_common()))
    for b in bad[:10]:
        print('  ' + b)
    checked = classes['named as the DWARF function containing it']
    if bad:
        fail('%d samples named by a function they are not in' % len(bad))
    if checked < 300:
        fail('only %d samples checked against DWARF' % checked)


def dll_dwarf(dlldir, plain):
    """Wine's DLLs carry DWARF too: the same check, aliases allowed."""
    by_dso = collections.defaultdict(list)
    for s in samples(plain):
        if s.dso.startswith(dlldir + '/') and s.named() and is_pe(s.dso):
            by_dso[s.dso].append(s)
    classes = collections.Counter()
    examples = collections.defaultdict(list)
    for dso, ss in sorted(by_dso.items()):
        pe = PE(dso)
        names = pe.names()
        vas = {s.off: pe.va(s.off) for s in ss}
        funcs = dwarf_functions(dso, sorted({v for v in vas.values() if v is not None}))
        for s in ss:
            d = funcs.get(vas[s.off], '??')
            start = pe.va(s.start())
            if pe.crosses(start, vas[s.off]):
                k = 'named otherwise'
            elif d == '??':
                k = 'no DWARF there (no other symbol or .pdata function between)'
            elif norm(s.name) == norm(d):
                k = 'named as the DWARF function containing it'
            elif norm(d) in {norm(n) for n in names.get(start, ())}:
                k = 'named by an alias of it (a symbol or export at its start)'
            else:
                k = 'named otherwise'
            classes[k] += 1
            e = '%s: DWARF says %s' % (s, d)
            if k != 'named as the DWARF function containing it' and len(examples[k]) < 4 \
                    and e not in examples[k]:
                examples[k].append(e)
    print('samples Wine\'s PE files name, against their own DWARF:')
    for k, c in sorted(classes.items()):
        print('  %6d  %s' % (c, k))
        for e in examples[k]:
            print('            e.g. ' + e)
    if classes['named otherwise']:
        fail('%d samples in Wine\'s PE files named by a function they are not in'
             % classes['named otherwise'])


def main(argv):
    cmds = {'c-layout': (c_layout, 3), 'm-layout': (m_layout, 3), 'c-check': (c_check, 5),
            'c-nomap': (c_nomap, 5),
            'a-compare': (a_compare, 6),
            'b-dwarf': (b_dwarf, 3), 'dll-dwarf': (dll_dwarf, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
