#!/bin/bash
# End to end for mkdebugelf: two processes run the AOT-style workload from one
# non-ELF image at different addresses and leave no perf map; a debug file
# written from an offline map of the image, or from the perf map of an earlier
# process while it ran (--pid), makes both stock and patched perf name their
# samples.
set -euo pipefail
STEP=offline-e2e
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

tool=$BUILD/mkdebugelf/mkdebugelf
patched=$BUILD/patched/perf
out=$BUILD/offline-e2e
rm -rf "$out"
mkdir -p "$out"
make -s -C "$TOP/mkdebugelf" O="$BUILD/mkdebugelf" || die "cannot build mkdebugelf"

# A process that maps the image elsewhere still and names it in its perf map.
"$patched" test -w mapimage 2 "$out/app.img" 32 &
live=$!
for _ in $(seq 50); do
	[ -s "/tmp/perf-$live.map" ] && break
	sleep 0.1
done
"$tool" --pid "$live" --install --root "$out/live-symfs" >"$out/live.txt" 2>&1 ||
	die "mkdebugelf --pid $live failed: $(head -n 1 "$out/live.txt")"
wait "$live" || die "the workload of process $live failed"

"$patched" record -q -o "$out/perf.data" -e cpu-clock -- sh -c "
	$patched test -w mapimage 1 $out/app.img 0 &
	$patched test -w mapimage 1 $out/app.img 16 &
	wait" >/dev/null 2>"$out/record.err" ||
	die "perf record failed: $(head -n 1 "$out/record.err")"

pids=$("$patched" script -i "$out/perf.data" -F pid,ip,dso 2>/dev/null |
	awk '/app\.img/ { print $1 }' | sort -u)
[ "$(echo "$pids" | wc -w)" = 2 ] || die "expected samples in app.img from 2 processes, got: $pids"
for pid in $pids; do
	[ ! -e "/tmp/perf-$pid.map" ] || die "/tmp/perf-$pid.map is still there: not an offline test"
done

# The workload's layout: three 0x100 byte functions from file offset 0x1000.
printf '1000 100 mapimage_one\n1100 100 mapimage_two\n1200 100 mapimage_four\n' >"$out/app.map"
"$tool" --map "$out/app.map" --install --root "$out/symfs" "$out/app.img"
"$tool" --map "$out/app.map" --install --symfs "$out/linked" "$out/app.img" >/dev/null ||
	die "mkdebugelf --symfs failed"

for symfs in symfs live-symfs linked; do
	for v in base patched; do
		report=$out/report-$symfs-$v.txt
		"$BUILD/$v/perf" report -i "$out/perf.data" --symfs "$out/$symfs" --stdio -q \
			--sort pid,dso,sym 2>/dev/null >"$report"
		for pid in $pids; do
			for f in mapimage_one mapimage_two mapimage_four; do
				grep -q "$pid:.*app\.img .*\[\.\] $f\$" "$report" ||
					die "$v perf does not name $f in process $pid (see $report)"
			done
		done
		if grep -q 'app\.img .*\[\.\] 0x' "$report"; then
			die "$v perf leaves raw offsets in app.img (see $report)"
		fi
		note "$symfs: $v perf names every app.img sample of both processes"
	done
done

# perf report --symfs DIR looks for every object under DIR: with --root DIR,
# the workload's other objects (perf itself, libc, ld.so) lose their names;
# --symfs DIR links the rest of / into DIR and keeps them.
for symfs in none symfs linked; do
	opt=()
	# with a symfs, perf reads no kallsyms unless told: name it as a user would
	[ "$symfs" = none ] || opt=(--symfs "$out/$symfs" --kallsyms /proc/kallsyms)
	"$BUILD/base/perf" report -i "$out/perf.data" "${opt[@]}" --stdio -q --sort dso,sym \
		2>/dev/null | grep -v 'app\.img' | sort >"$out/others-$symfs.txt"
done
named=$(grep -cv '\] 0x' "$out/others-none.txt" || true)
lost=$(comm -23 "$out/others-none.txt" "$out/others-symfs.txt" | grep -cv '\] 0x' || true)
[ "$named" -gt 0 ] && [ "$lost" -gt 0 ] ||
	die "no other object named without --symfs, or none lost with --root: not a test"
cmp -s "$out/others-none.txt" "$out/others-linked.txt" ||
	die "--symfs: other objects not named as without it (see $out/others-*.txt)"
note "other objects: $named named lines without --symfs; --root DIR loses $lost of them, --symfs DIR none"
