#!/bin/bash
# Run the whole 'perf test' on build/base/perf and build/patched/perf and fail
# if a test that passes on base does not pass on patched, and then, run alone
# RERUNS times on each perf, fails on patched in most of those runs and in more
# of them than on base. Tests that fail now and then even alone, on stock perf
# as well, are listed in scripts/perf-test-flaky.txt, each with its reason:
# such a test is a regression only if patched fails every lone run and base none.
# Tests that hang here are not run at all, on either side:
# scripts/perf-test-skip.txt, each with its reason.
set -euo pipefail
STEP=perf-test-gate
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

logs=$BUILD/logs
mkdir -p "$logs"

# number PERF DESC: the number of the test (or of the suite of a "SUITE / CASE").
number() {
	(cd "$logs" && "$1" test list 2>&1) | awk -v d="${2%% / *}" '
		/^ *[0-9]+: / { n = $0; sub(/:.*/, "", n); sub(/^ */, "", n)
			t = $0; sub(/^ *[0-9]+: /, "", t); if (t == d) { print n; exit } }'
}

for v in base patched; do
	note "perf test on $v (several minutes)"
	start=$(date +%s)
	# The numbers of the tests skipped here, in this perf's numbering.
	skip=$(grep -v '^#' "$TOP/scripts/perf-test-skip.txt" | cut -f1 |
		while read -r d; do [ -z "$d" ] || number "$BUILD/$v/perf" "$d"; done |
		paste -sd, -)
	# From a folder with no tests/shell, so each perf runs the shell tests
	# next to its own binary, with its own perf first in PATH.
	(cd "$logs" && PATH=$BUILD/$v:$PATH timeout 2400 "$BUILD/$v/perf" test ${skip:+-s "$skip"}) \
		>"$logs/perf-test-$v.txt" 2>&1 ||
		die "perf test on $v did not finish (see $logs/perf-test-$v.txt)"
	"$TOP/scripts/perf-test-results.sh" <"$logs/perf-test-$v.txt" >"$logs/perf-test-$v.results"
	note "$v: $(cut -f1 "$logs/perf-test-$v.results" | sort | uniq -c | tr -s ' \n' ' ')in $(($(date +%s) - start))s"
done

# Under the parallel run, timing-sensitive stock shell tests fail now and
# then on either perf (seen here: 'perf diff tests' and 'perf list tests' on
# one side, 'Number of exit events of a simple workload' on the other). So a
# test that passes on base but not on patched is run again on its own, RERUNS
# times on each perf, one after the other; it is a regression if patched fails
# most of those runs, and more of them than base. (What the series changes,
# symbol resolution, is deterministic: a test it breaks fails every time.)
RERUNS=${RERUNS:-3}

# fails V DESC: in how many of RERUNS lone runs on perf V the test did not pass.
fails() {
	local v=$1 desc=$2 n i f=0 out
	n=$(number "$BUILD/$v/perf" "$desc")
	[ -n "$n" ] || { echo "$RERUNS"; return; }
	for i in $(seq "$RERUNS"); do
		out=$logs/rerun-$v-$n-$i.txt
		(cd "$logs" && PATH=$BUILD/$v:$PATH timeout 600 "$BUILD/$v/perf" test -v -S "$n") \
			>"$out" 2>&1 || true
		"$TOP/scripts/perf-test-results.sh" <"$out" |
			awk -F'\t' -v d="$desc" '$2 == d && $1 == "ok" { ok = 1 } END { exit !ok }' ||
			f=$((f + 1))
	done
	echo "$f"
}

flaky=$TOP/scripts/perf-test-flaky.txt
regressions=0 names=""
while IFS=$'\t' read -r status desc; do
	[ "$status" = ok ] || continue
	now=$(awk -F'\t' -v d="$desc" '$2 == d { print $1; exit }' "$logs/perf-test-patched.results")
	[ "$now" = ok ] && continue
	reason=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$flaky" 2>/dev/null || true)
	bf=$(fails base "$desc")
	pf=$(fails patched "$desc")
	counts="run alone $RERUNS times: base failed $bf, patched $pf"
	if [ -n "$reason" ]; then
		# Listed as flaky: only a consistent break is a regression.
		regressed=$([ "$pf" = "$RERUNS" ] && [ "$bf" = 0 ] && echo 1 || echo 0)
	else
		regressed=$([ $((2 * pf)) -gt "$RERUNS" ] && [ "$pf" -gt "$bf" ] && echo 1 || echo 0)
	fi
	if [ "$regressed" = 1 ]; then
		echo "  REGRESSION: '$desc' passes on base, ${now:-missing} on patched;" \
			"$counts (logs: $logs/rerun-*)"
		regressions=$((regressions + 1))
		names="$names '$desc'"
	elif [ -n "$reason" ]; then
		echo "  excused: '$desc' ${now:-missing} on patched; $counts; listed as flaky: $reason"
	else
		echo "  flaky: '$desc' ${now:-missing} on patched in the full run; $counts"
	fi
done <"$logs/perf-test-base.results"

[ "$regressions" = 0 ] || die "$regressions tests regressed:$names (logs in $logs)"
new=$(awk -F'\t' 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' \
	"$logs/perf-test-base.results" "$logs/perf-test-patched.results" | sed 's/^/  new: /')
[ -n "$new" ] && printf '%s\n' "$new"
note "no test that passes on base fails on patched"
