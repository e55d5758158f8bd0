#!/bin/sh
# Runs every libFuzzer target for a bounded time with its seed corpus.
#   run.sh TARGET_DIR SECONDS
# TARGET_DIR holds the fuzz-* binaries (BUILD/tests/fuzz).  Each target starts
# from a copy of tests/fuzz/corpus/NAME, so the repository is not modified;
# a crashing input is kept in TARGET_DIR/crashes/ to be added to the corpus
# once fixed.  Prints "fuzz NAME: N runs, ok" per target; exits 1 on a crash.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 TARGET_DIR SECONDS" >&2
	exit 2
fi
dir=$1 seconds=$2
corpora=$(cd "$(dirname "$0")" && pwd)/corpus
work=$(mktemp -d /tmp/oomkit-fuzz-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

status=0 count=0
for exe in "$dir"/fuzz-*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	name=$(basename "$exe")
	count=$((count + 1))
	mkdir -p "$work/$name"
	if [ -d "$corpora/$name" ]; then
		cp "$corpora/$name"/* "$work/$name"/
	else
		echo "fuzz $name: warning: no seed corpus in $corpora/$name" >&2
	fi
	log=$work/$name.log
	if "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$work/$name-" "$work/$name" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		echo "fuzz $name: ${runs:-?} runs, ok"
	else
		status=1
		mkdir -p "$dir/crashes"
		for a in "$work/$name"-*; do
			[ -f "$a" ] && cp "$a" "$dir/crashes/" && echo "fuzz $name: kept $dir/crashes/$(basename "$a")"
		done
		echo "fuzz $name: FAILED"
		tail -n 40 "$log"
	fi
done
if [ "$count" -eq 0 ]; then
	echo "fuzz: no fuzz-* targets in $dir" >&2
	exit 1
fi
exit $status
