#!/bin/bash
# make bench: measure the perf map fallback against perf's own anonymous-memory
# perf map path, and the patched perf against stock perf on an ELF-only
# profile, and perf's PE reader against mkdebugelf's debug files on Wine's
# DLLs. Writes bench/RESULTS.md. Runs are interleaved and repeated; medians
# with min and max are reported, and ratios are taken within one run.
#
# bench/run.sh [SECTION...] (make bench SECTIONS='P6'): only those of P1..P6
# (P3 reads P1's profile, so runs with it); their sections of RESULTS.md are
# replaced, the rest kept.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
base=$BUILD/base/perf patched=$BUILD/patched/perf
out=$BUILD/bench
RUNS=${RUNS:-15}
M=${M:-4}
results=$TOP/bench/RESULTS.md
all_sections="P1 P3 P2 P5 P4 P6"
sections=${*:-$all_sections}
for sec in $sections; do
	case " $all_sections " in
	*" $sec "*) ;;
	*) echo "FAILED [bench]: no section $sec (sections: $all_sections)"; exit 1 ;;
	esac
done
case " $sections " in *" P3 "*) case " $sections " in *" P1 "*) ;; *) sections="P1 $sections" ;; esac ;; esac
# want SECTION: is it to be run?
want() { case " $sections " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# What each section's text reads, empty for those not run
table='' shared='' p3='' p2='' nsamples='' p5='' p4='' p6='' p6_about='' p6_names=''
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

# measure PERF DATA TAG [ARG...]: two reports (with ARGs); seconds and KiB
# appended to TAG files.
# Wall time from bash's microsecond clock (time's %e has 10 ms steps), the
# binary all in the page cache. Peak RSS from a second run, the binary dropped
# from the page cache first: a fault maps the pages around it that are cached,
# so with a binary all cached (as the linker leaves it) RSS depends on where
# the code lies, up to 0.6 MB apart between two builds of the same code paths.
measure() {
	local t0 t1
	cat "$1" >/dev/null
	t0=$EPOCHREALTIME
	"$1" report -i "$2" --stdio -q --sort dso,sym "${@:4}" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$out/$3.s"
	dd if="$1" iflag=nocache count=0 status=none
	/usr/bin/time -f "%M" -o "$out/t" "$1" report -i "$2" --stdio -q --sort dso,sym "${@:4}" \
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

if want P1; then
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
fi # P1

if want P3; then
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
fi # P3

if want P2; then
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
fi # P2

# P5: perf maps alone, stock against patched: what every JIT user's report
# pays for reading them. NPROC processes, each with a perf map of NLINES lines
# naming its anonymous JIT code. The floor: wc -l of the same files.
if want P5; then
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
fi # P5

# P4: .NET on the real runtime, from the dotnet-e2e check's own run.
if want P4; then
echo "[bench] P4: .NET end to end (scripts/dotnet-e2e.sh)"
if BUILD=$BUILD "$TOP/scripts/dotnet-e2e.sh" >"$out/dotnet-e2e.txt" 2>&1; then
	p4=$(awk '/^ +JIT +named:/ { on = 1 } on && NF' "$out/dotnet-e2e.txt" | sed 's/^/    /')
else
	p4="Not measured: $(tail -n 1 "$out/dotnet-e2e.txt")"
fi
echo "$p4"
fi # P4

# P6: the symbols of Wine's PE DLLs, read by the patched perf itself (its PE
# reader) against the ELF debug files mkdebugelf writes for the same DLLs,
# which it reads first where they are. One perf.data (bench/mkpedata, written
# directly: one process, each DLL's code mapped, one sample at its entry
# point), reported with --symfs: pe/ holds the DLLs, debug/ the DLLs and
# usr/lib/debug/<path>.debug; only where the symbols come from differs.
if want P6; then
echo "[bench] P6: Wine's PE DLLs, perf's PE reader against mkdebugelf's debug files"
d=$out/p6
mkdir -p "$d/pe" "$d/debug"
# Copies of both perfs, which a rebuild while P6 runs can't change
pp=$d/perf-patched pb=$d/perf-stock
p6_dirs=${P6_DIRS:-/usr/lib/x86_64-linux-gnu/wine/x86_64-windows /usr/lib/x86_64-linux-gnu/wine/i386-windows /usr/lib/i386-linux-gnu/wine/i386-windows}
: >"$d/dlls"
p6_set=
for dir in $p6_dirs; do
	[ -d "$dir" ] || continue
	find "$dir" -maxdepth 1 -type f | sort >"$d/dlls.1"
	p6_set="${p6_set:+$p6_set, }$(wc -l <"$d/dlls.1") in $dir"
	cat "$d/dlls.1" >>"$d/dlls"
	for m in pe debug; do
		mkdir -p "$d/$m$(dirname "$dir")"
		ln -s "$dir" "$d/$m$dir"
	done
done
# Wine's loader, an ELF object mapped first as in a Wine process: perf finds
# the process's machine from it, not trying each DLL for it at every mapping
loader=${P6_LOADER:-/usr/lib/wine/wine64}
p6_loader=() p6_first=''
if [ -f "$loader" ]; then
	p6_loader=(-e "$loader")
	p6_first="Wine's loader ($loader, one sample at its entry point), then "
	for m in pe debug; do
		mkdir -p "$d/$m$(dirname "$loader")"
		ln -s "$loader" "$d/$m$loader"
	done
fi
ndll=$(wc -l <"$d/dlls")
p6='' p6_about='' p6_names=''
if [ "$ndll" = 0 ]; then
	p6="Not measured: no PE DLLs in $p6_dirs (Debian: apt install wine64)"
elif ! cp "$patched" "$pp" || ! cp "$base" "$pb" || ! "$pp" version >/dev/null || ! "$pb" version >/dev/null; then
	p6="Not measured: cannot copy the perf binaries"
elif ! make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" >"$d/make.log" 2>&1; then
	p6="Not measured: cannot build mkdebugelf: $(tail -n 1 "$d/make.log")"
elif ! gcc -O1 -Wall -o "$out/mkpedata" "$TOP/bench/mkpedata.c" 2>"$d/gcc.log"; then
	p6="Not measured: cannot build bench/mkpedata: $(head -n 1 "$d/gcc.log")"
fi
if [ -z "$p6" ]; then
	# DLLs without code (resources, forwarders only) get no sample and no debug file
	"$out/mkpedata" "${p6_loader[@]}" "$d/perf.data" <"$d/dlls" >"$d/sampled" 2>"$d/mkpedata.log" || true
	"$out/mkpedata" -a "${p6_loader[@]}" "$d/all.data" <"$d/dlls" >/dev/null 2>&1 || true
	nsampled=$(wc -l <"$d/sampled")
	while read -r dll; do
		"$BUILD/mkdebugelf/mkdebugelf" --install --root "$d/debug" "$dll" >>"$d/mkdebugelf.log" 2>&1 || true
	done <"$d/dlls"
	ndebug=$(find "$d/debug/usr/lib/debug" -name '*.debug' 2>/dev/null | wc -l)
	# named PERF DATA MODE: the samples (ip sym dso) of DATA as PERF names them
	# with --symfs MODE's directory, in $d/MODE.DATA.txt; prints how many in
	# DLLs are named
	named() {
		"$1" script -i "$d/$2" --symfs "$d/$3" -F ip,sym,dso >"$d/$3.$2.txt" 2>/dev/null || true
		awk '$NF ~ /\.[A-Za-z0-9]+\)$/ && $2 != "[unknown]" { n++ } END { print n + 0 }' "$d/$3.$2.txt"
	}
	nstock=$(named "$pb" perf.data debug)
	npe=$(named "$pp" perf.data pe)
	ndbg=$(named "$pp" perf.data debug)
	# The debug files are what the debug run reads, and none is in the PE run's way
	for m in pe debug; do
		strace -f -qq -e trace=openat -o "$d/strace.$m" "$pp" report -i "$d/perf.data" \
			--symfs "$d/$m" --stdio -q >/dev/null 2>&1 || true
	done
	opened() { grep -v ' = -1 ' "$d/strace.$1" | grep -o '[^"]*\.[A-Za-z0-9]*\.debug"' | sort -u | wc -l; }
	opened_pe=$(opened pe) opened_debug=$(opened debug)
	# Those of the sampled DLLs, which have one
	want_debug=$(while read -r dll _; do
		[ ! -f "$d/debug/usr/lib/debug$dll.debug" ] || echo
	done <"$d/sampled" | wc -l)
	# Every x64 function start of every DLL: the names each source gives
	fpe=$(named "$pp" all.data pe)
	fdbg=$(named "$pp" all.data debug)
	read -r fall fsuffix fother < <(awk 'NR == FNR { a[FNR] = $0; next }
		$NF ~ /\.[A-Za-z0-9]+\)$/ { n++; if ($0 == a[FNR]) next; b = $0; sub(/#[0-9]+ \(/, " (", b); if (b == a[FNR]) s++; else o++ }
		END { print n + 0, s + 0, o + 0 }' "$d/pe.all.data.txt" "$d/debug.all.data.txt")
	echo "  $ndll files, $nsampled with code sampled, $ndebug debug files; named: PE reader $npe, debug files $ndbg (stock perf $nstock); debug files opened: $opened_pe and $opened_debug of $want_debug"
	echo "  every x64 function start ($fall): named $fpe and $fdbg; names differing: $fsuffix by mkdebugelf's #N only, $fother otherwise"
	if [ "$nsampled" = 0 ] || [ "$npe" != "$ndbg" ] || [ "$opened_pe" != 0 ] ||
	   [ "$opened_debug" != "$want_debug" ] || ! awk -v n="$npe" -v t="$nsampled" 'BEGIN { exit !(n >= 0.95 * t) }'; then
		p6="Not measured: the two runs do not name the same samples ($npe and $ndbg of $nsampled named, $opened_pe and $opened_debug debug files of $want_debug opened; see $d)"
	fi
fi
if [ -z "$p6" ]; then
	for m in pe debug; do
		"$pp" report -i "$d/perf.data" --symfs "$d/$m" --stdio -q >/dev/null 2>&1 || true
	done
	for _ in $(seq "$RUNS"); do
		measure "$pp" "$d/perf.data" p6-pe --symfs "$d/pe"
		measure "$pp" "$d/perf.data" p6-debug --symfs "$d/debug"
		measure "$pb" "$d/perf.data" p6-stock --symfs "$d/debug"
	done
	for m in pe debug stock; do
		pf=$pp sf=$d/$m
		[ "$m" != stock ] || pf=$pb sf=$d/debug
		valgrind --tool=callgrind --callgrind-out-file="$d/cg.$m" "$pf" report -i "$d/perf.data" \
			--symfs "$sf" --stdio -q --sort dso,sym >/dev/null 2>&1 || true
	done
	read -r es emin emax < <(stats "$out/p6-pe.s")
	read -r ds dmin dmax < <(stats "$out/p6-debug.s")
	read -r ss smin smax < <(stats "$out/p6-stock.s")
	read -r ekb _ _ < <(stats "$out/p6-pe.kb")
	read -r dkb _ _ < <(stats "$out/p6-debug.kb")
	read -r skb _ _ < <(stats "$out/p6-stock.kb")
	p6=$(awk -v ei="$(ir "$d/cg.pe")" -v di="$(ir "$d/cg.debug")" -v si="$(ir "$d/cg.stock")" \
		-v es="$es" -v emin="$emin" -v emax="$emax" -v ds="$ds" -v dmin="$dmin" -v dmax="$dmax" \
		-v ss="$ss" -v smin="$smin" -v smax="$smax" -v ekb="$ekb" -v dkb="$dkb" -v skb="$skb" \
		-v ne="$npe" -v nd="$ndbg" -v ns="$nstock" -v t="$nsampled" 'BEGIN {
		print "| measure | PE reader | debug files | PE reader / debug files | stock perf, debug files |"
		print "|---|---:|---:|---:|---:|"
		printf "| instructions (callgrind) | %d | %d | %.4f | %d |\n", ei, di, ei / di, si
		printf "| wall s, median (min-max) | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f | %.3f (%.3f-%.3f) |\n",
			es, emin, emax, ds, dmin, dmax, es / ds, ss, smin, smax
		printf "| peak RSS MiB, median | %.1f | %.1f | %.3f | %.1f |\n", ekb / 1024, dkb / 1024, ekb / dkb, skb / 1024
		printf "| samples named, of %d | %d | %d | | %d |", t, ne, nd, ns }')
	awk -v ei="$(ir "$d/cg.pe")" -v di="$(ir "$d/cg.debug")" -v es="$es" -v ds="$ds" -v ekb="$ekb" \
		-v dkb="$dkb" 'BEGIN { i = ei / di; w = es / ds; r = ekb / dkb
		printf "  target: PE reader / debug files 1.0 or less: instructions %.4f, wall %.3f, RSS %.3f: %s\n",
			i, w, r, i <= 1 && w <= 1 && r <= 1 ? "met" : "NOT met" }'
	p6_about="What reading PE files itself costs perf, against reading the ELF debug files users wrote for them
with mkdebugelf before. \`bench/mkpedata\` writes a perf.data (no recording): one process that maps
${p6_first}the code of each
of Wine's PE files, its DLLs, programs and drivers ($p6_set; mkpedata skips those that are not PE),
as Wine does, and one sample at each one's entry point ($nsampled files;
the others hold only resources or forwarders, no code), so that \`perf report\` loads the symbols of
every DLL once and does little else. The same patched perf
reports it under \`--symfs DIR\` twice: *PE reader*, DIR holding the DLLs; *debug files*, the DLLs and
mkdebugelf's \`usr/lib/debug/<path>.debug\` for each ($ndebug files), which perf reads first
(strace: the first run opens none of them, the second $opened_debug). Instructions from one
\`valgrind --tool=callgrind\` run of each; wall time and peak RSS medians of $RUNS runs,
interleaved. The last column is stock perf with the debug files, what users had before (perfs
copied at the start: patched \`$("$pp" version)\`, stock \`$("$pb" version)\`). Target: the PE
reader at 1.0 or less times the debug files' instructions, wall time and peak RSS."
	unnamed=$(awk '$NF ~ /\.[A-Za-z0-9]+\)$/ && $2 == "[unknown]" { n = split($3, p, "/"); printf "%s%s/%s", s, p[n - 1], p[n]; s = ", " }' \
		"$d/pe.perf.data.txt" | tr -d ')')
	p6_names="Samples unnamed by both: ${unnamed:-none} (no export or COFF symbol names their entry point). The names at every x64 function start (.pdata) of every DLL, $fall samples (\`bench/mkpedata -a\`): $fpe named by the PE reader, $fdbg from the debug files; $fsuffix names differ only by the \`#N\` mkdebugelf appends to repeated local names (\`__proxy_filter#2\`), $fother otherwise."
fi
echo "$p6" | sed 's/^/  /'
fi # P6

# The text of RESULTS.md: its head, a section for each of P1..P6, the commands
declare -A md
head=$(cat <<MD
# Benchmark results

Written by \`make bench\` (bench/run.sh) on $(date -u +%Y-%m-%d). Do not edit by hand.

- Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ { print $2 }') GiB, kernel $(uname -r)
- Base: $(git -C "$BUILD/src" log -1 --format=%s base | sed "s/ (perf subset)//"); stock perf \`$("$base" version)\`, patched perf \`$("$patched" version)\`
- Each figure: median of $RUNS runs of \`perf report -i perf.data --stdio -q --sort dso,sym\`, min and max in brackets, wall time from bash's \`EPOCHREALTIME\`; the columns of a row were measured interleaved in the same run. RSS is the peak resident set (\`/usr/bin/time -f %M\`) of a separate run started with the perf binary dropped from the page cache (\`dd iflag=nocache count=0\`), so that the file pages a run maps are those it reads: with the binary all cached, RSS also depends on where each build's code lies (0.6 MB apart between stock and patched on a 1000 line perf map, all in the binary's file pages, anonymous memory equal).
MD
)
md[P1]=$(cat <<MD
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
MD
)
md[P3]=$(cat <<MD
## P3: each perf map is read once per process

\`strace -f -y -e trace=openat,read,pread64\` of one report of the N=100, K=1000 profile ($M processes,
100 fallback maps each): opens of each process's perf map, bytes read from it, and its size. The map
is read once when the last two columns are equal; an open without a read is a lookup miss checking,
at most every 100 ms, whether the file grew.

$p3
MD
)
md[P2]=$(cat <<MD
## P2: nothing for ELF-only profiles

A profile of \`gcc -O2 -c\` run 20 times ($nsamples samples, every sample in ELF objects or the kernel):
stock against patched \`perf report\`. Instructions are counted by \`valgrind --tool=callgrind\`
(one run each: the count repeats), wall time and RSS are medians of $RUNS runs, the heap peak is
\`valgrind --tool=massif --peak-inaccuracy=0.1\`'s (one run each). Target: 1.005 or less.

| measure | stock | patched | patched / stock |
|---|---:|---:|---:|
$p2
MD
)
md[P5]=$(cat <<MD
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
MD
)
md[P4]=$(cat <<MD
## P4: .NET 10 on the real runtime

One run of \`scripts/dotnet-e2e.sh\`: a C# program (dotnet/e2e) with JIT-heavy methods of its own
and a phase in framework code, recorded with W^X on (JIT code in \`/memfd:doublemapper\`) and
\`DOTNET_PerfMapEnabled=3\`, and the controls: W^X off, jitdump with \`perf inject --jit\`, perf top
attached while it runs, and the program run as uid 65534 with root's \`perf record -p\`. Share of
the samples named, in JIT code and in the framework's ReadyToRun images (no debug files installed:
\`scripts/r2r-e2e.sh\` measures those).

$p4
MD
)
# P6's description only with its figures
md[P6]="## P6: Wine's PE DLLs, perf's PE reader against mkdebugelf's debug files"
for part in "$p6_about" "$p6" "$p6_names"; do
	[ -z "$part" ] || md[P6]="${md[P6]}

$part"
done
tail=$(cat <<MD
## Commands

    make bench                 # RUNS=15 M=4 by default
    make bench SECTIONS=P6     # or bench/run.sh P6: only those sections, replaced here
    bench/mkprofile file|shared|anon NPROC NIMG NLINES SECONDS DIR
    bench/mkpedata [-a] [-e ELF] OUT <paths  # P6 reads P6_DIRS='DIR...' (every file; mkpedata skips those not PE), P6_LOADER=ELF
MD
)
if [ $# = 0 ] || [ ! -f "$results" ]; then
	{
		printf '%s\n\n' "$head"
		for sec in $all_sections; do
			! want "$sec" || printf '%s\n\n' "${md[$sec]}"
		done
		printf '%s\n' "$tail"
	} >"$results"
else
	# Only the sections run: each replaces its own, or goes before the
	# commands, which are replaced too
	# splice HEADING FILE: RESULTS.md with FILE for the block HEADING starts
	splice() {
		awk -v sec="$1" -v f="$2" '
			function put(l) { while ((getline l < f) > 0) print l; print ""; done = 1 }
			index($0, sec) == 1 { put(); skip = 1; next }
			skip && /^## / { skip = 0 }
			skip { next }
			/^## Commands/ && !done { put() }
			{ print }
			END { if (!done) { print ""; put() } }' "$results" >"$out/RESULTS.md"
		cp "$out/RESULTS.md" "$results"
	}
	for sec in $sections; do
		printf '%s\n\n_Measured alone on %s: `bench/run.sh %s`._\n' "${md[$sec]}" \
			"$(date -u +%Y-%m-%d)" "$sections" >"$out/section.md"
		splice "## $sec:" "$out/section.md"
	done
	printf '%s\n' "$tail" >"$out/section.md"
	splice "## Commands" "$out/section.md"
	# The file ends with one newline
	sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$results"
fi
echo "[bench] wrote $results"
