#!/bin/bash
# Each process's perf map is opened once during a report, however many of its
# maps fall back: 2 processes with 20 non-ELF images each, counted by strace.
set -euo pipefail
STEP=parse-once
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out=$BUILD/parse-once
patched=$BUILD/patched/perf
rm -rf "$out"
mkdir -p "$out"
gcc -O1 -o "$out/mkprofile" "$TOP/bench/mkprofile.c" || die "cannot build bench/mkprofile"
"$patched" record -q -o "$out/perf.data" -e cpu-clock -- \
	"$out/mkprofile" file 2 20 100 1 "$out" >"$out/pids" 2>/dev/null ||
	die "perf record failed"
trap 'for p in $(cat "$out/pids"); do rm -f "/tmp/perf-$p.map"; done' EXIT

strace -f -qq -e trace=openat,open -o "$out/strace.txt" \
	"$patched" report -i "$out/perf.data" --stdio -q --sort dso,sym >"$out/report.txt" 2>/dev/null
for p in $(cat "$out/pids"); do
	maps=$(grep -c "img-.*\.bin" "$out/report.txt" || true)
	opens=$(grep -c "\"/tmp/perf-$p.map\"" "$out/strace.txt" || true)
	named=$(grep -c "bench_[0-9]*_[0-9]*$" "$out/report.txt" || true)
	[ "$named" -gt 0 ] || die "no names in the report: the fallback did not run"
	[ "$opens" = 1 ] || die "/tmp/perf-$p.map opened $opens times, expected once"
done
note "each of $(wc -w <"$out/pids") processes' perf maps opened once for 20 maps each ($maps report lines in images)"
