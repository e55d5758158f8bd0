#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make demo: oomkitd on a 256 MiB demo machine with three jobs.  web (priority
# 900) starts first and is the largest, batch (priority 100) is small, player
# (priority 500) is the newest.  web then grows until the machine is out of
# memory, and oomkitd kills in the lowest-priority job -- batch -- instead of
# the largest process (the kernel's choice) or the newest.
#
#   scripts/demo.sh [BUILD_DIR]
#
# Needs root and the cgroup v1 memory controller.  Ends within 30 s and
# removes everything it created, also when it fails or is interrupted.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

BUILD=${1:-build}
OOMKITD=$BUILD/daemon/oomkitd
# The hook runner of this build, not an installed one.
export OOMKIT_HOOK_RUNNER="$(cd "$BUILD" && pwd)/daemon/oomkit-hook-runner"
OOMKIT=$BUILD/cli/oomkit
HOG=$BUILD/tests/helpers/oomkit-hog
MEMROOT=/sys/fs/cgroup/memory
NAME=oomkit-demo-$$
MACHINE=$MEMROOT/$NAME
DIR=$(mktemp -d /tmp/oomkit-demo.XXXXXX)
DPID=
export OOMKIT_SOCKET=$DIR/oomkitd.sock

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

cleanup() {
	local rc=$? cg p i
	trap - EXIT INT TERM
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	for cg in "$MACHINE"/*/ "$MACHINE" "$MACHINE-daemon" "$MACHINE-hooks"/*/ "$MACHINE-hooks"; do
		[ -d "$cg" ] || continue
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	for cg in "$MACHINE"/*/ "$MACHINE" "$MACHINE-daemon" "$MACHINE-hooks"/*/ "$MACHINE-hooks"; do
		for i in $(seq 1 50); do
			[ -d "$cg" ] || break
			rmdir "$cg" 2>/dev/null && break
			sleep 0.05
		done
	done
	rm -rf "$DIR"
	[ $rc = 0 ] && echo "demo: cleaned up" || echo "demo: failed; cleaned up" >&2
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ "$(id -u)" = 0 ] || die "needs root (it creates memory cgroups)"
[ -f $MEMROOT/memory.oom_control ] || die "needs the cgroup v1 memory controller at $MEMROOT"
for b in "$OOMKITD" "$OOMKIT" "$HOG"; do [ -x "$b" ] || die "$b is missing: build first (make build)"; done

# wait_for TENTHS CMD...: polls CMD every 0.1 s.
wait_for() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}
usage_mib() { echo $(( $(cat "$MACHINE/$1/memory.usage_in_bytes") >> 20 )); }
at_least() { [ "$(usage_mib "$1")" -ge "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

cat > "$DIR/oomkitd.conf" <<EOF2
[oomkitd]
machine = $MACHINE
machine_limit = 256M
policy = report, kill-lowest, kernel
delay = 2s
reserve = 16M
report_dir = $DIR/reports
socket = $DIR/oomkitd.sock
metrics = $DIR/oomkit.prom

[job web]
priority = 900
limit = 240M

[job batch]
priority = 100
limit = 64M

[job player]
priority = 500
limit = 128M
EOF2

say "the configuration"
sed -n '/^\[/,$p' "$DIR/oomkitd.conf"

say "starting oomkitd"
"$OOMKITD" -c "$DIR/oomkitd.conf" 2> >(sed -u 's/^<[0-9]>/  oomkitd: /') &
DPID=$!
wait_for 50 test -S "$DIR/oomkitd.sock" || die "oomkitd did not start"

say "web starts first and takes 120 MiB; batch takes 24 MiB; player starts last with 60 MiB"
"$OOMKIT" run --job web -- "$HOG" 120 2048 & WEB=$!; disown
wait_for 100 at_least web 120 || die "web did not grow"
"$OOMKIT" run --job batch -- "$HOG" 24 2048 & BATCH=$!; disown
wait_for 100 at_least batch 24 || die "batch did not grow"
"$OOMKIT" run --job player -- "$HOG" 60 2048 & PLAYER=$!; disown
wait_for 100 at_least player 60 || die "player did not grow"
"$OOMKIT" status

say "web grows by 60 MiB more: 120 + 60 + 24 + 60 MiB > the machine's 256 MiB"
"$OOMKIT" run --job web -- "$HOG" 60 1024 20000 & WEB2=$!; disown
wait_for 150 gone "$BATCH" || die "nothing was killed in batch"

say "batch (priority 100) lost its process; the largest (web) and the newest (player) live"
for p in WEB WEB2 BATCH PLAYER; do
	eval "pid=\$$p"
	if gone "$pid"; then state=killed; else state=running; fi
	printf '  %-7s pid %-7s %s\n' "$p" "$pid" "$state"
done
gone "$WEB" && die "web was killed"
gone "$PLAYER" && die "player was killed"
wait_for 100 at_least web 180 || die "web did not finish growing"

say "oomkit reports"
"$OOMKIT" reports
say "oomkit reports show 1"
"$OOMKIT" reports show 1
say "oomkit status"
"$OOMKIT" status
