#!/bin/bash
# mkdebugelf's tests: symbols of a PE image at the right file offsets, the
# crossgen2 map format, and bad input that must give an error or skipped
# lines, never a crash, nor a sanitizer report when MKDEBUGELF is built with
# ASan and UBSan (make asan). Usage: run.sh MKDEBUGELF
set -uo pipefail
tool=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
# A sanitizer report exits 99 (ASan, leaks) or 98 (UBSan), never 0, 1 or 2.
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:exitcode=98

ok() { echo "  ok: $*"; }
bad() { echo "  FAIL: $*"; fails=$((fails + 1)); }

# syms FILE: "offset size name" of each function symbol, hex offsets.
syms() {
	readelf -sW "$1" | awk '$4 == "FUNC" { v = $2; sub(/^0+/, "", v); print (v == "" ? "0" : v), $3, $8 }'
}

# expect_status WHAT STATUS COMMAND...: exit status STATUS, and no signal.
expect_status() {
	local what=$1 want=$2 rc
	shift 2
	"$@" >out.txt 2>err.txt
	rc=$?
	if [ "$rc" -ge 128 ]; then
		bad "$what: killed by signal $((rc - 128))"
	elif [ "$rc" = 98 ] || [ "$rc" = 99 ]; then
		bad "$what: sanitizer report: $(grep -m 1 -E 'ERROR|runtime error' err.txt)"
	elif [ "$rc" != "$want" ]; then
		bad "$what: exit $rc, expected $want: $(head -n 1 err.txt)"
	else
		ok "$what ($(head -n 1 err.txt out.txt | grep -v '^==>' | grep . | head -n 1))"
	fi
}

python3 "$here/mkpe.py" test.dll
expect_status "PE image" 0 "$tool" -o test.debug test.dll
want="410 48 exp_bar
440 64 exp_foo
480 64 static_a
4c0 64 a_rather_long_static_function_name
500 64 dup
540 192 dup#2"
if [ "$(syms test.debug)" = "$want" ]; then ok "PE symbols at file offsets"; else
	bad "PE symbols:"; syms test.debug; fi
readelf -h test.debug | grep -q 'Advanced Micro Devices X86-64' && ok "machine from the PE" ||
	bad "machine type"

# A real DLL from mingw-w64, checked against its own objdump.
if command -v x86_64-w64-mingw32-gcc >/dev/null; then
	cat >dll.c <<'C'
__declspec(dllexport) int exported_one(int x) { return x * 3 + 1; }
__declspec(dllexport) int exported_two(int x) { return x ^ 0x5a; }
static int __attribute__((noinline)) hidden_static(int x) { return x - 7; }
int __attribute__((noinline)) plain_global(int x) { return hidden_static(x) * 2; }
C
	x86_64-w64-mingw32-gcc -O1 -shared -o real.dll dll.c
	expect_status "mingw-w64 DLL" 0 "$tool" -o real.debug real.dll
	# objdump: VMA of each symbol, and of .text with its file offset.
	read -r vma off < <(x86_64-w64-mingw32-objdump -h real.dll |
		awk '$2 == ".text" { print $4, $6 }')
	for f in exported_one exported_two hidden_static plain_global; do
		addr=$(x86_64-w64-mingw32-nm real.dll | awk -v f="$f" '$3 == f { print $1 }')
		want=$(printf '%x' $((0x$addr - 0x$vma + 0x$off)))
		got=$(syms real.debug | awk -v f="$f" '$3 == f { print $1 }')
		[ "$got" = "$want" ] && ok "$f at file offset 0x$got" ||
			bad "$f: at ${got:-nothing}, objdump says 0x$want"
	done
else
	echo "  skip: mingw-w64 DLL (x86_64-w64-mingw32-gcc not installed)"
fi

# crossgen2 --perfmap: RVAs, header pseudo-records, a method split hot/cold.
cat >r2r.map <<'M'
FFFFFFFF 0 0123456789ABCDEF0123456789ABCDEF
FFFFFFFE 0 1
FFFFFFFD 0 2
FFFFFFFC 0 3
FFFFFFFB 0 1
1010 20 [App]Program::Main()
1080 40 [App]Program::Work(int32)
1100 10 [App]Program::Work(int32)
M
expect_status "crossgen2 map with --rva" 0 "$tool" --map r2r.map --rva -o r2r.debug test.dll
grep -q '5 crossgen2 header records' err.txt && ok "header records recognised" ||
	bad "header records: $(cat err.txt)"
want="410 32 [App]Program::Main()
480 64 [App]Program::Work(int32)
500 16 [App]Program::Work(int32)#2"
[ "$(syms r2r.debug)" = "$want" ] && ok "RVAs turned into file offsets" ||
	{ bad "r2r symbols:"; syms r2r.debug; }

# Bad input: each a clear error or skipped lines, never a crash.
printf '\x7fELF\x02\x01\x01' >fake.so; head -c 100 /dev/zero >>fake.so
expect_status "an ELF image" 1 "$tool" -o x.debug fake.so
grep -q 'is ELF' err.txt || bad "ELF image message: $(cat err.txt)"
for n in 0x40 0x44 0x60 0x150 0x1a0 0x610 0x800; do
	python3 "$here/mkpe.py" cut.dll --truncate "$n"
	rc=0; "$tool" -o cut.debug cut.dll >/dev/null 2>err.txt || rc=$?
	if [ "$rc" -ge 128 ]; then
		bad "truncated at $n: signal $((rc - 128))"
	elif [ "$rc" -gt 2 ]; then
		bad "truncated at $n: exit $rc: $(grep -m 1 -E 'ERROR|runtime error' err.txt)"
	else
		ok "truncated at $n: exit $rc, $(head -n 1 err.txt)"
	fi
done
python3 "$here/mkpe.py" badsec.dll --bad-sections
expect_status "section data outside the file" 1 "$tool" -o x.debug badsec.dll
head -c 4096 /dev/urandom >random.img
expect_status "random bytes, no map" 1 "$tool" -o x.debug random.img
printf '1000 10 good\nnot a line\n12g4 10 bad\n-5 10 neg\n1010 0 empty\n0x1020 0x10 hex_ok\n1030 10\nffffffffffffffff 10 wraps\n' >garbage.map
head -c 8192 /dev/zero >zero.img
expect_status "map with garbage lines" 0 "$tool" --map garbage.map -o g.debug zero.img
grep -q 'skipped 6 malformed of 8 lines' err.txt && ok "6 of 8 lines skipped" ||
	bad "garbage map: $(cat err.txt)"
[ "$(syms g.debug | awk '{ print $3 }' | tr '\n' ' ')" = "good hex_ok " ] &&
	ok "only the good lines kept" || { bad "garbage map symbols:"; syms g.debug; }
printf '100 100 a\n100 100 a\n150 100 overlaps\n3000 10 beyond_the_file\n' >dup.map
expect_status "duplicates, overlaps, beyond the file" 0 "$tool" --map dup.map -o d.debug zero.img
[ "$(syms d.debug | tr '\n' ';')" = "100 80 a;150 256 overlaps;" ] && ok "deduplicated and cut" ||
	{ bad "dup map:"; syms d.debug; }
expect_status "--rva on a non-PE image" 1 "$tool" --map dup.map --rva -o x.debug zero.img

# --pid: a live process's perf map, turned into file offsets of its images.
# live_start [--map FILE]: run liveproc.py, its perf map at FILE or its own.
live_start() {
	rm -f live.img
	coproc LIVE { exec python3 "$here/liveproc.py" "$tmp/live.img" "$1"; }
	read -r _ <&"${LIVE[0]}"
}
live_stop() {
	eval "exec ${LIVE[1]}>&-"
	wait "$LIVE_PID"
}
live_start "$tmp/unused"
live=$LIVE_PID
mv "$tmp/unused" "/tmp/perf-$live.map"
expect_status "--pid, its perf map in /tmp" 0 "$tool" --pid "$live" --install --root live
want="1100 64 f_a
3010 4080 f_b"
[ "$(syms "live/usr/lib/debug$tmp/live.img.debug")" = "$want" ] &&
	ok "perf map addresses at file offsets, cut at the map's end" ||
	{ bad "--pid symbols:"; syms "live/usr/lib/debug$tmp/live.img.debug"; }
grep -q '1 executable maps of memfds or deleted files' err.txt &&
	ok "the deleted file left to the fallback" || bad "deleted file: $(cat err.txt)"
[ "$(find live -type f | wc -l)" = 1 ] && ok "one debug file, for the non-ELF image only" ||
	bad "debug files: $(find live -type f)"
expect_status "--pid with -o" 2 "$tool" --pid "$live" -o x.debug
rm -f "/tmp/perf-$live.map"
expect_status "--pid, no perf map" 1 "$tool" --pid "$live" --install --root live2
live_stop

live_start "$tmp/pm"
cp pm pm.real
ln -sf pm.real pm.link
expect_status "--pid, perf map as a symlink" 1 "$tool" --pid "$LIVE_PID" --map pm.link --install
if [ "$(id -u)" = 0 ]; then
	chown 65534 pm
	expect_status "--pid, perf map of another user" 1 "$tool" --pid "$LIVE_PID" --map pm --install
else
	echo "  skip: --pid, perf map of another user (giving a file away needs root)"
fi
rm pm && mkfifo pm
expect_status "--pid, perf map a FIFO" 1 timeout 10 "$tool" --pid "$LIVE_PID" --map pm --install
live_stop
[ -e live2 ] && bad "files written with no perf map: $(find live2)"
expect_status "--pid, no such process" 1 "$tool" --pid 999999999 --install

echo "mkdebugelf tests: $fails failed"
[ "$fails" = 0 ]
