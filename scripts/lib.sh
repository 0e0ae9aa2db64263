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

# The topics of patches/topics, in order.
topics() {
	awk '!/^#/ && NF { print $1 }' "$TOP/patches/topics"
}

# topic_field NAME N: field N of topic NAME's line (2 version, 3 patches,
# 4 prerequisites).
topic_field() {
	awk -v t="$1" -v f="$2" '!/^#/ && $1 == t { print $f }' "$TOP/patches/topics"
}

# topic_patches NAME: the topic's patch files, in series order.
topic_patches() {
	local range
	range=$(topic_field "$1" 3)
	[ -n "$range" ] || die "no topic $1 in patches/topics"
	grep -v -e '^#' -e '^$' "$TOP/patches/series" | sed -n "${range%-*},${range#*-}p"
}

# topic_stack NAME: the patches of its prerequisites, then its own.
topic_stack() {
	local p
	for p in $(topic_field "$1" 4 | tr ',' ' '); do
		[ "$p" = - ] || topic_patches "$p"
	done
	topic_patches "$1"
}
