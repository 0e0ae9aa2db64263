#!/bin/bash
# Install the Debian packages the harness and a full-featured perf need.
# As root it installs what is missing; otherwise it prints the apt-get line.
set -euo pipefail
STEP=deps
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

PKGS="build-essential ccache git xz-utils pkg-config flex bison
libelf-dev libdw-dev libunwind-dev libslang2-dev libtraceevent-dev
libcap-dev libnuma-dev libzstd-dev liblzma-dev zlib1g-dev libperl-dev
python3-dev libbabeltrace2-dev libssl-dev systemtap-sdt-dev libpfm4-dev
libcapstone-dev libdebuginfod-dev clang libclang-rt-14-dev llvm lld
shellcheck codespell strace valgrind hyperfine time
gcc-mingw-w64-x86-64-win32 binutils-mingw-w64-x86-64 util-linux procps"
# Without their recommends (fonts, GUI, LaTeX): Wine only runs a test program,
# asciidoc and xmlto build the man pages make install installs.
PKGS_NORECOMMENDS="wine64 asciidoc-base xmlto docbook-xsl"
[ $# -gt 0 ] && PKGS="$PKGS $*"

missing='' missing_norec=''
for p in $PKGS $PKGS_NORECOMMENDS; do
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$s" = "install ok installed" ] && continue
	case " $PKGS_NORECOMMENDS " in
	*" $p "*) missing_norec="$missing_norec $p" ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing$missing_norec" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	die "missing packages; run as root: apt-get install -y$missing${missing_norec:+ && apt-get install -y --no-install-recommends$missing_norec}"
fi
note "installing:$missing$missing_norec"
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$BUILD"
install() {
	{ [ -z "$missing" ] || apt-get install -y -q $missing; } &&
	{ [ -z "$missing_norec" ] || apt-get install -y -q --no-install-recommends $missing_norec; }
}
if ! install >"$BUILD/apt.log" 2>&1; then
	apt-get update -q >>"$BUILD/apt.log" 2>&1 || die "apt-get update failed (no apt access?): see $BUILD/apt.log"
	install >>"$BUILD/apt.log" 2>&1 || die "apt-get install failed: $(tail -n 1 "$BUILD/apt.log")"
fi
