#!/bin/bash
# mkdebugelf on a real runtime's PE images: a CPU-bound Windows program
# (built with mingw-w64) under Wine spends most of its time in Wine's PE DLLs,
# which stock perf shows as raw offsets; debug files written from the DLLs'
# own export and COFF tables make stock perf name them.
set -euo pipefail
STEP="wine-e2e"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

wine=/usr/lib/wine/wine64
dlls=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
[ -x "$wine" ] && [ -d "$dlls" ] || { echo "wine64 is not installed"; exit 77; }
command -v x86_64-w64-mingw32-gcc >/dev/null || { echo "mingw-w64 is not installed"; exit 77; }
out=$BUILD/wine-e2e
rm -rf "$out"
mkdir -p "$out"
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" || die "cannot build mkdebugelf"

cat >"$out/spin.c" <<'C'
#include <windows.h>
#include <stdio.h>

int main(void)
{
	DWORD end = GetTickCount() + 2000;
	CRITICAL_SECTION cs;
	unsigned long n = 0;

	InitializeCriticalSection(&cs);
	while (GetTickCount() < end) {
		EnterCriticalSection(&cs);
		n++;
		LeaveCriticalSection(&cs);
	}
	printf("%lu\n", n);
	return 0;
}
C
x86_64-w64-mingw32-gcc -O1 -o "$out/spin.exe" "$out/spin.c" || die "mingw-w64 cannot build the test program"
export WINEPREFIX=$out/prefix WINEDEBUG=-all
timeout 300 "$wine" wineboot -i >"$out/wineboot.log" 2>&1 || die "wineboot failed (see $out/wineboot.log)"
"$BUILD/patched/perf" record -q -o "$out/perf.data" -e cpu-clock -- "$wine" "$out/spin.exe" \
	>/dev/null 2>"$out/record.err" || die "perf record of wine failed: $(head -n 1 "$out/record.err")"
timeout 60 "$wine" wineboot -k >/dev/null 2>&1 || true

share() { # REPORT: percent of samples in PE DLLs, and of those unnamed
	awk '$2 ~ /\.dll$/ { t += $1; if ($4 ~ /^0x/) raw += $1 } END { printf "%.1f %.1f\n", t, raw }' "$1"
}
base=$BUILD/base/perf
"$base" report -i "$out/perf.data" --stdio -q --sort dso,sym >"$out/before.txt" 2>/dev/null
read -r total raw < <(share "$out/before.txt")
note "stock perf: ${total}% of the samples in PE DLLs, ${raw}% as raw offsets"
awk -v t="$total" 'BEGIN { exit !(t >= 50) }' || die "expected most samples in Wine's PE DLLs"

for dll in $(awk '$2 ~ /\.dll$/ { print $2 }' "$out/before.txt" | sort -u); do
	"$BUILD/mkdebugelf/mkdebugelf" --install --root "$out/symfs" "$dlls/$dll" >/dev/null ||
		die "mkdebugelf failed on $dlls/$dll"
done
"$base" report -i "$out/perf.data" --symfs "$out/symfs" --stdio -q --sort dso,sym \
	>"$out/after.txt" 2>/dev/null
read -r total raw < <(share "$out/after.txt")
note "with mkdebugelf's debug files: ${total}% in PE DLLs, ${raw}% as raw offsets"
awk -v r="$raw" 'BEGIN { exit !(r == 0) }' || die "samples in PE DLLs still unnamed (see $out/after.txt)"
for f in RtlEnterCriticalSection RtlLeaveCriticalSection; do
	grep -q "ntdll\.dll .*\[\.\] $f\$" "$out/after.txt" || die "ntdll.dll's $f not named"
done
# perf annotate runs objdump on the image itself (under --symfs DIR: there)
# at the addresses the debug file gives: its instructions, in either perf
mkdir -p "$out/symfs$dlls"
cp "$dlls/ntdll.dll" "$out/symfs$dlls/"
for p in "$base" "$BUILD/patched/perf"; do
	"$p" annotate -i "$out/perf.data" --symfs "$out/symfs" --stdio RtlEnterCriticalSection \
		>"$out/annotate.txt" 2>&1 || true
	n=$(grep -cE '^ +[0-9.]+ : +[0-9a-f]+:' "$out/annotate.txt" || true)
	[ "$n" -ge 10 ] && grep -q '<RtlEnterCriticalSection>:' "$out/annotate.txt" ||
		die "$p annotate: $n instructions of RtlEnterCriticalSection (see $out/annotate.txt)"
done
note "perf annotate (stock and patched): RtlEnterCriticalSection's $n instructions"

# 2. The program's own code, linked the Windows way (lld-link): no COFF
# symbols, its names in a PDB only. With the default FileAlignment (0x200)
# Wine copies its code into anonymous memory, named through a perf map that
# mkdebugelf --write-perf-map writes while it runs; with 0x1000 its code is
# mapped from the file, named by a debug file written from the PDB. Both
# recorded and reported by stock perf.
mingw_lib=$(dirname "$(x86_64-w64-mingw32-gcc -print-libgcc-file-name)")
if ! command -v clang >/dev/null || ! command -v lld-link >/dev/null ||
   ! command -v llvm-pdbutil >/dev/null; then
	note "skipped: the program's own code (needs clang, lld and llvm-pdbutil)"
	exit 0
fi
cat >"$out/own.c" <<'C'
#include <windows.h>
#include <stdio.h>

__declspec(noinline) static unsigned long own_mix(unsigned long x)
{
	int i;

	for (i = 0; i < 1000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__declspec(noinline) unsigned long own_spin(unsigned long x)
{
	int i;

	for (i = 0; i < 1000; i++) {
		x ^= x >> 7;
		x ^= x << 9;
	}
	return own_mix(x);
}

int main(void)
{
	DWORD end = GetTickCount() + 2500;
	unsigned long x = 1;

	while (GetTickCount() < end)
		x = own_spin(x);
	printf("%lu\n", x);
	return 0;
}
C
for kind in anon file; do
	align=0x200
	[ "$kind" = anon ] || align=0x1000
	clang --target=x86_64-w64-mingw32 -O1 -g -gcodeview -fuse-ld=lld -L"$mingw_lib" \
		-Wl,--file-alignment="$align" -Wl,--pdb="$out/own-$kind.pdb" \
		-o "$out/own-$kind.exe" "$out/own.c" 2>"$out/own-$kind.cc.err" ||
		die "clang/lld-link cannot build the program: $(head -n 1 "$out/own-$kind.cc.err")"
done
"$BUILD/mkdebugelf/mkdebugelf" -o "$out/own-anon.debug" "$out/own-anon.exe" >/dev/null \
	2>"$out/own-anon.mk.err" || die "mkdebugelf failed on own-anon.exe"
grep -q 'Wine copies such code into anonymous memory' "$out/own-anon.mk.err" ||
	die "mkdebugelf did not say own-anon.exe's code can't be file-mapped"

# own_share TXT LO HI: "total named" samples of perf script lines (ip sym)
# with ip in [LO, HI)
own_share() {
	awk -v lo="$2" -v hi="$3" '
		function hex(s,  i, v) {
			s = tolower(s); sub(/^0x/, "", s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		{ ip = hex($1) }
		ip >= hex(lo) && ip < hex(hi) { t++; if ($2 != "[unknown]") n++ }
		END { printf "%d %d\n", t, n }' "$1"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", b ? 100 * a / b : 0 }'; }
at_least() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && 100 * a >= p * b) }'; }

perf_maps=
trap 'rm -f $perf_maps' EXIT
for kind in anon file; do
	exe=$out/own-$kind.exe
	# .text's RVA, for the PDB's section 1 offsets
	text_rva=$(x86_64-w64-mingw32-objdump -h "$exe" | awk '$2 == ".text" { print $4 }')
	image_base=$(x86_64-w64-mingw32-objdump -p "$exe" | awk '$1 == "ImageBase" { print $2 }')
	"$base" record -q -o "$out/own-$kind.data" -e cpu-clock -- "$wine" "$exe" \
		>/dev/null 2>"$out/own-$kind.record.err" &
	rec=$!
	pid=
	for _ in $(seq 300); do
		pid=$(pgrep -x "own-$kind.exe" | head -n 1 || true)
		[ -n "$pid" ] && grep -q "own-$kind.exe" "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$pid" ] || die "own-$kind.exe did not start under Wine in 30 s"
	maps=$(grep -m1 "own-$kind.exe" "/proc/$pid/maps")
	lo=0x${maps%%-*}
	if [ "$kind" = anon ]; then
		"$BUILD/mkdebugelf/mkdebugelf" --write-perf-map "$pid" >"$out/own-anon.write" \
			2>&1 || die "mkdebugelf --write-perf-map failed: $(tail -n 1 "$out/own-anon.write")"
	fi
	# The image's span, from its headers' mapping on: SizeOfImage
	hi=$(sed -n 's/.* in anonymous memory at 0x[0-9a-f]*-\(0x[0-9a-f]*\), .*/\1/p' \
		"$out/own-anon.write" | tail -n 1)
	wait "$rec" || die "perf record of own-$kind.exe failed: $(head -n 1 "$out/own-$kind.record.err")"
	timeout 60 "$wine" wineboot -k >/dev/null 2>&1 || true
	perf_maps="$perf_maps /tmp/perf-$pid.map"
	[ "$kind" = anon ] || hi=$(printf '%#x' $((lo + 0x40000)))

	"$base" script -i "$out/own-$kind.data" -F ip,sym >"$out/own-$kind-after.txt" 2>/dev/null
	if [ "$kind" = anon ]; then
		mv "/tmp/perf-$pid.map" "$out/own-anon.perfmap"
		"$base" script -i "$out/own-$kind.data" -F ip,sym >"$out/own-$kind-before.txt" \
			2>/dev/null
		cp "$out/own-anon.perfmap" "/tmp/perf-$pid.map"
	else
		cp "$out/own-$kind-after.txt" "$out/own-$kind-before.txt"
		"$BUILD/mkdebugelf/mkdebugelf" --install --root "$out/symfs" "$exe" >/dev/null ||
			die "mkdebugelf --install failed on own-file.exe"
		"$base" script -i "$out/own-$kind.data" --symfs "$out/symfs" -F ip,sym \
			>"$out/own-$kind-after.txt" 2>/dev/null
	fi
	read -r t0 n0 < <(own_share "$out/own-$kind-before.txt" "$lo" "$hi")
	read -r t1 n1 < <(own_share "$out/own-$kind-after.txt" "$lo" "$hi")
	what="anonymous copy, perf map"
	[ "$kind" = anon ] || what="mapped from the file, debug file"
	note "own code ($what): $t1 samples in the image; named: stock perf $(pct "$n0" "$t0"), with mkdebugelf $(pct "$n1" "$t1")"
	[ "$t1" -gt 100 ] || die "own-$kind.exe: only $t1 samples in its image"
	at_least "$n1" "$t1" 95 || die "own-$kind.exe: $(pct "$n1" "$t1") of its samples named, expected 95% or more"
	! at_least "$n0" "$t0" 5 || die "own-$kind.exe: stock perf named $(pct "$n0" "$t0") before"

	# The names where the PDB puts them: llvm-pdbutil's section:offset
	for f in own_spin own_mix; do
		off=$(llvm-pdbutil dump -symbols "$out/own-$kind.pdb" |
			awk -v f="$f" '$0 ~ "`" f "`" { getline; split($0, a, "addr = 0001:"); split(a[2], b, ","); print b[1] }')
		[ -n "$off" ] || die "llvm-pdbutil has no $f in own-$kind.pdb"
		want=$(printf '%x' $((lo + 0x$text_rva - 0x$image_base + off)))
		got=$(awk -v f="$f" '$2 == f && (min == "" || length($1) < length(min) ||
			(length($1) == length(min) && $1 < min)) { min = $1 } END { print min }' \
			"$out/own-$kind-after.txt")
		[ -n "$got" ] && [ $((0x$got)) -ge $((0x$want)) ] && [ $((0x$got)) -lt $((0x$want + 0x100)) ] ||
			die "own-$kind.exe: samples named $f at ${got:-none}, the PDB puts it at $want"
	done
done
note "the program's own code: named as the PDB says, file-mapped and anonymous"
