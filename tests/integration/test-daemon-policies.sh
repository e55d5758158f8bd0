#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every policy of a job's chain on a real job OOM (the job's own limit), and
# kill-over-expected and --dry-run at machine level.  Each scenario asserts
# which process died and which lived, and what the report says.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup policies

# A copy of the hog under another name, for protection by name.
cp "$OOMKIT_HOG" "$TMP/bighog"

# A long delay: the prompt waits half of it for the test's answer, which must
# not lose a race against a loaded machine.
write_config 1G "report, kill-lowest, kernel" 12s <<EOF2
[job grow]
limit = 32M
limit_max = 64M
policy = grow, kernel

[job newest]
limit = 48M
policy = kill-newest, kernel

[job largest]
limit = 48M
policy = kill-largest, kernel

[job lowest]
limit = 48M
policy = kill-lowest, kernel

[job kernel]
limit = 32M
policy = kernel

[job whole]
limit = 48M
kill = job
policy = kill-largest, kernel

[job protect]
limit = 48M
protect = bighog
policy = kill-largest, kernel

[job ask]
limit = 48M
policy = prompt, kill-largest, kernel

[job reportonly]
limit = 32M
policy = report
EOF2
start_daemon

report_of() { # JOB: the newest report of that job
	ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1
}
has_report_of() { [ -n "$(report_of "$1")" ]; }
action_of() { json_get "$(report_of "$1")" "r['decision']['action']"; }

# grow: the job's limit is raised within limit_max; nothing dies.
a=$(spawn grow 48 512 1000)
limit_is() { [ "$(cat "$R/$1/$LIMIT_FILE")" = "$2" ]; }
check "grow: the limit is raised" wait_for 20 limit_is grow $((64 << 20))
check "grow: the process reaches its size" wait_for 20 usage_at_least grow $((48 << 20))
check "grow: nothing was killed" alive "$a"
check "grow: the report says grow" test "$(action_of grow)" = grow
check "grow: the report has the new limit" test "$(json_get "$(report_of grow)" "r['decision']['new_limit_bytes']")" = $((64 << 20))
check "grow: the metrics count the grow" \
	wait_for 10 grep -qxF 'oomkit_job_grows_total{name="grow"} 1' "$TMP/oomkit.prom"

# kill-newest: the process started last goes, though it is not the largest.
a=$(spawn newest 30)
wait_for 10 usage_at_least newest $((30 << 20)) || fail "newest: first hog did not grow"
b=$(spawn newest 30 512 2000)
check "kill-newest: the newest is killed" wait_for 20 dead "$b"
check "kill-newest: the older, larger one lives" alive "$a"
check "kill-newest: the report names it" test "$(json_get "$(report_of newest)" "r['decision']['victim_pid']")" = "$b"

# kill-largest: the largest goes, though it is not the one allocating.
a=$(spawn largest 30)
wait_for 10 usage_at_least largest $((30 << 20)) || fail "largest: first hog did not grow"
b=$(spawn largest 30 512 2000)
check "kill-largest: the largest is killed" wait_for 20 dead "$a"
check "kill-largest: the growing one lives and finishes" wait_for 20 usage_at_least largest $((30 << 20))
check "kill-largest: the growing one is alive" alive "$b"

# kill-lowest inside a job: oom_score_adj ranks the job's own processes.
a=$(spawn lowest 20)
wait_for 10 usage_at_least lowest $((20 << 20)) || fail "lowest: first hog did not grow"
echo 500 > "/proc/$a/oom_score_adj"
b=$(spawn lowest 35 512 2000)
check "kill-lowest: the lowest-ranked process is killed" wait_for 20 dead "$a"
check "kill-lowest: the larger one lives" alive "$b"

# kernel: handed to the kernel OOM killer at once; the take-over comes back.
handoffs() { sed -n 's/^oomkit_kernel_handoffs_total \([0-9]*\)$/\1/p' "$TMP/oomkit.prom"; }
handoffs_above() { local n; n=$(handoffs); [ -n "$n" ] && [ "$n" -gt "$1" ]; }
handoffs_before=$(handoffs)
[ -n "$handoffs_before" ] || fail "kernel: the metrics file has no oomkit_kernel_handoffs_total"
a=$(spawn kernel 64 512 500)
check "kernel: the kernel kills the process" wait_for 20 dead "$a"
check "kernel: the report says kernel" test "$(action_of kernel)" = kernel
check "kernel: the killer is held off again afterwards" wait_for 10 cg_held "$R/kernel"
check "kernel: the metrics count the hand-off" wait_for 10 handoffs_above "$handoffs_before"

# kill = job: every process of the job goes.
a=$(spawn whole 10)
wait_for 10 usage_at_least whole $((10 << 20)) || fail "whole: first hog did not grow"
b=$(spawn whole 60 512 2000)
check "kill = job: the chosen process is killed" wait_for 20 dead "$b"
check "kill = job: the rest of the job is killed too" wait_for 20 dead "$a"
check "kill = job: the report says kill-job" test "$(action_of whole)" = kill-job

# protect: the largest process is protected by name, so the other one goes.
a=$(HOG_BIN="$TMP/bighog" spawn protect 30)
wait_for 10 usage_at_least protect $((30 << 20)) || fail "protect: first hog did not grow"
b=$(spawn protect 30 512 2000)
check "protect: the unprotected process is killed" wait_for 20 dead "$b"
check "protect: the protected, larger one lives" alive "$a"
check "protect: the report marks it protected" \
	test "$(json_get "$(report_of protect)" "[c['protected'] for c in r['candidates'] if c['pid'] == $a]")" = "[True]"

# prompt: a person picks the smaller process.
mkfifo "$TMP/answers"
"$OOMKIT" prompt --once < "$TMP/answers" > "$TMP/prompt.out" 2>&1 &
ppid=$!
exec 3> "$TMP/answers"
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt.out" || fail "prompt: did not connect"
a=$(spawn ask 20)
wait_for 10 usage_at_least ask $((20 << 20)) || fail "ask: first hog did not grow"
b=$(spawn ask 30 512 2000)
check "prompt: the question lists the candidates" wait_for 20 grep -q "kill $a" "$TMP/prompt.out"
echo "kill $a" >&3
check "prompt: the chosen process is killed" wait_for 20 dead "$a"
check "prompt: the other lives" alive "$b"
check "prompt: the answer is acknowledged" wait_for 10 grep -q "done: killed $a" "$TMP/prompt.out"
exec 3>&-
wait "$ppid"
check "prompt: the client exits 0" test $? = 0
check "prompt: the report records the answer" \
	test "$(json_get "$(report_of ask)" "r.get('prompt_answer').split(' ', 1)[1]")" = "kill $a"

# report only: nothing is done; the kernel steps in after the delay.
a=$(spawn reportonly 64 512 500)
check "report: the kernel kills after the delay" wait_for 40 dead "$a"
check "report: the report says none" test "$(action_of reportonly)" = none

stop_daemon
for j in grow newest largest lowest kernel whole protect ask reportonly; do kill_tree "$R/$j"; rm_tree "$R/$j"; done

# Machine level: kill-over-expected picks the job furthest above its expectation.
rm -rf "$TMP/reports"
write_config 96M "report, kill-over-expected, kernel" 2s <<EOF2
[job small]
expect = 10M

[job big]
expect = 60M
EOF2
start_daemon
a=$(spawn small 20)
wait_for 10 usage_at_least small $((20 << 20)) || fail "small did not grow"
b=$(spawn big 40)
wait_for 10 usage_at_least big $((40 << 20)) || fail "big did not grow"
c=$(spawn big 40 512 2000)
check "kill-over-expected: the job at 200% of its expectation loses" wait_for 20 dead "$a"
check "kill-over-expected: the larger job under its expectation lives" alive "$b"
check "kill-over-expected: the growing process lives" alive "$c"
stop_daemon
kill_tree "$R/big"

# --dry-run: decides and reports, holds nothing off and kills nothing itself.
rm -rf "$TMP/reports"
write_config 96M "report, kill-lowest, kernel" 2s <<EOF2
[job small]
priority = 1
[job big]
priority = 999
EOF2
start_daemon --dry-run
check "dry run: the kernel killer stays on" cg_released "$R"
a=$(spawn small 20)
wait_for 10 usage_at_least small $((20 << 20)) || fail "small did not grow"
b=$(spawn big 100 512 2000)
check "dry run: a report is written" wait_for 20 has_reports 1
rep=$(latest_report)
check "dry run: the report says so" test "$(json_get "$rep" "r['dry_run']")" = True
check "dry run: it would have killed in the lowest-priority job" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$a"
check "dry run: the outcome is nothing done" test "$(json_get "$rep" "r['outcome']")" = "dry run: nothing done"
finish
