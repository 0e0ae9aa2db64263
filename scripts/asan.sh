#!/bin/bash
# Build the patched perf with clang and -fsanitize=address,undefined (objects
# also instrumented for libFuzzer, so fuzz/ can link them), in build/asan, and
# run the series' perf tests with it, PE file support included: any sanitizer
# report fails.
set -euo pipefail
STEP=asan
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out=$BUILD/asan
# ccache doesn't hash the ignorelist's content: name the copy after it.
ign=$TOP/fuzz/coverage-ignorelist.txt
ign_copy=$BUILD/coverage-ignorelist.$(sha1sum <"$ign" | cut -c1-12).txt
cp "$ign" "$ign_copy"
# UBSan's pointer-overflow check is off: stock perf's strpbrk_esc()
# (util/string.c) computes NULL + 1 when no stop character is found, which
# perf record trips; the value is never used.
san="-fsanitize=address,undefined -fno-sanitize=pointer-overflow -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
"$TOP/scripts/build-perf.sh" "$SRC" "$out" CC=clang HOSTCC=clang \
	EXTRA_CFLAGS="$san -fsanitize=fuzzer-no-link -g -O1 -fsanitize-coverage-ignorelist=$ign_copy" \
	LDFLAGS="$san" \
	NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 WERROR=0 V=1
# The libraries perf was linked with, for the fuzzer (kept when perf was not
# relinked this time).
link=$(grep -E -- "-o $out/perf\$" "$out/build.log" | head -n 1 || true)
if [ -n "$link" ]; then
	printf '%s\n' "$link" | sed 's/.*--no-whole-archive//; s/ -o .*//' >"$out/link-libs"
fi
[ -s "$out/link-libs" ] || die "cannot find perf's link line in $out/build.log"
# The HAVE_* macros perf's objects were built with: they change the layout of
# structs (struct perf_env) that the fuzzer shares with them.
cc=$(grep -m 1 -E -- "-o $out/util/symbol.o( |\$)" "$out/build.log" || true)
if [ -n "$cc" ]; then
	printf '%s\n' "$cc" | tr ' ' '\n' | grep -E '^-DHAVE_' >"$out/feature-defines" || true
fi
[ -s "$out/feature-defines" ] || die "cannot find the compile line of util/symbol.o in $out/build.log"

[ "${1:-}" = --build-only ] && exit 0

log=$BUILD/logs/asan-tests.txt
mkdir -p "$BUILD/logs"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
nums=$(cd "$BUILD/logs" && "$out/perf" test list 2>&1 |
	awk '/^ *[0-9]+: (Perf map names for objects perf cannot read|perf map names for objects perf cannot read|Perf map symbols|PE file support)$/ { sub(/:.*/, ""); print $1 }')
[ -n "$nums" ] || die "the series' tests are missing from 'perf test list'"
# PERF_EXEC_PATH: where "PE file support" finds its tests/pe-file.exe and
# pe-file.exe.debug (./tests, else the exec path's, none in an O= build);
# without them its first case skips.
# shellcheck disable=SC2086
(cd "$BUILD/logs" && PATH=$out:$PATH PERF_EXEC_PATH=$SRC/tools/perf \
	timeout 900 "$out/perf" test -v $nums) >"$log" 2>&1 ||
	die "perf test did not finish (see $log)"
if grep -E -q 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$log"; then
	grep -E -m 3 'ERROR: AddressSanitizer|runtime error:' "$log" >&2
	die "sanitizer reports (see $log)"
fi
"$TOP/scripts/perf-test-results.sh" <"$log" >"$log.results"
grep -q '^fail' "$log.results" && die "tests failed under ASan/UBSan (see $log)"
grep -q '^skip	PE file support' "$log.results" && die "PE file support skipped a case (see $log)"
grep -q "^ok	PE file support / An image and its debug file\$" "$log.results" ||
	die "PE file support did not read perf's test image and debug file (see $log)"
note "$(grep -c '^ok' "$log.results") tests pass under ASan and UBSan, no sanitizer report"
