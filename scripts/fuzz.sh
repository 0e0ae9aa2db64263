#!/bin/bash
# libFuzzer with ASan and UBSan on the parsers of hostile input:
#   perf_map: the perf map fallback, linked against build/asan's perf objects
#   pe:       mkdebugelf's PE reader
#   r2r:      mkdebugelf's .NET ReadyToRun reader (and ECMA-335 metadata)
# Usage: scripts/fuzz.sh [RUNS]   (default 100000 executions each)
# Seeds are fuzz/corpus/*; new inputs go to build/fuzz, never into the repo.
set -euo pipefail
STEP=fuzz
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

runs=${1:-100000}
asan=$BUILD/asan
out=$BUILD/fuzz
mkdir -p "$out"
[ -x "$asan/perf" ] || die "no ASan perf: run make asan first"
san="-fsanitize=fuzzer,address,undefined -fno-sanitize=pointer-overflow -fno-sanitize-recover=undefined -g -O1"
perf=$SRC/tools/perf

# perf's own objects and the libraries its build linked them with.
[ -s "$asan/link-libs" ] || die "no $asan/link-libs: run make asan again"
[ -s "$asan/feature-defines" ] || die "no $asan/feature-defines: run make asan again"
syslibs=$(cat "$asan/link-libs")
defines=$(cat "$asan/feature-defines")
libbpf=
[ -f "$asan/libbpf/libbpf.a" ] && libbpf=$asan/libbpf/libbpf.a

build() {
	local name=$1
	shift
	clang $san "$@" -o "$out/$name" 2>"$out/$name.build.log" ||
		die "cannot build the $name fuzzer: $(grep -m1 -E 'error|undefined' "$out/$name.build.log")"
}

build pe "$TOP/fuzz/pe_fuzz.c" "$TOP/mkdebugelf/pe.c"
build r2r "$TOP/fuzz/r2r_fuzz.c" "$TOP/mkdebugelf/pe.c" "$TOP/mkdebugelf/r2r.c"
# util/ refers to the builtins: link them too, with perf's main() renamed so
# libFuzzer's is the one.
objcopy --redefine-sym main=perf_main "$asan/perf-in.o" "$out/perf-in-nomain.o" ||
	die "cannot rename main in $asan/perf-in.o"
# shellcheck disable=SC2086
build perf_map -D_GNU_SOURCE $defines -I"$perf" -I"$perf/util" -I"$perf/lib/perf/include" \
	-I"$SRC/tools/lib/perf/include" -I"$SRC/tools/include" -I"$SRC/tools/arch/x86/include" \
	-I"$SRC/tools/lib" -I"$asan" -I"$asan/util" \
	"$TOP/fuzz/perf_map_fuzz.c" "$out/perf-in-nomain.o" \
	-Wl,--start-group "$asan/libperf-util.a" "$asan/libperf-ui.a" "$asan/libperf-test.a" \
	"$asan/libperf-bench.a" "$asan/libpmu-events.a" "$asan/libperf/libperf.a" \
	"$asan/libapi/libapi.a" "$asan/libsubcmd/libsubcmd.a" "$asan/libsymbol/libsymbol.a" \
	${libbpf:+"$libbpf"} -Wl,--end-group $syslibs

export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fail=0
for name in perf_map pe r2r; do
	work=$out/corpus-$name
	mkdir -p "$work"
	log=$out/$name.log
	rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-*
	if ! (cd "$out" && "./$name" -runs="$runs" -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 "$work" "$TOP/fuzz/corpus/$name") >"$log" 2>&1; then
		note "$name: FAILED, see $log: $(grep -m1 -E 'ERROR|runtime error|deadly' "$log")"
		fail=1
		continue
	fi
	done_runs=$(grep -o 'Done [0-9]* runs' "$log" | awk '{ print $2 }')
	note "$name: $done_runs executions, 0 crashes, $(grep -o 'cov: [0-9]*' "$log" | tail -n 1) edges$(sed -n 's/^perf_map_fuzz: \([0-9]*\) lookups.*/, \1 lookups named a symbol/p' "$log")"
done
[ "$fail" = 0 ] || die "the fuzzers found crashes (inputs in $out)"
