#!/bin/bash
# Run the whole 'perf test' on build/base/perf and build/patched/perf and fail
# if a test that passes on base does not pass on patched. Tests known to be
# flaky on these machines are listed in scripts/perf-test-flaky.txt, each with
# its reason; nothing else is excused. Tests that hang here are not run at all,
# on either side: scripts/perf-test-skip.txt, each with its reason.
set -euo pipefail
STEP=perf-test-gate
. "$(dirname "$0")/lib.sh"

logs=$BUILD/logs
mkdir -p "$logs"
for v in base patched; do
	note "perf test on $v (several minutes)"
	start=$(date +%s)
	# The numbers of the tests skipped here, in this perf's numbering.
	skip=$(cd "$logs" && "$BUILD/$v/perf" test list 2>&1 | awk -F'\t' '
		NR == FNR { if ($1 !~ /^#/ && $1 != "") want[$1] = 1; next }
		/^ *[0-9]+: / { n = $0; sub(/:.*/, "", n); sub(/^ */, "", n)
			d = $0; sub(/^ *[0-9]+: /, "", d); if (d in want) print n }' \
		"$TOP/scripts/perf-test-skip.txt" - | paste -sd, -)
	# From a folder with no tests/shell, so each perf runs the shell tests
	# next to its own binary, with its own perf first in PATH.
	(cd "$logs" && PATH=$BUILD/$v:$PATH timeout 2400 "$BUILD/$v/perf" test ${skip:+-s "$skip"}) \
		>"$logs/perf-test-$v.txt" 2>&1 ||
		die "perf test on $v did not finish (see $logs/perf-test-$v.txt)"
	"$TOP/scripts/perf-test-results.sh" <"$logs/perf-test-$v.txt" >"$logs/perf-test-$v.results"
	note "$v: $(cut -f1 "$logs/perf-test-$v.results" | sort | uniq -c | tr -s ' \n' ' ')in $(($(date +%s) - start))s"
done

flaky=$TOP/scripts/perf-test-flaky.txt
regressions=0
while IFS=$'\t' read -r status desc; do
	[ "$status" = ok ] || continue
	now=$(awk -F'\t' -v d="$desc" '$2 == d { print $1; exit }' "$logs/perf-test-patched.results")
	[ "$now" = ok ] && continue
	reason=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$flaky" 2>/dev/null || true)
	if [ -n "$reason" ]; then
		echo "  excused: '$desc' ${now:-missing} on patched: $reason"
		continue
	fi
	echo "  REGRESSION: '$desc' passes on base, ${now:-missing} on patched"
	regressions=$((regressions + 1))
done <"$logs/perf-test-base.results"

[ "$regressions" = 0 ] || die "$regressions tests regressed (logs in $logs)"
new=$(awk -F'\t' 'NR == FNR { seen[$2] = 1; next } !($2 in seen)' \
	"$logs/perf-test-base.results" "$logs/perf-test-patched.results" | sed 's/^/  new: /')
[ -n "$new" ] && printf '%s\n' "$new"
note "no test that passes on base fails on patched"
