#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Jobs that adopt existing cgroups by pattern, on real memcgs: the
# cgroups here stand for systemd's units.  What exists at start is adopted,
# what appears later is adopted when it appears (levels of the pattern that
# do not exist yet included), what goes is dropped; an instance's own OOM
# runs its job's chain inside it; bad patterns are refused naming file:line.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup adopt

# The "units" live under the machine, in a tree of their own (ext/, later/),
# so that cleanup removes them with it; the patterns are relative to the
# memory root, as a systemd machine's would be to the cgroup root.
cg_mkdir "$R" "$R/ext" "$R/ext/svc-1" || fail "cannot make the test's cgroups"
echo 32M >"$R/ext/svc-1/$LIMIT_FILE"

write_config 1G "report, kill-lowest, kernel" 4s <<EOF
[job batch]
cgroup = $M/ext/svc-*
priority = 100
policy = kill-newest, kernel

[job apps]
cgroup = $M/later/user-*/app-*
priority = 600
policy = kill-largest, kernel
limit = 40M

[job plain]
priority = 500

[job outer]
priority = 400
limit = 64M
policy = kill-largest, kernel

[job inner]
cgroup = $M/outer/in-*
priority = 300
limit = 200M
policy = kill-largest, kernel

[job wide]
cgroup = $M/srv/*
cgroup_exclude = $M/srv/db
priority = 200

[job db]
cgroup = $M/srv/db
priority = 1000
EOF
cg_mkdir "$R/srv" "$R/srv/db" "$R/srv/worker" || fail "cannot make the test's cgroups"
start_daemon

logged() { grep -qF -- "$1" "$TMP/log"; }
count_logged() { grep -cF -- "$1" "$TMP/log"; }

check "an existing cgroup is adopted at start" logged "batch [svc-1]: adopted $M/ext/svc-1"
check "a pattern that matches nothing yet is a notice naming its line" \
	logged "$TMP/oomkitd.conf:"'17'": [job apps] cgroup $M/later/user-*/app-* matches no cgroup yet"
check "a plain job is still a memcg of the machine" test -d "$R/plain"
# A cgroup that one job's pattern excludes is the later job's that names it
# (the server preset's services and databases).
check "a cgroup excluded by the first job's pattern is the later job's" logged "db [db]: adopted $M/srv/db"
check "and the first job takes the rest" logged "wide [worker]: adopted $M/srv/worker"
check "nor is it the first job's" eval "! grep -qF 'wide [db]' '$TMP/log'"
check "the instance is taken over (its kernel killer held off)" \
	cg_held "$R/ext/svc-1"

# Appearing later, by kernel events.
cg_mkdir "$R/ext/svc-2" && echo 48M >"$R/ext/svc-2/$LIMIT_FILE"
check "a cgroup made later is adopted" wait_for 10 logged "batch [svc-2]: adopted $M/ext/svc-2"
cg_mkdir "$R/ext/other"
cg_mkdir -p "$R/later/user-1/app-x"
check "levels that did not exist are followed as they are made" \
	wait_for 10 logged "apps [app-x]: adopted $M/later/user-1/app-x"
check "the job's limit is the instance's" test "$(cat "$R/later/user-1/app-x/$LIMIT_FILE")" = $((40 << 20))
# Whoever else writes the limit over (systemd writes a unit's own MemoryMax=
# after the daemon may have adopted its cgroup, and again, from what it was
# last told, when a sibling starts) gets the job's limit back.
limit_is() { [ "$(cat "$R/$1/$LIMIT_FILE" 2>/dev/null)" = "$2" ]; }
echo 20M >"$R/later/user-1/app-x/$LIMIT_FILE"
check "a limit written over is the job's again" wait_for 10 limit_is later/user-1/app-x $((40 << 20))
check "and the log says so" wait_for 10 logged "apps [app-x]: its limit was written over; 40 MiB again"
# systemd writes a unit's memory.high with its memory.max: a write of the
# limit makes the daemon look at the hold too (v1's is oom_kill_disable).
cg_unhold "$R/later/user-1/app-x"
echo 20M >"$R/later/user-1/app-x/$LIMIT_FILE"
kill_disabled() { cg_held "$R/$1"; }
check "a hold undone with the limit is held again" wait_for 10 kill_disabled later/user-1/app-x
check "and the log says it was held again" wait_for 10 logged "apps [app-x]: its hold was written over; held again"
# A job owner's loop of such writes, alternating between two of its cgroups
# (inotify merges only a file's consecutive events): each answered, log
# lines in a burst of ten and then one a second, and the daemon still serves.
cg_mkdir -p "$R/later/user-1/app-y"
check "a second instance is adopted" wait_for 10 logged "apps [app-y]: adopted $M/later/user-1/app-y"
n0=$(count_logged "its limit was written over") t0=$SECONDS
for i in $(seq 1 200); do
	echo $(((20 + i % 8) << 20)) >"$R/later/user-1/app-x/$LIMIT_FILE"
	echo $(((20 + i % 8) << 20)) >"$R/later/user-1/app-y/$LIMIT_FILE"
done
check "after 200 writes over each, both limits are the job's again" \
	wait_for 10 eval 'limit_is later/user-1/app-x $((40 << 20)) && limit_is later/user-1/app-y $((40 << 20))'
lines=$(($(count_logged "its limit was written over") - n0))
check "ten lines and one a second at most: $lines lines in $((SECONDS - t0 + 1)) s" \
	test "$lines" -le $((10 + SECONDS - t0 + 1))
check "the daemon still answers" eval '"$OOMKIT" status >/dev/null'
check "a cgroup no pattern matches is not adopted" bash -c "! grep -qF '$M/ext/other' '$TMP/log'"
check "no timer is armed while nothing happens: nothing is polled" disarmed "$DPID"

# An instance's own OOM: its job's chain (kill-newest) inside it.
old=$(spawn ext/svc-2 16 1024 1000)
wait_for 10 usage_at_least ext/svc-2 $((16 << 20)) || fail "the first hog did not start"
new=$(spawn ext/svc-2 64 1024 1000)
check "the newest process of the instance is killed" wait_for 20 dead "$new"
check "the older one lives" alive "$old"
check "the chain ran for the instance" logged "batch [svc-2]: OOM: kill: "

# Instances under their job, everywhere a person or a program reads them.
"$OOMKIT" status >"$TMP/status.txt"
check "status: a row per instance, named after its job and cgroup" grep -q '^batch \[svc-2\]$' "$TMP/status.txt"
check "status: and the plain job as before" grep -Eq '^plain +500 ' "$TMP/status.txt"
"$OOMKIT" --json status >"$TMP/status.json"
check "status --json: the instance's cgroup" python3 -c '
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
inst = {j["instance"] for j in jobs if j["name"] == "batch"}
plain = [j["instance"] for j in jobs if j["name"] == "plain"]
sys.exit(not (sys.argv[2] + "/ext/svc-2" in inst and plain == [None]))' "$TMP/status.json" "$M"
"$OOMKIT" ps batch >"$TMP/ps.txt" 2>&1
check "ps: the instance's processes under its label" grep -Eq "^ *$old batch \[svc-2\] " "$TMP/ps.txt"
report=$(grep -l '"instance":"'"$M"'/ext/svc-2"' "$TMP"/reports/*.json 2>/dev/null | head -n 1)
check "the report names the instance" test -n "$report"
id=$(grep -o '"id":[0-9]*' "$report" | head -n 1 | cut -d: -f2)
"$OOMKIT" reports show "$id" >"$TMP/show.txt" 2>&1
check "reports show: the instance after its job" grep -q 'of job batch \[svc-2\]' "$TMP/show.txt"
"$OOMKIT" reports >"$TMP/reports.txt" 2>&1
# under_row FILE ID LINE: the line after report ID's row in a listing is LINE.
under_row() { grep -A1 -E "^ *$2 .* batch +kill " "$1" | sed -n 2p | grep -qxF -- "$3"; }
check "reports: the instance's name under its job's row" \
	under_row "$TMP/reports.txt" "$id" "                      [svc-2]"
# report_instance FILE ID: the instance a `reports --json` listing gives report ID.
report_instance() {
	python3 -c '
import json, sys
print({r["id"]: r["instance"] for r in json.load(open(sys.argv[1]))}.get(int(sys.argv[2]), "absent"))' "$1" "$2"
}
"$OOMKIT" --json reports >"$TMP/reports.json"
check "reports --json: the instance's name" test "$(report_instance "$TMP/reports.json" "$id")" = svc-2
kill -9 "$old" 2>/dev/null

# Going away.
rmdir "$R/later/user-1/app-x"
check "a removed cgroup is dropped" wait_for 10 logged "apps [app-x]: $M/later/user-1/app-x was removed"
# Made and removed at once: nothing is left of it, whatever the daemon saw.
for i in $(seq 1 20); do
	mkdir "$R/ext/svc-q$i" && rmdir "$R/ext/svc-q$i"
done
cg_mkdir "$R/ext/svc-3"
check "after a burst, the next cgroup is adopted" wait_for 10 logged "batch [svc-3]: adopted"
gone=0
for i in $(seq 1 20); do
	a=$(count_logged "batch [svc-q$i]: adopted")
	d=$(count_logged "batch [svc-q$i]: $M/ext/svc-q$i was removed")
	n=$(count_logged "batch [svc-q$i]: $M/ext/svc-q$i was removed while it was adopted")
	[ "$a" = "$d" ] || [ "$n" = 1 ] || gone=$((gone + 1))
done
check "a cgroup that vanished mid-adoption left no instance behind" test "$gone" = 0
check "...and no error: it is not one" bash -c "! grep '^<3>.*svc-q' '$TMP/log'"
check "the daemon lives" alive "$DPID"

# A job's OOM with another job's instance inside its memcg: the instance's
# processes are no candidates of the job's, however large (a job's
# processes are its own without a search only when no scope is inside it).
# (On v2 the job's memcg gives its children no memory controller: it holds
# a process of its own, and the instance's processes count in it.)
mkdir "$R/outer/in-1"
check "an instance inside another job's memcg is adopted" wait_for 10 logged "inner [in-1]: adopted $M/outer/in-1"
big=$(spawn outer/in-1 40 1024 1000)
wait_for 10 usage_at_least outer/in-1 $((40 << 20)) || fail "the nested hog did not start"
own=$(spawn outer 64 1024 1000)
check "the job's own process is killed" wait_for 20 dead "$own"
check "the larger process of the instance inside it lives" alive "$big"
check "the chain ran for the job" logged "outer: OOM: kill: "
kill -9 "$big" 2>/dev/null

# A reload that changes the job keeps its instances, re-pointed.
sed -i 's/^priority = 100$/priority = 150/' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "the reload is applied" wait_for 10 logged "reloaded $TMP/oomkitd.conf"
check "an instance kept across a reload is not adopted again" test "$(count_logged "batch [svc-3]: adopted")" = 1

# The daemon and its guardian killed together (a whole-unit SIGKILL): the
# unit's ExecStopPost, oomkitd --release, gives the kernel killer back to
# the instances too, and to nothing its patterns do not match.
held_off() { cg_held "$R/$1"; }
cg_mkdir "$R/ext/other-held" && cg_hold "$R/ext/other-held"
check "an instance is held before" held_off ext/svc-3
guardian=$(pgrep -P "$DPID" -x oomkit-guardian)
kill -9 "$DPID" $guardian
wait "$DPID" 2>/dev/null
DPID=
check "with nobody left to give it back" held_off ext/svc-3
"$OOMKITD" -c "$TMP/oomkitd.conf" --release >>"$TMP/log" 2>&1
check "oomkitd --release exits 0" test $? = 0
check "--release gives the instance its kernel killer back" eval '! held_off ext/svc-3'
check "and the other instances" eval '! held_off ext/svc-1'
check "a held cgroup no pattern matches keeps its hold" held_off ext/other-held

# Started again, the daemon indexes its reports from their files: the
# instance's is still listed with it, the job's with none.
cg_unhold "$R/ext/other-held"
start_daemon
"$OOMKIT" --json reports >"$TMP/reports.json"
outer_id=$(grep -l '"job":"outer"' "$TMP"/reports/*.json | head -n 1 | sed 's/.*oom-0*\([0-9][0-9]*\)-.*/\1/')
check "after a restart, the instance's report keeps its name" \
	test "$(report_instance "$TMP/reports.json" "$id")" = svc-2
check "and a job's report has none" test "$(report_instance "$TMP/reports.json" "${outer_id:-0}")" = None
stop_daemon

# Bad input.  A pattern that takes in the daemon's own memcg (its reserve,
# $M-daemon) is refused at start, naming file:line.
write_config 1G "report, kill-lowest, kernel" <<EOF
[job greedy]
cgroup = $M-d*
EOF
"$OOMKITD" -c "$TMP/oomkitd.conf" >"$TMP/refused.log" 2>&1 &
pid=$!
check "a daemon whose pattern takes in its own memcg stops" wait_for 15 dead "$pid"
wait "$pid"
check "...with an error naming the pattern's line" \
	grep -qF "$TMP/oomkitd.conf:12: [job greedy] cgroup: '$M-d*' takes in oomkitd's own cgroup $M-daemon" \
	"$TMP/refused.log"

write_config 1G "report, kill-lowest, kernel" <<EOF
[job a]
cgroup = $M/ext/svc-*
[job b]
cgroup = $M/ext/*-2
EOF
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "two jobs that can match one cgroup are an error naming both" \
	grep -qF "[job b] cgroup: '$M/ext/*-2' and job a's '$M/ext/svc-*' (line 12) can match the same cgroup" \
	<<<"$out"
finish
