#!/bin/bash
# make install [PREFIX=/usr/local] [DESTDIR=]: the patched perf that make
# built in build/patched, with its tips and man pages (perf's own install run
# in that build), and mkdebugelf with its man page. perf compiles the prefix
# into perf.o (where it finds tips.txt, its man pages and scripts; with
# PREFIX=/usr also the /etc/perfconfig path into config.o and a few others):
# those objects alone are compiled again and perf relinked, so build/patched/perf
# is then the installed perf. Any other object compiled again fails the install.
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
out=$BUILD/patched
mkdir -p "$BUILD/logs"
[ -x "$out/perf" ] || die "no perf in $out: run make first"
note "installing $out/perf for $prefix to ${destdir}$prefix (log: $log)"
: >"$log"
# The objects' modification times, to tell what perf's make compiled again
objects() { find "$out" -name '*.o' -printf '%P %T@\n' | sort; }
objects >"$log.before"
built_for=$(sed -n 's/^prefix_SQ=//p' "$out/.config-detected" 2>/dev/null)
# build-perf.sh's arguments, and the prefix. One goal at a time: perf's top
# Makefile runs each in a make of its own.
for goal in install-bin install-man; do
	make -C "$SRC/tools/perf" O="$out" -j"$(nproc)" PYTHON=/usr/bin/python3 \
		NO_JEVENTS=0 LIBPERL=1 LIBUNWIND=1 NO_RUST=1 prefix="$prefix" DESTDIR="$destdir" \
		"$goal" >>"$log" 2>&1 || die "perf's make $goal failed, see $log"
done
# Compiled again: what compiles in an install path, else build/patched was not
# what make built (run make) or perf's build changed
objects >"$log.after"
total=$(wc -l <"$log.after")
again=$(comm -13 "$log.before" "$log.after" | cut -d' ' -f1)
compiled='' relinked=''
for o in $again; do
	cmd=$out/$(dirname "$o")/.$(basename "$o").cmd
	if grep -qE -- '-DPREFIX=|-DETC_PERFCONFIG=' "$cmd" 2>/dev/null; then
		compiled="$compiled $o"
	elif grep -qE -- '(^|[ /-])ld .*-r -o ' "$cmd" 2>/dev/null; then
		relinked="$relinked $o"
	else
		die "perf's install compiled $o again, which has no install path in it: the tree is newer than $out (run make; if it says unchanged, files were rewritten as they were: rm $out/.harness-stamp, make) (log: $log)"
	fi
done
[ -n "$compiled" ] || [ "$prefix" = "$built_for" ] ||
	die "perf was built for ${built_for:-an unknown prefix}, yet nothing was compiled again for $prefix (log: $log)"
if [ -n "$again" ]; then
	note "$(echo "$again" | wc -l) of $total objects built again: compiled$compiled (install paths), relinked${relinked:- none}"
else
	note "none of $total objects built again (built for $prefix already)"
fi
rm -f "$log.before" "$log.after"
# mkdebugelf's own install: the command and its man page
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" PREFIX="$prefix" DESTDIR="$destdir" install \
	>>"$log" 2>&1 || die "cannot build or install mkdebugelf, see $log"

root=$destdir$prefix
for f in bin/perf share/doc/perf-tip/tips.txt share/man/man1/perf-report.1 \
	 bin/mkdebugelf share/man/man1/mkdebugelf.1; do
	[ -s "$root/$f" ] || die "not installed: $root/$f"
done
cmp -s "$root/bin/perf" "$out/perf" || die "$root/bin/perf is not $out/perf"
grep -qF 'perf maps of other users' "$root/share/man/man1/perf-report.1" ||
	die "$root/share/man/man1/perf-report.1 is not the series' (--force does not name perf maps)"
note "installed $("$root/bin/perf" version) and $("$root/bin/mkdebugelf" --version) in $root"
# Installed where it runs from: perf finds its own man pages
if [ -z "$destdir" ] && command -v man >/dev/null; then
	"$root/bin/perf" help report 2>/dev/null | tr -s ' \n' '  ' | grep -q 'perf maps of other users' ||
		die "perf help report does not show the installed perf-report page"
	note "perf help report shows the series' page"
fi
