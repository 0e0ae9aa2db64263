#!/bin/bash
# Each process's perf map is read once during a report, however many of its
# maps fall back: 2 processes with 20 non-ELF images each, the bytes read of
# each perf map counted by strace.
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

# -y names the file of each descriptor: sum what was read of each perf map.
strace -f -qq -y -e trace=read,pread64 -o "$out/strace.txt" \
	"$patched" report -i "$out/perf.data" --stdio -q --sort dso,sym >"$out/report.txt" 2>/dev/null
named=$(grep -c "bench_[0-9]*_[0-9]*$" "$out/report.txt" || true)
[ "$named" -gt 0 ] || die "no names in the report: the fallback did not run"
for p in $(cat "$out/pids"); do
	size=$(stat -c %s "/tmp/perf-$p.map")
	got=$(awk -v f="</tmp/perf-$p.map>" 'index($0, f) { n = $NF; if (n > 0) s += n } END { print s + 0 }' \
		"$out/strace.txt")
	[ "$got" = "$size" ] || die "/tmp/perf-$p.map: $got bytes read, expected its $size bytes once"
done
note "each of $(wc -w <"$out/pids") processes' perf maps read once for its 20 maps ($named named report lines)"
