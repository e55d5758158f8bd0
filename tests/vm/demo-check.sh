#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# demo-check.sh - runs scripts/demo.sh as `make demo` runs it and checks the
# story's outcome on whatever hierarchy the machine has: the demo says which
# hierarchy it used first, batch's process (priority 100) was killed, web's
# two processes and player's live, the report is of kill-lowest in batch, and
# no cgroup of the demo's is left.  Run on this host (cgroup v1), in the
# busybox guest (cgroup v2 without systemd) and in the systemd guest (cgroup
# v2, systemd as PID 1: the demo's cgroups in a scope with Delegate=yes).
#
#   demo-check.sh DEMO_SH [BUILD_DIR] [--quiet-machine]
#
# --quiet-machine: nothing else runs here (a guest), so the kernel's own OOM
# killer must not have moved either (/proc/vmstat oom_kill).  The programs
# are BUILD_DIR's, or OOMKITD, OOMKIT and OOMKIT_HOG (demo.sh).  Exit 0 pass,
# 1 fail, 77 skip (not root, or no memory controller).
set -u
demo=${1:?usage: demo-check.sh DEMO_SH [BUILD_DIR] [--quiet-machine]}
build=${2:-build}
quiet=${3:-}
failed=0

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
if [ ! -f /sys/fs/cgroup/memory/memory.oom_control ] && ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	echo "SKIP: no memory cgroup controller"
	exit 77
fi

check() { # description command...
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		failed=1
	fi
}

# The demo's cgroups, wherever it made them (the v1 machine and its -daemon
# and -hooks, the v2 parent, the systemd scope: each named oomkit-demo-PID,
# which the demo's first line says; another demo running beside this one on
# a shared machine is not this one's).
leftovers() {
	if [ -n "${demo_id:-}" ]; then
		find /sys/fs/cgroup -maxdepth 4 -type d \( -name "$demo_id" -o -name "${demo_id}[.-]*" \) 2>/dev/null
	else
		find /sys/fs/cgroup -maxdepth 4 -type d -name 'oomkit-demo-*' 2>/dev/null
	fi
}

no_leftovers() {
	# systemd removes an emptied scope after the demo's shell is gone.
	for _ in $(seq 1 300); do
		[ -z "$(leftovers)" ] && return 0
		sleep 0.1
	done
	return 1
}

oom_kills() {
	awk '$1 == "oom_kill" { print $2 }' /proc/vmstat
}

state_of() { # NAME: killed or running, from the demo's table
	sed -n "s/^  $1 *pid [0-9]* *\(killed\|running\)\$/\1/p" <<<"$out"
}

k0=$(oom_kills)
out=$(timeout 600 bash "$demo" "$build" 2>&1)
rc=$?
# The demo's own escape sequences (bold headings) removed for the log.
printf '%s\n' "$out" | sed 's/\x1b\[[0-9;]*m//g; s/^/demo| /'
demo_id=$(head -n 1 <<<"$out" | grep -o 'oomkit-demo-[0-9]*' | head -n 1)
check "the demo ends with status 0 (it ended with $rc)" [ "$rc" = 0 ]
check "its first line says which hierarchy it used" \
	grep -qE '^demo: cgroup v(1|2)' <<<"$(head -n 1 <<<"$out")"
check "batch's process (priority 100) was killed" [ "$(state_of BATCH)" = killed ]
check "web's first process (the largest) lives" [ "$(state_of WEB)" = running ]
check "web's growth lives" [ "$(state_of WEB2)" = running ]
check "player's process (the newest) lives" [ "$(state_of PLAYER)" = running ]
batch=$(sed -n 's/^  BATCH *pid \([0-9]*\) .*/\1/p' <<<"$out")
check "the report shown is of kill-lowest" grep -qE '^  decision: +kill by kill-lowest$' <<<"$out"
check "choosing job batch" grep -qE '^  reason: +job batch has the lowest priority \(100\)' <<<"$out"
check "its outcome: batch's process ($batch) killed" grep -qE "^  outcome: +killed ${batch:-none}\$" <<<"$out"
check "and that was the only kill (status: $(grep -E '^ +OOMs [0-9]+, kills' <<<"$out" | tail -n 1))" \
	grep -qE "^ +OOMs [0-9]+, kills 1, last: kill-lowest killed ${batch:-none} \(batch\)\$" <<<"$(tail -n 20 <<<"$out")"
check "the demo says it cleaned up" grep -qx "demo: cleaned up" <<<"$out"
check "no cgroup of the demo's is left ($(leftovers | tr '\n' ' '))" no_leftovers
[ "$quiet" = --quiet-machine ] &&
	check "the kernel's OOM killer killed nothing (oom_kill $k0 -> $(oom_kills))" [ "$(oom_kills)" = "$k0" ]
exit $failed
