#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shed policy on real job OOMs with the kernel killer held
# off (cgroup v1): the job is lent headroom so that its SIGUSR1 handler can
# run at all, and asked to give memory back.
#   - one that frees half of what it holds resolves its OOM: nothing dies,
#     the report says how much came back, the loan is repaid;
#   - one that catches SIGUSR1 and frees nothing is killed by the next policy
#     once shed_wait has passed: two reports, the shed's first;
#   - one that does not catch SIGUSR1 is not sent it (it would die of it):
#     the chain goes on at once.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
[ -x "${OOMKIT_VICTIM:-}" ] || { echo "FAIL: \$OOMKIT_VICTIM is not an executable" >&2; exit 1; }
setup shed

write_config 1G "report, kill-lowest, kernel" 4s <<EOF2
[job shedder]
limit = 64M
policy = shed, kill-largest, kernel
shed_signal = SIGUSR1
shed_wait = 1500ms

[job deaf]
limit = 64M
policy = shed, kill-largest, kernel
shed_signal = SIGUSR1
shed_wait = 300ms

[job ignorer]
limit = 64M
policy = shed, kill-largest, kernel
shed_signal = SIGUSR1
EOF2
start_daemon

# victim JOB MIB MODE [FILE]: the victim helper in the job; prints its pid.
victim() {
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' sh "$R/$1" "$OOMKIT_VICTIM" "$2" "$3" "${4:-}" \
		>/dev/null 2>&1 &
	echo $!
}
reports_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort; }
n_reports_of() { [ "$(reports_of "$1" | wc -l)" -ge "$2" ]; }
limit_is() { [ "$(cat "$R/$1/$LIMIT_FILE")" = "$2" ]; }
not_under_oom() { cg_out_of_oom "$R/$1"; }
outcome_has() { json_get "$1" "r['outcome']" | grep -q -- "$2"; }

# Frees half on SIGUSR1: resolved by shedding, nothing killed.
a=$(victim shedder 100 shed "$TMP/shed-a")
check "shed: the job sheds" wait_for 20 test -s "$TMP/shed-a"
check "shed: its OOM is resolved" wait_for 20 not_under_oom shedder
check "shed: a report" wait_for 20 n_reports_of shedder 1
rep=$(reports_of shedder | head -n 1)
check "shed: the report's decision is shed" test "$(json_get "$rep" "r['decision']['action']")" = shed
check "shed: the report says resolved" wait_for 10 outcome_has "$rep" "resolved by shedding"
check "shed: it says so in its shed object" test "$(json_get "$rep" "r['shed']['resolved']")" = True
freed=$(json_get "$rep" "r['shed']['freed_bytes']")
check "shed: it says how much came back (half of 64 MiB and more: $freed)" test "$freed" -ge $((24 << 20))
check "shed: the process was lent headroom" test "$(json_get "$rep" "r['shed']['lent_bytes']")" -gt 0
check "shed: and asked" test "$(json_get "$rep" "r['shed']['signalled']")" = 1
check "shed: nothing was killed" alive "$a"
check "shed: the headroom is taken back" wait_for 20 limit_is shedder $((64 << 20))
check "shed: one report only" test "$(reports_of shedder | wc -l)" = 1
check "shed: the log says so" grep -q "shedder: resolved by shedding" "$TMP/log"
# The file is rewritten once the shed's report has landed.
check "shed: the metrics count one OOM resolved by shedding" \
	wait_for 10 grep -q '^oomkit_shed_successes_total{name="shedder"} 1$' "$TMP/oomkit.prom"

# Catches SIGUSR1 and frees nothing: killed by kill-largest after shed_wait.
b=$(victim deaf 100 deaf)
check "deaf: killed by the next policy" wait_for 20 dead "$b"
check "deaf: two reports" wait_for 20 n_reports_of deaf 2
first=$(reports_of deaf | head -n 1)
second=$(reports_of deaf | sed -n 2p)
check "deaf: the first is the shed's" test "$(json_get "$first" "r['decision']['action']")" = shed
check "deaf: it gave back too little" outcome_has "$first" "the chain goes on"
check "deaf: its shed object says not resolved" test "$(json_get "$first" "r['shed']['resolved']")" = False
check "deaf: the second is the kill" test "$(json_get "$second" "r['decision']['action']")" = kill
check "deaf: by kill-largest" test "$(json_get "$second" "r['decision']['policy']")" = kill-largest
check "deaf: of the process" test "$(json_get "$second" "r['decision']['victim_pid']")" = "$b"
check "deaf: the kill resumed the chain past shed" test "$(json_get "$second" "r['decision']['step']")" = 1
check "deaf: the headroom is taken back after the kill" wait_for 20 limit_is deaf $((64 << 20))
# Once the file counts the kill, it has seen the shed that did not resolve.
check "deaf: the metrics count the kill" \
	wait_for 10 grep -q '^oomkit_kills_total{name="deaf",policy="kill-largest"} 1$' "$TMP/oomkit.prom"
check "deaf: and no OOM resolved by shedding" grep -q '^oomkit_shed_successes_total{name="deaf"} 0$' "$TMP/oomkit.prom"

# Does not catch SIGUSR1 (it would die of it): not sent it, the chain goes on.
c=$(victim ignorer 100 ignore)
check "ignorer: killed by the next policy" wait_for 20 dead "$c"
check "ignorer: a report" wait_for 20 n_reports_of ignorer 1
first=$(reports_of ignorer | head -n 1)
check "ignorer: the shed asked nobody" outcome_has "$first" "nobody to ask"
check "ignorer: then kill-largest" wait_for 20 n_reports_of ignorer 2
check "ignorer: which killed it" test "$(json_get "$(reports_of ignorer | sed -n 2p)" "r['decision']['victim_pid']")" = "$c"
check "the daemon is alive" kill -0 "$DPID"
stop_daemon
echo "$T_PASSED passed, $T_FAILED failed"
