#!/bin/bash
# make install [PREFIX=/usr/local] [DESTDIR=]: the patched perf (built for
# PREFIX, with its tips and man pages: perf's own install) and mkdebugelf with
# its man page. perf is built again in build/install-perf, as the prefix is
# compiled in (where it finds tips.txt, its man pages and scripts).
set -euo pipefail
STEP=install
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
case "$prefix" in /*) ;; *) die "PREFIX must be an absolute path: $prefix" ;; esac
case "$destdir" in ''|/*) ;; *) destdir=$(pwd)/$destdir ;; esac
command -v asciidoc >/dev/null && command -v xmlto >/dev/null ||
	die "asciidoc and xmlto build perf's man pages: run make deps (as root) first"
# /usr/bin before any other python3: asciidoc runs with the system's
export PATH=/usr/lib/ccache:/usr/bin:$PATH
log=$BUILD/logs/install.log
mkdir -p "$BUILD/logs"
note "building perf for $prefix and installing it to ${destdir}$prefix (log: $log)"
mkdir -p "$BUILD/install-perf"
: >"$log"
# One goal at a time: perf's top Makefile runs each in a make of its own
for goal in install-bin install-man; do
	make -C "$SRC/tools/perf" O="$BUILD/install-perf" -j"$(nproc)" PYTHON=/usr/bin/python3 \
		NO_JEVENTS=0 LIBPERL=1 LIBUNWIND=1 NO_RUST=1 prefix="$prefix" DESTDIR="$destdir" \
		"$goal" >>"$log" 2>&1 || die "perf's make $goal failed, see $log"
done
# mkdebugelf's own install: the command and its man page
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" PREFIX="$prefix" DESTDIR="$destdir" install \
	>>"$log" 2>&1 || die "cannot build or install mkdebugelf, see $log"

root=$destdir$prefix
for f in bin/perf share/doc/perf-tip/tips.txt share/man/man1/perf-report.1 \
	 bin/mkdebugelf share/man/man1/mkdebugelf.1; do
	[ -s "$root/$f" ] || die "not installed: $root/$f"
done
grep -qF 'perf maps of other users' "$root/share/man/man1/perf-report.1" ||
	die "$root/share/man/man1/perf-report.1 is not the series' (--force does not name perf maps)"
note "installed $("$root/bin/perf" version) and $("$root/bin/mkdebugelf" --version) in $root"
# Installed where it runs from: perf finds its own man pages
if [ -z "$destdir" ] && command -v man >/dev/null; then
	"$root/bin/perf" help report 2>/dev/null | tr -s ' \n' '  ' | grep -q 'perf maps of other users' ||
		die "perf help report does not show the installed perf-report page"
	note "perf help config shows the series' page"
fi
