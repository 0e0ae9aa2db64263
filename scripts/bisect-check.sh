#!/bin/bash
# Build perf after each patch of the series in turn and run the series' perf
# tests that exist at that point: every prefix must build and pass; then each
# topic of patches/topics alone on the base with its prerequisites.
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

# build_and_test ID LABEL: build the worktree and run the series' perf tests
# that exist in it; the log is bisect-ID.txt, LABEL names it in messages.
build_and_test() {
	local label=$2 nums log
	STEP="bisect-check $label" "$TOP/scripts/build-perf.sh" "$wt" "$out" >/dev/null ||
		die "$label does not build"
	nums=$(cd "$BUILD/logs" && "$out/perf" test list 2>&1 |
		awk '/^ *[0-9]+: (Perf map names for objects perf cannot read|perf map names for objects perf cannot read|Perf map symbols|Symbols|DSO data tests|PE file support)$/ { sub(/:.*/, ""); print $1 }')
	log=$BUILD/logs/bisect-$1.txt
	# shellcheck disable=SC2086
	(cd "$BUILD/logs" && PATH=$out:$PATH PERF_EXEC_PATH=$wt/tools/perf \
		timeout 900 "$out/perf" test $nums) >"$log" 2>&1 ||
		die "$label: perf test did not finish"
	"$TOP/scripts/perf-test-results.sh" <"$log" >"$log.results"
	grep -q '^fail' "$log.results" &&
		die "$label: $(grep '^fail' "$log.results" | cut -f2 | tr '\n' ';')"
	note "$label builds, $(grep -c '^ok' "$log.results") tests pass"
}

n=0
for c in $(git -C "$SRC" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	git -C "$wt" checkout -q --detach "$c"
	build_and_test "$n" "patch $n ($(git -C "$SRC" log -1 --format=%s "$c"))"
done
note "all $n prefixes of the series build and pass"

# Each topic as its mail series is applied: on the base with only its
# prerequisites, a tree no prefix of the series has.
for t in $(topics); do
	git -C "$wt" checkout -q --detach base
	while read -r p; do
		git -C "$wt" am -q "$TOP/patches/$p" >/dev/null 2>&1 ||
			die "topic $t: $p does not apply (make check's series-applies says more)"
	done < <(topic_stack "$t")
	build_and_test "$t" "topic $t"
done
note "every topic builds and passes on the base with its prerequisites"
