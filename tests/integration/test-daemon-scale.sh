#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A thousand jobs, the largest figure the benchmarks measure: oomkitd creates and takes
# over a thousand job memcgs (small, empty ones: it takes well under a second
# on this kernel, so the full figure is tested rather than a sample), reports
# them all in status and in the metrics file, handles an OOM in the last one
# and in one in the middle, keeps all of them through a reload with a bad
# file, and gives every one its kernel OOM killer back when it stops.  One
# more job than the daemon takes is refused by --check.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup scale
N=1000

jobs_config() { # N: job sections j0 .. j<N-1>
	local i
	for ((i = 0; i < $1; i++)); do
		printf '[job j%d]\nlimit = 8M\npriority = %d\npolicy = kill-largest, kernel\n\n' "$i" $((i % 1000))
	done
}
jobs_config $N | write_config 256M "report, kill-lowest, kernel" 2s
cp "$TMP/oomkitd.conf" "$TMP/good.conf"

out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check accepts $N jobs" test "$(head -n 1 <<<"$out")" = "$TMP/oomkitd.conf: ok, $N jobs"
jobs_config 1025 | write_config 256M "report, kill-lowest, kernel" 2s
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check refuses 1025 jobs" test $? = 1
check "--check says where the limit is passed" test "$out" = \
	"$TMP/oomkitd.conf:$((11 + 1024 * 5)): [job j1024]: too many jobs (at most 1024)"
cp "$TMP/good.conf" "$TMP/oomkitd.conf"

start_daemon

# every_job TEST: TEST NAME for each job; the tests read with shell builtins,
# so a thousand jobs cost no thousand processes.
every_job() {
	local i
	for ((i = 0; i < N; i++)); do
		"$1" "j$i" || { echo "job j$i: $1 failed" >&2; return 1; }
	done
}
limit_8m() { local v; read -r v < "$R/$1/$LIMIT_FILE" && [ "$v" = $((8 << 20)) ]; }
held() { if [ "$1" = 1 ]; then cg_held "$R/$2"; else cg_released "$R/$2"; fi; }
held_off() { held 1 "$1"; }
given_back() { held 0 "$1"; }

check "every job memcg is created with its limit" every_job limit_8m
check "every job's OOM handling is taken over" every_job held_off
names=$("$OOMKIT" --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(len(s["jobs"]), [j["name"] for j in s["jobs"]] == ["j%d" % i for i in range(1000)])')
check "status lists every job, in order" test "$names" = "$N True"
count_metric() { grep -c "^$1{name=\"j[0-9]*\"} " "$TMP/oomkit.prom"; }
check "the metrics file has every job's limit" test "$(count_metric oomkit_job_limit_bytes)" = $N
check "the metrics file has every job's priority" test "$(count_metric oomkit_job_priority)" = $N
check "the metrics file is complete" grep -q '^oomkit_freed_seconds_count ' "$TMP/oomkit.prom"

# OOMs in the last job and in one in the middle: each handled in its own job.
# (A function, so that wait_for lists the directory each time it asks.)
has_report_for() { ls "$TMP/reports"/oom-*-"$1".json >/dev/null 2>&1; }
for j in j999 j500; do
	a=$(spawn "$j" 16)
	check "$j: its OOM is handled, its hog killed" wait_for 20 dead "$a"
	check "$j: the report is for $j" wait_for 10 has_report_for "$j"
	rep=$(ls "$TMP/reports"/oom-*-"$j".json)
	check "$j: the report names its policy" test "$(json_get "$rep" "r['decision']['policy']")" = kill-largest
	echo "# $j: decision $(json_get "$rep" "r['timings_ms']['decision']") ms, action $(json_get "$rep" "r['timings_ms']['action']") ms after the event, with $N jobs"
	check "$j: metrics count its OOM" wait_for 10 grep -qx "oomkit_oom_events_total{name=\"$j\"} 1" "$TMP/oomkit.prom"
done
check "no other job has an OOM" test "$(grep -c '^oomkit_oom_events_total{name="j[0-9]*"} [1-9]' "$TMP/oomkit.prom")" = 2

# A bad file on reload: all thousand jobs stay as they were.
sed 's/^limit = 8M$/limit = 8X/' "$TMP/good.conf" > "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a bad file is refused" wait_for 10 grep -q "the running configuration stays" "$TMP/log"
n=$("$OOMKIT" --json status | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
check "after the bad file, status still has $N jobs" test "$n" = $N
check "after the bad file, every job is still held off" every_job held_off

# A good one: j0 goes, a new job comes, the rest stay.
{ sed '/^\[job j0\]$/,/^$/d' "$TMP/good.conf"; printf '[job extra]\nlimit = 4M\n'; } > "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a good file is applied" wait_for 10 grep -q "reloaded .*: $N jobs" "$TMP/log"
check "the new job is created" test "$(cat "$R/extra/$LIMIT_FILE")" = $((4 << 20))
check "the removed job is no longer held off" given_back j0

pid=$DPID
stop_daemon
check "the daemon stopped" dead "$pid"
check "stopping gives every job its kernel killer back" every_job given_back
finish
