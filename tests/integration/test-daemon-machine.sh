#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Machine-level OOM: the machine memcg runs out with three jobs in it, and
# oomkitd kills in the lowest-priority job (batch), not the largest process
# (web's) nor the newest (player's).  Acting once, at the machine: the jobs'
# own watches see the OOM too but produce no report of their own.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup machine

write_config 160M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 150M

[job batch]
priority = 100
limit = 64M

[job player]
priority = 500
limit = 64M
EOF2
start_daemon
check "machine memcg created with its limit" test "$(cat "$R/$LIMIT_FILE")" = $((160 << 20))
check "job memcg created with its limit" test "$(cat "$R/web/$LIMIT_FILE")" = $((150 << 20))
check "kernel killer held off for the machine" cg_held "$R"
check "daemon runs outside the machine" grep -q "$CG_LINE/$M-daemon\$" "/proc/$DPID/cgroup"

web1=$(spawn web 60)
wait_for 10 usage_at_least web $((60 << 20)) || fail "web did not reach 60M"
batch=$(spawn batch 40)
wait_for 10 usage_at_least batch $((40 << 20)) || fail "batch did not reach 40M"
player=$(spawn player 15)
wait_for 10 usage_at_least player $((15 << 20)) || fail "player did not reach 15M"
# web grows past what the machine has: 60 + 50 + 40 + 15 > 160.  With batch
# gone, 125 is left: below v2's hold too (memory.high is an eighth below
# memory.max, and the library sees an OOM from a quarter of that below it),
# so one kill is all it takes on both hierarchies.
web2=$(spawn web 50 512 2000)

check "the lowest-priority job's process is killed" wait_for 20 dead "$batch"
check "web grows to its full size" wait_for 20 usage_at_least web $((110 << 20))
check "the largest process survives" alive "$web1"
check "the growing process survives" alive "$web2"
check "the newest job survives" alive "$player"
check "the machine left OOM" cg_out_of_oom "$R"

rep=$(latest_report)
check "one report, for the machine" test "$(report_count)" = 1 -a "$(json_get "$rep" "r['scope']")" = machine
check "report names the victim" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$batch"
check "report names the victim's job" test "$(json_get "$rep" "r['decision']['victim_job']")" = batch
check "report says which policy chose" test "$(json_get "$rep" "r['decision']['policy']")" = kill-lowest
check "report lists every candidate with its priority" \
	test "$(json_get "$rep" "sorted(set((c['job'], c['priority']) for c in r['candidates']))")" = \
	"[('batch', 100), ('player', 500), ('web', 900)]"
check "report has the library's state before acting" test "$(json_get "$rep" "'memory_stat' in r['state']")" = True
# The candidates are the processes: the library does not list them again (a second walk).
check "report lists the processes once" test "$(json_get "$rep" "'processes' in r['state']")" = False
check "report has the timings" test "$(json_get "$rep" "r['timings_ms']['action'] >= r['timings_ms']['decision'] >= 0")" = True
check "report dir is 0750" test "$(stat -c %a "$TMP/reports")" = 750
# The file is rewritten once the daemon's turn of handling is done, just after the report.
check "metrics count the kill in the victim's job" \
	wait_for 10 grep -q '^oomkit_kills_total{name="batch",policy="kill-lowest"} 1$' "$TMP/oomkit.prom"
check "metrics count the machine OOM" wait_for 10 grep -q '^oomkit_oom_events_total{name="machine"} 1$' "$TMP/oomkit.prom"
st=$("$OOMKIT" --json status)
check "status counts the kill" test "$(echo "$st" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["machine"]["kills"], [j["kills"] for j in s["jobs"]])')" = "1 [0, 1, 0]"

stop_daemon
check "the kernel killer is given back on exit" cg_released "$R"
finish
