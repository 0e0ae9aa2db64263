#!/bin/bash
# .NET end to end on the real runtime: a C# program (dotnet/e2e) whose JIT
# code runs from .NET's W^X double mapping, /memfd:doublemapper (deleted),
# named only in its perf map (DOTNET_PerfMapEnabled=3). Stock perf leaves those
# samples raw; the patched perf names them. Controls on the same program: W^X
# off (JIT code in anonymous memory, named by both perfs) and jitdump
# (DOTNET_PerfMapEnabled=2, perf record -k 1, perf inject --jit).
# Measured and printed, not asserted: ReadyToRun framework code (in no perf
# map) and perf top on the running program (methods compiled after it
# started). A service run by another user, recorded by root: its memfd named
# from its perf map with no override, from a file and from a pipe.
set -euo pipefail
STEP=dotnet-e2e
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || { echo "dotnet is not installed"; exit 77; }
base=$BUILD/base/perf patched=$BUILD/patched/perf
[ -x "$base" ] && [ -x "$patched" ] || die "build first: make build"
out=$BUILD/dotnet-e2e
run=$out/run
app=$out/app/bin/e2e/release	# dotnet's --artifacts-path layout
start=$SECONDS
rm -rf "$run"
mkdir -p "$run" "$out/no-feed"

if ! "$patched" record -q -o "$run/probe.data" -e cpu-clock -- true >/dev/null 2>"$run/probe.err"; then
	echo "perf record is not permitted here: $(head -n 1 "$run/probe.err")"
	exit 77
fi

# perf record's build-id cache, perf inject's too: not root's ~/.debug.
export PERF_BUILDID_DIR=$run/buildid

# Every process this step starts: its perf map (a copy stays in $run) and
# jitdump go at exit.
svc=
cleanup() {
	local pid
	for pid in $(jobs -p); do
		kill "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	for pid in $(cat "$run/pids" 2>/dev/null); do
		cp "/tmp/perf-$pid.map" "$run/" 2>/dev/null || true
		rm -f "/tmp/perf-$pid.map" "/tmp/perfinfo-$pid.map" "/tmp/jit-$pid.dump" "/tmp/jitted-$pid-"*.so
	done
	[ -z "$svc" ] || rm -rf "$svc"
}
trap cleanup EXIT

# Offline (an empty package source: the program needs no package), out of the
# repository (--artifacts-path), no build server left running.
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
	DOTNET_CLI_HOME=$out/home NUGET_PACKAGES=$out/nuget
t=$SECONDS
dotnet build "$TOP/dotnet/e2e/e2e.csproj" -c Release --artifacts-path "$out/app" \
	--source "$out/no-feed" --disable-build-servers -nologo -v q >"$run/build.log" 2>&1 ||
	die "dotnet build failed (see $run/build.log)"
[ -f "$app/e2e.dll" ] || die "no $app/e2e.dll after dotnet build"
note "built dotnet/e2e in $((SECONDS - t))s ($(dotnet --version) SDK)"

# The runtime's knobs come from each run's own environment only.
for v in $(env | sed -n 's/^\(DOTNET_[A-Za-z_]*\)=.*/\1/p'); do
	case $v in DOTNET_CLI_*|DOTNET_NOLOGO|DOTNET_SKIP_FIRST_TIME_EXPERIENCE) ;; *) unset "$v" ;; esac
done

# pid_of NAME: the pid the program printed, remembered for the cleanup.
pid_of() {
	local pid
	pid=$(awk '$1 == "pid" { print $2; exit }' "$run/$1.out")
	[ -n "$pid" ] || die "$1: the program printed no pid (see $run/$1.out, $run/$1.err)"
	echo "$pid" >>"$run/pids"
	echo "$pid"
}

# record NAME [PERF RECORD OPTIONS] -- [ENV=VALUE...]: the program under the
# patched perf record, a few seconds: jit 1.5 s, framework 1.5 s, late 1 s.
record() {
	local name=$1 opts=()
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	env "$@" "$patched" record -q "${opts[@]}" -o "$run/$name.data" -e cpu-clock -- \
		dotnet "$app/e2e.dll" 1.5 1.5 1 >"$run/$name.out" 2>"$run/$name.err" ||
		die "perf record of the program ($name) failed: $(head -n 1 "$run/$name.err")"
	pid_of "$name" >/dev/null
}

# report PERF DATA TXT [OPTIONS]: samples by dso and symbol, '|' between.
report() {
	local perf=$1 data=$2 txt=$3
	shift 3
	"$perf" report -i "$data" --stdio -n --sort dso,sym -t '|' "$@" 2>"$txt.err" |
		grep -v '^#' | grep '|' >"$txt" || true
}

# stats TXT: all JIT JIT-named R2R R2R-named OWN (sample counts). JIT code:
# the memfd, anonymous memory ("[JIT] tid PID" named from the perf map,
# perf-PID.map in older perfs, [anon]), jitdump's jitted-*.so and, after
# perf inject --jit, user space perf cannot place. R2R code: the framework's
# PE images, or what jitdump calls [PreJIT]. OWN: this program's E2e methods.
stats() {
	awk -F'|' '
	NF < 4 { next }
	{
		n = $2 + 0; dso = $3; sym = $4
		for (i = 5; i <= NF; i++) sym = sym "|" $i
		gsub(/^ +| +$/, "", dso); sub(/^ *\[.\] /, "", sym); sub(/ +$/, "", sym)
		named = sym !~ /^0x[0-9a-f]+$/ && sym != "[unknown]"
		r2r = dso ~ /\.dll$/ || (dso ~ /^jitted-/ && sym ~ /\[PreJIT\]$/)
		jit = !r2r && (dso ~ /^memfd:doublemapper/ || dso ~ /^\[JIT\] tid / || dso ~ /^perf-[0-9]+\.map$/ ||
			dso ~ /^jitted-[0-9]+-[0-9]+\.so$/ || dso ~ /anon/ || dso == "[unknown]")
		all += n
		if (jit) { jt += n; if (named) jn += n }
		if (r2r) { rt += n; if (named) rn += n }
		if (named && sym ~ /E2e/) own += n
	}
	END { printf "%d %d %d %d %d %d\n", all, jt, jn, rt, rn, own }' "$1"
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * a / b; else printf "-" }'; }
at_least() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && 100 * a >= p * b) }'; }

# methods TXT: this program's methods named in a report, "Class::Method",
# one a line (all tiers of a method are one line).
methods() {
	grep -oE '(E2e[A-Za-z]*|dynamicClass)::E2e[A-Za-z]*' "$1" | sort -u || true
}
own_methods="E2eHot::E2eHotPolynomialSpin E2eHot::E2eHotSieveSpin E2eHot::E2eHotXorshiftSpin
E2eLate::E2eLateBornSpin dynamicClass::E2eDynamicLate"
own_methods=$(echo "$own_methods" | tr ' ' '\n' | sort)

# tiers TXT: samples of this program's methods by optimization tier.
tiers() {
	awk -F'|' '$4 ~ /E2e/ && match($4, /\[[A-Za-z0-9]+\] *$/) {
		t = substr($4, RSTART, RLENGTH); sub(/ +$/, "", t); n[t] += $2
	} END { for (t in n) printf "%s %d, ", t, n[t] }' "$1" | sed 's/, $//'
}

# top_jit TXT N: the N JIT code symbols with most samples.
top_jit() {
	awk -F'|' '$3 ~ /memfd|\[JIT\] tid|perf-[0-9]+\.map|jitted-|anon/ {
		sym = $4; sub(/^ *\[.\] /, "", sym); sub(/ +$/, "", sym); printf "%7d  %s\n", $2, sym }' "$1" |
		sort -rn | awk -v n="$2" 'NR <= n'
}

rows=()
row() { rows+=("$(printf '%-34s %7s %8s %8s %7s %8s %8s' "$@")"); }

# 1. W^X on (the default), perf map only: JIT code in the memfd.
t=$SECONDS
record wx -- DOTNET_PerfMapEnabled=3
for v in base patched; do
	report "$BUILD/$v/perf" "$run/wx.data" "$run/wx-$v.txt"
done
wx_pid=$(pid_of wx)
read -r _ jt jn_base rt rn_base _ < <(stats "$run/wx-base.txt")
read -r all jt jn rt rn own < <(stats "$run/wx-patched.txt")
# Stock perf shows the memfd as a dso; the patched perf, as JIT memory.
grep -q 'memfd:doublemapper' "$run/wx-base.txt" || die "no samples in /memfd:doublemapper with W^X on (see $run/wx-base.txt)"
note "W^X on, DOTNET_PerfMapEnabled=3 (pid $wx_pid, $((SECONDS - t))s): $all samples, $jt in JIT code, $rt in R2R images"
note "  JIT code named: stock $(pct "$jn_base" "$jt"), patched $(pct "$jn" "$jt"); R2R named: stock $(pct "$rn_base" "$rt"), patched $(pct "$rn" "$rt")"
note "  this program's methods: $own samples ($(pct "$own" "$all")), by tier: $(tiers "$run/wx-patched.txt")"
note "  patched perf's top JIT symbols:"
top_jit "$run/wx-patched.txt" 6 | sed "s/^/[$STEP]     /"
# Framework code: hot methods tiered up into the memfd, the rest still R2R.
note "  framework methods JIT-ed into the memfd: $(awk -F'|' '$3 ~ /memfd|\[JIT\] tid/ && $4 ~ /\[System\./ { n += $2 } END { print n + 0 }' "$run/wx-patched.txt") samples;" \
	"R2R images: $(awk -F'|' '{ d = $3; gsub(/^ +| +$/, "", d) } d ~ /\.dll$/ { n[d] += $2 } END { for (d in n) printf "%s %d, ", d, n[d] }' "$run/wx-patched.txt" | sed 's/, $//')"
row "W^X on, perf map (=3)" "$jt" "$(pct "$jn_base" "$jt")" "$(pct "$jn" "$jt")" "$rt" "$(pct "$rn_base" "$rt")" "$(pct "$rn" "$rt")"
wx_jt=$jt wx_jn=$jn wx_jn_base=$jn_base
wx_methods=$(methods "$run/wx-patched.txt")

# 2. Control: W^X off, JIT code in anonymous memory, perf's old perf map path.
t=$SECONDS
record wxoff -- DOTNET_PerfMapEnabled=3 DOTNET_EnableWriteXorExecute=0
for v in base patched; do
	report "$BUILD/$v/perf" "$run/wxoff.data" "$run/wxoff-$v.txt"
done
read -r _ jt jn_base rt rn_base _ < <(stats "$run/wxoff-base.txt")
read -r all jt jn rt rn own < <(stats "$run/wxoff-patched.txt")
grep -q 'memfd:doublemapper' "$run/wxoff-base.txt" && die "W^X off, yet samples in /memfd:doublemapper"
note "W^X off (pid $(pid_of wxoff), $((SECONDS - t))s): $all samples, $jt in JIT code, $rt in R2R images"
note "  JIT code named: stock $(pct "$jn_base" "$jt"), patched $(pct "$jn" "$jt"); R2R named: stock $(pct "$rn_base" "$rt"), patched $(pct "$rn" "$rt")"
row "W^X off, perf map (=3)" "$jt" "$(pct "$jn_base" "$jt")" "$(pct "$jn" "$jt")" "$rt" "$(pct "$rn_base" "$rt")" "$(pct "$rn" "$rt")"
wxoff_jt=$jt wxoff_jn=$jn wxoff_jn_base=$jn_base
wxoff_methods=$(methods "$run/wxoff-base.txt")

# 3. Control: jitdump. .NET writes it to DOTNET_PerfMapJitDumpPath; perf inject
# writes one jitted-PID-N.so per method beside it. With the runtime's default
# stub granularity, .NET 10 logs 64 KiB stub blocks of which it cannot read
# all: writev() fails part way and the runtime stops its jitdump for good.
# DOTNET_PerfMapStubGranularity=2 logs stubs one by one; the default is
# measured too.
jitdump() { # NAME [ENV=VALUE...]
	local name=$1
	shift
	mkdir -p "$run/$name-dump"
	record "$name" -k 1 -- DOTNET_PerfMapEnabled=2 DOTNET_PerfMapJitDumpPath="$run/$name-dump" "$@"
	"$patched" inject --jit -i "$run/$name.data" -o "$run/$name-inj.data" 2>"$run/$name-inject.err" ||
		die "perf inject --jit ($name) failed: $(head -n 1 "$run/$name-inject.err")"
}
t=$SECONDS
jitdump jitdump DOTNET_PerfMapStubGranularity=2
jd_so=$(find "$run/jitdump-dump" -name 'jitted-*.so' | wc -l)
for v in base patched; do
	report "$BUILD/$v/perf" "$run/jitdump-inj.data" "$run/jitdump-$v.txt"
done
read -r _ jt jn_base rt rn_base _ < <(stats "$run/jitdump-base.txt")
read -r all jt jn rt rn own < <(stats "$run/jitdump-patched.txt")
note "jitdump + perf inject --jit (pid $(pid_of jitdump), $((SECONDS - t))s): $jd_so jitted .so files, $all samples, $jt in JIT code, $rt in R2R code"
note "  JIT code named: stock $(pct "$jn_base" "$jt"), patched $(pct "$jn" "$jt"); R2R named: stock $(pct "$rn_base" "$rt"), patched $(pct "$rn" "$rt")"
note "  stock perf's top JIT symbols:"
top_jit "$run/jitdump-base.txt" 6 | sed "s/^/[$STEP]     /"
row "jitdump (=2, stubs 2) + inject" "$jt" "$(pct "$jn_base" "$jt")" "$(pct "$jn" "$jt")" "$rt" "$(pct "$rn_base" "$rt")" "$(pct "$rn" "$rt")"
jd_methods=$(methods "$run/jitdump-base.txt")

t=$SECONDS
jitdump jitdump-default
jdd_so=$(find "$run/jitdump-default-dump" -name 'jitted-*.so' | wc -l)
report "$base" "$run/jitdump-default-inj.data" "$run/jitdump-default-base.txt"
read -r all jt jn rt rn own < <(stats "$run/jitdump-default-base.txt")
note "jitdump with the default stub granularity ($((SECONDS - t))s): $jdd_so jitted .so files, $(wc -c <"$run"/jitdump-default-dump/jit-*.dump) bytes of jitdump; stock perf names $(pct "$jn" "$jt") of $jt JIT samples"
row "jitdump (=2, default stubs)" "$jt" "$(pct "$jn" "$jt")" "" "$rt" "$(pct "$rn" "$rt")" ""

# The same methods, named alike, in the three ways.
note "this program's methods named: W^X on (patched): $(grep -c . <<<"$wx_methods"), W^X off (stock): $(grep -c . <<<"$wxoff_methods"), jitdump (stock): $(grep -c . <<<"$jd_methods")"
# names FILE: this program's full symbol names (with tier), one a line.
names() {
	awk -F'|' '$4 ~ /E2e/ { sub(/^ *\[.\] /, "", $4); sub(/ +$/, "", $4); print $4 }' "$1" | sort -u
}
names "$run/wx-patched.txt" >"$run/names-wx.txt"
names "$run/wxoff-base.txt" >"$run/names-wxoff.txt"
names "$run/jitdump-base.txt" >"$run/names-jitdump.txt"
note "  full names (with tier): W^X on $(wc -l <"$run/names-wx.txt"), W^X off $(wc -l <"$run/names-wxoff.txt"), jitdump $(wc -l <"$run/names-jitdump.txt");" \
	"in W^X on and W^X off: $(comm -12 "$run/names-wx.txt" "$run/names-wxoff.txt" | wc -l)," \
	"in W^X on and jitdump: $(comm -12 "$run/names-wx.txt" "$run/names-jitdump.txt" | wc -l)"

# What decides the step, checked here and after perf top; every failure is
# printed, the step fails at the end.
failures=0
fail() {
	echo "[$STEP] FAIL: $*"
	failures=$((failures + 1))
}
at_least "$wx_jn" "$wx_jt" 95 || fail "patched perf names only $(pct "$wx_jn" "$wx_jt") of the W^X JIT samples (see $run/wx-patched.txt)"
! at_least "$wx_jn_base" "$wx_jt" 5 || fail "stock perf names $(pct "$wx_jn_base" "$wx_jt") of the W^X JIT samples: expected ~none"
[ "$wx_methods" = "$own_methods" ] || fail "patched perf does not name all of the program's methods in the memfd:" $wx_methods
at_least "$wxoff_jn_base" "$wxoff_jt" 95 || fail "W^X off: stock perf names only $(pct "$wxoff_jn_base" "$wxoff_jt") of the JIT samples"
at_least "$wxoff_jn" "$wxoff_jt" 95 || fail "W^X off: patched perf names only $(pct "$wxoff_jn" "$wxoff_jt") of the JIT samples"
[ "$wxoff_methods" = "$own_methods" ] || fail "W^X off: stock perf does not name all of the program's methods:" $wxoff_methods
[ "$jd_methods" = "$own_methods" ] || fail "jitdump: stock perf does not name all of the program's methods:" $jd_methods "(see $run/jitdump-base.txt)"

# wait_map NAME PID: until the program's perf map names its hot methods.
wait_map() {
	local i
	for i in $(seq 100); do
		grep -q E2eHotXorshiftSpin "/tmp/perf-$2.map" 2>/dev/null && return 0
		[ "$i" = 100 ] || sleep 0.1
	done
	die "$1: no E2eHotXorshiftSpin in /tmp/perf-$2.map after 10 s"
}
# started NAME: the pid of a program started in the background, once printed.
started() {
	local i
	for i in $(seq 100); do
		grep -q '^pid ' "$run/$1.out" 2>/dev/null && break
		sleep 0.1
	done
	pid_of "$1"
}

# 4. perf top, stock and patched at once, on the running program, attached as
# a user would once it has run for a while (1.5 s; attached earlier, perf top
# named the late methods in more of our runs). Its jit phase runs until the
# trigger file appears, once each perf top has shown two screens with samples;
# then 1 s of framework code and 4 s of methods compiled only then. perf
# record -p, attached at the same time, records the same for perf report.
# Each screen (-z: the last second's samples) is stamped with the time it was
# read; COLUMNS keeps perf top from cutting its lines to 80 characters. perf
# top's stdin: a FIFO nobody writes to (at EOF it would show its key menu
# instead of samples).
t=$SECONDS
env DOTNET_PerfMapEnabled=3 dotnet "$app/e2e.dll" 0 1 4 "$run/top.trigger" >"$run/top.out" 2>"$run/top.err" &
top_job=$!
top_pid=$(started top)
wait_map top "$top_pid"
sleep 1.5
mkfifo "$run/top.stdin"
exec 3<>"$run/top.stdin"
top_start=$EPOCHREALTIME
rm -f "$run"/top-*.txt
# perf top -p and perf record -p give up if one of the process's threads
# exits while they attach (the runtime starts and ends threads as it goes):
# each is tried again, up to 3 times, if it is gone after 1 s.
declare -A top_reader top_perf
attach_failures=0
start_top() { # PERF: perf top in the background, its screens stamped into top-PERF.txt
	local v=$1 try
	for try in 1 2 3; do
		rm -f "$run/top-$v.pipe"
		mkfifo "$run/top-$v.pipe"
		while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done \
			<"$run/top-$v.pipe" >>"$run/top-$v.txt" &
		top_reader[$v]=$!
		COLUMNS=1000 LINES=100 timeout -s INT 60 stdbuf -oL "$BUILD/$v/perf" top --stdio -p "$top_pid" \
			-d 1 -z -E 40 -s dso,sym <&3 >"$run/top-$v.pipe" 2>"$run/top-$v-perf.err" &
		top_perf[$v]=$!
		sleep 1
		kill -0 "${top_perf[$v]}" 2>/dev/null && return 0
		wait "${top_reader[$v]}" || true
		attach_failures=$((attach_failures + 1))
		note "$v perf top -p gave up (try $try): $(grep -m1 -v '^Error:$' "$run/top-$v-perf.err" || true)"
	done
	die "$v perf top -p $top_pid does not start (see $run/top-$v-perf.err)"
}
start_top patched
start_top base
for try in 1 2 3; do
	"$patched" record -e cpu-clock -p "$top_pid" -o "$run/top-rec.data" >/dev/null 2>"$run/top-rec.err" &
	rec_job=$!
	sleep 1
	kill -0 "$rec_job" 2>/dev/null && break
	attach_failures=$((attach_failures + 1))
	note "perf record -p gave up (try $try): $(grep -m1 -v '^Error:$' "$run/top-rec.err" || true)"
	[ "$try" != 3 ] || die "perf record -p $top_pid does not start (see $run/top-rec.err)"
done
for _ in $(seq 100); do
	[ "$(awk '$2 == "PerfTop:" && $3 > 0 { n[FILENAME]++ } END { print (n[ARGV[1]] >= 2 && n[ARGV[2]] >= 2) }' \
		"$run/top-patched.txt" "$run/top-base.txt")" = 1 ] && break
	sleep 0.1
done
cp "/proc/$top_pid/maps" "$run/top-maps-before.txt"
touch "$run/top.trigger"
trigger=$EPOCHREALTIME
wait "$top_job" || die "the program under perf top failed (see $run/top.err)"
kill -INT "${top_perf[@]}"
for j in "${top_perf[@]}" "${top_reader[@]}"; do
	wait "$j" || true
done
wait "$rec_job" || die "perf record -p beside perf top failed: $(head -n 1 "$run/top-rec.err")"
exec 3>&-
late=$(awk '$1 == "phase" && $2 == "late" { print $3 }' "$run/top.out")
[ -n "$late" ] || die "perf top: the program did not reach its late phase (see $run/top.out)"
late_in_map=$(grep -c 'E2eLate\|E2eDynamicLate' "/tmp/perf-$top_pid.map" || true)
# Which of the late methods' code lies in executable memfd mappings that were
# there before the trigger (hex addresses compared as 16-digit strings)? A new
# mapping is a new map for perf, whose perf map symbols it reads when it first
# needs them.
late_old_maps=$(awk '
	function hex(a) { sub(/^0x/, "", a); a = tolower(a); while (length(a) < 16) a = "0" a; return a }
	FNR == NR { if ($2 ~ /x/ && $0 ~ /memfd:doublemapper/) { split($1, r, "-"); lo[++n] = hex(r[1]); hi[n] = hex(r[2]) } next }
	/E2eLate|E2eDynamicLate/ { a = hex($1); for (i = 1; i <= n; i++) if (a >= lo[i] && a < hi[i]) { k++; break } }
	END { print k + 0 }' "$run/top-maps-before.txt" "/tmp/perf-$top_pid.map")

# screens FROM TO PERF [last]: perf top's screens read between the two times:
# how many (with samples), percent in JIT code (mean of the screens: the
# memfd, the perf map dso the patched perf puts it in, or user space perf top
# has no map for), of it named, of it with no map ([unknown]), and this
# program's methods named, with their tiers. With "last", only the last of
# those screens that has JIT samples.
screens() {
	awk -v from="$1" -v to="$2" -v last="${4:-}" '
	function keep() { if (on && m > 0) { km = m; kmn = mn; kmu = mu; split("", kown); for (o in own) kown[o] = 1 } }
	/PerfTop:/ {
		if (last) { keep(); m = mn = mu = 0; split("", own) }
		on = $1 >= from && $1 < to; counted = 0; next
	}
	on && / \[[.k]\] / && !counted { n++; counted = 1 }
	on && / \[\.\] / {
		i = index($0, " [.] "); sym = substr($0, i + 5); left = substr($0, 1, i)
		split(left, f, " "); p = f[2]; sub(/%/, "", p)
		if (left ~ /memfd:doublemapper|\[JIT\] tid|\[unknown\]/) {
			m += p
			if (sym !~ /^0x[0-9a-f]+$/) mn += p
			else if (left ~ /\[unknown\]/) mu += p
		}
		if (match(sym, /(E2e[A-Za-z]*|dynamicClass)::E2e[A-Za-z]*/)) {
			o = substr(sym, RSTART, RLENGTH)
			if (match(sym, /\[[A-Za-z0-9]+\]$/)) o = o substr(sym, RSTART, RLENGTH)
			own[o] = 1
		}
	}
	END {
		if (last) {
			keep(); n = km > 0; m = km; mn = kmn; mu = kmu
			split("", own); for (o in kown) own[o] = 1
		}
		s = ""; for (o in own) s = s " " o
		printf "%d %.1f %.1f %.1f%s\n", n, (n > 0 ? m / n : 0), (m > 0 ? 100 * mn / m : 0), (m > 0 ? 100 * mu / m : 0), s
	}' "$run/top-$3.txt"
}
late_from=$(awk -v l="$late" 'BEGIN { printf "%.3f", l + 1.2 }')
note "perf top --stdio -p $top_pid -d 1 -z, stock and patched at once ($((SECONDS - t))s):"
declare -A top_early top_late top_unknown top_last
for v in base patched; do
	read -r n_early m_early mn_early mu_early own_early < <(screens "$top_start" "$trigger" "$v")
	read -r n_late m_late mn_late mu_late own_late < <(screens "$late_from" 9999999999 "$v")
	note "  $v, before new code: $n_early screens, ${m_early}% in JIT code; of that ${mn_early}% named, ${mu_early}% [unknown] (no map); methods:${own_early:- none}"
	note "  $v, late phase: $n_late screens, ${m_late}% in JIT code; of that ${mn_late}% named, ${mu_late}% [unknown] (no map); methods:${own_late:- none}"
	[ "$n_early" -gt 0 ] && [ "$n_late" -gt 0 ] || die "$v perf top printed no screens (see $run/top-$v.txt, $run/top-$v-perf.err)"
	top_early[$v]=$mn_early top_late[$v]=$mn_late top_unknown[$v]=$mu_late
	read -r _ m_last mn_last mu_last own_last < <(screens "$late_from" 9999999999 "$v" last)
	note "  $v, last screen of the late phase: ${m_last}% in JIT code; of that ${mn_last}% named, ${mu_last}% [unknown]; late methods:${own_last:- none}"
	top_last[$v]=$mn_last
done
note "  (the perf map has $late_in_map lines of late methods, $late_old_maps of them in executable memfd mappings that were there before the trigger)"
# The last of the loop: patched.
case $own_early in *E2eHot::E2eHotXorshiftSpin*) ;; *)
	fail "patched perf top does not name the program's methods while it runs (see $run/top-patched.txt)" ;;
esac
# perf top -p follows the threads the runtime starts after it attached (the
# series' first patch): code compiled late is named in its last screens.
at_least "${top_last[patched]}" 100 90 ||
	fail "patched perf top names only ${top_last[patched]}% of the JIT samples in its last screen of the late phase (see $run/top-patched.txt)"
case $own_last in *E2eLate::E2eLateBornSpin*) ;; *)
	fail "patched perf top does not name the late method E2eLateBornSpin in its last screen (see $run/top-patched.txt)" ;;
esac
report "$patched" "$run/top-rec.data" "$run/top-rec-patched.txt"
read -r _ jt jn _ < <(stats "$run/top-rec-patched.txt")
note "  perf record -p attached with perf top, patched perf report: JIT code named $(pct "$jn" "$jt") of $jt;" \
	"late methods:$(awk -F'|' '$4 ~ /E2eLate::|E2eDynamicLate/ && match($4, /(E2eLate|dynamicClass)::E2e[A-Za-z]*.*\]/) {
		o = substr($4, RSTART, RLENGTH); sub(/\(.*\)/, "", o); printf " %s", o }' "$run/top-rec-patched.txt")"
row "perf top, before new code" "screens" "${top_early[base]}%" "${top_early[patched]}%"
row "perf top, late methods" "screens" "${top_late[base]}%" "${top_late[patched]}%"
row "  late JIT samples [unknown]" "" "${top_unknown[base]}%" "${top_unknown[patched]}%"
row "perf top, last late screen" "screens" "${top_last[base]}%" "${top_last[patched]}%"
row "perf record -p beside perf top" "$jt" "" "$(pct "$jn" "$jt")"

# 5. A service: the program run as nobody (uid 65534), its perf map owned by
# nobody; root's perf records it by pid, to a file and to a pipe. Twice at
# once: W^X on (the fallback) and W^X off (perf's anonymous memory path).
# Its memfd is private to it: named from its perf map with no owner check,
# as its anonymous memory is, from a file and from a pipe alike; -f (which
# only files need) changes nothing here.
t=$SECONDS
svc=$(mktemp -d /tmp/dotnet-e2e.XXXXXX)
chmod 755 "$svc"
cp -r "$app" "$svc/app"
chmod -R a+rX "$svc/app"
mkdir "$svc/home"
chown 65534:65534 "$svc/home"
svc_jobs=() rec_jobs=()
for mode in on off; do
	wx=1
	[ "$mode" = on ] || wx=0
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME="$svc/home" DOTNET_CLI_HOME="$svc/home" DOTNET_PerfMapEnabled=3 \
		DOTNET_EnableWriteXorExecute=$wx dotnet "$svc/app/e2e.dll" 0 0.2 0.2 "$svc/trigger" \
		>"$run/svc-$mode.out" 2>"$run/svc-$mode.err" &
	svc_jobs+=("$!")
done
svc_on=$(started svc-on)
svc_off=$(started svc-off)
wait_map svc-on "$svc_on"
wait_map svc-off "$svc_off"
owner=$(stat -c %u "/tmp/perf-$svc_on.map")
# One recording each (at once), so each report's warnings are its own.
record_pid() { # NAME PID [OUTPUT]: to $run/NAME.data, or OUTPUT (- for a pipe)
	local try out=${3:-$run/$1.data}
	for try in 1 2 3; do
		"$patched" record -e cpu-clock -p "$2" -o "$out" -- sleep 2 \
			>"$run/$1.out" 2>"$run/$1-record.err" &&
			return 0
		echo "[$STEP] perf record -p gave up (try $try): $(grep -m1 -v '^Error:$' "$run/$1-record.err" || true)"
	done
	return 1
}
for mode in on off; do
	pid=$svc_on
	[ "$mode" = on ] || pid=$svc_off
	record_pid "svc-$mode" "$pid" >"$run/svc-$mode-tries.txt" &
	rec_jobs+=("$!")
	record_pid "svc-$mode-pipe" "$pid" - >"$run/svc-$mode-pipe-tries.txt" &
	rec_jobs+=("$!")
done
for j in "${rec_jobs[@]}"; do
	wait "$j" || die "perf record -p of the service failed (see $run/svc-*-record.err)"
done
cat "$run"/svc-*-tries.txt
attach_failures=$((attach_failures + $(cat "$run"/svc-*-tries.txt | wc -l)))
for mode in on off; do
	for v in base patched; do
		report "$BUILD/$v/perf" "$run/svc-$mode.data" "$run/svc-$mode-$v.txt"
		report "$BUILD/$v/perf" "$run/svc-$mode.data" "$run/svc-$mode-$v-force.txt" -f
		# perf record -o - | perf report -i -: a live session
		cat "$run/svc-$mode-pipe.out" |
			report "$BUILD/$v/perf" - "$run/svc-$mode-$v-pipe.txt"
	done
done
touch "$svc/trigger"
running=$( (kill -0 "$svc_on" && kill -0 "$svc_off") 2>/dev/null && echo "still running" || echo "no longer running")
for j in "${svc_jobs[@]}"; do
	wait "$j" || die "the service program failed (see $run/svc-*.err)"
done
note "service (uid 65534; its perf maps owned by uid $owner; $((SECONDS - t))s); reported while $running:"
for mode in on off; do
	declare -A share=()
	for r in base patched base-force patched-force base-pipe patched-pipe; do
		read -r _ jt jn _ < <(stats "$run/svc-$mode-$r.txt")
		share[$r]=$(pct "$jn" "$jt") share[$r-samples]=$jt
		share[$r-at-least-95]=$(at_least "$jn" "$jt" 95 && echo y || echo n)
		share[$r-at-least-5]=$(at_least "$jn" "$jt" 5 && echo y || echo n)
		warn=$(grep -m1 -i 'owned by\|not owned' "$run/svc-$mode-$r.txt.err" || true)
		note "  W^X $mode, $r: JIT code named ${share[$r]} of $jt${warn:+; warns: $warn}"
	done
	row "service, W^X $mode, file" "${share[patched-samples]}" "${share[base]}" "${share[patched]}"
	row "service, W^X $mode, file, -f" "${share[patched-force-samples]}" \
		"${share[base-force]}" "${share[patched-force]}"
	row "service, W^X $mode, pipe (live)" "${share[patched-pipe-samples]}" \
		"${share[base-pipe]}" "${share[patched-pipe]}"
	[ "${share[patched-pipe-at-least-95]}" = y ] ||
		fail "service, W^X $mode, from a pipe: ${share[patched-pipe]} named, expected 95% or more"
	[ "${share[patched-force-at-least-95]}" = y ] ||
		fail "service, W^X $mode, -f: ${share[patched-force]} named, expected 95% or more"
	[ "${share[patched-at-least-95]}" = y ] ||
		fail "service, W^X $mode, file: ${share[patched]} named, expected 95% or more"
	! grep -q 'owned by' "$run/svc-$mode-patched.txt.err" ||
		fail "service, W^X $mode, file: a warning about the perf map's owner"
	unset share
done

echo
printf '%-34s %7s %8s %8s %7s %8s %8s\n' "" "JIT" "named:" "" "R2R" "named:" ""
printf '%-34s %7s %8s %8s %7s %8s %8s\n' "run" "samples" "stock" "patched" "samples" "stock" "patched"
printf '%s\n' "${rows[@]}"
echo
note "done in $((SECONDS - start))s; perf top/record -p attaches tried again: $attach_failures"
[ "$failures" = 0 ] || die "$failures checks failed (FAIL lines above)"
