#!/bin/bash
# checkpatch.pl --strict --codespell from the base tree over every patch.
# Only these message types are known and benign, and are listed, not failed:
#   FILE_PATH_CHANGES  new files; perf's files are covered by MAINTAINERS
#                      entries by directory already
#   SPDX_LICENSE_TAG   perf's shell tests keep line 2 for their description,
#                      so the SPDX line can't be the second line
#   MISSING_SIGN_OFF   the repository carries no Signed-off-by; the sender's
#                      is added by 'make series SIGNOFF=...', which checks
#                      its output again with it
set -euo pipefail
STEP=checkpatch
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

benign=${CHECKPATCH_BENIGN:-'FILE_PATH_CHANGES|SPDX_LICENSE_TAG|MISSING_SIGN_OFF'}
cp=$SRC/scripts/checkpatch.pl
[ -x "$cp" ] || [ -f "$cp" ] || die "no checkpatch.pl in the base tree"
command -v codespell >/dev/null || die "codespell is missing (apt-get install codespell)"
# checkpatch.pl looks in /usr/share/codespell, then asks whatever python3 is
# first on PATH for codespell_lib: give it Debian's dictionary, or fail
# rather than check nothing ("No codespell typos will be found").
dict=${CODESPELL_DICT:-/usr/lib/python3/dist-packages/codespell_lib/data/dictionary.txt}
[ -f "$dict" ] || die "no codespell dictionary at $dict (apt-get install codespell)"

bad=0
dir=$(cd "${1:-$TOP/patches}" && pwd) || die "no folder ${1:-$TOP/patches}"
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	out=$(cd "$SRC" && perl "$cp" --strict --codespell --codespellfile="$dict" --show-types --no-tree --terse \
		"$dir/$p" 2>&1 || true)
	if printf '%s\n' "$out" | grep -q 'No codespell typos will be found'; then
		die "checkpatch.pl did not load the codespell dictionary $dict"
	fi
	other=$(printf '%s\n' "$out" | grep -E '(ERROR|WARNING|CHECK):' | grep -vE "($benign):" || true)
	known=$(printf '%s\n' "$out" | grep -E "($benign):" || true)
	[ -n "$known" ] && printf '%s\n' "$known" | sed "s|^$dir/|  known: |"
	if [ -n "$other" ]; then
		printf '%s\n' "$other" | sed "s|^$dir/|  |"
		bad=$((bad + 1))
	fi
done <"$dir/series"
[ "$bad" = 0 ] || die "$bad patches have checkpatch messages"
note "clean, but for the known notes listed"
