#!/bin/bash
# Apply patches/ in "series" order on top of the pristine base with git am.
# A tree whose commits already match patches/ is left alone, so work
# committed in the build tree but not yet exported is never thrown away.
set -euo pipefail
STEP=apply-series
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "no build tree in $SRC: run scripts/fetch-base.sh"
cd "$SRC"
git config user.name >/dev/null || git config user.name "perf-fallback harness"
git config user.email >/dev/null || git config user.email "harness@localhost"

series_id=$(series_id)
stamp=.git/series-applied

if [ -f "$stamp" ]; then
	read -r applied_id applied_head <"$stamp"
	if [ "$applied_id" = "$series_id" ]; then
		note "series already applied ($(git rev-list --count base..HEAD) commits on base)"
		exit 0
	fi
	if [ "$(git rev-parse HEAD)" != "$applied_head" ] || [ -n "$(git status --porcelain)" ]; then
		die "patches/ changed, but $SRC has work that is not exported: 'make export' it or 'make reset' to drop it"
	fi
fi

if [ ! -f "$stamp" ] && [ "$(git rev-parse HEAD)" != "$(git rev-parse base)" ]; then
	die "$SRC has commits on base that did not come from patches/: 'make export' them or 'make reset' to drop them"
fi
git am --abort >/dev/null 2>&1 || true
git checkout -q -B series base
git reset -q --hard base
n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$TOP/patches/$p" ] || die "series names $p, which is not in patches/"
	if ! git am -q --whitespace=nowarn "$TOP/patches/$p" >/dev/null 2>"$BUILD/am.err"; then
		git am --abort >/dev/null 2>&1 || true
		die "patch $p does not apply: $(grep -m1 -i 'error\|patch failed' "$BUILD/am.err" || head -n1 "$BUILD/am.err")"
	fi
	n=$((n + 1))
done <"$TOP/patches/series"
echo "$series_id $(git rev-parse HEAD)" >"$stamp"
note "applied $n patches on base $(cat .git/base-version)"
