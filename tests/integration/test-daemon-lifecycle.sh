#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The daemon's life: --check, a restart that adopts the job memcgs as they
# are (a grown limit is kept, processes keep running, OOMs are handled by
# the new daemon), SIGHUP with a bad file (the old configuration keeps
# running) and with a good one (jobs added and removed, a changed delay
# taken by an existing job), and the reserve memcg removed on a clean stop.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup lifecycle

write_config 512M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
limit_max = 64M
policy = grow, kill-largest, kernel

[job batch]
priority = 100
limit = 16M
EOF2
cp "$TMP/oomkitd.conf" "$TMP/good.conf"

# --check
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check accepts a good file" test $? = 0
check "--check says how many jobs" test "$(head -n 1 <<<"$out")" = "$TMP/oomkitd.conf: ok, 2 jobs"
check "--check says which machine, named where" \
	grep -qxF "machine: $R, $MACHINE_KIND (named at $TMP/oomkitd.conf:2)" <<<"$out"
check "--check says which hierarchy" \
	grep -qx "hierarchy: cgroup $CG_MODE, memory controller at $MEMROOT\(, systemd runs this machine\)\?" <<<"$out"
sed 's/^limit = 32M$/limit = abc/' "$TMP/good.conf" > "$TMP/bad.conf"
out=$("$OOMKITD" --check -c "$TMP/bad.conf" 2>&1)
check "--check refuses a bad file" test $? = 1
check "--check names file:line, section and key" test "$out" = "$TMP/bad.conf:13: [job web] limit: bad size 'abc' (a number with K, M, G or T, or max)"
"$OOMKITD" --check -c "$TMP/none.conf" >/dev/null 2>&1
check "--check refuses a missing file" test $? = 1
[ -d "$R" ] && fail "--check created the machine"

start_daemon
a=$(spawn web 40)
limit_is() { [ "$(cat "$R/$1/$LIMIT_FILE")" = "$2" ]; }
check "web grew to limit_max" wait_for 20 limit_is web $((64 << 20))
wait_for 10 usage_at_least web $((40 << 20)) || fail "web did not reach 40M"
b=$(spawn batch 4)
wait_for 10 usage_at_least batch $((4 << 20)) || fail "batch did not reach 4M"

in_reserve() { grep -q "$CG_LINE/$M-daemon\$" "/proc/$DPID/cgroup"; }
check "the daemon runs in its reserve memcg" in_reserve
stop_daemon
check "a clean stop removes the reserve memcg" test ! -d "$R-daemon"
check "stopping leaves the job memcgs" test -d "$R/web" -a -d "$R/batch"
check "stopping leaves the processes running" alive "$a"
check "stopping gives the kernel killer back" cg_released "$R/web"

start_daemon
check "restart adopts the jobs" grep -q "web: adopted $M/web with 1 processes, limit 64 MiB" "$TMP/log"
check "restart keeps the grown limit" limit_is web $((64 << 20))
check "restart takes the OOM handling back" cg_held "$R/web"
procs=$("$OOMKIT" --json status | python3 -c 'import json,sys; print([j["processes"] for j in json.load(sys.stdin)["jobs"]])')
check "status sees the adopted processes" test "$procs" = "[1, 1]"
c=$(spawn web 40 512 2000)
check "after the restart an OOM is handled: the largest is killed" wait_for 20 dead "$a"
check "after the restart the grower lives" alive "$c"
check "after the restart report ids go on" wait_for 10 test -f "$TMP/reports/oom-00000002-web.json"

# SIGHUP with a bad file: errors logged with file:line, nothing changes.
cp "$TMP/bad.conf" "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "SIGHUP with a bad file logs the error" wait_for 10 grep -q "oomkitd.conf:13: \[job web\] limit: bad size 'abc'" "$TMP/log"
check "SIGHUP with a bad file keeps the old configuration" grep -q "the running configuration stays" "$TMP/log"
check "the daemon still runs" alive "$DPID"
jobs=$("$OOMKIT" --json status | python3 -c 'import json,sys; print([j["name"] for j in json.load(sys.stdin)["jobs"]])')
check "status still has the old jobs" test "$jobs" = "['web', 'batch']"
check "the web job is still handled" limit_is web $((64 << 20))

# SIGHUP with a good file: batch goes, extra comes.
sed -e 's/^\[job batch\]$/[job extra]/' -e 's/^priority = 100$/priority = 300/' "$TMP/good.conf" > "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "SIGHUP with a good file reloads" wait_for 10 grep -q "reloaded .*: 2 jobs" "$TMP/log"
jobs=$("$OOMKIT" --json status | python3 -c 'import json,sys; print([(j["name"], j["priority"]) for j in json.load(sys.stdin)["jobs"]])')
check "status has the new jobs" test "$jobs" = "[('web', 900), ('extra', 300)]"
check "the new job's memcg is created with its limit" limit_is extra $((16 << 20))
check "the removed job's memcg is left alone" test -d "$R/batch"
check "the removed job's processes are left alone" alive "$b"
check "the removed job is no longer held off" cg_released "$R/batch"
check "the new job is held off" cg_held "$R/extra"
stop_daemon

# SIGHUP with a changed delay: an existing job takes it (the
# comparison once used the new value twice).  A report-only chain leaves the OOM
# to the kernel after the delay: 1 s after the reload, not the 300 s before.
write_config 512M "report, kill-lowest, kernel" 300s <<EOF2
[job slow]
limit = 16M
policy = report
EOF2
start_daemon
reloads() { grep -c "reloaded " "$TMP/log"; }
before=$(reloads)
sed -i 's/^delay = 300s$/delay = 1s/' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
reloaded() { [ "$(reloads)" -gt "$before" ]; }
check "SIGHUP with a new delay reloads" wait_for 10 reloaded
a=$(spawn slow 32)
check "the job's OOM goes to the kernel after the new delay" wait_for 60 dead "$a"
check "the daemon's report says it waited for the kernel" wait_for 10 has_reports 1
finish
