#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kills are state on the daemon's loop, not waits in it: a victim
# stuck where SIGKILL cannot end it (frozen by the v1 freezer, in the
# kernel's uninterruptible refrigerator) holds up nothing.  While job a's
# victim is frozen and its report still waits for the victim to exit, job
# b's OOM is handled by the right victim and the control socket answers;
# once the victim is thawed it exits and a's report is finished.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
# v2's cgroup.freeze lets SIGKILL through: a victim stuck past SIGKILL is
# the v1 freezer's.
require_v1 "a victim SIGKILL cannot end needs the v1 freezer (v2's cgroup.freeze lets SIGKILL through)"
setup async
FREEZER_ROOT=/sys/fs/cgroup/freezer
[ -f "$FREEZER_ROOT/cgroup.procs" ] || skip "no cgroup v1 freezer at $FREEZER_ROOT"
FZ="$FREEZER_ROOT/oomkit-test-async-$$"

cleanup_freezer() {
	local rc=$?
	if [ -d "$FZ" ]; then
		echo THAWED > "$FZ/freezer.state" 2>/dev/null
		for p in $(cat "$FZ/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		for i in $(seq 1 100); do rmdir "$FZ" 2>/dev/null && break; sleep 0.05; done
	fi
	(exit $rc)
	cleanup
}
trap cleanup_freezer EXIT

# A long delay: the daemon waits for a's victim until it exits or the delay
# has passed, and the test must not race that on a busy machine.
write_config 1G "report, kill-lowest, kernel" 60s <<EOF2
[job a]
limit = 32M
policy = kill-largest, kernel

[job b]
limit = 32M
policy = kill-largest, kernel
EOF2
start_daemon

report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1; }
finished() { [ -n "$(report_of "$1")" ] && grep -q '"outcome"' "$(report_of "$1")"; }
frozen() { [ "$(cat "$FZ/freezer.state")" = FROZEN ]; }

v=$(spawn a 20)
wait_for 10 usage_at_least a $((20 << 20)) || fail "a's first hog did not grow"
mkdir "$FZ" || fail "cannot make a freezer cgroup"
echo "$v" > "$FZ/cgroup.procs" || fail "cannot move the hog into the freezer cgroup"
echo FROZEN > "$FZ/freezer.state"
check "a's largest process is frozen" wait_for 10 frozen

a2=$(spawn a 20 512 2000)
check "a's OOM: the daemon kills the largest, the frozen one" wait_for 20 grep -q "a: OOM: kill: .*killing process $v " "$TMP/log"
check "a's report is written up to the decision" wait_for 10 test -n "$(report_of a)"
check "the frozen victim has not exited" alive "$v"
check "a's report waits for its victim" eval '! finished a'

b1=$(spawn b 64 512 1000)
check "meanwhile b's OOM is handled: its hog is killed" wait_for 20 dead "$b1"
check "by the daemon" wait_for 10 grep -q "b: killed $b1\$" "$TMP/log"
check "b's report is finished" wait_for 10 finished b
check "b's report names its victim" test "$(json_get "$(report_of b)" "r['decision']['victim_pid']")" = "$b1"
status=$("$OOMKIT" status)
check "meanwhile the control socket answers" test $? = 0
check "status lists both jobs" eval 'echo "$status" | grep -q "^ *b " && echo "$status" | grep -q "^ *a "'
check "all that while a's victim stayed frozen" alive "$v"
check "and a's report still waits for it" eval '! finished a'

echo THAWED > "$FZ/freezer.state"
check "thawed, the victim exits" wait_for 20 dead "$v"
check "a's report is finished" wait_for 20 finished a
check "a's report says the victim was killed" test "$(json_get "$(report_of a)" "r['outcome']")" = "killed $v"
check "a's other process lives" alive "$a2"
check "the daemon is alive" alive "$DPID"
finish
