#!/bin/bash
# make soak [SOAK_SECONDS=300]: perf top -a (patched, or PERF=...) while, every
# second, a process maps a memfd and names it in its perf map, and another
# runs code from a non-ELF image that no perf map names (its perf map removed
# as it starts, as .NET's ReadyToRun code is in none). Prints perf top's RSS
# and the perf map opens and stats per second (strace, 10 s windows) after
# the first minute and at the end: neither may grow with the processes seen.
set -euo pipefail
# shellcheck disable=SC2034 # for lib.sh
STEP=soak
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

perf=${PERF:-$BUILD/patched/perf}
secs=${SOAK_SECONDS:-300}
[ -x "$perf" ] || die "build first: make build"
[ "$(id -u)" = 0 ] || die "needs root (perf top -a, strace of perf top)"
command -v strace >/dev/null || die "strace is missing (make deps)"
[ "$secs" -ge 120 ] || die "SOAK_SECONDS must be 120 or more"

out=$BUILD/soak
rm -rf "$out"
mkdir -p "$out"
img=$out/noname.img

# One memfd process and one image process a second, each running 3 s. The
# image processes' perf maps are removed as soon as they appear: perf top may
# still read one first, and then names the shared image from it.
spawn() {
	local end=$((SECONDS + secs)) pid
	while [ "$SECONDS" -lt "$end" ]; do
		"$perf" test -w mapimage 3 memfd >/dev/null 2>&1 &
		"$perf" test -w mapimage 3 "$img" 0 >/dev/null 2>&1 &
		pid=$!
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -e "/tmp/perf-$pid.map" ] && break
			sleep 0.01
		done
		rm -f "/tmp/perf-$pid.map"
		sleep 1
	done
	wait
}

mkfifo "$out/stdin"
exec 3<>"$out/stdin"
COLUMNS=200 "$perf" top -a --stdio -d 5 -e cpu-clock <&3 >"$out/top.txt" 2>"$out/top.err" &
top=$!
sleep 2
kill -0 "$top" 2>/dev/null || die "perf top does not start: $(head -n 1 "$out/top.err")"
spawn &
spawner=$!

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$top/status"; }
# opens, stats and access checks of perf maps in 10 s, in all of
# perf top's threads
probes() {
	local tasks=()
	for t in /proc/"$top"/task/*; do
		tasks+=(-p "${t##*/}")
	done
	timeout -s INT 10 strace -f -qq -o "$out/strace-$1.txt" \
		-e trace=openat,open,stat,newfstatat,lstat,statx,access,faccessat,faccessat2 \
		"${tasks[@]}" >/dev/null 2>&1 || true
	grep -c 'perf-[0-9]*\.map' "$out/strace-$1.txt" || true
}

sleep 50
rss1=$(rss)
p1=$(probes 1)
sleep $((secs - 80))
rss2=$(rss)
p2=$(probes 2)
kill "$spawner" 2>/dev/null || true
wait "$spawner" 2>/dev/null || true
kill -INT "$top" 2>/dev/null || true
wait "$top" 2>/dev/null || true
rm -f "$img"

note "perf top -a, $secs s, $((secs * 2)) processes started: RSS ${rss1} kB at 1 min, ${rss2} kB at the end ($(awk -v a="$rss2" -v b="$rss1" 'BEGIN { printf "%.3f", a / b }')x)"
note "perf map opens, stats and access checks in 10 s: $p1 after 1 min, $p2 at the end"
awk -v a="$rss2" -v b="$rss1" 'BEGIN { exit !(a <= 1.1 * b) }' ||
	die "perf top's RSS grew more than 1.1 times"
# The same processes run at both times: the count may vary, not grow with time
[ "$p2" -le $((p1 * 3 / 2 + 10)) ] || die "perf map probes grew: $p1 to $p2 in 10 s"
