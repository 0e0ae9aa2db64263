#!/bin/bash
# Regenerate patches/ and patches/series from the commits on top of the base
# in the build tree. Stable names and no version/signature lines, so an
# unchanged series exports to identical files.
set -euo pipefail
STEP="export"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -d "$SRC/.git" ] || die "no build tree in $SRC"
cd "$SRC"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	die "uncommitted changes in $SRC: commit them first"
n=$(git rev-list --count base..HEAD)
[ "$n" -gt 0 ] || die "no commits on top of base in $SRC"

tmp=$(mktemp -d "$BUILD/export.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
git format-patch -q --no-signature --zero-commit --no-numbered \
	--subject-prefix=PATCH -o "$tmp" base..HEAD
(cd "$tmp" && ls -1 ./*.patch | sed 's|^\./||') >"$tmp/series"

changed=0
for f in "$tmp"/*.patch "$tmp/series"; do
	cmp -s "$f" "$TOP/patches/$(basename "$f")" || changed=$((changed + 1))
done
for f in "$TOP"/patches/*.patch; do
	[ -e "$f" ] || continue
	[ -e "$tmp/$(basename "$f")" ] || { rm -f "$f"; changed=$((changed + 1)); }
done
cp "$tmp"/*.patch "$tmp/series" "$TOP/patches/"

# The tree now matches patches/: record it, so apply-series leaves it alone.
series_id=$(series_id)
echo "$series_id $(git rev-parse HEAD)" >.git/series-applied
note "exported $n patches ($changed files changed)"
