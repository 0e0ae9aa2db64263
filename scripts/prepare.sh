#!/bin/bash
# Bring the build trees up to date: the pristine base (tag "base", checked
# out as a worktree in build/src-base) and the patched tree (build/src).
set -euo pipefail
STEP=prepare
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/fetch-base.sh"
"$TOP/scripts/apply-series.sh"

if [ ! -f "$SRC_BASE/.git" ]; then
	rm -rf "$SRC_BASE"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$SRC_BASE" base ||
		die "cannot check out the base tree in $SRC_BASE"
fi
[ "$(git -C "$SRC_BASE" rev-parse HEAD)" = "$(git -C "$SRC" rev-parse base)" ] ||
	git -C "$SRC_BASE" checkout -q --detach base
