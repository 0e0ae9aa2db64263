#!/bin/bash
# make series SIGNOFF='Name <address>' [TOPIC=name]: each topic of
# patches/topics as the mail series it goes out as, in build/series/NAME:
# its commits applied to the base after its prerequisites', the sender as
# author with a Signed-off-by, its version from patches/topics, a cover
# letter from patches/cover/NAME.txt (results from bench/RESULTS.md, the
# changes since its last version from NAME.changes), the prerequisites'
# patch ids (git format-patch --base), recipients from get_maintainer.pl;
# checked with checkpatch (sign-offs required now) and with git am onto the
# base after the prerequisites.
#   TOPIC=name                      that topic only
#   PREFIX='PATCH perf-tools-next'  the subject prefix (default PATCH)
set -euo pipefail
STEP=series
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -n "${SIGNOFF:-}" ] || die "give the sender: make series SIGNOFF='Name <address>'"
name=$(printf '%s' "$SIGNOFF" | sed -n 's/^ *\(.*[^ ]\) *<\([^>]*@[^>]*\)> *$/\1/p')
email=$(printf '%s' "$SIGNOFF" | sed -n 's/^ *\(.*[^ ]\) *<\([^>]*@[^>]*\)> *$/\2/p')
[ -n "$name" ] && [ -n "$email" ] || die "SIGNOFF must look like 'Name <address>'"
prefix=${PREFIX:-PATCH}
if [ -n "${TOPIC:-}" ]; then
	[ -n "$(topic_field "$TOPIC" 2)" ] || die "no topic $TOPIC in patches/topics: $(topics | tr '\n' ' ')"
	want=$TOPIC
else
	want=$(topics)
fi

wt=$BUILD/series-tree
git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || rm -rf "$wt"
git -C "$SRC" worktree prune
git -C "$SRC" worktree add -q --detach "$wt" base
trap 'git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
cd "$wt"
# The sender's identity for the topic's commits only: the worktree shares
# the build tree's configuration.
export GIT_AUTHOR_NAME=$name GIT_COMMITTER_NAME=$name
export GIT_AUTHOR_EMAIL=$email GIT_COMMITTER_EMAIL=$email

# am_all FILE...: apply with git am, or fail naming the patch.
am_all() {
	local p
	for p in "$@"; do
		git am -q "$p" >/dev/null 2>&1 || { git am --abort >/dev/null 2>&1 || true
			die "$(basename "$p") does not apply"; }
	done
}

one_topic() {
	local t=$1 version cover changes out prereqs tip mbox recipients to cl left r
	local -a args own=() pre=() sent=()
	version=$(topic_field "$t" 2)
	prereqs=$(topic_field "$t" 4 | sed 's/^-$//')
	cover=$TOP/patches/cover/$t.txt
	changes=$TOP/patches/cover/$t.changes
	[ -f "$cover" ] || die "$t: no cover letter $cover"
	[ "$version" = 1 ] || [ -f "$changes" ] ||
		die "$t: a v$version needs $changes, the changes since v$((version - 1))"
	out=$BUILD/series/$t
	rm -rf "$out"

	git checkout -q --detach base
	mapfile -t own < <(topic_patches "$t")
	mapfile -t pre < <(topic_stack "$t" | head -n "-${#own[@]}")
	am_all "${pre[@]/#/$TOP/patches/}"
	tip=$(git rev-parse HEAD)
	am_all "${own[@]/#/$TOP/patches/}"
	git rebase -q --exec 'git commit -q --amend --no-edit --reset-author --signoff' "$tip" \
		>/dev/null 2>&1 || die "$t: cannot add the sign-off"

	mbox=$BUILD/series/$t.mbox
	mkdir -p "$BUILD/series"
	git format-patch -q --stdout "$tip..HEAD" >"$mbox" || die "$t: cannot write $mbox"
	# Not by keyword: words in the patches (riscv, bpf) would add lists the
	# series doesn't touch.
	recipients=$(perl scripts/get_maintainer.pl --no-tree --nogit --nogit-fallback \
		--norolestats --nokeywords "$mbox" 2>/dev/null) || die "get_maintainer.pl failed"
	to=$(printf '%s\n' "$recipients" | grep -i 'linux-perf-users@' | head -n 1)
	args=()
	[ -n "$to" ] && args+=(--to "$to")
	while read -r r; do
		[ -n "$r" ] && [ "$r" != "$to" ] && args+=(--cc "$r")
	done <<<"$recipients"

	# --base=base: the base commit and the prerequisites' patch ids; a
	# first version has no v1 in its subjects.
	[ "$version" = 1 ] || args+=(-v "$version")
	git format-patch -q --cover-letter --base=base --subject-prefix="$prefix" \
		--no-signature -o "$out" "${args[@]}" "$tip..HEAD"

	# The cover letter: our text for the *** placeholders, results from
	# RESULTS.md, the changelog below the ---.
	cl=$(ls "$out"/*0000-cover-letter.patch)
	python3 - "$cl" "$cover" "$TOP/bench/RESULTS.md" "$changes" "$version" <<'PY'
import os, re, sys
cl, cover, results, changes, version = sys.argv[1:6]
subject, body = open(cover).read().split("\n", 1)
res = open(results).read() if os.path.exists(results) else ""
def section(title):
    m = re.search(r"^## " + re.escape(title) + r".*?\n(.*?)(?=^## |\Z)", res, re.S | re.M)
    return m.group(1).strip() if m else "(not measured: run make bench)"
for key, title in (("@P1@", "P1"), ("@P2@", "P2"), ("@P3@", "P3"), ("@P5@", "P5"), ("@P6@", "P6")):
    body = body.replace(key, section(title))
if version != "1":
    body = body.rstrip() + "\n\n---\n" + open(changes).read()
s = open(cl).read()
s = s.replace("*** SUBJECT HERE ***", subject.strip())
s = s.replace("*** BLURB HERE ***", body.strip())
open(cl, "w").write(s)
PY
	# Nothing goes out with a placeholder left in it
	left=$(grep -l -E '@[A-Z][A-Z0-9_]*@|\*\*\* [A-Z ]+ \*\*\*' "$out"/*.patch || true)
	[ -z "$left" ] || die "$t: placeholders left unfilled in: $(echo "$left" | xargs -n1 basename | tr '\n' ' ')"
	printf '%s\n' "$recipients" >"$out/recipients.txt"
	for p in "$out"/*.patch; do
		case $p in *-cover-letter.patch) ;; *) basename "$p" ;; esac
	done >"$out/series"

	# Checked as sent: sign-offs present, everything else clean but the known notes.
	CHECKPATCH_BENIGN='FILE_PATH_CHANGES|SPDX_LICENSE_TAG' "$TOP/scripts/checkpatch.sh" "$out" |
		sed 's/^/  /' || die "$t: checkpatch complains about the mail series"
	git checkout -q --detach "$tip"
	mapfile -t sent <"$out/series"
	am_all "${sent[@]/#/$out/}"
	note "$t v$version: $(wc -l <"$out/series") patches and a cover letter in $out, on the base${prereqs:+ after $prereqs}"
}

for t in $want; do
	one_topic "$t"
done
note "send each with: git send-email build/series/NAME/*.patch  (or b4 send)"
