#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# kill = largest-leaf: in a terminal's scope, the build dies, not
# the terminal.  A real bash leads a session on a real pseudo-terminal
# (script(1)) and starts a large child; the shell ranks first for
# kill-lowest (oom_score_adj 1000), so a job with kill = process kills it,
# and the same tree in a job with kill = largest-leaf loses the child.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
command -v script >/dev/null || skip "script (bsdutils) is missing: no pseudo-terminal for the shell"
command -v choom >/dev/null || skip "choom (util-linux) is missing"
setup terminal

write_config 1G "report, kill-lowest, kernel" 4s <<EOF2
[job term]
limit = 48M
kill = largest-leaf
policy = kill-lowest, kernel

[job plain]
limit = 48M
policy = kill-lowest, kernel
EOF2
start_daemon

report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1; }
# The OOM's first report: the hog outlives the shell and goes on out of
# memory, and the chain's next choice (itself) may be reported before we look.
first_report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | head -n 1; }
has_report_of() { [ -n "$(report_of "$1")" ]; }

# terminal JOB: bash on a pseudo-terminal of its own (script runs it in a new
# session with that terminal as its controlling one), moved into the job,
# ranked first by oom_score_adj 1000; it starts the hog at 0 (choom) and
# waits.  The pids land in $TMP/JOB.shell and
# $TMP/JOB.child.
terminal() {
	local job=$1
	rm -f "$TMP/$job.shell" "$TMP/$job.child"
	# script runs \$SHELL -c: bash itself leads the session.  After its
	# child, it waits in a sleep of its own, so that it lives on as bash.
	SHELL=/bin/bash script -qec "echo \$\$ > $R/$job/cgroup.procs || exit 1; echo 1000 > /proc/\$\$/oom_score_adj
		echo \$\$ > $TMP/$job.shell; choom -n 0 -- $OOMKIT_HOG 64 512 2000 & echo \$! > $TMP/$job.child
		wait; sleep 1000" /dev/null >/dev/null 2>&1 &
	T_HELPERS="${T_HELPERS:-} $!"
	wait_for 10 test -s "$TMP/$job.child" || fail "$job: the terminal did not start"
}

terminal plain
shell=$(cat "$TMP/plain.shell") child=$(cat "$TMP/plain.child")
check "plain: the shell leads its session" test "$(awk '{print $6}' "/proc/$shell/stat")" = "$shell"
check "plain: the shell has a controlling terminal" test "$(awk '{print $7}' "/proc/$shell/stat")" != 0
check "plain: kill = process kills the shell, the first for kill-lowest" wait_for 20 dead "$shell"
wait_for 10 has_report_of plain || fail "plain: no report"
check "plain: the first report names the shell" \
	test "$(json_get "$(first_report_of plain)" "r['decision']['victim_pid']")" = "$shell"
kill -9 "$child" 2>/dev/null

terminal term
shell=$(cat "$TMP/term.shell") child=$(cat "$TMP/term.child")
check "term: the child is in the job" in_memcg "$child" "$M/term"
check "term: the shell leads its session" test "$(awk '{print $6}' "/proc/$shell/stat")" = "$shell"
check "term: kill = largest-leaf kills the child" wait_for 20 dead "$child"
check "term: the shell lives" alive "$shell"
wait_for 10 has_report_of term || fail "term: no report"
r=$(report_of term)
check "term: the report names the child" test "$(json_get "$r" "r['decision']['victim_pid']")" = "$child"
check "term: the report's job says largest-leaf" \
	test "$(json_get "$r" "[j['kill'] for j in r['jobs'] if j['name'] == 'term']")" = "['largest-leaf']"
check "term: the shell is no candidate, and the report says why" \
	test "$(json_get "$r" "[c.get('excluded') for c in r['candidates'] if c['pid'] == $shell]")" \
	= "['the session leader (kill = largest-leaf)']"
check "term: the job left OOM" wait_for 10 cg_out_of_oom "$R/term"
kill -9 "$shell" 2>/dev/null
finish
