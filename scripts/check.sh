#!/bin/bash
# Everything that decides whether the series is good. Each check prints one
# PASS/FAIL/SKIP line (details in build/logs/<check>.log); the last line
# counts them, and the exit status is non-zero if any failed.
set -uo pipefail
STEP=check
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

logs=$BUILD/logs
mkdir -p "$logs"
passed=0 failed=0 skipped=0

# run NAME COMMAND...: exit 0 passes, 77 skips, anything else fails.
run() {
	local name=$1 start rc
	shift
	start=$(date +%s)
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	case $rc in
	0) passed=$((passed + 1)); echo "PASS  $name ($(($(date +%s) - start))s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP  $name: $(tail -n 1 "$logs/$name.log")" ;;
	*) failed=$((failed + 1)); echo "FAIL  $name: $(grep -m1 '^FAILED' "$logs/$name.log" || tail -n 1 "$logs/$name.log")"
	   echo "      (see $logs/$name.log)" ;;
	esac
}

S=$TOP/scripts
run series-applies "$S/verify-series.sh"
run shellcheck sh -c "cd '$TOP' && shellcheck -S warning scripts/*.sh bench/run.sh bench/soak.sh mkdebugelf/tests/run.sh .ci/run"
run checkpatch "$S/checkpatch.sh"
run perf-test-new "$S/perf-test-new.sh"
run demo "$S/demo.sh" --check
run install sh -c "PREFIX='$BUILD/install-root' '$S/install.sh'"
run recipes "$S/recipes.sh"
run parse-once "$S/parse-once.sh"
run mkdebugelf sh -c "make -s -C '$TOP/mkdebugelf' O='$BUILD/mkdebugelf' all asan &&
	'$TOP/mkdebugelf/tests/run.sh' '$BUILD/mkdebugelf/mkdebugelf' &&
	'$TOP/mkdebugelf/tests/run.sh' '$BUILD/mkdebugelf/mkdebugelf-asan'"
run offline-e2e "$S/offline-e2e.sh"
run wine-e2e "$S/wine-e2e.sh"
run pe-e2e "$S/pe-e2e.sh"
run dotnet-e2e "$S/dotnet-e2e.sh"
run r2r-e2e "$S/r2r-e2e.sh"
run asan "$S/asan.sh"
run fuzz-smoke "$S/fuzz.sh" 2000
run perf-test-gate "$S/perf-test-gate.sh"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
