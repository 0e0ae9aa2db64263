#!/bin/bash
# libFuzzer with ASan and UBSan on the parsers of hostile input:
#   perf_map: the perf map fallback, linked against build/asan's perf objects
#   perf_pe:  perf's PE reader (util/pe.c), linked the same way, seeded with
#             perf's own test image and debug file, DLLs mkpe.py and
#             mingw-w64 write here, and the pe and r2r seeds
#   pe:       mkdebugelf's PE reader
#   r2r:      mkdebugelf's .NET ReadyToRun reader (and ECMA-335 metadata)
#   pdb:      mkdebugelf's PDB reader, seeded with a PDB lld-link writes here
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
build r2r "$TOP/fuzz/r2r_fuzz.c" "$TOP/mkdebugelf/pe.c" "$TOP/mkdebugelf/r2r.c" \
	"$TOP/mkdebugelf/r2r_md.c" "$TOP/mkdebugelf/r2r_sig.c"
build pdb "$TOP/fuzz/pdb_fuzz.c" "$TOP/mkdebugelf/pe.c" "$TOP/mkdebugelf/pdb.c"

# A real PDB to start from: a PDB is 4 KiB blocks, too big to keep in the
# repo as a seed, and a fuzzer won't find its way to the MSF magic alone.
seed_pdb=$out/seed-pdb
mkdir -p "$seed_pdb"
if [ ! -s "$seed_pdb/seed.pdb" ]; then
	printf 'static int f(int x) { return x + 1; }\nint main(void) { return f(0); }\n' \
		>"$out/seed.c"
	clang --target=x86_64-w64-mingw32 -g -gcodeview -fuse-ld=lld \
		-L"$(dirname "$(x86_64-w64-mingw32-gcc -print-libgcc-file-name)")" \
		-Wl,--pdb="$seed_pdb/seed.pdb" -o "$out/seed.exe" "$out/seed.c" >"$out/seed.log" 2>&1 ||
		note "pdb: no seed PDB (clang, lld or mingw-w64 missing): $(head -n 1 "$out/seed.log")"
fi
# util/ refers to the builtins: link them too, with perf's main() renamed so
# libFuzzer's is the one.
objcopy --redefine-sym main=perf_main "$asan/perf-in.o" "$out/perf-in-nomain.o" ||
	die "cannot rename main in $asan/perf-in.o"
# build_perf NAME SOURCE: a fuzzer of perf's code, linked with its objects.
build_perf() {
	# shellcheck disable=SC2086
	build "$1" -D_GNU_SOURCE $defines -I"$perf" -I"$perf/util" -I"$perf/lib/perf/include" \
		-I"$SRC/tools/lib/perf/include" -I"$SRC/tools/include" -I"$SRC/tools/arch/x86/include" \
		-I"$SRC/tools/lib" -I"$asan" -I"$asan/util" \
		"$2" "$out/perf-in-nomain.o" \
		-Wl,--start-group "$asan/libperf-util.a" "$asan/libperf-ui.a" "$asan/libperf-test.a" \
		"$asan/libperf-bench.a" "$asan/libpmu-events.a" "$asan/libperf/libperf.a" \
		"$asan/libapi/libapi.a" "$asan/libsubcmd/libsubcmd.a" "$asan/libsymbol/libsymbol.a" \
		${libbpf:+"$libbpf"} -Wl,--end-group $syslibs
}
build_perf perf_map "$TOP/fuzz/perf_map_fuzz.c"
build_perf perf_pe "$TOP/fuzz/perf_pe_fuzz.c"

# perf_pe's seeds beyond fuzz/corpus/perf_pe (perf test's crafted DLL): PE
# files too big to keep in the repo, or that tools here write. perf's test
# image is also the image the fuzzer loads each input as the debug file of.
seed_pe=$out/seed-perf_pe
mkdir -p "$seed_pe"
cp "$perf/tests/pe-file.exe" "$perf/tests/pe-file.exe.debug" "$seed_pe/" ||
	die "no perf test image in $perf/tests"
python3 "$TOP/mkdebugelf/tests/mkpe.py" "$seed_pe/pdata.dll" --pdata >/dev/null ||
	die "cannot write the perf_pe seed pdata.dll"
if [ ! -s "$seed_pe/mingw.dll" ]; then
	printf 'int alpha(int x) { return x + 1; }\nstatic int beta(int x) { return x * 3; }\nint gamma_(int x) { return beta(x) - alpha(x); }\n' \
		>"$out/seed-dll.c"
	x86_64-w64-mingw32-gcc -O1 -shared -s -Wl,--build-id -o "$seed_pe/mingw.dll" \
		"$out/seed-dll.c" >"$out/seed-dll.log" 2>&1 ||
		note "perf_pe: no mingw-w64 DLL seed: $(head -n 1 "$out/seed-dll.log")"
fi

export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PERF_PE_FUZZ_IMAGE=$seed_pe/pe-file.exe
fail=0
for name in perf_map perf_pe pe r2r pdb; do
	work=$out/corpus-$name
	mkdir -p "$work"
	log=$out/$name.log
	max_len=65536 seeds=("$TOP/fuzz/corpus/$name")
	[ "$name" = pdb ] && max_len=262144 seeds=("$seed_pdb")
	# perf_pe: every PE seed there is, pe-file.exe.debug (141 KB) whole
	[ "$name" = perf_pe ] && max_len=262144 seeds+=("$seed_pe" "$TOP/fuzz/corpus/pe" "$TOP/fuzz/corpus/r2r")
	# Each fuzzer's crashes under its own name: the next one's run keeps them.
	rm -f "$out/$name"-crash-* "$out/$name"-leak-* "$out/$name"-timeout-*
	if ! (cd "$out" && "./$name" -runs="$runs" -max_len="$max_len" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$out/$name-" "$work" "${seeds[@]}") >"$log" 2>&1; then
		note "$name: FAILED, see $log: $(grep -m1 -E 'ERROR|runtime error|deadly' "$log")"
		fail=1
		continue
	fi
	done_runs=$(grep -o 'Done [0-9]* runs' "$log" | awk '{ print $2 }')
	note "$name: $done_runs executions, 0 crashes, $(grep -o 'cov: [0-9]*' "$log" | tail -n 1) edges$(sed -n -e 's/^perf_map_fuzz: \([0-9]*\) lookups.*/, \1 lookups named a symbol/p' \
		-e 's/^perf_pe_fuzz: [0-9]* inputs, \(.*\)/, \1/p' "$log")"
done
[ "$fail" = 0 ] || die "the fuzzers found crashes (inputs in $out/NAME-crash-*)"
