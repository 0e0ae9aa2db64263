# Shared helpers for the harness scripts; sourced, not run.
# shellcheck shell=bash
# The variables are for the scripts that source this file.
# shellcheck disable=SC2034

STEP=${STEP:-harness}

die() {
	echo "FAILED [$STEP]: $*" >&2
	exit 1
}

note() {
	echo "[$STEP] $*"
}

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/src
SRC_BASE=$BUILD/src-base

# The identity of patches/: the series file and every patch it lists.
series_id() {
	(cd "$TOP/patches" && { cat series; xargs -r cat <series; } 2>/dev/null | sha1sum | cut -c1-40)
}
