#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A job's owner hides its processes in cgroups the daemon cannot read back:
# a path longer than 512 bytes (once "unreadable" and left
# out of the snapshot), and a tree 40 levels deep (once ELOOP for every
# listing, so the kernel killer decided).  On a machine OOM the daemon must
# still see them as the low-priority job's and kill there, never root's
# processes in the high-priority job.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup owner-tree

write_config 160M "kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 150M

[job batch]
priority = 100
limit = 100M
EOF2
start_daemon

long=batch
for i in 1 2 3 4 5; do long="$long/$(printf "%0120d" $i)"; done
deep=batch
for i in $(seq 1 40); do deep="$deep/d"; done
mkdir -p "$R/$long" "$R/$deep" || fail "cannot make the owner's tree"
check "the long path is longer than 512 bytes" test ${#long} -gt 512

empty() { [ -z "$(cat "$R/$1/cgroup.procs")" ]; }
victim_is() { # PID JOB
	[ "$(json_get "$(latest_report)" "r['decision']['victim_pid'], r['decision']['victim_job']" 2>/dev/null)" = "($1, '$2')" ]
}

# phase NAME SUB: a hog at batch's SUB, then web outgrows the machine.
phase() {
	local name=$1 sub=$2 web1 web2 hidden
	web1=$(spawn web 60)
	wait_for 10 usage_at_least web $((60 << 20)) || fail "$name: web did not reach 60M"
	hidden=$(spawn "$sub" 30)
	wait_for 10 usage_at_least batch $((30 << 20)) || fail "$name: the hidden hog did not reach 30M"
	web2=$(spawn web 80 512 2000)
	check "$name: the hidden process in the low-priority job is killed" wait_for 20 dead "$hidden"
	check "$name: root's first web process lives" alive "$web1"
	check "$name: root's growing web process lives" alive "$web2"
	check "$name: the daemon decided, not the kernel" test "$(grep -c 'the kernel decides' "$TMP/log")" = 0
	check "$name: the report names it, in batch" wait_for 10 victim_is "$hidden" batch
	kill -9 "$web1" "$web2" 2>/dev/null
	wait_for 10 empty web || fail "$name: web did not empty"
	wait_for 10 cg_out_of_oom "$R" || fail "$name: the machine stayed under OOM"
}
phase "a 600-byte path" "$long"
phase "40 levels deep" "$deep"
finish
