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
