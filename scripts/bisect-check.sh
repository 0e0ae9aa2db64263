#!/bin/bash
# Build perf after each patch of the series in turn and run the series' perf
# tests that exist at that point: every prefix must build and pass.
set -euo pipefail
STEP=bisect-check
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

wt=$BUILD/bisect
out=$BUILD/bisect-out
git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$wt" base
trap 'git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
mkdir -p "$BUILD/logs"

n=0
for c in $(git -C "$SRC" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	git -C "$wt" checkout -q --detach "$c"
	STEP="bisect-check $n" "$TOP/scripts/build-perf.sh" "$wt" "$out" >/dev/null ||
		die "patch $n ($subject) does not build"
	nums=$(cd "$BUILD/logs" && "$out/perf" test list 2>&1 |
		awk '/^ *[0-9]+: (Perf map names for objects perf cannot read|perf map names for objects perf cannot read|Perf map symbols|Symbols|DSO data tests)$/ { sub(/:.*/, ""); print $1 }')
	log=$BUILD/logs/bisect-$n.txt
	# shellcheck disable=SC2086
	(cd "$BUILD/logs" && PATH=$out:$PATH timeout 900 "$out/perf" test $nums) >"$log" 2>&1 ||
		die "patch $n ($subject): perf test did not finish"
	"$TOP/scripts/perf-test-results.sh" <"$log" >"$log.results"
	grep -q '^fail' "$log.results" &&
		die "patch $n ($subject): $(grep '^fail' "$log.results" | cut -f2 | tr '\n' ';')"
	note "patch $n builds, $(grep -c '^ok' "$log.results") tests pass: $subject"
done
note "all $n prefixes of the series build and pass"
