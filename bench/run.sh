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
# oomkitd execs this build's hook runner likewise.
OOMKIT_HOOK_RUNNER="$(cd "$BUILD" && pwd)/helpers/oomkit-hook-runner"
export OOMKIT_HOOK_RUNNER

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

# 400 OOMs per side (about 25 ms each) give notify's p99 four samples
# above it, and its paired intervals room; the storm sizes and repetitions
# keep the rest near a minute and a half on a 2-core machine.
run notify 300 --count=400
run resolve 180 --pairs=25
run storm 240 --reps10=5 --reps100=3 --reps500=3
run machine 240 --pairs=10
run idle 90 --seconds=10
run daemon 240 --rounds=25
run rules 120 --rounds=30
# Three daemons, one of whose jobs holds 10 000 empty sub-cgroups (about
# 100 MiB of the kernel's memory, within the tree's limit); its rounds take
# seconds each, most of them the kernel's reclaim before the OOM.
run churn 300 --rounds=8

# Benchmark 8, against systemd-oomd: the systemd guest (tests/vm/systemd.sh)
# boots ROUNDS times, and each boot runs the same workload twice, first
# under systemd-oomd with Fedora's settings (ManagedOOMMemoryPressure=kill,
# 50% for 20 s), then under oomkitd with priorities on the same units
# (check_oomd_baseline, check_oomkitd_anchor).  Their DATA lines become the
# samples: from the hog's start to the kill, which unit died, and what the
# high-priority unit lost.  Guest times are emulated: the ratio is what counts.
run_guest() {
	local rounds="${OOMKIT_BENCH_GUEST_ROUNDS:-3}" i start rc log
	local qexit="$BUILD/tests/vm/qexit" hog="$BUILD/tests/vm/oomkit-hog"
	printf 'bench: %-8s ' anchor >&2
	if [ ! -x "$qexit" ] || [ ! -x "$hog" ] || [ ! -x "$BUILD/daemon/oomkitd" ]; then
		echo "not run: the build has no guest tier (tests enabled) or no oomkitd" >&2
		echo "N anchor: not run, the build has no guest tier" > "$RAW/anchor.txt"
		return
	fi
	# The D-Bus helper, where the build has one (libsystemd): its libraries too.
	local helper=
	[ -x "$BUILD/helpers/oomkitd-systemd" ] && helper="--libs-of $BUILD/helpers/oomkitd-systemd"
	start=$(date +%s)
	: > "$RAW/anchor.txt"
	for i in $(seq 1 "$rounds"); do
		log="$RAW/anchor-$i.log"
		bash "$HERE/../tests/vm/systemd.sh" --build "$BUILD" --qexit "$qexit" --with "$hog" \
			--libs-of "$BUILD/daemon/oomkitd" --libs-of "$BUILD/cli/oomkit" $helper --only oomd_baseline,oomkitd_anchor \
			--env SDG_OOMD_LIMIT=50% --env SDG_OOMD_DURATION=20s --log "$log" >"$RAW/anchor.err" 2>&1
		rc=$?
		[ $rc = 0 ] || echo "N anchor: boot $i: systemd.sh exited $rc: $(tail -n 1 "$RAW/anchor.err")" >> "$RAW/anchor.txt"
		[ $rc = 77 ] && break
		awk -v boot="$i" '
		/sdguest: DATA (systemd-oomd|oomkitd) / {
			side = $0 ~ /DATA systemd-oomd / ? "oomd" : "oomkitd"
			for (f = 1; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
			wrong = v["victim"] == "oomd-hog.service" ? 0 : 1
			print "S anchor " side "-wrong " wrong
			if (v["victim"] != "none") print "S anchor " side "-kill " v["kill_after_ms"]
			else if (v["waited_ms"] != "") print "S anchor " side "-nokill " v["waited_ms"]
			after = v["keeper_rss_kib_after"] == "" ? 0 : v["keeper_rss_kib_after"]
			print "S anchor " side "-lost " (v["keeper_rss_kib_before"] - after) / 1024
			if (v["victim"] == "none")
				print "N anchor: boot " boot ": " side " killed no unit within the check'"'"'s wait (" v["waited_ms"] " ms)"
			else
				print "N anchor: boot " boot ": " side " killed " v["victim"] " after " v["kill_after_ms"] " ms"
		}' "$log" >> "$RAW/anchor.txt"
	done
	echo "$(($(date +%s) - start)) s ($rounds boots)" >&2
	grep -q '^S anchor oomd-wrong' "$RAW/anchor.txt" && grep -q '^S anchor oomkitd-wrong' "$RAW/anchor.txt" ||
		failed="$failed anchor"
}
run_guest

cut -d' ' -f1-3 /proc/loadavg > "$RAW/load-end"
mkdir -p "$RESULTS"
python3 "$HERE/report.py" "$RAW" "$RESULTS" "$failed" || failed="$failed report"
if [ -n "$failed" ]; then
	echo "bench: could not measure:$failed" >&2
	exit 1
fi
exit 0
