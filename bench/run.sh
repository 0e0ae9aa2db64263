#!/bin/bash
# make bench: measure the perf map fallback against perf's own anonymous-memory
# perf map path, and the patched perf against stock perf on an ELF-only
# profile. Writes bench/RESULTS.md. Runs are interleaved and repeated; medians
# with min and max are reported, and ratios are taken within one run.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
base=$BUILD/base/perf patched=$BUILD/patched/perf
out=$BUILD/bench
RUNS=${RUNS:-15}
M=${M:-4}
results=$TOP/bench/RESULTS.md
rm -rf "$out"
mkdir -p "$out"
gcc -O1 -Wall -o "$out/mkprofile" "$TOP/bench/mkprofile.c" || { echo "FAILED [bench]: cannot build mkprofile"; exit 1; }

pids_all=""
cleanup() { for p in $pids_all; do rm -f "/tmp/perf-$p.map"; done; }
trap cleanup EXIT

# ir FILE: the instruction count of a callgrind output file.
ir() { grep -m1 '^summary:' "$1" | awk '{ print $2 }'; }

# stats FILE: "median min max" of the numbers in FILE, one a line.
stats() { sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%s %s %s\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }

# measure PERF DATA TAG: two reports; seconds and KiB appended to TAG files.
# Wall time from bash's microsecond clock (time's %e has 10 ms steps), the
# binary all in the page cache. Peak RSS from a second run, the binary dropped
# from the page cache first: a fault maps the pages around it that are cached,
# so with a binary all cached (as the linker leaves it) RSS depends on where
# the code lies, up to 0.6 MB apart between two builds of the same code paths.
measure() {
	local t0 t1
	cat "$1" >/dev/null
	t0=$EPOCHREALTIME
	"$1" report -i "$2" --stdio -q --sort dso,sym >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$out/$3.s"
	dd if="$1" iflag=nocache count=0 status=none
	/usr/bin/time -f "%M" -o "$out/t" "$1" report -i "$2" --stdio -q --sort dso,sym \
		>/dev/null 2>&1
	cat "$out/t" >>"$out/$3.kb"
}

# p1_cells A B N K: the cells comparing P1 kind A with kind B (timing tags
# p1-A-N-K, p1-B-N-K; callgrind files cg-A-N-K, cg-anon-N-K): each one's
# median seconds (min-max), their ratio, the instructions ratio, each one's
# peak RSS and their ratio.
p1_cells() {
	local fs fmin fmax as amin amax fkb akb
	read -r fs fmin fmax < <(stats "$out/p1-$1-$3-$4.s")
	read -r as amin amax < <(stats "$out/p1-$2-$3-$4.s")
	read -r fkb _ _ < <(stats "$out/p1-$1-$3-$4.kb")
	read -r akb _ _ < <(stats "$out/p1-$2-$3-$4.kb")
	awk -v fs="$fs" -v fmin="$fmin" -v fmax="$fmax" -v as="$as" -v amin="$amin" \
		-v amax="$amax" -v fkb="$fkb" -v akb="$akb" -v fi="$(ir "$out/cg-$1-$3-$4")" \
		-v ai="$(ir "$out/cg-anon-$3-$4")" 'BEGIN {
		printf " %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f | %.4f | %.1f | %.1f | %.3f |",
			fs, fmin, fmax, as, amin, amax, fs / as, fi / ai, fkb / 1024, akb / 1024,
			fkb / akb }'
}

echo "[bench] P1: fallback (file) against anonymous memory (anon), M=$M processes"
table="| N images | K lines | fallback s (min-max) | anon s (min-max) | ratio | instructions ratio | fallback RSS MiB | anon RSS MiB | RSS ratio | stock s, file profile | fallback / stock |
|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
for n in 1 10 100; do
	for k in 1000 10000 100000; do
		for kind in file anon; do
			d=$out/p1-$kind-$n-$k
			mkdir -p "$d"
			"$patched" record -q -o "$d/perf.data" -e cpu-clock -- \
				"$out/mkprofile" "$kind" "$M" "$n" "$k" 1 "$d" >"$d/pids" 2>/dev/null
			pids_all="$pids_all $(cat "$d/pids")"
		done
		for _ in $(seq "$RUNS"); do
			for kind in file anon; do
				measure "$patched" "$out/p1-$kind-$n-$k/perf.data" "p1-$kind-$n-$k"
			done
			measure "$base" "$out/p1-file-$n-$k/perf.data" "p1-stock-$n-$k"
		done
		for kind in file anon; do
			valgrind --tool=callgrind --callgrind-out-file="$out/cg-$kind-$n-$k" "$patched" \
				report -i "$out/p1-$kind-$n-$k/perf.data" --stdio -q --sort dso,sym \
				>/dev/null 2>&1 || true
		done
		read -r fs _ _ < <(stats "$out/p1-file-$n-$k.s")
		read -r ss _ _ < <(stats "$out/p1-stock-$n-$k.s")
		row="| $n | $k |$(p1_cells file anon $n $k) $(awk -v fs="$fs" -v ss="$ss" \
			'BEGIN { printf "%.3f | %.3f |", ss, fs / ss }')"
		echo "  $row"
		table="$table
$row"
	done
done

echo "[bench] P1, shared images: one image all M processes map, against anonymous memory"
shared="| N images | K lines | shared s (min-max) | anon s (min-max) | ratio | instructions ratio | shared RSS MiB | anon RSS MiB | RSS ratio |
|---:|---:|---|---|---:|---:|---:|---:|---:|"
n=1
for k in 1000 10000 100000; do
	d=$out/p1-shared-$n-$k
	mkdir -p "$d"
	"$patched" record -q -o "$d/perf.data" -e cpu-clock -- \
		"$out/mkprofile" shared "$M" "$n" "$k" 1 "$d" >"$d/pids" 2>/dev/null
	pids_all="$pids_all $(cat "$d/pids")"
	for _ in $(seq "$RUNS"); do
		measure "$patched" "$d/perf.data" "p1-shared-$n-$k"
		measure "$patched" "$out/p1-anon-$n-$k/perf.data" "p1-anon2-$n-$k"
	done
	valgrind --tool=callgrind --callgrind-out-file="$out/cg-shared-$n-$k" "$patched" \
		report -i "$d/perf.data" --stdio -q --sort dso,sym >/dev/null 2>&1 || true
	row="| $n | $k |$(p1_cells shared anon2 $n $k)"
	echo "  $row"
	shared="$shared
$row"
done

echo "[bench] P3: what of each perf map is read during one report (strace)"
d=$out/p1-file-100-1000
strace -f -qq -y -e trace=openat,read,pread64 -o "$out/strace.txt" "$patched" report \
	-i "$d/perf.data" --stdio -q >/dev/null 2>&1 || true
p3="| pid | opens | bytes read | file size |
|---:|---:|---:|---:|"
for p in $(cat "$d/pids"); do
	c=$(grep -c "open.*\"/tmp/perf-$p.map\"" "$out/strace.txt" || true)
	r=$(awk -v f="</tmp/perf-$p.map>" '/^[0-9]+ +p?read/ && index($0, f) { n = $NF; if (n > 0) s += n }
		END { print s + 0 }' "$out/strace.txt")
	p3="$p3
| $p | $c | $r | $(stat -c %s "/tmp/perf-$p.map" 2>/dev/null || echo gone) |"
done
echo "$p3" | sed 's/^/  /'

echo "[bench] P2: an ELF-only profile (compiling mkdebugelf 20 times), stock against patched"
d=$out/p2
mkdir -p "$d"
"$patched" record -q -o "$d/perf.data" -e cpu-clock -- sh -c "
	for i in \$(seq 20); do gcc -O2 -c -o $d/x.o $TOP/mkdebugelf/r2r.c; done" >/dev/null 2>&1
for _ in $(seq "$RUNS"); do
	measure "$base" "$d/perf.data" p2-base
	measure "$patched" "$d/perf.data" p2-patched
done
for v in base patched; do
	valgrind --tool=callgrind --callgrind-out-file="$d/cg.$v" "$BUILD/$v/perf" report \
		-i "$d/perf.data" --stdio -q --sort dso,sym >/dev/null 2>"$d/cg.$v.err" || true
	# The peak to 0.1%: at massif's default, 1%, snapshots after the peak
	# it records made two runs of the same code 0.6% apart
	valgrind --tool=massif --peak-inaccuracy=0.1 --massif-out-file="$d/ms.$v" "$BUILD/$v/perf" report \
		-i "$d/perf.data" --stdio -q --sort dso,sym >/dev/null 2>"$d/ms.$v.err" || true
done
ib=$(ir "$d/cg.base") ip=$(ir "$d/cg.patched")
# heap FILE: the peak of heap bytes in a massif output file.
heap() { sed -n 's/^mem_heap_B=//p' "$1" | sort -n | tail -n 1; }
hb=$(heap "$d/ms.base") hp=$(heap "$d/ms.patched")
read -r bs bmin bmax < <(stats "$out/p2-base.s")
read -r ps pmin pmax < <(stats "$out/p2-patched.s")
read -r bkb _ _ < <(stats "$out/p2-base.kb")
read -r pkb _ _ < <(stats "$out/p2-patched.kb")
nsamples=$("$patched" report -i "$d/perf.data" --stdio 2>/dev/null | awk '/^# Samples:/ && !n { n = $3 } END { print n }')
p2=$(awk -v ib="$ib" -v ip="$ip" -v bs="$bs" -v bmin="$bmin" -v bmax="$bmax" -v ps="$ps" \
	-v pmin="$pmin" -v pmax="$pmax" -v bkb="$bkb" -v pkb="$pkb" -v hb="$hb" -v hp="$hp" 'BEGIN {
	printf "| instructions (callgrind) | %d | %d | %.4f |\n", ib, ip, ip / ib
	printf "| wall s, median (min-max) | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f |\n", bs, bmin, bmax, ps, pmin, pmax, ps / bs
	printf "| peak RSS MiB, median | %.1f | %.1f | %.3f |\n", bkb / 1024, pkb / 1024, pkb / bkb
	printf "| peak heap bytes (massif) | %d | %d | %.4f |", hb, hp, hp / hb }')
echo "$p2" | sed 's/^/  /'

# P5: perf maps alone, stock against patched: what every JIT user's report
# pays for reading them. NPROC processes, each with a perf map of NLINES lines
# naming its anonymous JIT code. The floor: wc -l of the same files.
echo "[bench] P5: perf report of JIT code named from perf maps, stock against patched"
p5="| processes x lines | stock instructions | patched instructions | ratio | stock s (min-max) | patched s (min-max) | ratio | read floor s (min-max) | stock RSS MiB | patched RSS MiB | RSS ratio |
|---|---:|---:|---:|---|---|---:|---|---:|---:|---:|"
for case in 1x1000 1x100000 1x1000000 4x250000; do
	np=${case%x*} nl=${case#*x}
	d=$out/p5-$case
	mkdir -p "$d"
	"$patched" record -q -o "$d/perf.data" -e cpu-clock -- \
		"$out/mkprofile" anon "$np" 1 "$nl" 1 "$d" >"$d/pids" 2>/dev/null
	pids_all="$pids_all $(cat "$d/pids")"
	maps=$(sed 's|.*|/tmp/perf-&.map|' "$d/pids")
	for _ in $(seq "$RUNS"); do
		measure "$base" "$d/perf.data" "p5-stock-$case"
		measure "$patched" "$d/perf.data" "p5-patched-$case"
		t0=$EPOCHREALTIME
		# shellcheck disable=SC2086
		wc -l $maps >/dev/null
		t1=$EPOCHREALTIME
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$out/p5-floor-$case.s"
	done
	for v in base patched; do
		valgrind --tool=callgrind --callgrind-out-file="$d/cg.$v" "$BUILD/$v/perf" report \
			-i "$d/perf.data" --stdio -q --sort dso,sym >/dev/null 2>&1 || true
	done
	read -r ss smin smax < <(stats "$out/p5-stock-$case.s")
	read -r ps pmin pmax < <(stats "$out/p5-patched-$case.s")
	read -r fs fmin fmax < <(stats "$out/p5-floor-$case.s")
	read -r skb _ _ < <(stats "$out/p5-stock-$case.kb")
	read -r pkb _ _ < <(stats "$out/p5-patched-$case.kb")
	row=$(awk -v np="$np" -v nl="$nl" -v si="$(ir "$d/cg.base")" -v pi="$(ir "$d/cg.patched")" \
		-v ss="$ss" -v smin="$smin" -v smax="$smax" -v ps="$ps" -v pmin="$pmin" -v pmax="$pmax" \
		-v fs="$fs" -v fmin="$fmin" -v fmax="$fmax" -v skb="$skb" -v pkb="$pkb" 'BEGIN {
		printf "| %d x %d | %.0f | %.0f | %.4f | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f | %.3f (%.3f-%.3f) | %.1f | %.1f | %.3f |",
			np, nl, si, pi, pi / si, ss, smin, smax, ps, pmin, pmax, ps / ss, fs, fmin, fmax,
			skb / 1024, pkb / 1024, pkb / skb }')
	echo "  $row"
	p5="$p5
$row"
done

# P4: .NET on the real runtime, from the dotnet-e2e check's own run.
echo "[bench] P4: .NET end to end (scripts/dotnet-e2e.sh)"
if BUILD=$BUILD "$TOP/scripts/dotnet-e2e.sh" >"$out/dotnet-e2e.txt" 2>&1; then
	p4=$(awk '/^ +JIT +named:/ { on = 1 } on && NF' "$out/dotnet-e2e.txt" | sed 's/^/    /')
else
	p4="Not measured: $(tail -n 1 "$out/dotnet-e2e.txt")"
fi
echo "$p4"

cat >"$results" <<MD
# Benchmark results

Written by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d). Do not edit by hand.

- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ { print $2 }') GiB, kernel $(uname -r)
- Base: $(git -C "$BUILD/src" log -1 --format=%s base | sed "s/ (perf subset)//"); stock perf \`$("$base" version)\`, patched perf \`$("$patched" version)\`
- Each figure: median of $RUNS runs of \`perf report -i perf.data --stdio -q --sort dso,sym\`, min and max in brackets, wall time from bash's \`EPOCHREALTIME\`; the columns of a row were measured interleaved in the same run. RSS is the peak resident set (\`/usr/bin/time -f %M\`) of a separate run started with the perf binary dropped from the page cache (\`dd iflag=nocache count=0\`), so that the file pages a run maps are those it reads: with the binary all cached, RSS also depends on where each build's code lies (0.6 MB apart between stock and patched on a 1000 line perf map, all in the binary's file pages, anonymous memory equal).

## P1: the fallback against perf's anonymous-memory perf map path

\`bench/mkprofile\` runs M=$M processes, each running the same code from N images and naming it in a
perf map of K lines, recorded with \`perf record -e cpu-clock\` for 1 s. *fallback*: the images are
non-ELF files mapped PROT_READ|PROT_EXEC, named through the new fallback; *anon*: the same bytes in
anonymous executable memory, named through perf's existing path. Both reports by the patched perf.
The ratio is fallback / anon: the target is 1.05 or less. Wall times on this shared machine vary
from run to run; the instructions ratio, from one \`valgrind --tool=callgrind\` run of each
report, does not. The last two columns are stock perf on
the fallback profile, where it names none of those samples, and the patched perf's time over it.
Both columns of the fallback include what perf does for any file mapping and not for anonymous
memory: it looks for a symbol source for each image (N per process) before the fallback is tried.

$table

Scaling: read down the table for N (the fallback parses each process's perf map once, whatever the
number of images) and across K for the cost of the perf map size.

Each image above is mapped by one process. An image several processes map is named the same way,
a symbol copied when a sample first hits it, from the perf map of that sample's process: *shared*,
one image all $M processes map, each naming all of it in its perf map, against the same anon profile.

$shared

## P3: each perf map is read once per process

\`strace -f -y -e trace=openat,read,pread64\` of one report of the N=100, K=1000 profile ($M processes,
100 fallback maps each): opens of each process's perf map, bytes read from it, and its size. The map
is read once when the last two columns are equal; an open without a read is a lookup miss checking,
at most every 100 ms, whether the file grew.

$p3

## P2: nothing for ELF-only profiles

A profile of \`gcc -O2 -c\` run 20 times ($nsamples samples, every sample in ELF objects or the kernel):
stock against patched \`perf report\`. Instructions are counted by \`valgrind --tool=callgrind\`
(one run each: the count repeats), wall time and RSS are medians of $RUNS runs, the heap peak is
\`valgrind --tool=massif --peak-inaccuracy=0.1\`'s (one run each). Target: 1.005 or less.

| measure | stock | patched | patched / stock |
|---|---:|---:|---:|
$p2

## P5: perf maps, stock against patched

What every JIT user (Java, Node, .NET, Python) pays in \`perf report\` for its perf maps:
\`bench/mkprofile anon NPROC 1 NLINES\` runs NPROC processes, each naming the code it runs in
anonymous executable memory in a perf map of NLINES lines (ascending addresses, as JITs append),
recorded for 1 s; every JIT sample is named from those perf maps by both perfs. Instructions from
one \`valgrind --tool=callgrind\` run of each report; wall and RSS medians of $RUNS runs,
interleaved. The read floor is \`wc -l\` of the same perf maps: reading the files and finding
their lines, no perf. Targets: at most 0.7 times stock's instructions on 4 x 250000, at most 0.5
times stock's wall time on 1 x 1000000, RSS no higher than stock's.

$p5

## P4: .NET 10 on the real runtime

One run of \`scripts/dotnet-e2e.sh\`: a C# program (dotnet/e2e) with JIT-heavy methods of its own
and a phase in framework code, recorded with W^X on (JIT code in \`/memfd:doublemapper\`) and
\`DOTNET_PerfMapEnabled=3\`, and the controls: W^X off, jitdump with \`perf inject --jit\`, perf top
attached while it runs, and the program run as uid 65534 with root's \`perf record -p\`. Share of
the samples named, in JIT code and in the framework's ReadyToRun images (no debug files installed:
\`scripts/r2r-e2e.sh\` measures those).

$p4

## Commands

    make bench                 # RUNS=15 M=4 by default
    bench/mkprofile file|shared|anon NPROC NIMG NLINES SECONDS DIR
MD
echo "[bench] wrote $results"
