#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/run.sh BUILD_DIR: runs every benchmark (`make bench`), prints one
# table, writes the raw figures to bench/results/latest.json and draws
# bench/results/latency.png.  Each benchmark alternates oomkit and its
# baseline in this one run; ratios are the figures that count on a shared
# machine.  Exits non-zero only when something could not be measured, never
# for a slow figure.
#
# Every memcg lies under /sys/fs/cgroup/memory/oomkit-bench-<this shell's
# pid>, bounded by a limit there and on each benchmark's own memcg, and is
# removed on any exit, also after a benchmark was killed by its timeout.
# Needs root and the cgroup v1 memory controller.
# shellcheck disable=SC3043 # 'local': dash and bash have it, remove_tree recurses
set -u

BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS="$HERE/results"
BIN="$BUILD/bench/oomkit-bench"
MEMROOT=/sys/fs/cgroup/memory
TOP="oomkit-bench-$$"
# The largest benchmark (storm, 500 memcgs of 2 MiB) needs about 1 GiB.
TOP_LIMIT=$((1280 * 1024 * 1024))
RAW=$(mktemp -d /tmp/oomkit-bench-raw.XXXXXX)

# Kills what is left in this run's memcgs, gives their kernel killers back
# and removes them, deepest first.
remove_tree() {
	local cg="$1" sub p _
	[ -d "$cg" ] || return 0
	for sub in "$cg"/*/; do
		[ -d "$sub" ] && remove_tree "${sub%/}"
	done
	echo 0 > "$cg/memory.oom_control" 2>/dev/null
	for _ in $(seq 1 200); do
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
		rmdir "$cg" 2>/dev/null && return 0
		[ -d "$cg" ] || return 0
		sleep 0.05
	done
	echo "bench: could not remove $cg" >&2
}

cleanup() {
	remove_tree "$MEMROOT/$TOP"
	rm -rf "$RAW"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if [ "$(id -u)" != 0 ] || [ ! -w "$MEMROOT/cgroup.event_control" ]; then
	echo "bench: needs root and the cgroup v1 memory controller at $MEMROOT" >&2
	exit 1
fi
if [ ! -x "$BIN" ] && [ -f "$BUILD/build.ninja" ]; then
	# A build directory configured with -Dbench=false: turn the benchmarks on.
	echo "bench: $BIN is missing; configuring $BUILD with -Dbench=true" >&2
	meson configure "$BUILD" -Dbench=true >/dev/null && ninja -C "$BUILD" >&2
fi
if [ ! -x "$BIN" ]; then
	echo "bench: $BIN is missing: build first (meson setup $BUILD && ninja -C $BUILD)" >&2
	exit 1
fi
if ! mkdir "$MEMROOT/$TOP" || ! echo "$TOP_LIMIT" > "$MEMROOT/$TOP/memory.limit_in_bytes"; then
	echo "bench: cannot create $MEMROOT/$TOP with a limit" >&2
	exit 1
fi
export OOMKIT_BENCH_PARENT="$TOP"
# Handlers exec the guardian program of this build, as an installed one would.
OOMKIT_GUARDIAN="$(cd "$BUILD" && pwd)/lib/oomkit-guardian"
export OOMKIT_GUARDIAN

# The machine's load average at the start and at the end of the run goes
# with the figures: on a shared machine it says what they were measured under.
cut -d' ' -f1-3 /proc/loadavg > "$RAW/load-start"

failed=""
# run NAME TIMEOUT_S [ARGS...]: one benchmark under a timeout; its sample
# lines go to $RAW/NAME.txt.
run() {
	local name="$1" limit="$2" start rc
	shift 2
	start=$(date +%s)
	printf 'bench: %-8s ' "$name" >&2
	timeout -k 10 "$limit" "$BIN" "$name" "$@" > "$RAW/$name.txt" 2> "$RAW/$name.err"
	rc=$?
	echo "$(($(date +%s) - start)) s (exit $rc)" >&2
	if [ $rc != 0 ] || grep -q '^F ' "$RAW/$name.txt"; then
		failed="$failed $name"
		grep '^F ' "$RAW/$name.txt" >&2
		[ $rc = 124 ] && echo "bench: $name timed out after $limit s" >&2
		tail -n 5 "$RAW/$name.err" >&2
	fi
}

# 200 OOMs per side fit easily (about 30 ms each); the storm sizes and
# repetitions keep the whole run near two minutes on a 2-core machine.
run notify 180 --count=200
run resolve 180 --pairs=25
run storm 240 --reps10=5 --reps100=3 --reps500=3
run machine 240 --pairs=10
run idle 90 --seconds=10
run daemon 240 --rounds=25

cut -d' ' -f1-3 /proc/loadavg > "$RAW/load-end"
mkdir -p "$RESULTS"
python3 "$HERE/report.py" "$RAW" "$RESULTS" "$failed" || failed="$failed report"
if [ -n "$failed" ]; then
	echo "bench: could not measure:$failed" >&2
	exit 1
fi
exit 0
