#!/bin/bash
# mkdebugelf on .NET ReadyToRun images: debug files for every R2R image of
# the shared framework, from the images alone; then a C# program hot in
# framework code (Regex, BigInteger, LINQ) recorded once, its jitdump (the
# runtime's own names for the R2R code it ran) injected, and the names stock
# perf gives the samples in R2R images with the debug files compared to the
# jitdump's, sample by sample; each R2R method the runtime logged against our
# symbol at its file offset (start and size); perf annotate of the hottest
# method with its instructions; and crossgen2's own map of the program's
# image, published ReadyToRun, against its debug file. Debug file symbols are
# at the image's addresses as linked: a file offset is a symbol's value less
# its section's address plus its offset (mkdebugelf/tests/elfsyms.py).
# Needs: dotnet with Microsoft.NETCore.App 10.x, root; PERF (default
# BUILD/base/perf, stock perf).
set -euo pipefail
STEP=r2r-e2e
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

perf=${PERF:-$BUILD/base/perf}
tool=$BUILD/mkdebugelf/mkdebugelf
out=$BUILD/r2r-e2e
start=$(date +%s)

command -v dotnet >/dev/null || { echo "dotnet is not installed"; exit 77; }
fw=$(dotnet --list-runtimes 2>/dev/null | awk '$1 == "Microsoft.NETCore.App" && $2 ~ /^10\./ {
	dir = $3; sub(/^\[/, "", dir); sub(/\]$/, "", dir); v = $2 } END { if (v) print dir "/" v }')
[ -n "$fw" ] && [ -d "$fw" ] || { echo "no Microsoft.NETCore.App 10.x runtime (dotnet --list-runtimes)"; exit 77; }
[ -x "$perf" ] || die "no perf at $perf (build it, or set PERF)"
[ "$(id -u)" = 0 ] || { echo "perf record of a jitdump needs root here"; exit 77; }
rm -rf "$out"
mkdir -p "$out"
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" || die "cannot build mkdebugelf"

# 1. Debug files for the whole shared framework, in one command.
t0=$(date +%s%N)
"$tool" --install --root "$out/symfs" "$fw" >"$out/install.txt" 2>"$out/install.err" ||
	die "mkdebugelf --install $fw failed: $(grep -v skipped "$out/install.err" | head -n 1)"
t1=$(date +%s%N)
read -r images methods insts unnamed covered functions < <(awk '
	/: ReadyToRun / {
		for (i = 1; i <= NF; i++) {
			if ($i == "methods,") m += $(i - 1)
			if ($i == "generic") g += $(i - 1)
			if ($i == "(") u += $(i + 1)
			if ($i == "of" && $(i + 2) == "runtime") { c += $(i - 1); f += $(i + 1) }
		}
		n++
	} END { print n + 0, m + 0, g + 0, u + 0, c + 0, f + 0 }' "$out/install.txt")
# An independent count: PE files whose CLI header has a ManagedNativeHeader.
r2r_total=$(python3 - "$fw" <<'PY'
import os, struct, sys
def rva2off(secs, rva):
    for va, size, off in secs:
        if va <= rva < va + size:
            return off + rva - va
n = 0
for f in os.listdir(sys.argv[1]):
    d = open(os.path.join(sys.argv[1], f), 'rb').read()
    if d[:2] != b'MZ':
        continue
    pe = struct.unpack_from('<I', d, 0x3c)[0]
    opt = pe + 24
    dirs = opt + (112 if struct.unpack_from('<H', d, opt)[0] == 0x20b else 96)
    nsec, optsize = struct.unpack_from('<H', d, pe + 6)[0], struct.unpack_from('<H', d, pe + 20)[0]
    secs = [struct.unpack_from('<IIII', d, opt + optsize + 40 * i + 8) for i in range(nsec)]
    secs = [(va, raw, off) for _, va, raw, off in secs]
    cli = rva2off(secs, struct.unpack_from('<I', d, dirs + 14 * 8)[0])
    if cli is not None and struct.unpack_from('<I', d, cli + 64)[0]:
        n += 1
print(n)
PY
)
note "$fw: debug files for $images ReadyToRun images (the folder has $r2r_total PE files with a ManagedNativeHeader) in $(( (t1 - t0) / 1000000 )) ms: $methods methods, $insts generic instantiations, $unnamed not fully named"
note "runtime functions in a named method's code: $covered of $functions"
[ "$images" -gt 0 ] && [ "$images" = "$r2r_total" ] || die "$images debug files for $r2r_total R2R images"
[ "$covered" = "$functions" ] || die "runtime functions outside any method: $((functions - covered))"

# 2. The workload: framework code, its R2R code kept (no tiering to
# replace it), the runtime's jitdump of the R2R methods it runs.
app=$out/app
mkdir -p "$app"
cat >"$app/app.csproj" <<'X'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
  </PropertyGroup>
</Project>
X
cat >"$app/Program.cs" <<'X'
using System;
using System.Diagnostics;
using System.Linq;
using System.Numerics;
using System.Text.RegularExpressions;

class Program
{
    static int Main(string[] args)
    {
        double secs = double.Parse(args[0]);
        var sw = Stopwatch.StartNew();
        var re = new Regex(@"(\w+)@(\w+)\.com|\d{3}-\d{4}");
        string text = string.Join(" ", Enumerable.Range(0, 2000).Select(i =>
            i % 7 == 0 ? $"user{i}@host{i}.com" : $"word{i} 555-{i % 10000:D4}"));
        long acc = 0;
        while (sw.Elapsed.TotalSeconds < secs) {
            foreach (Match m in re.Matches(text))
                acc += m.Length;
            BigInteger b = 1;
            for (int i = 1; i < 300; i++)
                b = b * i + 7;
            acc += (long)(b % 1000003);
            acc += Enumerable.Range(0, 5000).Where(x => x % 3 == 0).Select(x => x * 2)
                .OrderBy(x => -x).Take(10).Sum();
            acc += text.Split(' ').GroupBy(s => s.Length).Count();
        }
        Console.WriteLine(acc + Demo.Inner.Outer.Run());
        return 0;
    }
}
X
# Generic types and methods, nested types, funclets: for crossgen2's map.
cat >"$app/Extra.cs" <<'X'
using System;
using System.Collections.Generic;

namespace Demo.Inner
{
    public struct Point { public int X, Y; }

    public class Outer
    {
        public class Nested<T>
        {
            public T Value;
            public T Get() => Value;
            public U Map<U>(Func<T, U> f) => f(Value);
        }

        public static int Sum(List<Point> ps)
        {
            int s = 0;
            foreach (var p in ps)
                s += p.X * p.Y;
            return s;
        }

        public static int Guarded(int x)
        {
            try { return checked(x * 1000000); }
            catch (OverflowException) { return -1; }
            finally { Console.Write(""); }
        }

        public static T Pick<T>(T a, T b, bool first) => first ? a : b;

        public static int Run()
        {
            var ps = new List<Point> { new Point { X = 1, Y = 2 } };
            var n = new Nested<Point> { Value = ps[0] };
            var d = new Dictionary<string, Point> { ["a"] = n.Get() };
            return Sum(ps) + Guarded(d.Count) + Pick(1, 2, true) + n.Map(p => p.X) +
                Pick("a", "b", false).Length;
        }
    }
}
X
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o "$app/bin" "$app" \
	>"$out/build.log" 2>&1 || die "dotnet build failed (see $out/build.log)"

jitdir=$out/jit
mkdir -p "$jitdir"
# PerfMapStubGranularity=2: no jitdump records of whole stub blocks, whose
# code the runtime 10.0 fails to write (the jitdump then stops there).
DOTNET_PerfMapEnabled=2 DOTNET_PerfMapJitDumpPath=$jitdir DOTNET_PerfMapStubGranularity=2 \
DOTNET_PerfMapShowOptimizationTiers=1 DOTNET_TieredCompilation=0 \
	"$perf" record -k 1 -q -e cpu-clock -F 2000 -o "$out/perf.data" -- \
	dotnet "$app/bin/app.dll" 6 >"$out/app.out" 2>"$out/record.err" ||
	die "perf record failed: $(head -n 1 "$out/record.err")"
ls "$jitdir"/jit-*.dump >/dev/null 2>&1 || die "the runtime wrote no jitdump in $jitdir"
HOME=$out "$perf" inject --jit -i "$out/perf.data" -o "$out/perf.jit.data" 2>"$out/inject.err" ||
	die "perf inject --jit failed: $(head -n 1 "$out/inject.err")"

# 3. Sample by sample: the R2R image and name from stock perf with the debug
# files, against the injected jitdump's name for the same sample.
"$perf" script -i "$out/perf.data" --symfs "$out/symfs" -F time,ip,dso,sym,symoff \
	2>/dev/null | sed 's/^ *//' >"$out/ours.txt"
HOME=$out "$perf" script -i "$out/perf.jit.data" -F time,ip,dso,sym,symoff 2>/dev/null |
	sed 's/^ *//' >"$out/jit.txt"
python3 - "$out" "$fw" "$TOP/scripts" <<'PY' >"$out/compare.txt" || die "comparison failed"
import re, subprocess, sys, collections
out, fw = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from r2r_names import runtime_name, our_name
line = re.compile(r'^(\S+):\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*)\)$')
def load(path):
    d = {}
    for l in open(path):
        m = line.match(l.strip())
        if m:
            o = re.match(r'^(.*)\+(0x[0-9a-f]+)$', m.group(3))
            sym, off = (o.group(1), o.group(2)) if o else (m.group(3), None)
            d[(m.group(1), m.group(2))] = (sym, m.group(4), off)
    return d
ours, jit = load(out + '/ours.txt'), load(out + '/jit.txt')
heads = {}
def overloaded(dso, name):
    # whether our debug file for @dso has other methods of this name
    if dso not in heads:
        heads[dso] = collections.Counter()
        elf = out + '/symfs/usr/lib/debug' + dso + '.debug'
        for l in subprocess.run(['readelf', '-sW', elf], capture_output=True, text=True).stdout.splitlines():
            f = l.split()
            if len(f) >= 8 and f[3] == 'FUNC':
                heads[dso][our_name(' '.join(f[7:])).split('(')[0]] += 1
    return heads[dso][name.split('(')[0]] > 1
total = named = same = same_off = jit_named = overload = params = minst = tinst = 0
diff = collections.Counter()
for k, (sym, dso, off) in ours.items():
    if not dso.startswith(fw + '/') or not dso.endswith('.dll'):
        continue
    total += 1
    if not sym.startswith('[unknown]') and not re.match(r'^0x[0-9a-f]+$', sym):
        named += 1
    j = jit.get(k)
    jn = runtime_name(j[0]) if j else None
    if jn is None:
        continue
    jit_named += 1
    if our_name(sym) == jn:
        same += 1
        # the same offset into the symbol: the same start, the same method
        same_off += off is not None and off == j[2]
        overload += bool(re.search(r'#\d+$', sym))
        minst += re.sub(r'#\d+$', '', sym) != our_name(sym)
        params += overloaded(dso, jn)
        tinst += '[' in jn.split('::')[0]
    else:
        diff[(our_name(sym), jn)] += 1
print(total, named, jit_named, same, same_off, overload, params, minst, tinst)
for (a, b), n in diff.most_common(20):
    print('DIFF', n, a, '|', b, file=sys.stderr)
PY
read -r total named jit_named same same_off overload params minst tinst <"$out/compare.txt"

# 4. Method by method: each R2R method the runtime logged (its jitdump code
# load: address and size of the whole method, funclets included), at the
# file offset of its image's mapping, against our symbol there.
"$perf" script -i "$out/perf.data" --show-mmap-events 2>/dev/null | grep 'PERF_RECORD_MMAP' >"$out/mmaps.txt" || true
python3 - "$out" "$fw" "$TOP/scripts" "$TOP/mkdebugelf/tests" <<'PY' >"$out/ranges.txt" || die "range comparison failed"
import glob, re, struct, sys
out, fw = sys.argv[1], sys.argv[2]
sys.path[:0] = sys.argv[3:5]
from r2r_names import runtime_name, our_name
from elfsyms import func_syms
maps = []
for l in open(out + '/mmaps.txt'):
    m = re.search(r'\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: (\S+) (\S+)$', l)
    if m and 'x' in m.group(4) and m.group(5).startswith(fw + '/'):
        maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(5)))
syms = {}
def debug_syms(dll):
    if dll not in syms:
        syms[dll] = {}
        for o, z, name in func_syms(out + '/symfs/usr/lib/debug' + dll + '.debug'):
            syms[dll].setdefault(o, []).append((z, our_name(name)))
    return syms[dll]
logged = in_image = start = size = same_name = 0
for dump in glob.glob(out + '/jit/jit-*.dump'):
    d = open(dump, 'rb').read()
    pos = struct.unpack_from('<I', d, 8)[0]
    while pos + 16 <= len(d):
        rid, rsize = struct.unpack_from('<II', d, pos)
        if rsize < 16:
            break
        if rid == 0 and pos + 56 <= len(d):
            addr, csize = struct.unpack_from('<QQ', d, pos + 32)
            name = d[pos + 56:d.index(b'\0', pos + 56)].decode(errors='replace')
            if name.endswith('[PreJIT]'):
                logged += 1
                for s, ln, pgoff, dll in maps:
                    if s <= addr < s + ln:
                        in_image += 1
                        ours = debug_syms(dll).get(addr - s + pgoff)
                        if ours:
                            start += 1
                            size += csize in [z for z, _ in ours]
                            same_name += runtime_name(name) in [n for _, n in ours]
                        break
        pos += rsize
print(logged, in_image, start, size, same_name)
PY
read -r logged in_image at_start same_size same_name <"$out/ranges.txt"
[ "$total" -gt 0 ] || die "no samples in the framework's R2R images"
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? 100 * a / b : 0 }'; }
note "$total samples in the framework's R2R images: $named named by stock perf with the debug files ($(pct "$named" "$total")%)"
note "the jitdump names $jit_named of them; the same name for $same ($(pct "$same" "$jit_named")%), and at the same offset into it for $same_off ($(pct "$same_off" "$jit_named")%)"
note "spelling allowed to differ: the runtime's return type, [assembly] and [tier]; our #N where the parameters don't tell methods apart ($overload samples) and <type arguments> of generic methods ($minst samples); parameters spelled alike ($params samples in overloaded methods), type instantiations too ($tinst samples)"
note "the runtime logged $logged R2R methods, $in_image in the framework's images: $at_start start where a symbol of ours does, $same_size of the same size (body and funclets), $same_name of the same name and parameters"

# 5. perf annotate of the method with most samples: perf runs objdump on the
# image itself (under --symfs DIR: there) at the debug file's addresses less
# its .text's address plus offset. Its instructions, from the symbol's value.
IFS=$'\t' read -r hot_dso hot_sym hot_value < <(python3 - "$out" "$fw" "$TOP/mkdebugelf/tests" <<'PY'
import collections, re, sys
out, fw = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from elfsyms import func_values
n = collections.Counter()
for l in open(out + '/ours.txt'):
    m = re.match(r'^\S+:\s+[0-9a-f]+\s+(.*?)(\+0x[0-9a-f]+)?\s+\(([^()]*)\)$', l.strip())
    if m and m.group(3).startswith(fw + '/') and not re.match(r'^0x[0-9a-f]+$', m.group(1)):
        n[(m.group(3), m.group(1))] += 1
(dso, sym), _ = n.most_common(1)[0]
value = [v for v, _, name in func_values(out + '/symfs/usr/lib/debug' + dso + '.debug')
         if name == sym]
print(dso, sym, '%x' % value[0], sep='\t')
PY
)
[ -n "$hot_value" ] || die "no R2R method with samples to annotate"
mkdir -p "$out/symfs$(dirname "$hot_dso")"
cp "$hot_dso" "$out/symfs$hot_dso"
annotated=
for p in "$perf" "$BUILD/patched/perf"; do
	[ -x "$p" ] || continue
	annotated="$annotated${annotated:+, }$p"
	"$p" annotate -i "$out/perf.data" --symfs "$out/symfs" --stdio "$hot_sym" \
		>"$out/annotate.txt" 2>&1 || true
	n=$(grep -cE '^ +[0-9.]+ : +[0-9a-f]+:' "$out/annotate.txt" || true)
	first=$(awk '/^ +[0-9.]+ : +[0-9a-f]+:/ { print $3; exit }' "$out/annotate.txt")
	[ "$n" -ge 10 ] && [ "$first" = "$hot_value:" ] ||
		die "$p annotate: $n instructions of $hot_sym, the first at ${first:-none}, expected $hot_value (see $out/annotate.txt)"
done
note "perf annotate ($annotated): $hot_sym in $(basename "$hot_dso"), $n instructions from its address 0x$hot_value"

# 6. crossgen2's own map of an image it compiles (the app, published
# ReadyToRun with its symbols): each method's RVA, size and name, against
# our symbols. Needs the crossgen2 package (NuGet, or its cache).
if DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet publish -c Release -r linux-x64 \
	--self-contained false -p:PublishReadyToRun=true -p:PublishReadyToRunEmitSymbols=true \
	-o "$app/r2r" "$app" >"$out/publish.log" 2>&1 && [ -s "$app/r2r/app.ni.r2rmap" ]; then
	"$tool" -o "$out/app.debug" "$app/r2r/app.dll" >"$out/app-debug.txt" 2>&1 ||
		die "mkdebugelf on the app: $(head -n 1 "$out/app-debug.txt")"
	python3 - "$app/r2r/app.dll" "$app/r2r/app.ni.r2rmap" "$out/app.debug" "$TOP/scripts" \
		"$TOP/mkdebugelf/tests" <<'PY' >"$out/crossgen2.txt" ||
import struct, sys
sys.path[:0] = sys.argv[4:6]
from r2r_names import our_name
from elfsyms import func_syms
d = open(sys.argv[1], 'rb').read()
pe = struct.unpack_from('<I', d, 0x3c)[0]
nsec, optsize = struct.unpack_from('<H', d, pe + 6)[0], struct.unpack_from('<H', d, pe + 20)[0]
secs = [struct.unpack_from('<IIII', d, pe + 24 + optsize + 40 * i + 8) for i in range(nsec)]
def off(rva):
    return next((o + rva - va for _, va, raw, o in secs if va <= rva < va + raw), None)
ours = {}
for o, size, name in func_syms(sys.argv[3]):
    # crossgen2 spells parameters its own way: Type::Method only
    ours[o] = (size, our_name(name).split('(')[0])
n = same = 0
for l in open(sys.argv[2]):
    rva, size, name = l.rstrip('\n').split(' ', 2)
    rva, size = int(rva, 16), int(size, 16)
    if rva >= 0xfffffffb:
        continue                # header records
    n += 1
    # "RetType Ns.Type[inst]::Method(params)" -> Ns.Type[inst]::Method
    want = name.split('(')[0].split(' ')[-1]
    got = ours.get(off(rva))
    if got == (size, want):
        same += 1
    else:
        print('differs:', hex(rva), size, want, got, file=sys.stderr)
print(n, same)
PY
		die "comparison with crossgen2's map failed"
	read -r cg_n cg_same <"$out/crossgen2.txt"
	note "crossgen2's map of the app's R2R image: $cg_n methods, $cg_same at the same file offset, of the same size and name"
	[ "$cg_n" -gt 10 ] && [ "$cg_same" = "$cg_n" ] ||
		die "only $cg_same of crossgen2's $cg_n methods the same (see $out/crossgen2.txt)"
else
	note "skipped crossgen2's map: the app does not publish ReadyToRun here (see $out/publish.log)"
fi
note "took $(($(date +%s) - start)) s"
awk -v n="$named" -v t="$total" 'BEGIN { exit !(n >= 0.95 * t) }' ||
	die "only $(pct "$named" "$total")% of the samples in R2R images named"
[ "$in_image" -gt 0 ] && [ "$at_start" = "$in_image" ] && [ "$same_size" = "$in_image" ] &&
	[ "$same_name" = "$in_image" ] ||
	die "of $in_image R2R methods the runtime logged, $at_start start at a symbol, $same_size of its size, $same_name of its name"
awk -v s="$same_off" -v j="$jit_named" 'BEGIN { exit !(j > 0 && s >= 0.99 * j) }' ||
	die "only $(pct "$same_off" "$jit_named")% the same name and offset as the jitdump's"
