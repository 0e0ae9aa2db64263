#!/bin/bash
# make series SIGNOFF='Name <address>': the mail-ready series in build/series,
# from the build tree's commits, with the sender as author and Signed-off-by,
# a cover letter from patches/cover-letter.txt (the results from
# bench/RESULTS.md), recipients from get_maintainer.pl, checked with
# checkpatch (sign-offs required now) and with git am onto the base.
#   VERSION=2 CHANGELOG=FILE   a v2, its changelog below the cover's ---
#   PREFIX='PATCH perf-tools-next'  the subject prefix (default PATCH)
set -euo pipefail
STEP=series
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -n "${SIGNOFF:-}" ] || die "give the sender: make series SIGNOFF='Name <address>'"
name=$(printf '%s' "$SIGNOFF" | sed -n 's/^ *\(.*[^ ]\) *<\([^>]*@[^>]*\)> *$/\1/p')
email=$(printf '%s' "$SIGNOFF" | sed -n 's/^ *\(.*[^ ]\) *<\([^>]*@[^>]*\)> *$/\2/p')
[ -n "$name" ] && [ -n "$email" ] || die "SIGNOFF must look like 'Name <address>'"
version=${VERSION:-1}
prefix=${PREFIX:-PATCH}
cover=$TOP/patches/cover-letter.txt
[ -f "$cover" ] || die "no $cover"
if [ "$version" != 1 ] && [ ! -f "${CHANGELOG:-}" ]; then
	die "a v$version needs CHANGELOG=file with the changes since v$((version - 1))"
fi
# The script works in a worktree: a relative path is the caller's.
[ -z "${CHANGELOG:-}" ] || CHANGELOG=$(realpath "$CHANGELOG")

out=$BUILD/series
wt=$BUILD/series-tree
rm -rf "$out"
git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$wt" HEAD
trap 'git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT

cd "$wt"
# The sender's identity for these commits only: the worktree shares the
# build tree's configuration.
export GIT_AUTHOR_NAME=$name GIT_COMMITTER_NAME=$name
export GIT_AUTHOR_EMAIL=$email GIT_COMMITTER_EMAIL=$email
git rebase -q --exec 'git commit -q --amend --no-edit --reset-author --signoff' base >/dev/null 2>&1 ||
	die "cannot add the sign-off"

git format-patch -q --stdout base..HEAD >"$BUILD/series.mbox" ||
	die "cannot write $BUILD/series.mbox"
recipients=$(perl scripts/get_maintainer.pl --no-tree --nogit --nogit-fallback \
	--norolestats "$BUILD/series.mbox" 2>/dev/null) || die "get_maintainer.pl failed"
to=$(printf '%s\n' "$recipients" | grep -i 'linux-perf-users@' | head -n 1)
args=()
[ -n "$to" ] && args+=(--to "$to")
while read -r r; do
	[ -n "$r" ] && [ "$r" != "$to" ] && args+=(--cc "$r")
done <<<"$recipients"

git format-patch -q --cover-letter --base=base -v "$version" --subject-prefix="$prefix" \
	--no-signature -o "$out" "${args[@]}" base..HEAD

# The cover letter: our text for the *** placeholders, results from RESULTS.md.
cl=$(ls "$out"/*0000-cover-letter.patch)
python3 - "$cl" "$cover" "$TOP/bench/RESULTS.md" "${CHANGELOG:-}" "$version" <<'PY'
import re, sys
cl, cover, results, changelog, version = sys.argv[1:6]
text = open(cover).read()
subject, body = text.split("\n", 1)
res = open(results).read() if results else ""
def section(title):
    m = re.search(r"^## " + re.escape(title) + r".*?\n(.*?)(?=^## |\Z)", res, re.S | re.M)
    return m.group(1).strip() if m else "(not measured: run make bench)"
for key, title in (("@P1@", "P1"), ("@P2@", "P2"), ("@P3@", "P3"), ("@P5@", "P5")):
    body = body.replace(key, section(title))
s = open(cl).read()
s = s.replace("*** SUBJECT HERE ***", subject.strip())
if changelog:
    body = body.rstrip() + "\n\n---\nChanges since v%d:\n" % (int(version) - 1) + open(changelog).read()
s = s.replace("*** BLURB HERE ***", body.strip())
open(cl, "w").write(s)
PY
# Nothing goes out with a placeholder left in it
left=$(grep -l -E '@[A-Z][A-Z0-9_]*@' "$out"/*.patch || true)
[ -z "$left" ] || die "placeholders left unfilled in: $(echo $left | xargs -n1 basename | tr '\n' ' ')"
printf '%s\n' "$recipients" >"$out/recipients.txt"
for p in "$out"/*.patch; do
	case $p in *-cover-letter.patch) ;; *) basename "$p" ;; esac
done >"$out/series"

# Checked as sent: sign-offs present, everything else clean but the known notes.
CHECKPATCH_BENIGN='FILE_PATH_CHANGES|SPDX_LICENSE_TAG' "$TOP/scripts/checkpatch.sh" "$out" |
	sed 's/^/  /' || die "checkpatch complains about the mail series"
git checkout -q --detach base
for p in "$out"/*.patch; do
	case "$p" in *0000-cover-letter.patch) continue ;; esac
	git am -q "$p" || die "$(basename "$p") does not apply to the base"
done
note "v$version, $(wc -l <"$out/series") patches and a cover letter in $out"
note "send with: git send-email $out/*.patch  (or b4 send)"
