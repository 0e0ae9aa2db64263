#!/bin/bash
# Record an AOT-style workload (code run from a non-ELF image file, named in
# the process's perf map) with the patched perf, then show stock and patched
# 'perf report' of the same perf.data side by side.
# With --check, assert what the demo shows instead of only printing it.
set -euo pipefail
STEP=demo
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

check=false
[ "${1:-}" = --check ] && check=true
base=$BUILD/base/perf patched=$BUILD/patched/perf
out=$BUILD/demo
[ -x "$base" ] && [ -x "$patched" ] || die "build first: make build"
rm -rf "$out"
mkdir -p "$out"

if ! "$patched" record -q -o "$out/probe.data" -e cpu-clock -- true >/dev/null 2>"$out/probe.err"; then
	echo "perf record is not permitted here: $(head -n 1 "$out/probe.err")"
	echo "Run as root, or allow it with: sysctl kernel.perf_event_paranoid=1"
	exit 1
fi

cleanup() {
	for pid in $("$patched" script -i "$out/perf.data" -F pid 2>/dev/null | sort -u); do
		rm -f "/tmp/perf-$pid.map"
	done
}
trap cleanup EXIT

# 'keep': the perf map must outlive the process for perf report to read it.
"$patched" record -q -o "$out/perf.data" -e cpu-clock -- \
	"$patched" test -w mapimage 2 "$out/app.img" 0 keep >/dev/null 2>"$out/record.err" ||
	die "perf record of the workload failed: $(head -n 1 "$out/record.err")"

report() {
	"$1" report -i "$out/perf.data" --stdio -q --sort dso,sym --percent-limit 3 2>/dev/null |
		sed 's/^ *//; s/  */ /g; /^$/d'
}
report "$base" >"$out/base.txt"
report "$patched" >"$out/patched.txt"

if ! $check; then
	echo "perf record -e cpu-clock -- perf test -w mapimage 2 app.img"
	echo "(app.img is not ELF; the workload names its code in /tmp/perf-PID.map)"
	echo
	printf '%-44s | %s\n' "stock perf report ($("$base" version))" "patched perf report"
	printf '%-44s-+-%s\n' "$(printf -- '-%.0s' $(seq 44))" "$(printf -- '-%.0s' $(seq 44))"
	paste -d'|' <(awk '{ printf "%-44s \n", $0 }' "$out/base.txt") <(sed 's/^/ /' "$out/patched.txt")
	echo
	echo "perf.data and both reports: $out"
	exit 0
fi

# --check: stock shows app.img as raw offsets, patched names all three
# functions, in app.img, which keeps its name.
fail=0
if grep -q 'app\.img .*mapimage_' "$out/base.txt" || ! grep -q 'app\.img \[\.\] 0x' "$out/base.txt"; then
	echo "  stock perf should show app.img samples as raw offsets:"; sed 's/^/    /' "$out/base.txt"
	fail=1
fi
for f in mapimage_one mapimage_two mapimage_four; do
	grep -q "app\.img \[\.\] $f\$" "$out/patched.txt" || { echo "  patched perf does not name $f"; fail=1; }
done
if grep -q 'app\.img \[\.\] 0x' "$out/patched.txt"; then
	echo "  patched perf still shows raw offsets in app.img"; fail=1
fi
[ "$fail" = 0 ] || { sed 's/^/    /' "$out/patched.txt"; die "the demo does not show the difference"; }
note "stock: raw offsets in app.img; patched: mapimage_one, _two, _four in app.img"
