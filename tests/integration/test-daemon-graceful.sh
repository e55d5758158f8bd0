#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Graceful kills: kill_signal = SIGTERM with a kill_grace, on real
# job OOMs with the kernel killer held off (cgroup v1), where a victim asleep
# at its limit could run no handler unless it is lent headroom.
#   - one that handles SIGTERM writes its file and exits: SIGTERM ended it;
#   - one that catches SIGTERM and stays is SIGKILLed after its grace,
#     SIGTERM first (the log's order);
#   - neither outlasts the delay: the kernel killed nothing, and the headroom
#     is taken back.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
[ -x "${OOMKIT_VICTIM:-}" ] || { echo "FAIL: \$OOMKIT_VICTIM is not an executable" >&2; exit 1; }
setup graceful

write_config 1G "report, kill-lowest, kernel" 4s <<EOF2
[job term]
limit = 64M
policy = kill-largest, kernel
kill_signal = SIGTERM
kill_grace = 2s

[job stubborn]
limit = 64M
policy = kill-largest, kernel
kill_signal = SIGTERM
kill_grace = 300ms

[job plain]
limit = 64M
policy = kill-largest, kernel
EOF2
start_daemon

victim() { # JOB MIB MODE [FILE]
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' sh "$R/$1" "$OOMKIT_VICTIM" "$2" "$3" "${4:-}" \
		>/dev/null 2>&1 &
	echo $!
}
report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1; }
has_report_of() { [ -n "$(report_of "$1")" ]; }
limit_is() { [ "$(cat "$R/$1/$LIMIT_FILE")" = "$2" ]; }
kernel_kills() { cg_kills "$R/$1"; }
outcome_has() { json_get "$1" "r['outcome']" | grep -q -- "$2"; }
ended_by() { json_get "$(report_of "$1")" "r.get('ended_by')"; }
line_of() { grep -n -- "$1" "$TMP/log" | head -n 1 | cut -d: -f1; }

# Handles SIGTERM: writes its file, exits 0, within its grace.
a=$(victim term 100 term "$TMP/term-a")
check "term: the victim is gone" wait_for 20 dead "$a"
check "term: its handler ran and wrote its file" test "$(cat "$TMP/term-a" 2>/dev/null)" = term
check "term: a report" wait_for 20 has_report_of term
check "term: the report says SIGTERM ended it" wait_for 10 test "$(ended_by term)" = SIGTERM
check "term: within its grace" outcome_has "$(report_of term)" "exited on SIGTERM within its grace"
check "term: the kernel killed nothing" test "$(kernel_kills term)" = 0
check "term: the headroom is taken back" wait_for 20 limit_is term $((64 << 20))

# Catches SIGTERM and stays: SIGKILLed when its grace is over.
b=$(victim stubborn 100 deaf)
check "stubborn: the victim is gone" wait_for 20 dead "$b"
check "stubborn: a report" wait_for 20 has_report_of stubborn
check "stubborn: the report says SIGKILL ended it" wait_for 10 test "$(ended_by stubborn)" = SIGKILL
check "stubborn: after SIGTERM and its grace" outcome_has "$(report_of stubborn)" "SIGKILL after SIGTERM"
sent=$(line_of "stubborn: OOM: kill")
escalated=$(line_of "process $b did not exit within its grace after SIGTERM: SIGKILL")
check "stubborn: SIGTERM was sent before SIGKILL" test -n "$sent" -a -n "$escalated" -a "${sent:-0}" -lt "${escalated:-0}"
check "stubborn: the kernel killed nothing" test "$(kernel_kills stubborn)" = 0
check "stubborn: the headroom is taken back" wait_for 20 limit_is stubborn $((64 << 20))

# Without a kill_signal: SIGKILL at once, no headroom lent.
c=$(victim plain 100 deaf)
check "plain: the victim is gone" wait_for 20 dead "$c"
check "plain: the report says SIGKILL" wait_for 20 test "$(ended_by plain 2>/dev/null)" = SIGKILL
check "plain: nothing was lent" test -z "$(grep "plain: lent" "$TMP/log")"
check "the daemon is alive" kill -0 "$DPID"
stop_daemon
echo "$T_PASSED passed, $T_FAILED failed"
