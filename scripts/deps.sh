#!/bin/bash
# Install the Debian packages the harness and a full-featured perf need.
# As root it installs what is missing; otherwise it prints the apt-get line.
set -euo pipefail
STEP=deps
. "$(dirname "$0")/lib.sh"

PKGS="build-essential ccache git xz-utils pkg-config flex bison
libelf-dev libdw-dev libunwind-dev libslang2-dev libtraceevent-dev
libcap-dev libnuma-dev libzstd-dev liblzma-dev zlib1g-dev libperl-dev
python3-dev libbabeltrace-dev libssl-dev systemtap-sdt-dev libpfm4-dev
libcapstone-dev libdebuginfod-dev clang llvm lld
shellcheck codespell strace valgrind hyperfine time
gcc-mingw-w64-x86-64-win32 binutils-mingw-w64-x86-64 util-linux procps"
[ $# -gt 0 ] && PKGS="$PKGS $*"

missing=
for p in $PKGS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$s" = "install ok installed" ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	die "missing packages; run as root: apt-get install -y$missing"
fi
note "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q $missing >"$BUILD/apt.log" 2>&1; then
	apt-get update -q >>"$BUILD/apt.log" 2>&1 || die "apt-get update failed (no apt access?): see $BUILD/apt.log"
	apt-get install -y -q $missing >>"$BUILD/apt.log" 2>&1 ||
		die "apt-get install failed: $(tail -n 1 "$BUILD/apt.log")"
fi
