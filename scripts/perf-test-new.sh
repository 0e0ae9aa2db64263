#!/bin/bash
# Run the series' own perf tests on build/patched/perf, by name: every case
# must pass. As root nothing may skip; otherwise only the cases that say they
# need root may.
set -euo pipefail
STEP="perf-test-new"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

perf=$BUILD/patched/perf
suites=("perf top tests" "Perf map names for objects perf cannot read" "perf map names for objects perf cannot read"
	"Perf map symbols" "PE file support")
mkdir -p "$BUILD/logs"
log=$BUILD/logs/perf-test-new.txt

nums=()
for s in "${suites[@]}"; do
	n=$(cd "$BUILD/logs" && "$perf" test list 2>&1 | awk -v d="$s" '
		{ sub(/^ +/, "") } index($0, ": " d) && $0 == substr($0, 1, index($0, ":")) " " d { sub(/:.*/, ""); print }')
	[ -n "$n" ] || die "'perf test list' has no test '$s'"
	nums+=("$n")
done

# PERF_EXEC_PATH: where "PE file support" finds its tests/pe-file.exe
(cd "$BUILD/logs" && PATH=$BUILD/patched:$PATH PERF_EXEC_PATH=$SRC/tools/perf \
	timeout 600 "$perf" test -v "${nums[@]}") >"$log" 2>&1 ||
	die "perf test ${nums[*]} did not finish (see $log)"
"$TOP/scripts/perf-test-results.sh" <"$log" >"$log.results"
cat "$log.results" | sed 's/^/  /'

[ -s "$log.results" ] || die "no results in $log"
fails=$(grep -c '^fail' "$log.results" || true)
skips=$(grep '^skip' "$log.results" || true)
[ "$fails" = 0 ] || die "$fails of the series' tests failed (see $log)"
if [ -n "$skips" ]; then
	if [ "$(id -u)" = 0 ] || printf '%s\n' "$skips" | grep -qv 'another user'; then
		die "tests skipped that must run here: $(printf '%s' "$skips" | tr '\n' ';')"
	fi
fi
note "$(grep -c '^ok' "$log.results") passed"
