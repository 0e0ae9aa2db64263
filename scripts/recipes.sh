#!/bin/bash
# The README's recipes as typed: each indented block after a
# "<!-- recipe: NAME -->" line of README.md is run as it is, by bash, in a
# folder of its own where `perf` is stock perf (build/base/perf) and
# build/mkdebugelf/mkdebugelf is ours, on programs written here (game.c,
# app.dll): the clang/lld-link + PDB build line (and that it fails without
# mingw-w64's libgcc folder), the Wine recipe (the process it started, not an
# earlier one of the same name, named from its PDB; its perf map removed), the
# .NET one (the perf maps its processes leave removed). Exits 77 when a tool
# is missing, after running what it can.
set -euo pipefail
STEP=recipes
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out=$BUILD/recipes
run=$out/run
perf=$BUILD/base/perf
wine=/usr/lib/wine/wine64
[ -x "$perf" ] || die "no stock perf in $perf: run make build"
rm -rf "$out"
mkdir -p "$out/bin" "$run/build"
ln -s "$perf" "$out/bin/perf"
ln -s "$BUILD/mkdebugelf" "$run/build/mkdebugelf"
export PATH=$out/bin:$PATH
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" || die "cannot build mkdebugelf"
skipped='' decoy=''
# What it started: the decoy, the Wine processes of its prefix
cleanup() {
	if [ -n "$decoy" ]; then
		kill "$decoy" 2>/dev/null || true
		wait "$decoy" 2>/dev/null || true
		decoy=''
	fi
	[ -z "${WINEPREFIX:-}" ] || /usr/lib/wine/wineserver64 -k 2>/dev/null || true
}
trap cleanup EXIT

# recipe NAME: the README's block for NAME, without its indentation
recipe() {
	awk -v name="$1" '
		index($0, "<!-- recipe: " name " -->") == 1 { on = 1; next }
		!on { next }
		/^    / { sub(/^    /, ""); print; n++; next }
		/^$/ { next }
		{ exit }
		END { if (!n) exit 1 }' "$TOP/README.md" || die "README.md has no recipe $1"
}

# run_recipe NAME DIR: run it in DIR (its output in $out/NAME.out), noting
# which perf maps appear in /tmp while it runs (in $out/NAME.maps, with those
# there before in $out/NAME.before)
run_recipe() {
	local name=$1 dir=$2 poll rc=0
	recipe "$name" >"$out/$name.sh"
	ls /tmp/perf-*.map 2>/dev/null | sort >"$out/$name.before" || true
	while :; do ls /tmp/perf-*.map 2>/dev/null || true; sleep 0.2; done >"$out/$name.seen" &
	poll=$!
	(cd "$dir" && timeout 300 bash -e "$out/$name.sh") >"$out/$name.out" 2>&1 || rc=$?
	kill "$poll"
	wait "$poll" 2>/dev/null || true
	sort -u "$out/$name.seen" | comm -13 "$out/$name.before" - >"$out/$name.maps"
	[ "$rc" = 0 ] || die "recipe $name failed ($rc): $(tail -n 1 "$out/$name.out") (see $out/$name.out)"
}

# left_maps NAME PERFDATA: of the perf maps that appeared while NAME ran, those
# of the processes PERFDATA recorded (at least one) must be gone
left_maps() {
	local name=$1 data=$2 made=0 f
	"$perf" script -i "$data" -F pid 2>/dev/null | awk '{ print "/tmp/perf-" $1 ".map" }' |
		sort -u >"$out/$name.pids"
	while read -r f; do
		grep -qxF "$f" "$out/$name.pids" || continue
		made=$((made + 1))
		[ ! -e "$f" ] || die "recipe $name left $f"
	done <"$out/$name.maps"
	[ "$made" -gt 0 ] || die "recipe $name: no perf map of its processes appeared in /tmp"
	note "$name: $made perf map(s) written while it ran, none left"
}

# 1. The clang/lld-link + PDB build line
missing=''
for t in clang lld-link x86_64-w64-mingw32-gcc; do
	command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
	skipped="$skipped; lld-pdb and wine (missing:$missing)"
else
	cat >"$run/game.c" <<'C'
#include <windows.h>
#include <stdio.h>

static unsigned long __attribute__((noinline)) game_mix(unsigned long x)
{
	int i;

	for (i = 0; i < 1000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

int main(void)
{
	DWORD end = GetTickCount() + 16000;
	unsigned long x = 1;

	while (GetTickCount() < end)
		x = game_mix(x);
	printf("%lu\n", x);
	return 0;
}
C
	# Without the libgcc folder, the line fails as the README says
	recipe lld-pdb | sed 's/ -L"\$(dirname .*)")"//' >"$out/lld-nolib.sh"
	! grep -q -- ' -L' "$out/lld-nolib.sh" || die "no -L libgcc folder to take out of the lld-pdb recipe"
	! (cd "$run" && bash -e "$out/lld-nolib.sh") >"$out/lld-nolib.out" 2>&1 ||
		die "the lld-pdb recipe works without mingw-w64's libgcc folder: the README needn't give it"
	grep -q 'unable to find library -lgcc' "$out/lld-nolib.out" ||
		die "the lld-pdb recipe without the libgcc folder: $(tail -n 1 "$out/lld-nolib.out"), not the README's error"
	rm -f "$run/game.exe" "$run/game.pdb"
	run_recipe lld-pdb "$run"
	n=$(sed -n 's/.*game\.pdb: \([0-9]*\) functions.*/\1/p' "$out/lld-pdb.out")
	[ "${n:-0}" -ge 2 ] || die "mkdebugelf read ${n:-no} functions from the recipe's game.pdb (see $out/lld-pdb.out)"
	note "lld-pdb: game.exe built, mkdebugelf read $n functions from game.pdb"

	# 2. Wine: an earlier process of the same name (not a Windows program)
	# must not be the one the recipe follows
	if [ ! -x "$wine" ]; then
		skipped="$skipped; wine (wine64 is not installed)"
	else
		mkdir -p "$out/decoy"
		cp /bin/sleep "$out/decoy/game.exe"
		"$out/decoy/game.exe" 600 &
		decoy=$!
		# A Wine prefix of its own, new: the recipe waits while Wine sets it up
		export WINEPREFIX=$out/wine WINEDEBUG=-all
		run_recipe wine "$run"
		cleanup
		grep -qE '^ +[0-9.]+%.* \[\.\] game_mix$' "$out/wine.out" ||
			die "the wine recipe's perf report has no game_mix (see $out/wine.out)"
		note "wine: perf report names game_mix from the perf map of the process it started"
		left_maps wine "$run/perf.data"
	fi
fi

# 3. .NET: a program of its own as app.dll, built offline
if ! command -v dotnet >/dev/null; then
	skipped="$skipped; dotnet (dotnet is not installed)"
else
	mkdir -p "$out/app" "$run/dotnet"
	cat >"$out/app/app.csproj" <<'X'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <AssemblyName>app</AssemblyName>
    <InvariantGlobalization>true</InvariantGlobalization>
  </PropertyGroup>
</Project>
X
	cat >"$out/app/Program.cs" <<'X'
var end = System.DateTime.UtcNow.AddSeconds(2);
ulong x = 1;
while (System.DateTime.UtcNow < end)
	x = Hot.Mix(x);
System.Console.WriteLine(x);

static class Hot
{
	public static ulong Mix(ulong x)
	{
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
}
X
	mkdir -p "$out/no-feed"
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
	DOTNET_CLI_HOME=$out/home NUGET_PACKAGES=$out/nuget \
		dotnet build "$out/app/app.csproj" -c Release -o "$run/dotnet" --source "$out/no-feed" \
		--disable-build-servers -nologo -v q >"$out/dotnet-build.log" 2>&1 ||
		die "dotnet build failed (see $out/dotnet-build.log)"
	run_recipe dotnet "$run/dotnet"
	grep -q 'Samples' "$out/dotnet.out" || die "the dotnet recipe's perf report is empty (see $out/dotnet.out)"
	left_maps dotnet "$run/dotnet/perf.data"
fi

if [ -n "$skipped" ]; then
	echo "recipes skipped: ${skipped#; }"
	exit 77
fi
note "the README's recipes work as typed"
