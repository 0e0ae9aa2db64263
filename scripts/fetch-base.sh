#!/bin/bash
# Fetch Debian's linux-source-6.12, extract the part of the tree perf needs,
# and make it a git repository whose first commit (tag "base") is pristine.
#
# Usage: scripts/fetch-base.sh          (BASE_VERSION=... pins a version)
set -euo pipefail
STEP=fetch-base
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PKG=linux-source-6.12
CACHE=$BUILD/cache
mkdir -p "$CACHE"

command -v dpkg-deb >/dev/null || die "dpkg-deb not found: this harness needs Debian"

version=${BASE_VERSION:-}
if [ -z "$version" ]; then
	version=$(apt-cache policy "$PKG" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	[ "$version" = "(none)" ] && version=
fi
if [ -z "$version" ]; then
	# No apt lists: fall back to the newest cached download.
	deb=$(ls -1 "$CACHE"/"${PKG}"_*_all.deb 2>/dev/null | sort -V | tail -n 1 || true)
	[ -n "$deb" ] || die "no version of $PKG known to apt (run apt-get update) and none cached in $CACHE"
	version=$(dpkg-deb -f "$deb" Version)
fi

# Debian writes "1:..." epochs as "1%3a" in file names; this package has none.
deb=$CACHE/${PKG}_${version}_all.deb

if [ -f "$SRC/.git/base-version" ] && [ "$(cat "$SRC/.git/base-version")" = "$version" ]; then
	note "base tree $PKG $version already extracted in $SRC"
	exit 0
fi

if ! dpkg-deb --info "$deb" >/dev/null 2>&1; then
	rm -f "$deb"
	note "downloading $PKG=$version"
	(cd "$CACHE" && apt-get download -q "$PKG=$version" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	[ -f "$deb" ] || die "apt-get download $PKG=$version failed (no apt access? run apt-get update)"
	dpkg-deb --info "$deb" >/dev/null 2>&1 || { rm -f "$deb"; die "$deb is corrupt or partial; removed it, run again"; }
fi
note "using $PKG $version"

tmp=$BUILD/src.tmp
rm -rf "$tmp" "$SRC" "$SRC_BASE"
mkdir -p "$tmp"
tarball=$tmp/linux-source.tar.xz
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/$PKG.tar.xz >"$tarball" ||
	die "cannot unpack $deb"

top=$PKG
tar -xJf "$tarball" -O "$top/tools/perf/MANIFEST" >"$tmp/MANIFEST" ||
	die "no tools/perf/MANIFEST in $deb"

# What perf's MANIFEST lists, plus what "make kernelversion" (used for
# "perf version"), checkpatch.pl and get_maintainer.pl need.
{
	sed "s|^|$top/|" "$tmp/MANIFEST"
	for f in Makefile MAINTAINERS COPYING .get_maintainer.ignore \
		scripts/Kbuild.include scripts/subarch.include \
		'scripts/Makefile*' 'arch/x86/Makefile*' \
		scripts/checkpatch.pl scripts/spelling.txt \
		scripts/const_structs.checkpatch scripts/get_maintainer.pl; do
		echo "$top/$f"
	done
} >"$tmp/list"
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
