#!/bin/bash
# The series in patches/ applies with git am, without fuzz, onto a fresh
# checkout of the base, and gives exactly the tree that was built; each
# topic of patches/topics applies to the base with only its prerequisites.
set -euo pipefail
STEP=verify-series
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

wt=$BUILD/verify-series
mkdir -p "$BUILD/logs"
git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$wt" base
trap 'git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT

n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	if ! git -C "$wt" am -q "$TOP/patches/$p" >"$BUILD/logs/verify-am.log" 2>&1; then
		die "$p does not apply to base: $(head -n 1 "$BUILD/logs/verify-am.log")"
	fi
	n=$((n + 1))
done <"$TOP/patches/series"

want=$(git -C "$SRC" rev-parse 'HEAD^{tree}')
got=$(git -C "$wt" rev-parse 'HEAD^{tree}')
[ "$want" = "$got" ] || die "patches/ differ from the build tree's commits: run 'make export'"
note "$n patches apply to base and match the build tree"

# Every patch in exactly one topic, and each topic alone on the base with
# its prerequisites, as its mail series will be applied.
in_topics=$(for t in $(topics); do topic_patches "$t"; done | sort)
[ "$in_topics" = "$(grep -v -e '^#' -e '^$' "$TOP/patches/series" | sort)" ] ||
	die "patches/topics does not name every patch of the series exactly once"
for t in $(topics); do
	git -C "$wt" checkout -q --detach base
	while read -r p; do
		if ! git -C "$wt" am -q "$TOP/patches/$p" >"$BUILD/logs/verify-am.log" 2>&1; then
			git -C "$wt" am --abort >/dev/null 2>&1 || true
			die "topic $t: $p does not apply to base with $(topic_field "$t" 4)"
		fi
	done < <(topic_stack "$t")
	note "topic $t: $(topic_patches "$t" | wc -l) patches apply to base with prerequisites $(topic_field "$t" 4)"
done
