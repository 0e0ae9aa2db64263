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

# syms FILE: "offset size name" of each function symbol, hex file offsets
# as perf takes them: the value less its section's address plus its offset.
syms() {
	# names may hold blanks: "Ns.Type::Method(valuetype Ns.Span`1<char>)"
	{ readelf -SW "$1" | sed -n 's/^ *\[ *\([0-9]*\)\] */S \1 /p'; readelf -sW "$1"; } |
		awk 'function hex(s,  i, v) { v = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		$1 == "S" { delta[$2] = hex($5) - hex($6); next }
		$4 == "FUNC" { n = $8
			for (i = 9; i <= NF; i++) n = n " " $i
			printf "%x %s %s\n", hex($2) - delta[$7], $3, n }'
}
# values FILE: "value name" of each function symbol, hex, as written.
values() {
	readelf -sW "$1" | awk '$4 == "FUNC" { v = $2; sub(/^0+/, "", v); print (v == "" ? "0" : v), $8 }'
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
readelf -n test.debug | grep -q 'Build ID' && bad "a build ID without a CodeView record" ||
	ok "no CodeView record, no build ID note"
# perf annotate runs objdump on the image at the symbol's address less the
# .text section's address plus its offset: the image's own addresses
[ "$(values test.debug | head -n 1)" = "180001010 exp_bar" ] &&
	readelf -SW test.debug | grep -qE '\.text +NOBITS +0*180001000 0*400 ' &&
	ok "symbols at their addresses as linked, .text at the code's file offset" ||
	bad "addresses: $(values test.debug | head -n 1); $(readelf -SW test.debug | grep text)"
# Code at file offsets off the page boundary of its RVA (a linker's default
# FileAlignment of 0x200): Wine copies it into anonymous memory, say so.
grep -q 'section .text is at file offset 0x400 for RVA 0x1000, not on a page boundary.*--write-perf-map PID' err.txt &&
	ok "unaligned code: Wine's anonymous copy noted" || bad "no note of unaligned code: $(cat err.txt)"
# cut_copy FILE COPY N: COPY is FILE's first N bytes, as an incomplete copy
cut_copy() {
	python3 -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read()[:int(sys.argv[3])])' "$@"
}
# A truncated copy: said to be, with the size its headers describe (the
# string table's end, 2142)
for c in "100:cut.dll: truncated PE image: 100 bytes, its headers alone take 328" \
	 "1200:cut.dll is truncated: 1200 bytes, its headers describe 2142 at least" \
	 "1200:export table cut off by the truncation, not used" \
	 "1700:COFF symbol table cut off by the truncation, not used"; do
	n=${c%%:*}
	cut_copy test.dll cut.dll "$n"
	expect_status "PE image truncated at $n" 1 "$tool" -o x.debug cut.dll
	grep -qF "${c#*:}" err.txt && ok "truncated at $n: ${c#*:}" || bad "truncated at $n: $(cat err.txt)"
done
rm -f x.debug
python3 "$here/mkpe.py" aligned.dll --aligned
expect_status "PE image, code on page boundaries" 0 "$tool" -o aligned.debug aligned.dll
[ -s err.txt ] && bad "aligned code noted: $(cat err.txt)" || ok "aligned code: no note"
# x64 function ranges (.pdata) bound the symbols: code in a range with no
# name stays raw, a chained part is its function's, a symbol with no range
# stops where the next range starts; assembly routines (COFF type 0) are
# names, section symbols are not.
python3 "$here/mkpe.py" pdata.dll --pdata
expect_status "PE image with .pdata" 0 "$tool" -o pdata.debug pdata.dll
want="410 32 exp_bar
440 48 exp_foo
480 16 static_a
4c0 64 a_rather_long_static_function_name
500 32 dup
540 16 dup#2
580 32 asm_leaf"
[ "$(syms pdata.debug)" = "$want" ] && ok "symbols within their .pdata functions" ||
	{ bad "symbols with .pdata:"; syms pdata.debug; }

# starts FULL IMAGE: where FULL's COFF symbol table has a function start, as
# file offsets of IMAGE (FULL with fewer symbols, its sections at the same RVAs)
starts() {
	local vma off a
	read -r vma off < <(x86_64-w64-mingw32-objdump -h "$2" | awk '$2 == ".text" { print $4, $6 }')
	x86_64-w64-mingw32-nm "$1" | awk '$2 ~ /^[tT]$/ && $3 !~ /^\./ { print $1 }' |
		while read -r a; do printf '%x\n' $((0x$a - 0x$vma + 0x$off)); done
}
# extents WHAT DEBUG STARTS: no symbol of DEBUG runs over a start of STARTS
extents() {
	local total wrong bytes example
	syms "$2" >extents.syms
	read -r total wrong bytes example < <(python3 "$here/extents.py" extents.syms "$3")
	[ "$total" -gt 0 ] && [ "$wrong" = 0 ] &&
		ok "$1: none of $total symbols covers another function's code" ||
		bad "$1: $wrong of $total symbols cover $bytes bytes of other functions: $example"
}

# The man page documents every option --help lists, and the version
"$tool" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r opt; do
	grep -qF -- "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$here/../mkdebugelf.1" ||
		echo "$opt"
done >undocumented
[ -s undocumented ] && bad "not in mkdebugelf.1: $(tr '\n' ' ' <undocumented)" ||
	ok "mkdebugelf.1 documents every option of --help"
grep -qF "mkdebugelf $("$tool" --version | awk '{ print $2 }')" "$here/../mkdebugelf.1" &&
	ok "mkdebugelf.1 is of version $("$tool" --version)" || bad "mkdebugelf.1 is of another version"

# Command lines that can't work say why.
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086
	expect_status "command line: $want" 2 "$tool" $args
	grep -qF -- "$want" err.txt || bad "'$args': $(cat err.txt), expected '$want'"
done <<'ARGS'
|no IMAGE given
test.dll|where to write it? give -o OUT or --install
-o x.debug test.dll test.dll|more than one IMAGE given
-o x.debug --install test.dll|-o and --install: give one of them
--root r -o x.debug test.dll|--root goes with --install
--symfs s -o x.debug test.dll|--symfs goes with --install
--root r --symfs s --install test.dll|--root and --symfs: give one of them
--rva -o x.debug test.dll|--rva and --no-pe go with --map and an IMAGE
--pid 1 --install test.dll|--pid takes no IMAGE
ARGS

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
		# objdump on the image at the symbol's value: the function
		value=$(values real.debug | awk -v f="$f" '$2 == f { print $1 }')
		objdump -d --start-address="0x$value" --stop-address=$((0x$value + 1)) real.dll |
			grep -q "^0*$value <$f>:" && ok "$f at its address, 0x$value" ||
			bad "$f: objdump at its value 0x$value: $(objdump -d --start-address="0x$value" \
				--stop-address=$((0x$value + 1)) real.dll 2>&1 | grep . | tail -n 1)"
	done
	# The C library's static functions (__pformat_*), an assembly routine
	# (___chkstk_ms, COFF type 0), statics of its own: with its COFF symbols,
	# then stripped to its exports (as Wine's DLLs are), against the first.
	cat >ext.c <<'C'
#include <stdio.h>
#include <string.h>
static int __attribute__((noinline)) st_one(int x) { volatile int a = x; return a * 3 + 1; }
static int __attribute__((noinline)) st_big(int x)
{
	volatile char buf[8192];

	buf[x & 8191] = x;
	return buf[(x * 7) & 8191];
}
__declspec(dllexport) int exp_a(int x) { return st_one(x) + 2; }
__declspec(dllexport) int exp_b(int x)
{
	char s[64];

	snprintf(s, sizeof(s), "%d %f", x, x * 1.5);
	return (int)strlen(s) + st_big(x);
}
C
	x86_64-w64-mingw32-gcc -O1 -shared -o ext.dll ext.c
	x86_64-w64-mingw32-strip -s -o ext-stripped.dll ext.dll
	expect_status "mingw-w64 DLL with the C library's statics" 0 "$tool" -o ext.debug ext.dll
	syms ext.debug | grep -q ' ___chkstk_ms$' && ok "___chkstk_ms (COFF type 0) named" ||
		bad "___chkstk_ms not named"
	starts ext.dll ext.dll >ext.starts
	extents "mingw-w64 DLL, COFF symbols" ext.debug ext.starts
	expect_status "stripped mingw-w64 DLL" 0 "$tool" -o ext-stripped.debug ext-stripped.dll
	starts ext.dll ext-stripped.dll >ext-stripped.starts
	extents "stripped mingw-w64 DLL, exports only" ext-stripped.debug ext-stripped.starts
else
	echo "  skip: mingw-w64 DLL (x86_64-w64-mingw32-gcc not installed)"
fi

# An .exe linked the Windows way (lld-link: FileAlignment 0x200, no COFF
# symbols) with its names in a PDB, checked against llvm-pdbutil's reading.
mingw_lib=$(dirname "$(x86_64-w64-mingw32-gcc -print-libgcc-file-name 2>/dev/null)" 2>/dev/null)
if command -v clang >/dev/null && command -v lld-link >/dev/null &&
   command -v llvm-pdbutil >/dev/null && [ -d "$mingw_lib" ]; then
	cat >app.c <<'C'
static int __attribute__((noinline)) pdb_static(int x) { return x * 3 + 1; }
int __attribute__((noinline)) pdb_global(int x) { return pdb_static(x) ^ 0x5a; }
#ifdef NO_STDIO
int main(int argc, char **argv) { (void)argv; return pdb_global(argc); }
#else
#include <stdio.h>
int main(int argc, char **argv) { (void)argv; printf("%d\n", pdb_global(argc)); return 0; }
#endif
C
	pdb_exe() { # OUT.exe: app.c built with a PDB next to it, as OUT.pdb
		clang --target=x86_64-w64-mingw32 -O1 -g -gcodeview -fuse-ld=lld -L"$mingw_lib" \
			-Wl,--pdb="${1%.exe}.pdb" -o "$1" "${2:-app.c}" 2>cc.err
	}
	# pdb_offsets IMAGE PDB DEBUG: each procedure and public function the PDB
	# has in .text, by name at its file offset there in DEBUG (a public
	# function where a procedure starts goes by the procedure's name); how
	# many in $checked. llvm-pdbutil's offsets are decimal.
	pdb_offsets() {
		local name seg off pub vma foff want got
		checked=0
		x86_64-w64-mingw32-objdump -h "$1" | awk '$1 ~ /^[0-9]+$/ {
			printf "%d %s %s\n", $1 + 1, $4, $6 }' >sections
		llvm-pdbutil dump -symbols -publics "$2" | awk '
			/S_[GL]PROC32 |S_PUB32 / { name = $NF; gsub(/`/, "", name)
				pub = /S_PUB32/; next }
			name != "" && /addr = / { split($0, a, "addr = "); split(a[2], b, "[:,]")
				if (!pub || /function/) print name, b[1] + 0, b[2] + 0, pub; name = "" }
			' | sort -u >pdbutil
		while read -r name seg off pub; do
			read -r vma foff < <(awk -v s="$seg" '$1 == s { print $2, $3 }' sections)
			# only code the image keeps in .text
			[ "$seg" = 1 ] || continue
			want=$(printf '%x' $((0x$foff + off)))
			# a public where a procedure starts: by the procedure's name
			if [ "$pub" = 1 ]; then
				name=$(awk -v n="$name" -v s="$seg" -v o="$off" '$4 == 0 &&
					$2 == s && $3 == o { n = $1 } END { print n }' pdbutil)
			fi
			got=$(syms "$3" | awk -v f="$name" '$3 == f { print $1 }' | head -n 1)
			if [ "$got" != "$want" ]; then
				bad "$name: at ${got:-nothing} in $3, llvm-pdbutil says 0x$want"
			fi
			checked=$((checked + 1))
		done <pdbutil
	}
	if pdb_exe app.exe; then
		expect_status "PE image with a PDB" 0 "$tool" -o app.debug app.exe
		grep -q 'app.pdb: [1-9][0-9]* functions' out.txt || bad "PDB not read: $(cat out.txt)"
		# The image's build ID: its CodeView GUID as libbfd (objdump -p) spells it
		want=$(x86_64-w64-mingw32-objdump -p app.exe |
			sed -n 's/.*(format RSDS signature \([0-9a-f]*\) age .*/\1/p')
		got=$(readelf -n app.debug | awk '$1 == "Build" && $2 == "ID:" { print $3 }')
		[ "${#want}" = 32 ] && [ "$got" = "$want" ] &&
			ok "build ID note $got, the image's as objdump spells it" ||
			bad "build ID note '$got', objdump -p says '$want'"
		pdb_offsets app.exe app.pdb app.debug
		[ "$checked" -gt 10 ] && ok "$checked PDB functions at llvm-pdbutil's offsets" ||
			bad "only $checked PDB functions compared"
		syms app.debug | grep -q ' pdb_static$' && ok "a static function, from its module" ||
			bad "pdb_static not named"
		# Found by the path recorded in the image, then refused when stale
		mkdir -p away && cp app.exe away/
		expect_status "PDB at the path the image records" 0 "$tool" -o away.debug away/app.exe
		[ "$(syms away.debug)" = "$(syms app.debug)" ] && ok "same symbols from there" ||
			bad "symbols differ with the PDB at its recorded path"
		# Wine's anonymous copy of it: named in a perf map, once
		exec 8< <(sleep 60) # the copy's standard input: it waits on it
		coproc WINECOPY { exec python3 "$here/winecopy.py" "$tmp/app.exe" 0x40000 <&8; }
		read -r copy_base <&"${WINECOPY[0]}"
		pm=/tmp/perf-$WINECOPY_PID.map
		rm -f "$pm"
		expect_status "--write-perf-map" 0 "$tool" --write-perf-map "$WINECOPY_PID"
		text_rva=$(x86_64-w64-mingw32-objdump -h app.exe | awk '$2 == ".text" { print $4 }')
		image_base=$(x86_64-w64-mingw32-objdump -p app.exe | awk '$1 == "ImageBase" { print $2 }')
		off=$(awk '$1 == "pdb_static" { print $3 }' pdbutil | head -n 1)
		want=$(printf '%x' $((0x$copy_base + 0x$text_rva - 0x$image_base + off)))
		grep -q "^$want [0-9a-f]* pdb_static\$" "$pm" 2>/dev/null &&
			ok "pdb_static at the copy's base + RVA, $want" ||
			bad "perf map: $(grep pdb_static "$pm" 2>&1), expected $want"
		lines=$(wc -l <"$pm")
		expect_status "--write-perf-map again" 0 "$tool" --write-perf-map "$WINECOPY_PID"
		[ "$(wc -l <"$pm")" = "$lines" ] && ok "nothing written twice" ||
			bad "$(wc -l <"$pm") lines after a second run, $lines before"
		exec 8<&-
		kill "$WINECOPY_PID" 2>/dev/null
		wait "$WINECOPY_PID" 2>/dev/null
		rm -f "$pm"

		sed 's/x \* 3 + 1/x * 5 + 2/' app.c >other.c
		pdb_exe other.exe other.c
		expect_status "--pdb of another build" 1 "$tool" --pdb other.pdb -o x.debug app.exe
		grep -q 'is not the PDB of' err.txt || bad "stale PDB accepted: $(cat err.txt)"
		# Another build's PDB next to the image, the right one at the path
		# the image records: the first refused, the second read
		mkdir -p stale && cp app.exe stale/ && cp other.pdb stale/app.pdb
		expect_status "another build's PDB next to it, the image's at the recorded path" 0 \
			"$tool" -o stale.debug stale/app.exe
		grep -q 'stale/app.pdb is not the PDB of .*; looking at the path the image records' err.txt &&
			grep -q "$tmp/app.pdb: [1-9][0-9]* functions.*, not from .*stale/app.pdb\$" out.txt &&
			[ "$(syms stale.debug)" = "$(syms app.debug)" ] &&
			ok "the PDB at the recorded path read, the one next to it noted" ||
			bad "stale PDB next to it: $(cat out.txt err.txt)"
		# A truncated copy with its PDB next to it: cut before the CodeView
		# record (.buildid), which names the PDB, the PDB is mentioned; cut
		# after it, the PDB is read
		mkdir -p cutpdb && cp app.pdb cutpdb/
		at=$(x86_64-w64-mingw32-objdump -h app.exe | awk '$2 == ".buildid" { print $6 }')
		cut_copy app.exe cutpdb/app.exe $((0x$at))
		expect_status "truncated before its CodeView record, its PDB next to it" 1 \
			"$tool" -o x.debug cutpdb/app.exe
		grep -q "is truncated: $((0x$at)) bytes, its headers describe [0-9]* at least" err.txt &&
			grep -q 'cutpdb/app.pdb is not read: the image.s CodeView record, which names its PDB and identifies its build, is cut off by the truncation' err.txt &&
			ok "truncated, the PDB next to it mentioned" || bad "truncated with its PDB: $(cat err.txt)"
		at=$(x86_64-w64-mingw32-objdump -h app.exe | awk '$2 == ".reloc" { print $6 }')
		cut_copy app.exe cutpdb/app.exe $((0x$at))
		expect_status "truncated after its CodeView record" 0 "$tool" -o cut.debug cutpdb/app.exe
		grep -q 'is truncated' err.txt && grep -q 'app.pdb: [1-9][0-9]* functions' out.txt &&
			ok "truncated after its CodeView record: said so, named from its PDB" ||
			bad "truncated after CodeView: $(cat out.txt err.txt)"
		cp other.pdb app.pdb
		expect_status "a stale PDB next to the image" 1 "$tool" -o x.debug app.exe
		grep -q 'is not the PDB of' err.txt || bad "stale PDB accepted: $(cat err.txt)"
		rm app.pdb
		mv away/app.exe noname.exe
		expect_status "no PDB anywhere" 1 "$tool" -o x.debug noname.exe
		grep -q 'give it with --pdb FILE' err.txt || bad "missing PDB: $(cat err.txt)"
		expect_status "--pdb, image without CodeView" 1 "$tool" --pdb other.pdb -o x.debug test.dll
		# Damaged PDBs: a clear error, no crash, no sanitizer report
		pdb_exe app.exe
		mkdir -p bad
		python3 "$here/badpdb.py" app.pdb bad >bad/cases
		while IFS='|' read -r name want; do
			expect_status "PDB: $name" 1 "$tool" --pdb "bad/$name.pdb" -o x.debug app.exe
			grep -qF -- "$want" err.txt || bad "PDB $name: $(cat err.txt), expected '$want'"
		done <bad/cases
		# A stripped PDB (no module symbols): the public functions only
		expect_status "a stripped PDB" 0 "$tool" --pdb bad/stripped.pdb -o st.debug app.exe
		grep -q 'stripped.pdb: 0 functions, [1-9][0-9]* more public symbols' out.txt ||
			bad "stripped PDB: $(cat out.txt)"
		pdb_offsets app.exe bad/stripped.pdb st.debug
		[ "$checked" -gt 10 ] && ! syms st.debug | grep -q ' pdb_static$' &&
			syms st.debug | grep -q ' pdb_global$' &&
			ok "stripped PDB: $checked public functions at llvm-pdbutil's offsets, no statics" ||
			bad "stripped PDB: $checked compared; $(syms st.debug | head -n 5 | tr '\n' ';')"
		# With printf's floats: the C library's static functions, in no
		# PDB. Its PDB whole and stripped, against the COFF symbol table
		# lld-link writes instead of a PDB with -debug:symtab (same code).
		sed 's/printf("%d\\n", pdb_global(argc))/printf("%d %f\\n", pdb_global(argc), argc * 1.5)/' \
			app.c >flt.c
		mkdir -p flt
		if pdb_exe flt.exe flt.c && clang --target=x86_64-w64-mingw32 -O1 -g -gcodeview \
			-fuse-ld=lld -L"$mingw_lib" -Wl,-Xlink=-debug:symtab -o flt-symtab.exe \
			flt.c 2>cc.err && python3 "$here/badpdb.py" flt.pdb flt >/dev/null; then
			starts flt-symtab.exe flt.exe >flt.starts
			expect_status "printf's floats, a PDB" 0 "$tool" -o flt.debug flt.exe
			# the two builds' functions at the same places: each PDB name at a start
			syms flt.debug | awk '{ print $1 }' | sort -u >flt.pdbstarts
			if [ -n "$(sort -u flt.starts | comm -13 - flt.pdbstarts)" ] ||
			   [ "$(wc -l <flt.starts)" -lt 100 ]; then
				bad "-debug:symtab laid out another program: $(wc -l <flt.starts) starts"
			fi
			extents "clang/lld-link with a PDB" flt.debug flt.starts
			expect_status "printf's floats, a stripped PDB" 0 "$tool" \
				--pdb flt/stripped.pdb -o flt-st.debug flt.exe
			extents "clang/lld-link with a stripped PDB" flt-st.debug flt.starts
		else
			bad "cannot build the program with floats: $(head -n 3 cc.err)"
		fi
	else
		bad "cannot build a PE image with a PDB: $(head -n 3 cc.err)"
	fi
	# A 32-bit image (lld-link, no C library: the names its PDB has)
	if clang --target=i686-pc-windows-msvc -O1 -g -gcodeview -c -o app32.obj app.c \
		-DNO_STDIO 2>cc.err && lld-link /subsystem:console /entry:main /nodefaultlib /debug \
		/pdb:app32.pdb /out:app32.exe app32.obj >>cc.err 2>&1; then
		expect_status "32-bit PE image with a PDB" 0 "$tool" -o app32.debug app32.exe
		pdb_offsets app32.exe app32.pdb app32.debug
		readelf -h app32.debug | grep -q 'ELF32' && readelf -h app32.debug | grep -q '80386' &&
			[ "$checked" -ge 4 ] && syms app32.debug | grep -q ' pdb_static$' &&
			ok "32-bit: an ELF32 i386 debug file, $checked PDB functions at llvm-pdbutil's offsets" ||
			bad "32-bit: $checked compared; $(readelf -h app32.debug | grep -i 'class\|machine')"
	else
		bad "cannot build a 32-bit PE image with a PDB: $(head -n 3 cc.err)"
	fi
else
	echo "  skip: PE image with a PDB (needs clang, lld-link, llvm-pdbutil and mingw-w64)"
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
# (leading blanks are perf's syntax too: its reader skips them)
printf '1000 10 good\nnot a line\n12g4 10 bad\n-5 10 neg\n1010 0 empty\n0x1020 0x10 hex_ok\n1030 10\nffffffffffffffff 10 wraps\n  1040 10 blanks_ok\n\t1050 10 tab_ok\n' >garbage.map
head -c 8192 /dev/zero >zero.img
expect_status "map with garbage lines" 0 "$tool" --map garbage.map -o g.debug zero.img
grep -q 'skipped 6 malformed of 10 lines: lines 2, 3, 4, 5, 7, 8$' err.txt &&
	ok "6 of 10 lines skipped, by number" || bad "garbage map: $(cat err.txt)"
[ "$(syms g.debug | awk '{ print $3 }' | tr '\n' ' ')" = "good hex_ok blanks_ok tab_ok " ] &&
	ok "only the good lines kept, leading blanks too" || { bad "garbage map symbols:"; syms g.debug; }
# --write-perf-map on a process that maps no PE image: an error
sleep 60 &
expect_status "--write-perf-map, no PE image" 1 "$tool" --write-perf-map $!
grep -q 'maps no PE image' err.txt || bad "no PE image: $(cat err.txt)"
kill $! 2>/dev/null
printf '100 100 a\n100 100 a\n150 100 overlaps\n3000 10 beyond_the_file\n' >dup.map
expect_status "duplicates, overlaps, beyond the file" 0 "$tool" --map dup.map -o d.debug zero.img
[ "$(syms d.debug | tr '\n' ';')" = "100 80 a;150 256 overlaps;" ] && ok "deduplicated and cut" ||
	{ bad "dup map:"; syms d.debug; }
expect_status "--rva on a non-PE image" 1 "$tool" --map dup.map --rva -o x.debug zero.img

# ReadyToRun: a crafted image (mkr2r.py), each table it names methods from.
python3 "$here/mkr2r.py" r2r.dll
expect_status "ReadyToRun image" 0 "$tool" -o r2r.debug r2r.dll
grep -q 'ReadyToRun 16.0 image for Linux: 4 methods, 4 generic instantiations (1 not fully named, 0 from other assemblies), 9 of 9 runtime functions in them' out.txt &&
	ok "picked the R2R reader, counted its entries" || bad "R2R summary: $(cat out.txt)"
r2r_sym() { syms r2r.debug | awk -v n="$1" 'substr($0, length($1 $2) + 3) == n { print $1, $2 }'; }
expect_sym() { # WHAT NAME "OFFSET SIZE"
	local got
	got=$(r2r_sym "$2")
	[ "$got" = "$3" ] && ok "$1: $2 at $3" || bad "$1: $2 at '${got:-nothing}', expected $3"
}
expect_sym "METHODDEF_ENTRYPOINTS, RUNTIME_FUNCTIONS at file offsets" "App.Program::Main()" "400 32"
expect_sym "a method with a funclet covers both" "App.Program::Work(int32)" "440 96"
expect_sym "an entry with fixups, an overload told apart by its parameters" \
	"App.Program::Work(string[],int32&)" "4c0 16"
expect_sym "NestedClass; parameters: [assembly] of a TypeRef, instantiation, function pointer" \
	"App.Program+Inner::Run(valuetype [Other]System.Text.Foo<char>,method void *(uint8*))" "500 64"
expect_sym "INSTANCE_METHOD_ENTRYPOINTS, owner type" 'App.Box`1[System.__Canon]::Get()' "540 32"
expect_sym "INSTANCE_METHOD_ENTRYPOINTS, method instantiation" "App.Program::Generic<System.Int32>(!!0)" "580 32"
expect_sym "TypeRef in an instantiation" "App.Program::Generic<System.Text.Foo>(!!0)" "5a0 32"
expect_sym "a method of another assembly, not beside it: unnamed" "?::?<System.Int32>" "5c0 32"
expect_sym "DELAYLOAD_METHODCALL_THUNKS" "ReadyToRun::DelayLoadMethodCallThunks" "600 64"
[ "$(syms r2r.debug | wc -l)" = 9 ] && ok "9 symbols, one a method or the thunks" ||
	{ bad "R2R symbols:"; syms r2r.debug; }
readelf -h r2r.debug | grep -q 'Advanced Micro Devices X86-64' && ok "x86_64 from machine 0xfd1d" ||
	bad "R2R machine type"
# As PE images: at ImageBase + RVA, for perf annotate (objdump on the image)
[ "$(values r2r.debug | grep -m 1 'App.Program::Main')" = "180001000 App.Program::Main()" ] &&
	readelf -SW r2r.debug | grep -qE '\.text +NOBITS +0*180001000 0*400 ' &&
	ok "R2R symbols at their addresses as linked, .text at the code's file offset" ||
	bad "R2R addresses: $(values r2r.debug | head -n 1); $(readelf -SW r2r.debug | grep text)"

python3 "$here/mkr2r.py" hc.dll --hot-cold
expect_status "HOT_COLD_MAP" 0 "$tool" -o hc.debug hc.dll
[ "$(syms hc.debug | grep 'App.Program::Main')" = "400 32 App.Program::Main()
700 32 App.Program::Main()#2" ] && ok "a cold part named as its hot part" ||
	{ bad "cold part:"; syms hc.debug; }
# A type that names itself at each level: bounded by the name's length
python3 "$here/mkr2r.py" loop.dll --typespec-loop 8
expect_status "a TypeSpec naming itself 8 times a level" 0 timeout 20 "$tool" -o loop.debug loop.dll
grep -q '(2 not fully named' out.txt && syms loop.debug | grep -q ' App.Program::Main(class ' &&
	ok "cut where the name is full, counted as not fully named" ||
	bad "self-naming TypeSpec: $(cat out.txt)"
python3 "$here/mkr2r.py" sentinel.dll --sentinel
expect_status "RUNTIME_FUNCTIONS ending with a sentinel" 0 "$tool" -o s.debug sentinel.dll
[ "$(syms s.debug)" = "$(syms r2r.debug)" ] && ok "the sentinel is no function" ||
	{ bad "sentinel:"; syms s.debug; }

mkdir -p other
python3 "$here/mkr2r.py" other/app.dll
python3 "$here/mkr2r.py" other/Other.dll --other
expect_status "an assembly it refers to beside it" 0 "$tool" -o other.debug other/app.dll
grep -q '(0 not fully named, 1 from other assemblies)' out.txt &&
	[ "$(syms other.debug | grep Far)" = "5c0 32 Other.Lib::Far<System.Int32>" ] &&
	ok "AssemblyRef: a method named from Other.dll's metadata" ||
	{ bad "another assembly: $(cat out.txt)"; syms other.debug; }

# The OS markers XORed into the machine field; what isn't read is refused.
for m in Apple:0x4644 FreeBSD:0xadc4 NetBSD:0x1993 SunOS:0x1992; do
	python3 "$here/mkr2r.py" os.dll --machine $((0x8664 ^ ${m#*:}))
	expect_status "x86_64 for ${m%:*}" 0 "$tool" -o os.debug os.dll
	grep -q "image for ${m%:*}:" out.txt || bad "${m%:*}: $(cat out.txt)"
done
python3 "$here/mkr2r.py" arm.dll --machine $((0xaa64 ^ 0x7b79))
expect_status "arm64 Linux" 0 "$tool" -o arm.debug arm.dll
[ "$(syms arm.debug)" = "$(syms r2r.debug)" ] && readelf -h arm.debug | grep -q AArch64 &&
	ok "arm64: lengths from the packed unwind data, an AArch64 debug file" ||
	{ bad "arm64 symbols:"; syms arm.debug; }
python3 "$here/mkr2r.py" x86.dll --machine $((0x014c ^ 0x7b79))
expect_status "i386 Linux refused" 1 "$tool" -o x.debug x86.dll
grep -q 'machine 0x14c (Linux) is not supported' err.txt || bad "i386 message: $(cat err.txt)"
python3 "$here/mkr2r.py" unk.dll --machine 0x1234
expect_status "unknown machine refused" 1 "$tool" -o x.debug unk.dll
grep -q 'ReadyToRun image for unknown machine 0x1234' err.txt || bad "machine message: $(cat err.txt)"
python3 "$here/mkr2r.py" comp.dll --flags 0x6b
expect_status "component of a composite image refused" 1 "$tool" -o x.debug comp.dll
grep -q 'its code is in framework-r2r.dll' err.txt || bad "component message: $(cat err.txt)"
python3 "$here/mkr2r.py" composite.dll --composite
expect_status "composite image refused" 1 "$tool" -o x.debug composite.dll
grep -q 'composite ReadyToRun image' err.txt || bad "composite message: $(cat err.txt)"
python3 "$here/mkr2r.py" il.dll --il-only
expect_status "IL only image" 1 "$tool" -o x.debug il.dll
grep -q 'IL only' err.txt || bad "IL only message: $(cat err.txt)"

# Corrupt and truncated images: a message, no output file, no crash.
python3 "$here/mkr2r.py" where.dll --where >where.txt
where() { awk -v n="$1" '$1 == n { print $2 }' where.txt; }
at_metadata=$(where metadata)
at_methoddef_entrypoints=$(where methoddef_entrypoints)
at_instance_entrypoints=$(where instance_entrypoints)
at_rtr_header=$(where rtr_header)
rm -f x.debug
for c in "metadata signature:$at_metadata:0" "metadata table rows:$((at_metadata + 0x6c)):0xff" \
	 "METHODDEF_ENTRYPOINTS header:$at_methoddef_entrypoints:0x1f" \
	 "INSTANCE_METHOD_ENTRYPOINTS header:$at_instance_entrypoints:0xff" \
	 "READYTORUN_HEADER section count:$((at_rtr_header + 12)):0xff" \
	 "RUNTIME_FUNCTIONS size:$((at_rtr_header + 24)):0xff"; do
	python3 "$here/mkr2r.py" bad.dll --poke "${c#*:}"
	expect_status "corrupt ${c%%:*}" 1 "$tool" -o x.debug bad.dll
	[ -e x.debug ] && bad "corrupt ${c%%:*}: wrote x.debug" && rm -f x.debug
done
size=$(stat -c %s r2r.dll)
for n in 0x100 0x200 0x804 0x850 0x900 0x9c8 0x9e0 0xa38 0xa50 0xa70 0xa80 0xa98; do
	python3 "$here/mkr2r.py" cut.dll --truncate "$n"
	expect_status "R2R image truncated at $n" 1 "$tool" -o x.debug cut.dll
	[ -e x.debug ] && bad "truncated at $n: wrote x.debug" && rm -f x.debug
	# Said to be truncated, with the size expected; the R2R data cut off
	if [ $((n)) -lt $((0x200)) ]; then
		grep -q "truncated PE image: $((n)) bytes, its headers alone take" err.txt
	elif [ $((n)) -lt $((0x850)) ]; then
		grep -q "is truncated: $((n)) bytes, its headers describe $size at least" err.txt
	else
		grep -q "is truncated: $((n)) bytes, its headers describe $size" err.txt &&
			grep -q 'its ReadyToRun data is cut off by the truncation (' err.txt
	fi && ok "said to be truncated at $n" || bad "truncated at $n: $(cat err.txt)"
done

# --install DIR: each image in it, what isn't one skipped with a note.
mkdir -p fw
cp r2r.dll fw/a.dll
cp il.dll fw/b.dll
echo "not an image" >fw/c.txt
cp fake.so fw/d.so
mkdir -p fw/sub fw/sub2
mkfifo fw/pipe
ln -s a.dll fw/link
: >fw/empty
expect_status "--install a directory" 0 timeout 20 "$tool" --install --root dirroot fw
grep -q 'fw: 1 debug files written, 3 files skipped, 0 failed; not read: 2 folders, 1 symbolic link, 1 FIFO, 1 empty file$' out.txt &&
	ok "1 written, IL only, text and ELF skipped; folders, link, FIFO, empty file counted" ||
	bad "directory: $(cat out.txt err.txt)"
[ "$(find dirroot -type f)" = "dirroot/usr/lib/debug$tmp/fw/a.dll.debug" ] &&
	ok "one debug file, for the R2R image" || bad "directory files: $(find dirroot -type f)"
expect_status "a directory with -o" 2 "$tool" -o x.debug fw
expect_status "--install a directory, -q" 0 "$tool" -q --install --root quietroot fw
[ "$(cat out.txt)" = "$tmp/fw: 1 debug files written, 3 files skipped, 0 failed; not read: 2 folders, 1 symbolic link, 1 FIFO, 1 empty file" ] &&
	[ ! -s err.txt ] &&
	ok "-q: the summary only" || bad "-q printed: $(cat out.txt err.txt)"

# --symfs DIR: the debug file under DIR, the rest of / linked in beside it.
expect_status "--install --symfs" 0 "$tool" --install --symfs linked fw/a.dll
[ -f "linked/usr/lib/debug$tmp/fw/a.dll.debug" ] && [ ! -L linked/usr ] &&
	[ "$(readlink linked/proc)" = /proc ] && [ "$(readlink linked/usr/bin)" = /usr/bin ] &&
	[ "$(readlink -f linked/etc/passwd)" = /etc/passwd ] &&
	ok "--symfs: the debug file in real directories, the rest of / linked" ||
	bad "--symfs: $(find linked -maxdepth 2 | head -n 20 | tr '\n' ' ')"
# Links in the way inside DIR, as an earlier run or its user may leave them:
# replaced with --symfs, refused with --root; never written through.
mkdir -p outside
echo keep >outside/a.dll.debug
rm -f "linked/usr/lib/debug$tmp/fw/a.dll.debug"
ln -s "$tmp/outside/a.dll.debug" "linked/usr/lib/debug$tmp/fw/a.dll.debug"
expect_status "--symfs, a link where the debug file goes" 0 "$tool" --install --symfs linked fw/a.dll
[ "$(cat outside/a.dll.debug)" = keep ] && [ -f "linked/usr/lib/debug$tmp/fw/a.dll.debug" ] &&
	[ ! -L "linked/usr/lib/debug$tmp/fw/a.dll.debug" ] &&
	ok "--symfs: a link at the debug file replaced, its target untouched" ||
	bad "--symfs wrote through a link: $(cat outside/a.dll.debug | head -c 20)"
rm -rf "linked/usr/lib/debug$tmp/fw"
ln -s ../../../../../../outside "linked/usr/lib/debug$tmp/fw"	# $tmp/outside
[ "$(cat "linked/usr/lib/debug$tmp/fw/a.dll.debug")" = keep ] || bad "the test's link is wrong"
expect_status "--symfs, a link where a directory goes" 0 "$tool" --install --symfs linked fw/a.dll
[ "$(ls outside)" = a.dll.debug ] && [ "$(cat outside/a.dll.debug)" = keep ] &&
	[ ! -L "linked/usr/lib/debug$tmp/fw" ] &&
	ok "--symfs: a link at a directory replaced, its target untouched" ||
	bad "--symfs wrote through a directory link: $(ls outside)"
mkdir -p rooted/usr/lib
ln -s "$tmp/outside" rooted/usr/lib/debug
expect_status "--root, a link where a directory goes" 1 "$tool" --install --root rooted fw/a.dll
grep -q 'not written through' err.txt && [ "$(ls outside)" = a.dll.debug ] &&
	ok "--root: refused at the link, its target untouched" || bad "--root through a link: $(ls outside)"
expect_status "--symfs /" 2 "$tool" --install --symfs / fw/a.dll
# A second image under a directory that was linked: the link becomes a real
# directory, and nothing is written through it into /usr/lib/debug.
lic=/usr/share/common-licenses/GPL-2
if [ -d /usr/lib/debug/usr ] && [ -f "$lic" ]; then
	[ -L linked/usr/lib/debug/usr ] || bad "--symfs: /usr/lib/debug/usr not linked"
	printf '0 10 licence_start\n' >lic.map
	expect_status "--symfs, an image under a linked directory" 0 \
		"$tool" --map lic.map --install --symfs linked "$lic"
	sub=$(find /usr/lib/debug/usr -mindepth 1 -maxdepth 1 ! -name share | head -n 1)
	[ ! -L linked/usr/lib/debug/usr ] && [ -f "linked/usr/lib/debug$lic.debug" ] &&
		[ ! -e "/usr/lib/debug$lic.debug" ] &&
		{ [ -z "$sub" ] || [ "$(readlink "linked$sub")" = "$sub" ]; } &&
		ok "--symfs: a linked directory made real, / untouched" ||
		bad "--symfs: $(ls -la linked/usr/lib/debug)"
else
	echo "  skip: --symfs over a linked directory: no /usr/lib/debug/usr or $lic here"
fi

# The real thing: the shared framework's R2R images, against their own
# RUNTIME_FUNCTIONS and against System.Reflection.Metadata's names.
fw=$(dotnet --list-runtimes 2>/dev/null | awk '$1 == "Microsoft.NETCore.App" {
	dir = $3; sub(/^\[/, "", dir); sub(/\]$/, "", dir); v = $2 } END { if (v) print dir "/" v }')
if [ -z "$fw" ] || [ ! -d "$fw" ]; then
	echo "  skip: the shared framework (no dotnet, or no Microsoft.NETCore.App runtime)"
else
	for a in System.Text.RegularExpressions System.Linq System.Collections; do
		expect_status "$a.dll" 0 "$tool" -o real.debug "$fw/$a.dll"
		# The image's own count of runtime functions, read here in Python.
		nr=$(python3 - "$fw/$a.dll" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
pe = struct.unpack_from('<I', d, 0x3c)[0]
nsec, optsize = struct.unpack_from('<HxxxxxxxxxxxxH', d, pe + 6)
secs = [struct.unpack_from('<IIII', d, pe + 24 + optsize + 40 * i + 8) for i in range(nsec)]
off = lambda rva: next(o + rva - va for _, va, raw, o in secs if va <= rva < va + raw)
cli = off(struct.unpack_from('<I', d, pe + 24 + 112 + 14 * 8)[0])
rtr = off(struct.unpack_from('<I', d, cli + 64)[0])
for i in range(struct.unpack_from('<I', d, rtr + 12)[0]):
    t, rva, size = struct.unpack_from('<III', d, rtr + 16 + 12 * i)
    if t == 102:
        print(size // 12)
PY
)
		grep -q " $nr of $nr runtime functions in them" out.txt &&
			ok "$a: all $nr runtime functions in a method's code" ||
			bad "$a: the image has $nr runtime functions: $(cat out.txt)"
		syms real.debug | cut -d ' ' -f 3- >"names-$a.txt"
		# perf annotate's view: objdump on the image itself at a symbol's
		# value finds an instruction there (binutils reads machine 0xfd1d)
		n=0
		values real.debug >values.txt
		for v in $(awk -v t="$(wc -l <values.txt)" 'NR % (t > 16 ? int(t / 8) : 2) == 1 { print $1 }' values.txt |
			   head -n 8); do
			objdump -d --start-address="0x$v" --stop-address=$((0x$v + 16)) "$fw/$a.dll" |
				grep -qE "^ +$v:	[0-9a-f]{2} " && n=$((n + 1))
		done
		[ "$n" = 8 ] && ok "$a: objdump on the image disassembles 8 symbols at their values" ||
			bad "$a: objdump finds code at $n of 8 symbols' values: $(values real.debug | head -n 1)"
	done
	# Truncated: said to be, not only that its runtime functions are missing
	size=$(stat -c %s "$fw/System.Linq.dll")
	cut_copy "$fw/System.Linq.dll" linq.dll $((size * 3 / 10))
	expect_status "System.Linq.dll truncated to 30%" 1 "$tool" -o x.debug linq.dll
	grep -q "is truncated: $((size * 3 / 10)) bytes, its headers describe $size at least" err.txt &&
		grep -q 'its ReadyToRun data is cut off by the truncation (RUNTIME_FUNCTIONS' err.txt &&
		ok "a truncated framework image said to be, its ReadyToRun data cut off" ||
		bad "truncated System.Linq.dll: $(cat err.txt)"
	mkdir -p srm
	cat >srm/srm.csproj <<'X'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
  </PropertyGroup>
</Project>
X
	cat >srm/Program.cs <<'X'
// Every MethodDef of an assembly as Namespace.Outer+Inner::Method(params),
// the parameters in ILASM's names as the runtime's perf map spells them, by
// System.Reflection.Metadata's signature decoder.
using System;
using System.Collections.Immutable;
using System.IO;
using System.Linq;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;

class Il : ISignatureTypeProvider<string, object>
{
    public string GetPrimitiveType(PrimitiveTypeCode c) => c switch {
        PrimitiveTypeCode.Void => "void", PrimitiveTypeCode.Boolean => "bool",
        PrimitiveTypeCode.Char => "char", PrimitiveTypeCode.SByte => "int8",
        PrimitiveTypeCode.Byte => "uint8", PrimitiveTypeCode.Int16 => "int16",
        PrimitiveTypeCode.UInt16 => "uint16", PrimitiveTypeCode.Int32 => "int32",
        PrimitiveTypeCode.UInt32 => "uint32", PrimitiveTypeCode.Int64 => "int64",
        PrimitiveTypeCode.UInt64 => "uint64", PrimitiveTypeCode.Single => "float32",
        PrimitiveTypeCode.Double => "float64", PrimitiveTypeCode.String => "string",
        PrimitiveTypeCode.TypedReference => "typedref", PrimitiveTypeCode.IntPtr => "native int",
        PrimitiveTypeCode.UIntPtr => "native uint", _ => "object" };
    static string Kind(byte k) => k == (byte)SignatureTypeKind.ValueType ? "valuetype " : "class ";
    public string GetTypeFromDefinition(MetadataReader r, TypeDefinitionHandle h, byte k) =>
        Kind(k) + Program.TypeName(h, "/");
    public string GetTypeFromReference(MetadataReader r, TypeReferenceHandle h, byte k) =>
        Kind(k) + RefName(r, h);
    static string RefName(MetadataReader r, TypeReferenceHandle h)
    {
        var t = r.GetTypeReference(h);
        var name = r.GetString(t.Name);
        if (t.ResolutionScope.Kind == HandleKind.TypeReference)
            return RefName(r, (TypeReferenceHandle)t.ResolutionScope) + "/" + name;
        var ns = r.GetString(t.Namespace);
        var asm = t.ResolutionScope.Kind == HandleKind.AssemblyReference ?
            "[" + r.GetString(r.GetAssemblyReference((AssemblyReferenceHandle)t.ResolutionScope).Name) + "]" : "";
        return asm + (ns.Length > 0 ? ns + "." + name : name);
    }
    public string GetTypeFromSpecification(MetadataReader r, object c, TypeSpecificationHandle h, byte k) =>
        r.GetTypeSpecification(h).DecodeSignature(this, c);
    public string GetSZArrayType(string e) => e + "[]";
    // ILASM's shape: int32[0...,0...] for int[,]; [...] for rank 1 without bounds
    public string GetArrayType(string e, ArrayShape s) => e + "[" + string.Join(",",
        Enumerable.Range(0, s.Rank).Select(i => i < s.Sizes.Length && i < s.LowerBounds.Length ?
            s.LowerBounds[i] + "..." + (s.LowerBounds[i] + s.Sizes[i] - 1) :
            i < s.Sizes.Length ? s.Sizes[i].ToString() :
            i < s.LowerBounds.Length ? s.LowerBounds[i] + "..." : "")) +
        (s.Rank == 1 && s.Sizes.Length == 0 && s.LowerBounds.Length == 0 ? "..." : "") + "]";
    public string GetByReferenceType(string e) => e + "&";
    public string GetPointerType(string e) => e + "*";
    public string GetPinnedType(string e) => e;
    // after the type, without its kind: char& modreq(System.Runtime.InteropServices.InAttribute)
    public string GetModifiedType(string m, string u, bool req) => u + (req ? " modreq(" : " modopt(") +
        (m.StartsWith("class ") ? m.Substring(6) : m.StartsWith("valuetype ") ? m.Substring(10) : m) + ")";
    public string GetGenericInstantiation(string g, ImmutableArray<string> a) => g + "<" + string.Join(",", a) + ">";
    public string GetGenericTypeParameter(object c, int i) => "!" + i;
    public string GetGenericMethodParameter(object c, int i) => "!!" + i;
    public string GetFunctionPointerType(MethodSignature<string> s) => "method " +
        (s.Header.IsInstance ? (s.Header.HasExplicitThis ? "instance explicit " : "instance ") : "") +
        (s.Header.CallingConvention switch {
            SignatureCallingConvention.CDecl => "unmanaged cdecl ",
            SignatureCallingConvention.StdCall => "unmanaged stdcall ",
            SignatureCallingConvention.ThisCall => "unmanaged thiscall ",
            SignatureCallingConvention.FastCall => "unmanaged fastcall ",
            SignatureCallingConvention.VarArgs => "vararg ",
            SignatureCallingConvention.Unmanaged => "unmanaged ",
            _ => "" }) +
        s.ReturnType + " *(" + string.Join(",", s.ParameterTypes) + ")";
}

class Program
{
    static MetadataReader md;

    public static string TypeName(TypeDefinitionHandle h, string sep = "+")
    {
        var t = md.GetTypeDefinition(h);
        var name = md.GetString(t.Name);
        var outer = t.GetDeclaringType();
        if (!outer.IsNil)
            return TypeName(outer, sep) + sep + name;
        var ns = md.GetString(t.Namespace);
        return ns.Length > 0 ? ns + "." + name : name;
    }

    static void Main(string[] args)
    {
        using var pe = new PEReader(File.OpenRead(args[0]));
        md = pe.GetMetadataReader();
        foreach (var h in md.MethodDefinitions) {
            var m = md.GetMethodDefinition(h);
            var sig = m.DecodeSignature(new Il(), null);
            Console.WriteLine(TypeName(m.GetDeclaringType()) + "::" + md.GetString(m.Name) +
                              "(" + string.Join(",", sig.ParameterTypes) + ")");
        }
    }
}
X
	if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -o srm/bin srm >srm.log 2>&1; then
		bad "cannot build the System.Reflection.Metadata reference: $(grep -m 1 error srm.log)"
	else
		for a in System.Text.RegularExpressions System.Linq System.Collections; do
			dotnet srm/bin/srm.dll "$fw/$a.dll" | sort >"srm-$a.txt"
			# Each name, its instantiation's type arguments and overload number
			# taken off, is a MethodDef's; and no more overloads than it has.
			python3 - "names-$a.txt" "srm-$a.txt" >check.txt <<'PY'
import collections, re, sys
ours = [l.strip() for l in open(sys.argv[1])]
ours = [n for n in ours if n != 'ReadyToRun::DelayLoadMethodCallThunks']
ref = collections.Counter(l.strip() for l in open(sys.argv[2]))
def split(s):
    # Type::Method(params) -> Type::Method, (params)
    i = s.find('(', s.rfind('::', 0, s.find('(') if '(' in s else len(s)))
    return (s[:i], s[i:]) if i >= 0 else (s, '')
def strip(s):
    # Type[args]::Method<args>(params)#N -> Type::Method(params); a method's
    # own name may hold <>, as explicit implementations do:
    # Ns.IEnumerable<T>.GetEnumerator
    s, params = split(re.sub(r'#\d+$', '', s))
    if s.endswith('>'):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {'>': 1, '<': -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    t, _, m = s.rpartition('::')
    while True:
        u = re.sub(r'\[[^\[\]]*\]', '', t)
        if u == t:
            return t + '::' + m + params
        t = u
plain = collections.Counter(n for n in ours if not re.search(r'[\[<]', split(n)[0]))
missing = [n for n in ours if strip(n) not in ref]
extra = [n for n, c in plain.items() if re.sub(r'#\d+$', '', n) == n and
         sum(v for k, v in plain.items() if re.sub(r'#\d+$', '', k) == n) > ref[n]]
print(len(ours), len(missing), len(extra), (missing + extra + [''])[0])
PY
			read -r total missing extra example <check.txt
			[ "$total" -gt 100 ] && [ "$missing" = 0 ] && [ "$extra" = 0 ] &&
				ok "$a: $total names, each a MethodDef's with its parameters in System.Reflection.Metadata" ||
				bad "$a: $missing of $total names not a MethodDef's, $extra too many overloads: $example"
		done
	fi
fi

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

# make install: the command and its man page alone, under PREFIX (default
# /usr/local) in DESTDIR, built in a folder of the test's own.
src=$(dirname "$here")
for p in "" /opt/mde; do
	dest=$tmp/dest${p:-default}
	root=$dest${p:-/usr/local}
	t0=$(date +%s)
	expect_status "make install${p:+ PREFIX=$p} DESTDIR" 0 make -s -C "$src" O="$tmp/build" \
		${p:+PREFIX="$p"} DESTDIR="$dest" install
	[ "$(cd "$dest" 2>/dev/null && find . ! -type d -printf '%m %p\n' | sort)" = "644 .${p:-/usr/local}/share/man/man1/mkdebugelf.1
755 .${p:-/usr/local}/bin/mkdebugelf" ] && ok "installed the command and its page alone, in $(($(date +%s) - t0)) s" ||
		bad "installed: $(cd "$dest" 2>/dev/null && find . ! -type d -printf '%m %p\n' | tr '\n' ' ')"
	"$root/bin/mkdebugelf" --version | grep -q '^mkdebugelf [0-9]' && ok "the installed command runs" ||
		bad "installed mkdebugelf --version: $("$root/bin/mkdebugelf" --version 2>&1)"
	if command -v man >/dev/null; then
		MANPAGER=cat MANWIDTH=80 man --warnings -l "$root/share/man/man1/mkdebugelf.1" >man.txt 2>man.err
		[ $? = 0 ] && [ ! -s man.err ] && grep -q '^ *mkdebugelf - write ELF debug files' man.txt &&
			ok "man -l of the installed page, no warnings" ||
			bad "man -l $root/share/man/man1/mkdebugelf.1: $(head -n 3 man.err man.txt)"
	else
		echo "  skip: man -l of the installed page (no man here)"
	fi
done
expect_status "make uninstall" 0 make -s -C "$src" PREFIX=/opt/mde DESTDIR="$tmp/dest/opt/mde" uninstall
[ -z "$(find "$tmp/dest/opt/mde" ! -type d)" ] && ok "uninstalled" ||
	bad "left after uninstall: $(find "$tmp/dest/opt/mde" ! -type d)"

echo "mkdebugelf tests: $fails failed"
[ "$fails" = 0 ]
