#!/bin/bash
# Build perf from a tree into an output folder, with ccache.
# Usage: scripts/build-perf.sh SRC_TREE OUT_DIR [extra make args...]
set -euo pipefail
STEP=build-perf
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tree=$1 out=$2
shift 2
mkdir -p "$out"
STEP="build-perf $(basename "$out")"

# ccache keeps its own cache (~/.cache/ccache unless CCACHE_DIR is set), so
# fresh clones on the same machine build fast; nothing depends on it.
export CCACHE_BASEDIR=$BUILD
export PATH=/usr/lib/ccache:$PATH

# Nothing changed since the last good build (same commit, same uncommitted
# diff and new files, same arguments): skip perf's make, whose no-op run still takes
# seconds of feature checks and version regeneration. The shell tests are
# copied either way.
stamp=$( { git -C "$tree" rev-parse HEAD; git -C "$tree" diff HEAD; echo "$*"
	git -C "$tree" ls-files -z --others --exclude-standard | (cd "$tree" && xargs -0r cat); } | sha1sum)

# perf test looks for shell tests in tests/shell next to its binary, which an
# O= build only fills with shellcheck logs: copy the scripts there, dropping
# those of an earlier tree first (bisect-check builds older trees in one O=).
copy_shell_tests() {
	mkdir -p "$out/tests/shell"
	find "$out/tests/shell" -name '*.sh' -type f -delete
	cp -a "$tree/tools/perf/tests/shell/." "$out/tests/shell/"
}

if [ -x "$out/perf" ] && [ "$(cat "$out/.harness-stamp" 2>/dev/null)" = "$stamp" ]; then
	copy_shell_tests
	note "unchanged: $("$out/perf" version) -> $out/perf"
	exit 0
fi
rm -f "$out/.harness-stamp"

log=$out/build.log
# libbfd stays off (no BUILD_NONDISTRO), as in distributions' perf. perl and
# libunwind are opt-in since 7.x. NO_RUST: perf would build a Rust test
# workload with whatever rustc is on PATH, whose objects GNU ar's LLVM plugin
# rejects here ("LLVM ERROR: Invalid encoding").
if ! make -C "$tree/tools/perf" O="$out" -j"$(nproc)" \
	PYTHON=/usr/bin/python3 NO_JEVENTS=0 LIBPERL=1 LIBUNWIND=1 NO_RUST=1 "$@" >"$log" 2>&1; then
	grep -m 5 -E 'error|Error' "$log" >&2 || tail -n 5 "$log" >&2
	die "make failed, full log in $log"
fi
copy_shell_tests
"$out/perf" version >/dev/null || die "$out/perf does not run"
echo "$stamp" >"$out/.harness-stamp"
note "$("$out/perf" version) -> $out/perf"
