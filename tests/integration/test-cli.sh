#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The oomkit command line against a running oomkitd: every command's output
# (tables within 80 columns, valid JSON with --json), run keeping its pid in
# the job's memcg, permissions by peer credentials, and the exit codes.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup cli
# Others must reach the socket in it to be refused by the daemon, not by the directory.
chmod 755 "$TMP"
require_user_tools
NOBODY=$USER_A
as_nobody() { as_user $NOBODY "$@"; }
# nobody runs a copy: the build tree may be where only root can enter.
NOBODY_OOMKIT=$(user_copy "$OOMKIT" $NOBODY) || exit
fits_80() { awk 'length > 80 { bad = 1 } END { exit bad }' "$1"; }
valid_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }
exit_code() { "$@" >/dev/null 2>&1; echo $?; }

# Before the daemon exists.
check "unreachable daemon: exit 3" test "$(exit_code "$OOMKIT" status)" = 3
check "no command: exit 2" test "$(exit_code "$OOMKIT")" = 2
check "unknown command: exit 2" test "$(exit_code "$OOMKIT" frobnicate)" = 2
check "run without --job: exit 2" test "$(exit_code "$OOMKIT" run -- true)" = 2
check "--help: exit 0" test "$(exit_code "$OOMKIT" --help)" = 0
# Each verb takes its own options and arguments; numbers are checked.
check "status --once: exit 2" test "$(exit_code "$OOMKIT" status --once)" = 2
check "status --once: says why" test "$("$OOMKIT" status --once 2>&1 | head -n 1)" = "oomkit: status does not take --once"
check "ps --job: exit 2" test "$(exit_code "$OOMKIT" ps --job web)" = 2
check "ps --iterations: exit 2" test "$(exit_code "$OOMKIT" ps --iterations 5)" = 2
check "status with an argument: exit 2" test "$(exit_code "$OOMKIT" status web)" = 2
check "ps with two jobs: exit 2" test "$(exit_code "$OOMKIT" ps web db)" = 2
check "prompt --json: exit 2" test "$(exit_code "$OOMKIT" --json prompt)" = 2
check "run --json: exit 2" test "$(exit_code "$OOMKIT" run --json --job web -- true)" = 2
check "top --iterations x: exit 2" test "$(exit_code "$OOMKIT" top --iterations x)" = 2
check "top --iterations 1x: exit 2" test "$(exit_code "$OOMKIT" top --iterations 1x)" = 2
check "top --interval past the range: exit 2" test "$(exit_code "$OOMKIT" top --interval 99999999999999999999)" = 2
check "top --interval -1: exit 2" test "$(exit_code "$OOMKIT" top --interval -1)" = 2
check "reports show x: exit 2" test "$(exit_code "$OOMKIT" reports show x)" = 2
check "reports show 1 2: exit 2" test "$(exit_code "$OOMKIT" reports show 1 2)" = 2
check "reports list: exit 2" test "$(exit_code "$OOMKIT" reports list)" = 2

write_config 512M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 64M
policy = report, kill-largest, kernel

[job a-very-long-job-name-indeed]
priority = 100
limit = 16M
EOF2
start_daemon

"$OOMKIT" status > "$TMP/status.txt"
check "status: exit 0" test $? = 0
check "status: fits 80 columns" fits_80 "$TMP/status.txt"
check "status: a row per job with its priority" grep -Eq '^web +900 ' "$TMP/status.txt"
check "status: long names are cut to fit" grep -Eq '^a-very-long- +100 ' "$TMP/status.txt"
"$OOMKIT" --json status > "$TMP/status.json"
check "status --json: valid" valid_json "$TMP/status.json"
check "status --json: the job's limit" test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["limit_bytes"])' "$TMP/status.json")" = $((64 << 20))
check "--json after the command works too" test "$("$OOMKIT" status --json | head -c 1)" = "{"

# run: the command keeps the CLI's pid and lives in the job's memcg.
"$OOMKIT" run --job web -- sleep 60 &
runpid=$!
is_sleep() { [ "$(cat /proc/$runpid/comm 2>/dev/null)" = sleep ]; }
check "run: the command keeps oomkit's pid" wait_for 10 is_sleep
check "run: the command is in the job's memcg" grep -q "$CG_LINE/$M/web\$" "/proc/$runpid/cgroup"
check "run: unknown job: exit 1" test "$(exit_code "$OOMKIT" run --job nosuch -- true)" = 1
check "run: missing program: exit 127" test "$(exit_code "$OOMKIT" run --job web -- /nonexistent/program)" = 127
"$OOMKIT" run --job web -- sh -c 'exit 7'
check "run: the command's exit code is oomkit's" test $? = 7

# ps
hog=$(spawn web 8)
wait_for 10 usage_at_least web $((8 << 20)) || fail "hog did not grow"
"$OOMKIT" ps > "$TMP/ps.txt"
check "ps: fits 80 columns" fits_80 "$TMP/ps.txt"
check "ps: lists the hog in its job" grep -Eq "^ *$hog +web +[0-9.]+M " "$TMP/ps.txt"
check "ps JOB: only that job" test "$("$OOMKIT" ps a-very-long-job-name-indeed | wc -l)" = 1
check "ps unknown job: exit 1" test "$(exit_code "$OOMKIT" ps nosuch)" = 1
"$OOMKIT" --json ps web > "$TMP/ps.json"
check "ps --json: valid" valid_json "$TMP/ps.json"
check "ps --json: has the hog and the sleeper" test "$(python3 -c 'import json,sys; print(sorted(p["pid"] for p in json.load(open(sys.argv[1]))))' "$TMP/ps.json")" = "$(python3 -c "print(sorted([$hog, $runpid]))")"

# Permissions: root only by default.
check "non-root status: refused, exit 1" test "$(as_nobody "$NOBODY_OOMKIT" status 2>&1 >/dev/null)" = "oomkit: permission denied: only root may read status (see readonly_status)"
check "non-root run: refused" test "$(exit_code as_nobody "$NOBODY_OOMKIT" run --job web -- true)" = 1
# Anyone may listen for prompts; each is asked only about its own (test-agent.sh).
nobody_listens() { "$@" 2>&1 | grep -q "waiting for OOMs"; }
check "non-root prompt: listens" nobody_listens as_nobody timeout 3 "$NOBODY_OOMKIT" prompt --once
sed -i 's|^metrics = .*|&\nreadonly_status = yes|' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
wait_for 10 grep -q "reloaded" "$TMP/log" || fail "no reload"
check "readonly_status: non-root may read status" test "$(exit_code as_nobody "$NOBODY_OOMKIT" status)" = 0
check "readonly_status: non-root still may not run" test "$(exit_code as_nobody "$NOBODY_OOMKIT" run --job web -- true)" = 1

# reports
check "reports: none yet" test "$("$OOMKIT" reports | wc -l)" = 1
big=$(spawn web 100 512 1000)
check "an OOM in web kills its largest process" wait_for 20 dead "$big"
wait_for 10 has_reports 1 || fail "no report"
json_get "$(latest_report)" "r['id']" >/dev/null
"$OOMKIT" reports > "$TMP/reports.txt"
check "reports: fits 80 columns" fits_80 "$TMP/reports.txt"
check "reports: one row with scope, action and victim" grep -Eq "^ +1 [0-9-]+ [0-9:]+ web +kill +$big " "$TMP/reports.txt"
"$OOMKIT" --json reports > "$TMP/reports.json"
check "reports --json: valid" valid_json "$TMP/reports.json"
"$OOMKIT" reports show 1 > "$TMP/show.txt"
check "reports show: exit 0" test $? = 0
check "reports show: fits 80 columns" fits_80 "$TMP/show.txt"
check "reports show: the decision" grep -q "decision:  kill by kill-largest" "$TMP/show.txt"
check "reports show: the victim marked" grep -Eq "^ *$big +web .*<- victim" "$TMP/show.txt"
"$OOMKIT" --json reports show 1 > "$TMP/show.json"
check "reports show --json: the report itself" test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/show.json")" = 1
check "reports show unknown id: exit 1" test "$(exit_code "$OOMKIT" reports show 99)" = 1

# Reports are opened without following links and kept within report_max_count.
ln -s "$TMP/planted" "$TMP/reports/oom-00000002-web.json"
sed -i 's|^readonly_status = yes$|&\nreport_max_count = 2|' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
reloaded_twice() { [ "$(grep -c reloaded "$TMP/log")" = 2 ]; }
wait_for 10 reloaded_twice || fail "no second reload"
big=$(spawn web 100 512 1000)
check "a second OOM kills again" wait_for 20 dead "$big"
check "the report skips the planted link" wait_for 10 test -f "$TMP/reports/oom-00000003-web.json"
check "the link's target was never written" test ! -e "$TMP/planted"
big=$(spawn web 100 512 1000)
check "a third OOM kills again" wait_for 20 dead "$big"
check "a fourth report is written" wait_for 10 test -f "$TMP/reports/oom-00000004-web.json"
json_get "$TMP/reports/oom-00000004-web.json" "r['id']" >/dev/null
check "retention keeps report_max_count reports" test "$(report_count)" = 2 -a ! -e "$TMP/reports/oom-00000001-web.json"
check "reports lists what is kept" test "$("$OOMKIT" reports | awk 'NR > 1 { print $1 }' | tr '\n' ' ')" = "3 4 "

# top
"$OOMKIT" top --iterations 2 --interval 50 > "$TMP/top.txt"
check "top: exit 0" test $? = 0
check "top: two screens" test "$(grep -c '^oomkit top' "$TMP/top.txt")" = 2
check "top: fits 80 columns" fits_80 "$TMP/top.txt"

stop_daemon
check "daemon gone: exit 3" test "$(exit_code "$OOMKIT" status)" = 3
finish
