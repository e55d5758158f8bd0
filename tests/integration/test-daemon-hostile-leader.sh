#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A job's owner hides its hog behind an exited leader: the hog's threads
# allocate while its thread-group leader has called pthread_exit().  The
# leader is a zombie that cgroup.procs still lists, whose /proc/PID/cgroup
# reads the root and whose status has no memory; the process lives on in
# its threads.  oomkitd must see it in its job with its memory (ps,
# explain, the report's candidates) and kill it, never root's web process.
# Variants: one thread and several, the leader exiting at once and after
# the threads allocated half, kill-lowest and kill-largest.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_setup hostile-leader
hostile_start

# Without an OOM: ps and explain show the hidden process in batch.
h=$(owner_run batch "$HOSTILE" -t 3 -x now 48 1024 1000)
check "ps: the leader has exited, its threads run" wait_for 10 leader_exited "$h"
wait_for 20 usage_at_least batch $((48 << 20)) || fail "the hidden hog did not reach 48M"
ps_row() {
	"$OOMKIT" --json ps batch | python3 -c 'import json, sys
print([(p["job"], p["rss_bytes"] >= 40 << 20) for p in json.load(sys.stdin) if p["pid"] == int(sys.argv[1])])' "$1"
}
check "ps: the process is in batch with its memory" test "$(ps_row "$h")" = "[('batch', True)]"
"$OOMKIT" --json explain > "$TMP/explain.json" 2>&1
check "explain: ranked first, in batch with its memory" python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))
first = [s["ranking"][0] for s in e["steps"] if s.get("ranking")]
sys.exit(not (first and first[0]["pid"] == int(sys.argv[2]) and first[0]["job"] == "batch" and
              first[0]["rss_bytes"] >= 40 << 20))' "$TMP/explain.json" "$h"
kill -9 "$h"
check "the hidden process goes on SIGKILL" wait_for 10 gone "$h"
check "nothing was reported" test "$(report_count)" = 0

# The attacks: 200 MiB through threads, the machine runs out at about 156.
n=0
attack() { # NAME THREADS WHEN
	local pid
	pid=$(owner_run batch "$HOSTILE" -t "$2" -x "$3" 200 1024 2000)
	attacked "$1" "$pid" "$n"
	n=$((n + 1))
}
attack "one thread, the leader gone at once" 1 now
attack "four threads, the leader gone at once" 4 now
attack "four threads, the leader gone after half" 4 late

# kill-largest, the desktop preset's chain: the hog is the largest.
sed -i 's/^policy = .*/policy = report, kill-largest, kernel/' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
wait_for 10 grep -q "reloaded" "$TMP/log" || fail "no reload"
attack "kill-largest, four threads, the leader gone at once" 4 now
check "the web process is the one root started" alive "$WEB"
finish
