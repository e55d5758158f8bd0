#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make demo: oomkitd on a 256 MiB demo machine with three jobs.  web (priority
# 900) starts first and is the largest, batch (priority 100) is next, player
# (priority 500) is the newest.  web then grows until the machine is out of
# memory, and oomkitd kills in the lowest-priority job -- batch -- instead of
# the largest process (the kernel's choice) or the newest.  The sizes fit
# both hierarchies: on cgroup v1 the machine's OOM comes at its limit; on v2
# oomkitd holds the kernel's killer off with memory.high 1/8 below the limit
# (224 MiB), and what lives after batch's kill stays below that.
#
#   scripts/demo.sh [BUILD_DIR]
#
# Needs root and the memory cgroup controller, on either hierarchy:
#   cgroup v1   the demo's cgroups below /sys/fs/cgroup/memory;
#   cgroup v2 with systemd as PID 1: in a scope of its own with Delegate=yes
#               (systemd-run --scope), where systemd lets a program make
#               cgroups of its own;
#   cgroup v2 without systemd: below /sys/fs/cgroup, whose
#               cgroup.subtree_control must enable memory.
# OOMKITD, OOMKIT and OOMKIT_HOG name other programs than BUILD_DIR's (the
# installed ones, in a test guest).  Ends within 30 s (the waits are bounded
# for a slow, emulated machine) and removes everything it created, also when
# it fails or is interrupted.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

BUILD=${1:-build}
OOMKITD=${OOMKITD:-$BUILD/daemon/oomkitd}
OOMKIT=${OOMKIT:-$BUILD/cli/oomkit}
HOG=${OOMKIT_HOG:-$BUILD/tests/helpers/oomkit-hog}
# The daemon's helper programs of this build, not installed ones.
for h in OOMKIT_HOOK_RUNNER=helpers/oomkit-hook-runner OOMKIT_GUARDIAN=lib/oomkit-guardian \
	OOMKITD_SYSTEMD=helpers/oomkitd-systemd; do
	v=${h%%=*}
	if [ -z "${!v:-}" ] && [ -x "$BUILD/${h#*=}" ]; then
		export "${h%%=*}=$(cd "$BUILD" && pwd)/${h#*=}"
	fi
done
CG=/sys/fs/cgroup
NAME=oomkit-demo-$$
DPID=
DIR=
# PARENT: the cgroup the demo's own live in (v2); MACHINE: the machine.
PARENT=
MACHINE=
KEEP= # the leaf this shell runs in, in a systemd scope (systemd removes it)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

# The demo's cgroups, children before parents.
demo_cgroups() {
	if [ "$HIER" = v1 ]; then
		printf '%s\n' "$MACHINE"/*/ "$MACHINE" "$MACHINE-daemon" "$MACHINE-hooks"/*/ "$MACHINE-hooks"
	elif [ -n "$KEEP" ]; then
		find "$PARENT" -mindepth 1 -type d | grep -vxF "$KEEP" | sort -r
	elif [ -n "$PARENT" ] && [ -d "$PARENT" ]; then
		find "$PARENT" -type d | sort -r
	fi
}

cleanup() {
	local rc=$? cg p i
	trap - EXIT INT TERM
	[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	for cg in $(demo_cgroups); do
		[ -d "$cg" ] || continue
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
			[ "$p" = $$ ] || kill -9 "$p" 2>/dev/null
		done
	done
	for cg in $(demo_cgroups); do
		for i in $(seq 1 50); do
			[ -d "$cg" ] || break
			rmdir "$cg" 2>/dev/null && break
			sleep 0.05
		done
	done
	[ -n "$DIR" ] && rm -rf "$DIR"
	[ $rc = 0 ] && echo "demo: cleaned up" || echo "demo: failed; cleaned up" >&2
	exit $rc
}

[ "$(id -u)" = 0 ] || die "needs root (it creates memory cgroups)"
for b in "$OOMKITD" "$OOMKIT" "$HOG"; do [ -x "$b" ] || die "$b is missing: build first (make build)"; done

# The hierarchy: the v1 memory controller where it is mounted, else cgroup v2
# with the memory controller.  On a systemd machine the demo first puts
# itself in a transient scope that systemd delegates to it, and runs again
# there.
if [ -f $CG/memory/memory.oom_control ]; then
	HIER=v1
	MACHINE=$CG/memory/$NAME
	WHERE="cgroup v1: the memory controller at $CG/memory; the machine $MACHINE"
elif grep -qw memory $CG/cgroup.controllers 2>/dev/null; then
	HIER=v2
	if [ -d /run/systemd/system ] && [ -z "${OOMKIT_DEMO_SCOPE:-}" ]; then
		command -v systemd-run >/dev/null || die "systemd runs this machine, but systemd-run is missing"
		export OOMKIT_DEMO_SCOPE=$NAME.scope
		exec systemd-run --quiet --scope --unit="$OOMKIT_DEMO_SCOPE" --description="oomkit demo" \
			-p Delegate=yes -p MemoryAccounting=yes -- bash "$0" "$@"
	fi
	if [ -n "${OOMKIT_DEMO_SCOPE:-}" ]; then
		PARENT=$CG$(sed -n 's/^0:://p' /proc/self/cgroup)
		[ "${PARENT##*/}" = "$OOMKIT_DEMO_SCOPE" ] || die "not in the scope $OOMKIT_DEMO_SCOPE but in $PARENT"
		grep -qw memory "$PARENT/cgroup.controllers" || die "the scope $PARENT has no memory controller"
		# cgroup v2 lets no cgroup have both processes and children with
		# controllers: this shell goes to a leaf of the scope.
		KEEP=$PARENT/demo
		mkdir "$KEEP" && echo $$ >"$KEEP/cgroup.procs" || die "cannot move into $KEEP"
		WHERE="cgroup v2 with systemd: the scope $OOMKIT_DEMO_SCOPE (Delegate=yes) at $PARENT"
	else
		grep -qw memory $CG/cgroup.subtree_control ||
			die "cgroup v2 at $CG does not enable memory for its children (echo +memory > $CG/cgroup.subtree_control)"
		PARENT=$CG/$NAME
		WHERE="cgroup v2: $PARENT below the root $CG"
	fi
	MACHINE=$PARENT/machine
else
	die "needs the memory cgroup controller: cgroup v1 at $CG/memory or cgroup v2 at $CG"
fi
DIR=$(mktemp -d /tmp/oomkit-demo.XXXXXX)
export OOMKIT_SOCKET=$DIR/oomkitd.sock
trap cleanup EXIT
trap 'exit 1' INT TERM
if [ "$HIER" = v2 ]; then
	[ -d "$PARENT" ] || mkdir "$PARENT" || die "cannot make $PARENT"
	echo +memory >"$PARENT/cgroup.subtree_control" || die "cannot enable memory in $PARENT"
fi
echo "demo: $WHERE"

# wait_for TENTHS CMD...: polls CMD every 0.1 s.
wait_for() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}
usage_mib() {
	local f=memory.current
	[ "$HIER" = v1 ] && f=memory.usage_in_bytes
	echo $(($(cat "$MACHINE/$1/$f") >> 20))
}
at_least() { [ "$(usage_mib "$1")" -ge "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# The daemon's log, each line after the syslog level.
daemon_log() {
	local l
	while IFS= read -r l; do printf '  oomkitd: %s\n' "${l#<[0-9]>}"; done
}

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
limit = 96M

[job player]
priority = 500
limit = 128M
EOF2

say "the configuration"
sed -n '/^\[/,$p' "$DIR/oomkitd.conf"

say "starting oomkitd"
# Through a FIFO rather than >(...), which needs /dev/fd (a small guest has none).
mkfifo "$DIR/log" || die "cannot make $DIR/log"
daemon_log <"$DIR/log" &
"$OOMKITD" -c "$DIR/oomkitd.conf" 2>"$DIR/log" &
DPID=$!
wait_for 300 test -S "$DIR/oomkitd.sock" || die "oomkitd did not start"

say "web starts first and takes 100 MiB; batch takes 64 MiB; player starts last with 50 MiB"
"$OOMKIT" run --job web -- "$HOG" 100 2048 & WEB=$!; disown
wait_for 600 at_least web 100 || die "web did not grow"
"$OOMKIT" run --job batch -- "$HOG" 64 2048 & BATCH=$!; disown
wait_for 600 at_least batch 64 || die "batch did not grow"
"$OOMKIT" run --job player -- "$HOG" 50 2048 & PLAYER=$!; disown
wait_for 600 at_least player 50 || die "player did not grow"
"$OOMKIT" status

say "web grows by 56 MiB more: 100 + 64 + 50 + 56 MiB > the machine's 256 MiB"
"$OOMKIT" run --job web -- "$HOG" 56 1024 20000 & WEB2=$!; disown
wait_for 600 gone "$BATCH" || die "nothing was killed in batch"
wait_for 600 at_least web 156 || die "web did not finish growing"

say "batch (priority 100) lost its process; the largest (web) and the newest (player) live"
for p in WEB WEB2 BATCH PLAYER; do
	eval "pid=\$$p"
	if gone "$pid"; then state=killed; else state=running; fi
	printf '  %-7s pid %-7s %s\n' "$p" "$pid" "$state"
done
gone "$WEB" && die "web was killed"
gone "$WEB2" && die "web's growth was killed"
gone "$PLAYER" && die "player was killed"

say "oomkit reports"
"$OOMKIT" reports
say "oomkit reports show 1"
"$OOMKIT" reports show 1
say "oomkit status"
"$OOMKIT" status
