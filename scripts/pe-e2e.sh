#!/bin/bash
# The patched perf's own PE reader (patches 19-20) end to end, with no debug
# file and no perf map (perf record --no-buildid-cache, and every perf run
# with --buildid-dir on an empty folder of its own: ~/.debug is never read).
#
# C. A mingw-w64 DLL exporting one function, its other (static) functions
#    each with a .pdata entry, linked with -s (no COFF symbols), mapped from
#    its file and run by a Linux process (a small driver built here) that
#    names the static functions in its perf map, and the export under another
#    name: samples in the export named from the PE, in the others from the
#    perf map, none otherwise; stock perf names none. Without the perf map,
#    the static functions stay unnamed, as in mkdebugelf's debug file.
#    perf test -w mapimage SECONDS IMAGE can't run an arbitrary PE: it calls
#    file offsets 0x1000, 0x1100 and 0x1200 of IMAGE (SysV calls, an
#    iteration count in %rdi) and names those 0x100-byte slots mapimage_one,
#    _two and _four; a DLL laid out for that (its export in the first slot)
#    is checked the same way.
# A. A CPU-bound Windows program built with mingw-w64 gcc (FileAlignment
#    0x1000: Wine maps it from the file) under Wine 8: at least 95% of the
#    samples in Wine's PE DLLs named, and sample by sample the names
#    mkdebugelf's debug files give (stock perf with them); the program named
#    from its COFF symbols; the patched perf with the debug files names as
#    stock perf does (ELF debug files first).
# B. Every sample in the program checked against the DWARF of the same build
#    with -g (its .text identical): none named by a function it isn't in.
#    Wine's DLLs carry DWARF too: their samples are checked the same way.
# Part C needs mingw-w64, A and B Wine too; each skips (77) without them.
set -euo pipefail
STEP="pe-e2e"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

wine=/usr/lib/wine/wine64
wine_server=/usr/lib/wine/wineserver64
dlls=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
perf=$BUILD/patched/perf
base=$BUILD/base/perf
py() { python3 "$TOP/scripts/pe_e2e.py" "$@"; }
# report OUT ARGS...: pe_e2e.py ARGS into OUT, shown; its last line if it fails
report() {
	local f=$1 rc=0
	shift
	py "$@" >"$f" || rc=$?
	while IFS= read -r l; do echo "[$STEP] $l"; done <"$f"
	[ "$rc" = 0 ] || die "$(tail -n 1 "$f" | sed 's/^FAIL: //')"
}

[ -x "$perf" ] && [ -x "$base" ] || die "no perf in $BUILD/patched and $BUILD/base (make build)"
for t in gcc objdump objcopy nm addr2line; do
	command -v "x86_64-w64-mingw32-$t" >/dev/null ||
		{ echo "mingw-w64 is not installed (no x86_64-w64-mingw32-$t)"; exit 77; }
done
command -v python3 >/dev/null || { echo "python3 is not installed"; exit 77; }
out=$BUILD/pe-e2e
# The Wine prefix is kept: making one takes 15-20 s
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 ! -name prefix -exec rm -rf {} +
mkdir -p "$out/buildid"
# perf with a build-id cache of its own, empty: nothing of ~/.debug is used
P() { "$perf" --buildid-dir "$out/buildid" "$@"; }
S() { "$base" --buildid-dir "$out/buildid" "$@"; }
perf_maps=
trap 'rm -f $perf_maps' EXIT
mingw() { x86_64-w64-mingw32-gcc -O2 -Wl,--file-alignment=0x1000 -Wl,--section-alignment=0x1000 "$@"; }
same_text() { # A B: the same .text and .pdata, at the same addresses
	local s
	for s in .text .pdata; do
		[ "$(x86_64-w64-mingw32-objdump -h "$1" | awk -v s="$s" '$2 == s { print $3, $4, $6 }')" = \
		  "$(x86_64-w64-mingw32-objdump -h "$2" | awk -v s="$s" '$2 == s { print $3, $4, $6 }')" ] ||
			return 1
		x86_64-w64-mingw32-objcopy -O binary -j "$s" "$1" "$out/a$s"
		x86_64-w64-mingw32-objcopy -O binary -j "$s" "$2" "$out/b$s"
		cmp -s "$out/a$s" "$out/b$s" || return 1
	done
	rm -f "$out"/[ab].text "$out"/[ab].pdata
}

make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" || die "cannot build mkdebugelf"
note "no build-id cache: perf record --no-buildid-cache, every perf run with --buildid-dir $out/buildid (empty)"

# C. ---------------------------------------------------------------------
STEP="pe-e2e C"
cat >"$out/pedll.c" <<'C'
/* One export; the other functions static, each with a .pdata entry. */
#define SPIN(name, mul)							\
	__attribute__((noinline, used)) static unsigned long long	\
	name(unsigned long long x)					\
	{								\
		int i;							\
									\
		for (i = 0; i < 20000; i++) {				\
			x = x * (mul) + (unsigned long long)i;		\
			__asm__ volatile("" : "+r"(x));			\
		}							\
		return x;						\
	}

SPIN(pe_static_a, 6364136223846793005ULL)
SPIN(pe_static_b, 2862933555777941757ULL)

__declspec(dllexport) unsigned long long pe_export(unsigned long long x)
{
	int i;

	for (i = 0; i < 20000; i++) {
		x = x * 3935559000370003845ULL + (unsigned long long)i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

SPIN(pe_static_c, 3202034522624059733ULL)
C
cat >"$out/pedrv.c" <<'C'
/*
 * pedrv DLL SECONDS PERFMAP OFFSET...: map the PE file DLL, whose sections
 * are at their RVAs in the file (FileAlignment 0x1000), PROT_READ|PROT_EXEC
 * from file offset 0, write PERFMAP's "OFFSET SIZE NAME" lines (hex file
 * offsets) to a new /tmp/perf-PID.map at their addresses there, and call
 * the functions at the OFFSETs (Windows x64 calling convention, a 64-bit
 * integer in and out) in turn for SECONDS. Prints its pid first; exits with
 * 3 if a perf map of another process with that pid is there.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef uint64_t __attribute__((ms_abi)) (*pe_fn)(uint64_t);

static volatile sig_atomic_t done;

static void alarmed(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	unsigned long off, size;
	char name[256], path[64];
	uint64_t x = 1;
	struct stat st;
	FILE *in, *out;
	char *base;
	int fd, i;

	if (argc < 5)
		return 2;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	base = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == EEXIST)
		return 3;
	in = fopen(argv[3], "r");
	out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!in || !out) {
		perror(path);
		return 1;
	}
	while (fscanf(in, "%lx %lx %255s", &off, &size, name) == 3)
		fprintf(out, "%lx %lx %s\n", (unsigned long)(base + off), size, name);
	if (fclose(out))
		return 1;
	signal(SIGALRM, alarmed);
	alarm(atoi(argv[2]));
	while (!done) {
		for (i = 4; i < argc; i++)
			x = ((pe_fn)(base + strtoul(argv[i], NULL, 16)))(x);
	}
	printf("%llx\n", (unsigned long long)x);
	return 0;
}
C
# Linked twice, with and without COFF symbols (-s): the same code, the
# symbols of the first say where the second's static functions are
for v in syms stripped; do
	s=
	[ "$v" = syms ] || s=-s
	mingw -shared $s -Wl,--image-base=0x7ff7a0000000 -o "$out/pedll-$v.dll" "$out/pedll.c" \
		2>"$out/pedll-$v.err" || die "mingw-w64 cannot build the DLL: $(head -n 1 "$out/pedll-$v.err")"
done
same_text "$out/pedll-syms.dll" "$out/pedll-stripped.dll" || die "the DLL's code differs with -s"
cc -O2 -Wall -o "$out/pedrv" "$out/pedrv.c" || die "cannot build the driver"
dll=$out/pedll-stripped.dll
py c-layout "$dll" "$out/pedll-syms.dll" "$out" >"$out/c-layout.txt" ||
	die "the DLL's layout: $(tail -n 1 "$out/c-layout.txt")"
read -r -a offs <"$out/c-layout.txt"
note "DLL: one export, three static functions at file offsets ${offs[*]} (export first), no COFF symbols"
# A perf map another process of the same pid left is not ours: run again
for try in 1 2 3; do
	rc=0
	P record --no-buildid-cache -q -o "$out/c.data" -e cpu-clock -- \
		"$out/pedrv" "$dll" 2 "$out/c-perfmap.in" "${offs[@]}" >"$out/pedrv.out" \
		2>"$out/c-record.err" || rc=$?
	pid=$(head -n 1 "$out/pedrv.out")
	[ "$rc" = 3 ] || break
	note "/tmp/perf-$pid.map was there already (another process's): run $try again"
done
[ "$rc" = 0 ] || die "perf record of the driver failed: $(head -n 1 "$out/c-record.err")"
perf_maps="$perf_maps /tmp/perf-$pid.map"
cp "/tmp/perf-$pid.map" "$out/c-perf-$pid.map"
P script -i "$out/c.data" -F ip,sym,symoff,dsoff >"$out/c-patched.txt" 2>"$out/c-patched.err"
S script -i "$out/c.data" -F ip,sym,symoff,dsoff >"$out/c-stock.txt" 2>/dev/null
report "$out/c-check.txt" c-check "$out" c "$dll" "$out/c-patched.txt" "$out/c-stock.txt"
# Without the perf map: the static functions' .pdata ranges have no name, so
# their code stays unnamed (not the export before it), as in mkdebugelf's
# debug file
rm -f "/tmp/perf-$pid.map"
P script -i "$out/c.data" -F ip,sym,symoff,dsoff >"$out/c-nomap.txt" 2>/dev/null
"$BUILD/mkdebugelf/mkdebugelf" --install --root "$out/c-symfs" "$dll" >"$out/c-mkdebugelf.log" 2>&1 ||
	die "mkdebugelf failed on $dll (see $out/c-mkdebugelf.log)"
S script -i "$out/c.data" --symfs "$out/c-symfs" -F ip,sym,symoff,dsoff >"$out/c-debug.txt" 2>/dev/null
report "$out/c-nomap-check.txt" c-nomap "$out" c "$dll" "$out/c-nomap.txt" "$out/c-debug.txt"
note "passed: the export named from the PE, the static functions from the perf map"

# The same with perf's own workload, which runs three slots of code at file
# offsets 0x1000, 0x1100 and 0x1200 of whatever file IMAGE is (SysV calls,
# no argument used here) and names them mapimage_one, _two and _four in its
# perf map ("keep": left for the report): a DLL laid out for it, its export
# in the first slot, which the perf map's mapimage_one must not rename.
STEP="pe-e2e C/mapimage"
cat >"$out/slots.c" <<'C'
#define SLOT(name)							\
	__attribute__((noinline, used, aligned(256))) unsigned long long	\
	name(unsigned long long n)					\
	{								\
		unsigned long long i, x = 0;				\
									\
		(void)n;						\
		for (i = 0; i < 100000; i++) {				\
			x += i;						\
			__asm__ volatile("" : "+r"(x));			\
		}							\
		return x;						\
	}

__declspec(dllexport) SLOT(slot_export)
static SLOT(slot_two)
static SLOT(slot_four)
C
for v in syms stripped; do
	s=
	[ "$v" = syms ] || s=-s
	mingw -shared -nostdlib -Wl,--entry=0 -fno-toplevel-reorder $s -Wl,--image-base=0x7ff7b0000000 \
		-o "$out/slots-$v.dll" "$out/slots.c" 2>"$out/slots-$v.err" ||
		die "mingw-w64 cannot build the DLL: $(head -n 1 "$out/slots-$v.err")"
done
same_text "$out/slots-syms.dll" "$out/slots-stripped.dll" || die "the DLL's code differs with -s"
dll=$out/slots-stripped.dll
py m-layout "$dll" "$out/slots-syms.dll" "$out" >"$out/m-layout.txt" ||
	die "the DLL's layout: $(tail -n 1 "$out/m-layout.txt")"
# mapimage fails if its pid's perf map is there (another process's): again
for try in 1 2 3; do
	rc=0
	P record --no-buildid-cache -q -o "$out/m.data" -e cpu-clock -- \
		"$perf" test -w mapimage 2 "$dll" 0 keep >"$out/m-record.out" 2>"$out/m-record.err" || rc=$?
	grep -q 'cannot write /tmp/perf-[0-9]*\.map: File exists' "$out/m-record.err" || break
	note "$(grep -o '/tmp/perf-[0-9]*\.map' "$out/m-record.err") was there already (another process's): run $try again"
	rc=1
done
[ "$rc" = 0 ] || die "perf record of perf test -w mapimage failed: $(head -n 1 "$out/m-record.err")"
P script -i "$out/m.data" -F pid,ip,dso 2>/dev/null | awk '/slots-stripped\.dll/ { print $1 }' | sort -u >"$out/m-pids"
[ "$(wc -l <"$out/m-pids")" = 1 ] || die "no samples of one process in $dll"
pid=$(cat "$out/m-pids")
perf_maps="$perf_maps /tmp/perf-$pid.map"
cp "/tmp/perf-$pid.map" "$out/m-perf-$pid.map"
P script -i "$out/m.data" -F ip,sym,symoff,dsoff >"$out/m-patched.txt" 2>"$out/m-patched.err"
S script -i "$out/m.data" -F ip,sym,symoff,dsoff >"$out/m-stock.txt" 2>/dev/null
report "$out/m-check.txt" c-check "$out" m "$dll" "$out/m-patched.txt" "$out/m-stock.txt"
note "passed: the export named from the PE, the two other slots from mapimage's perf map"

# A. ---------------------------------------------------------------------
STEP="pe-e2e A"
[ -x "$wine" ] && [ -d "$dlls" ] ||
	{ echo "parts A and B skipped, wine64 is not installed (part C passed)"; exit 77; }
cat >"$out/peprog.c" <<'C'
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static CRITICAL_SECTION cs;
static int arr[32];

__attribute__((noinline)) static unsigned long own_mix(unsigned long x)
{
	int i;

	for (i = 0; i < 300; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long own_hash(const char *s, unsigned long h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211UL;
	return h;
}

static int own_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	DWORD end = GetTickCount() + 2500;
	unsigned long n = 0, x = 1;
	WCHAR wbuf[64];
	char buf[64];
	int i;

	InitializeCriticalSection(&cs);
	while (GetTickCount() < end) {
		void *p;

		EnterCriticalSection(&cs);
		n++;
		LeaveCriticalSection(&cs);
		p = HeapAlloc(GetProcessHeap(), 0, 16 + (n & 255));
		HeapFree(GetProcessHeap(), 0, p);
		sprintf(buf, "%lu %lx", n, x);
		MultiByteToWideChar(CP_ACP, 0, buf, -1, wbuf, 64);
		x = own_hash(buf, own_mix(x));
		for (i = 0; i < 32; i++)
			arr[i] = (int)((x >> (i & 31)) ^ (unsigned long)i * 2654435761UL);
		qsort(arr, 32, sizeof(arr[0]), own_cmp);
	}
	printf("%lu %lu\n", n, x);
	return 0;
}
C
exe=$out/peprog.exe
mingw -o "$exe" "$out/peprog.c" 2>"$out/peprog.err" ||
	die "mingw-w64 cannot build the program: $(head -n 1 "$out/peprog.err")"
mingw -g -o "$out/peprog-g.exe" "$out/peprog.c" 2>"$out/peprog-g.err" ||
	die "mingw-w64 cannot build the program with -g: $(head -n 1 "$out/peprog-g.err")"
same_text "$exe" "$out/peprog-g.exe" || die "the program's code differs with -g"
export WINEPREFIX=$out/prefix WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/system.reg" ]; then
	rm -rf "$WINEPREFIX"
	timeout 300 "$wine" wineboot -i >"$out/wineboot.log" 2>&1 || die "wineboot failed (see $out/wineboot.log)"
fi
# record_wine: peprog.exe under Wine recorded into a.data, its pid in $pid.
# Wine's server and services start in the recording: more of its PE files run
record_wine() {
	local rec
	timeout 60 "$wine_server" -k >/dev/null 2>&1 || true
	P record --no-buildid-cache -q -o "$out/a.data" -e cpu-clock -- "$wine" "$exe" \
		>"$out/peprog.out" 2>"$out/a-record.err" &
	rec=$!
	pid=
	for _ in $(seq 300); do
		kill -0 "$rec" 2>/dev/null ||
			die "perf record of Wine ended before peprog.exe ran: $(head -n 1 "$out/a-record.err")"
		pid=$(pgrep -n -x peprog.exe || true)
		[ -n "$pid" ] && grep -s peprog.exe "/proc/$pid/maps" >"$out/peprog.maps" && break
		pid=
		sleep 0.1
	done
	[ -n "$pid" ] || { kill "$rec" 2>/dev/null; die "peprog.exe did not start under Wine in 30 s"; }
	wait "$rec" || die "perf record of Wine failed: $(head -n 1 "$out/a-record.err")"
	timeout 60 "$wine" wineboot -k >/dev/null 2>&1 || true
}
# No perf map: if another process left one at the pid of a process of the
# recording (pids are reused), record again
for try in 1 2 3; do
	record_wine
	stale=
	while read -r p; do
		[ ! -e "/tmp/perf-$p.map" ] || stale="$stale /tmp/perf-$p.map"
	done < <(P script -i "$out/a.data" -F pid 2>/dev/null | sort -u)
	[ -n "$stale" ] || break
	[ "$try" != 3 ] || die "perf maps at pids of the recording, 3 times:$stale"
	note "perf maps of earlier processes at pids of the recording:$stale; run $try again"
done
grep -q ' r-xp .*peprog\.exe$' "$out/peprog.maps" ||
	die "Wine did not map peprog.exe's code from the file (see $out/peprog.maps)"
note "peprog.exe (pid $pid) ran its code from the file: $(grep ' r-xp ' "$out/peprog.maps" | awk '{ print $1, $2, "@" $3 }')"

# The PE files sampled, and no debug file of theirs where perf looks
P script -i "$out/a.data" -F ip,sym,symoff,dsoff >"$out/a-plain.txt" 2>"$out/a-plain.err"
sed -n 's/.* (\(\/[^ ]*\)+0x[0-9a-f]*)$/\1/p' "$out/a-plain.txt" | sort -u >"$out/a-objects"
: >"$out/a-pe-objects"
while read -r f; do
	if [ "$(head -c 2 "$f" 2>/dev/null)" = MZ ]; then
		echo "$f" >>"$out/a-pe-objects"
	fi
done <"$out/a-objects"
plain_symfs=()
while read -r f; do
	for d in "/usr/lib/debug$f.debug" "/usr/lib/debug$f" "$(dirname "$f")/.debug/$(basename "$f")"; do
		if [ -e "$d" ]; then
			plain_symfs=(--symfs "$out/plain-root")
		fi
	done
	mkdir -p "$out/plain-root$(dirname "$f")"
	ln -s "$f" "$out/plain-root$f"
done <"$out/a-pe-objects"
if [ ${#plain_symfs[@]} -gt 0 ]; then
	note "debug files of these PE files are installed in /usr/lib/debug: the plain report reads them from $out/plain-root (links to them alone)"
	P script -i "$out/a.data" "${plain_symfs[@]}" -F ip,sym,symoff,dsoff >"$out/a-plain.txt" 2>"$out/a-plain.err"
fi
S script -i "$out/a.data" "${plain_symfs[@]}" -F ip,sym,symoff,dsoff >"$out/a-stock.txt" 2>/dev/null

# mkdebugelf's debug files for every PE file sampled, the rest of / linked
while read -r f; do
	"$BUILD/mkdebugelf/mkdebugelf" --install --symfs "$out/symfs" "$f" >>"$out/mkdebugelf.log" 2>&1 ||
		die "mkdebugelf failed on $f (see $out/mkdebugelf.log)"
done <"$out/a-pe-objects"
note "mkdebugelf: debug files for the $(wc -l <"$out/a-pe-objects") PE files sampled, in $out/symfs"
S script -i "$out/a.data" --symfs "$out/symfs" -F ip,sym,symoff,dsoff >"$out/a-debug-stock.txt" 2>/dev/null
P script -i "$out/a.data" --symfs "$out/symfs" -F ip,sym,symoff,dsoff >"$out/a-debug-patched.txt" 2>/dev/null
report "$out/a-compare.txt" a-compare "$dlls" "$exe" "$out/a-plain.txt" "$out/a-stock.txt" \
	"$out/a-debug-stock.txt" "$out/a-debug-patched.txt"
note "passed"

# B. ---------------------------------------------------------------------
STEP="pe-e2e B"
report "$out/b-dwarf.txt" b-dwarf "$exe" "$out/peprog-g.exe" "$out/a-plain.txt"
report "$out/b-dll-dwarf.txt" dll-dwarf "$dlls" "$out/a-plain.txt"
note "passed"
