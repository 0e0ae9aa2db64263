#!/bin/bash
# Turn 'perf test' output (6.12 to 7.3 format) into one line per test:
#   STATUS<TAB>SUITE[ / CASE]
# with STATUS one of ok, fail, skip. perf test may exit 0 even when tests
# fail, so this output is what decides.
# Usage: scripts/perf-test-results.sh < perf-test-output
set -euo pipefail

sed 's/\x1b\[[0-9;]*m//g' | awk '
	match($0, /^ *[0-9]+(\.[0-9]+)?: /) {
		num = substr($0, RSTART, RLENGTH)
		rest = substr($0, RSTART + RLENGTH)
		# The status follows the last " : " (descriptions are padded).
		i = 0
		while ((j = index(substr(rest, i + 1), " :")) > 0)
			i += j + 1
		if (i == 0)
			next
		desc = substr(rest, 1, i - 2)
		sub(/ +$/, "", desc)
		status = substr(rest, i + 1)
		sub(/^ +/, "", status)
		sub(/ +$/, "", status)
		sub(/^ +/, "", num)
		sub(/: $/, "", num)
		if (num !~ /\./)
			suite = desc
		else
			desc = suite " / " desc
		if (status == "" || status ~ /^Running/)
			next
		if (status == "Ok")
			s = "ok"
		else if (status ~ /^FAILED/)
			s = "fail"
		else if (status ~ /^Skip/)
			s = "skip"
		else
			s = "fail"
		print s "\t" desc
	}'
