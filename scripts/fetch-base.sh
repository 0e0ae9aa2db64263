#!/bin/bash
# Fetch Debian's linux-source-7.3 (suite trixie-backports) through an apt
# configuration of our own under build/apt (the system's apt setup is only
# read, to find its Debian mirror), extract the part of the tree perf needs,
# and make it a git repository whose first commit (tag "base") is pristine.
#
# Usage: scripts/fetch-base.sh          (BASE_VERSION=... pins another version)
set -euo pipefail
STEP=fetch-base
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PKG=linux-source-7.3
SUITE=trixie-backports
PIN=7.3.4-1~bpo13+1
CACHE=$BUILD/cache
APT=$BUILD/apt
mkdir -p "$CACHE"

command -v dpkg-deb >/dev/null || die "dpkg-deb not found: this harness needs Debian"

# The Debian mirror the system's apt sources name (not its security archive).
mirror() {
	{
		awk '/^URIs:/ { u = $2 } /^Suites:/ { s = $0 }
		     /^$/ { if (u != "" && s !~ /-security/) print u; u = ""; s = "" }
		     END { if (u != "" && s !~ /-security/) print u }' \
			/etc/apt/sources.list.d/*.sources 2>/dev/null
		awk '$1 == "deb" && $3 !~ /-security/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/) { print $i; break } }' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null
	} | grep -m1 '/debian/\?$' || true
}

# aptx apt-get|apt-cache ARGS...: with our sources, lists, cache and status.
aptx() {
	local cmd=$1
	shift
	"$cmd" -q -o Dir::Etc::SourceList="$APT/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" \
		-o Dir::State::Status="$APT/status" "$@"
}

# A cached .deb of the wanted version needs no apt at all.
want=${BASE_VERSION:-$PIN}
deb=$CACHE/${PKG}_${want}_all.deb
if [ -f "$SRC/.git/base-version" ] && [ "$(cat "$SRC/.git/base-version")" = "$want" ]; then
	note "base tree $PKG $want already extracted in $SRC"
	exit 0
fi

if ! dpkg-deb --info "$deb" >/dev/null 2>&1; then
	rm -f "$deb"
	url=$(mirror)
	[ -n "$url" ] || die "no Debian mirror found in /etc/apt/sources.list{,.d}"
	mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
	: >"$APT/status"
	echo "deb $url $SUITE main" >"$APT/sources.list"
	note "apt-get update of $SUITE from $url (private lists in $APT)"
	aptx apt-get update >"$APT/update.log" 2>&1 ||
		die "apt-get update of $SUITE failed: $(grep -m1 '^[EW]:' "$APT/update.log" || tail -n 1 "$APT/update.log")"
	versions=$(aptx apt-cache show "$PKG" 2>/dev/null | sed -n 's/^Version: //p' | sort -V || true)
	if ! printf '%s\n' "$versions" | grep -qxF "$want"; then
		[ -n "${BASE_VERSION:-}" ] && die "$PKG=$want is not in $SUITE (it has: $(echo $versions))"
		want=$(for p in $(aptx apt-cache pkgnames linux-source-7.); do aptx apt-cache show "$p"; done 2>/dev/null |
			awk '/^Package:/ { p = $2 } /^Version:/ { print $2 "\t" p }' | sort -V | tail -n 1 || true)
		[ -n "$want" ] || die "no linux-source-7.x in $SUITE"
		PKG=${want#*$'\t'} want=${want%$'\t'*}
		note "pinned $PIN is gone from $SUITE; using the newest 7.x it has: $PKG $want"
		deb=$CACHE/${PKG}_${want}_all.deb
	fi
	note "downloading $PKG=$want"
	(cd "$CACHE" && aptx apt-get download "$PKG=$want" >"$APT/download.log" 2>&1) ||
		die "apt-get download $PKG=$want failed: $(tail -n 1 "$APT/download.log")"
	# Debian writes the epoch-less version with "~" and "+" as they are.
	[ -f "$deb" ] || deb=$(ls -1 "$CACHE/${PKG}_"*"_all.deb" | sort -V | tail -n 1)
	dpkg-deb --info "$deb" >/dev/null 2>&1 || { rm -f "$deb"; die "$deb is corrupt or partial; removed it, run again"; }
fi
version=$(dpkg-deb -f "$deb" Version)
PKG=$(dpkg-deb -f "$deb" Package)
note "using $PKG $version"

tmp=$BUILD/src.tmp
rm -rf "$tmp" "$SRC" "$SRC_BASE"
mkdir -p "$tmp"
tarball=$tmp/linux-source.tar.xz
dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$PKG.tar.xz" >"$tarball" ||
	die "cannot unpack $deb"

top=$PKG
tar -xJf "$tarball" -O "$top/tools/perf/MANIFEST" >"$tmp/MANIFEST" ||
	die "no tools/perf/MANIFEST in $deb"

# What perf's MANIFEST lists, plus what "make kernelversion" (used for
# "perf version"), checkpatch.pl and get_maintainer.pl need; each path once
# (tar fails on a member named twice).
{
	sed "s|^|$top/|" "$tmp/MANIFEST"
	for f in Makefile MAINTAINERS COPYING .get_maintainer.ignore \
		scripts/Kbuild.include scripts/subarch.include \
		'scripts/Makefile*' 'arch/x86/Makefile*' \
		scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch scripts/get_maintainer.pl; do
		echo "$top/$f"
	done
} | awk 'NF && !seen[$0]++' >"$tmp/list"
mkdir -p "$tmp/tree"
tar -xJf "$tarball" -C "$tmp/tree" --strip-components=1 --wildcards \
	-T "$tmp/list" 2>"$tmp/tar.err" || {
	# .get_maintainer.ignore may be absent in some versions; anything else is fatal.
	grep -v 'get_maintainer.ignore\|Exiting with failure' "$tmp/tar.err" | grep -q . &&
		die "extracting the perf tree failed: $(head -n 3 "$tmp/tar.err")"
}
rm -f "$tarball"

cd "$tmp/tree"
git init -q -b base-tree .
git config user.name "perf-fallback harness"
git config user.email "harness@localhost"
git config core.autocrlf false
git add -A -f .
git commit -q -m "Debian $PKG $version (perf subset)" \
	-m "Extracted from the $PKG $version .deb: the files tools/perf/MANIFEST lists plus the top-level Makefile, MAINTAINERS and checkpatch/get_maintainer."
git tag -f base >/dev/null
echo "$version" >.git/base-version
cd "$BUILD"
mv "$tmp/tree" "$SRC"
rm -rf "$tmp"
note "extracted $(git -C "$SRC" ls-files | wc -l) files into $SRC, tagged 'base'"
