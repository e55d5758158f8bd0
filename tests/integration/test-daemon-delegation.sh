#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Delegation: a job with an owner uid gets its memcg's directory,
# cgroup.procs, and tasks and cgroup.event_control on v1 (cgroup.threads and
# cgroup.subtree_control on v2), and nothing else (not the limits, not the
# daemon's hold: v1 oom_control, v2 memory.high); the owner creates a sub-memcg
# and runs its own liboomkit handler (examples/kill-newest) that resolves
# the sub-memcg's OOM without the daemon; the owner cannot raise its limit;
# and when the job's own limit is hit and the owner does not resolve it
# within the delay, the daemon does.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
KILL_NEWEST=${OOMKIT_EXAMPLES:-}/kill-newest
[ -x "$KILL_NEWEST" ] || { echo "FAIL: no kill-newest example at '$KILL_NEWEST'" >&2; exit 1; }
setup delegation
OWNER=$USER_A
as_owner() { as_user $OWNER "$@"; }
# The owner runs copies: the build tree may be where only root can enter.
OWNER_HOG=$(user_copy "$OOMKIT_HOG" $OWNER) || exit
OWNER_KILL_NEWEST=$(user_copy "$KILL_NEWEST" $OWNER) || exit

write_config 512M "report, kill-lowest, kernel" 1s <<EOF2
[job del]
limit = 64M
owner = $OWNER
policy = kill-largest, kernel
EOF2
start_daemon

check "the owner gets the job's directory" test "$(stat -c %u "$R/del")" = $OWNER
check "the owner gets cgroup.procs" test "$(stat -c %u "$R/del/cgroup.procs")" = $OWNER
# Its delegation files (lib/cgroup-v1.c, lib/cgroup-v2.c): v1 also tasks
# and cgroup.event_control, v2 cgroup.threads and cgroup.subtree_control.
if [ "$CG_MODE" = v2 ]; then delegated="cgroup.threads cgroup.subtree_control"; else delegated="tasks cgroup.event_control"; fi
for f in $delegated; do
	check "the owner gets $f" test "$(stat -c %u "$R/del/$f")" = $OWNER
done
check "the limit stays root's" test "$(stat -c %u "$R/del/$LIMIT_FILE")" = 0
as_owner sh -c "echo 1G > '$R/del/$LIMIT_FILE'" 2>/dev/null
check "the owner cannot raise its limit" test $? != 0 -a "$(cat "$R/del/$LIMIT_FILE")" = $((64 << 20))
# The daemon's hold on the job is root's: the owner cannot give its OOM to the kernel.
check "the hold's file ($HOLD_FILE) stays root's" test "$(stat -c %u "$R/del/$HOLD_FILE")" = 0
as_owner sh -c "echo $([ "$CG_MODE" = v2 ] && echo max || echo 0) > '$R/del/$HOLD_FILE'" 2>/dev/null
check "the owner cannot turn the hold off" test $? != 0
check "the hold is still on" cg_held "$R/del"
# Only an allow-list is given: files this kernel adds (memory.shown_ram_in_bytes) stay root's.
others=$(find "$R/del" -maxdepth 1 -type f -user $OWNER ! -name cgroup.procs ! -name tasks ! -name cgroup.event_control \
	! -name cgroup.threads ! -name cgroup.subtree_control)
check "nothing else is the owner's" test -z "$others"

# The owner's own sub-memcg and handler.
as_owner mkdir "$R/del/sub"
# v2: the memory controller for it is the owner's to give (cgroup.subtree_control is delegated).
[ "$CG_MODE" = v1 ] || as_owner sh -c "echo +memory > '$R/del/cgroup.subtree_control'"
check "the owner creates a sub-memcg" test -d "$R/del/sub"
as_owner sh -c "echo 32M > '$R/del/sub/$LIMIT_FILE'"
check "the owner limits its sub-memcg" test "$(cat "$R/del/sub/$LIMIT_FILE")" = $((32 << 20))
as_user_bg $OWNER "$OWNER_KILL_NEWEST" "$M/del/sub" 2000 1 > "$TMP/owner.log" 2>&1
handler=$!
sub_held() { cg_held "$R/del/sub"; }
check "the owner's handler takes over its sub-memcg" wait_for 10 sub_held
owner_spawn() { # SUB MIB STEP PAUSE
	# On v2 a process moves only within a subtree whose common ancestor's
	# cgroup.procs the mover may write: the owner's processes start in its
	# job (root puts them there, as systemd does a delegated unit's).
	if [ "$CG_MODE" = v2 ]; then
		spawn_as $OWNER "$@"
		return
	fi
	# The owner moves itself into its sub-memcg (as_user_bg: $! is the
	# shell's pid, which then execs the hog).
	as_user_bg $OWNER sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' sh "$R/$1" "$OWNER_HOG" "$2" "$3" "$4" \
		>/dev/null 2>&1
	echo $!
}
a=$(owner_spawn del/sub 16 1024 1000)
wait_for 10 usage_at_least del/sub $((16 << 20)) || fail "the owner's first hog did not grow"
b=$(owner_spawn del/sub 30 512 2000)
check "the owner's handler kills the newest in its sub-memcg" wait_for 20 dead "$b"
check "the older process lives" alive "$a"
wait "$handler"
check "the owner's handler handled it and exited" test $? = 0
check "the daemon did not act on the owner's OOM" test "$(report_count)" = 0

# The job's own limit, and the owner does nothing: the daemon steps in.
kill -9 "$a"
if [ "$CG_MODE" = v2 ]; then
	# A v2 cgroup that gives a controller to children holds no process:
	# the owner takes its sub-cgroup away first, as its own manager would.
	wait_for 10 dead "$a" || fail "the owner's first hog did not die"
	as_owner rmdir "$R/del/sub" && as_owner sh -c "echo -memory > '$R/del/cgroup.subtree_control'" ||
		fail "the owner could not take its sub-cgroup away"
fi
c=$(owner_spawn del 80 512 2000)
check "the daemon leaves a delegated job's OOM to its owner first" wait_for 20 grep -q "del: OOM left to its owner" "$TMP/log"
check "then it acts after the delay" wait_for 20 dead "$c"
check "the daemon says why" grep -q "del: its owner did not resolve the OOM in time" "$TMP/log"
reported() { [ "$(json_get "$(latest_report)" "r['scope'], r['job'], r['decision']['victim_pid']" 2>/dev/null)" = "('job', 'del', $c)" ]; }
check "and reports it" wait_for 10 reported
finish
