#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The files the daemon writes, tried as a hostile configuration and a
# hostile local user would: a report_dir that is not the
# daemon's (a directory like /etc, holding other files; one owned by nobody,
# made by that user; one writable by everyone) and a metrics path that is
# not (an existing file it did not write, a directory writable by everyone):
# each is refused with a message, its mode and contents stay as they were,
# and an OOM is still handled by the right victim.  Then the reports index:
# with ~90 processes in a job the list still names the action (it read only
# the first 8 KiB of each file), a comm cut in the middle of a UTF-8
# sequence leaves every report valid JSON, the index survives a restart,
# and a report whose job a reload removed during a prompt keeps its scope.
# Last, a process named to forge a log line is escaped there.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup files
require_user_tools

mode_of() { stat -c %a "$1"; }
logged() { grep -q -- "$1" "$TMP/log"; }
no_report_in() { [ -z "$(find "$1" -name 'oom-*' 2>/dev/null)" ]; }

# oom_killed JOB WHAT: a hog in the job is killed by the daemon.
oom_killed() {
	local hog
	hog=$(spawn "$1" 64 512 1000)
	check "$2: the hog is killed" wait_for 20 dead "$hog"
	check "$2: by the daemon" wait_for 10 grep -q "$1: killed $hog\$" "$TMP/log"
}

# config REPORT_DIR METRICS: one job that kills its largest process.
config() {
	write_config 512M "report, kill-lowest, kernel" 10s <<EOF2
[job j]
limit = 32M
policy = kill-largest, kernel
EOF2
	sed -i -e "s|^report_dir = .*|report_dir = $1|" -e "s|^metrics = .*|metrics = $2|" "$TMP/oomkitd.conf"
}

# 1. report_dir names a directory like /etc: root's, 0755, holding other files.
mkdir -p "$TMP/etc" && chmod 0755 "$TMP/etc"
echo "root:x:0:0:root:/root:/bin/bash" > "$TMP/etc/passwd"
config "$TMP/etc" "$TMP/oomkit.prom"
start_daemon
check "a directory holding other files is refused" logged "report directory $TMP/etc holds 'passwd', which is not a report"
check "its mode is not changed" test "$(mode_of "$TMP/etc")" = 755
oom_killed j "report_dir like /etc"
check "nothing is written into it" no_report_in "$TMP/etc"
check "the daemon says there is no report" logged "j: no report"
stop_daemon

# 2. report_dir made by another user beforehand (owned by nobody), and 3.
# one writable by everyone: neither is the daemon's.
# (A shared directory like /tmp, where that user made it first.)
THEIRS="$USER_DIR/shared/reports"
mkdir -m 1777 "$USER_DIR/shared" && chmod 1777 "$USER_DIR/shared"
as_user $USER_A mkdir -m 0755 "$THEIRS" || fail "nobody cannot make its directory"
config "$THEIRS" "$TMP/oomkit.prom"
start_daemon
check "a directory owned by another user is refused" logged "report directory $THEIRS is owned by another user"
oom_killed j "report_dir of another user"
check "nothing is written into another user's directory" no_report_in "$THEIRS"
check "its mode is not changed" test "$(mode_of "$THEIRS")" = 755
stop_daemon
mkdir -m 0777 "$TMP/open" && chmod 0777 "$TMP/open"
config "$TMP/open" "$TMP/oomkit.prom"
start_daemon
check "a directory writable by everyone is refused" logged "report directory $TMP/open is writable by others"
check "its mode is not changed (not tightened)" test "$(mode_of "$TMP/open")" = 777
stop_daemon

# 4. metrics names an existing file the daemon did not write (like /etc/shadow).
printf 'root:$6$secret:19000:0:99999:7:::\n' > "$TMP/shadow"
chmod 0640 "$TMP/shadow"
sum=$(md5sum < "$TMP/shadow")
ino=$(stat -c %i "$TMP/shadow")
config "$TMP/reports" "$TMP/shadow"
start_daemon
check "a metrics path that is not a metrics file is refused" logged "metrics $TMP/shadow: it exists and is not a metrics file this daemon wrote: refused"
oom_killed j "metrics like /etc/shadow"
check "the file is unchanged" test "$(md5sum < "$TMP/shadow")" = "$sum"
check "the file is not replaced" test "$(stat -c %i "$TMP/shadow")" = "$ino"
check "no temporary file is left beside it" test ! -e "$TMP/shadow.tmp"
stop_daemon

# 5. metrics in a directory writable by everyone (where another user could
# swap the file or its temporary copy).
config "$TMP/reports" "$TMP/open/oomkit.prom"
start_daemon
check "a metrics file in a directory writable by everyone is refused" logged "metrics $TMP/open/oomkit.prom: its directory is writable by others"
check "nothing is written there" test ! -e "$TMP/open/oomkit.prom" -a ! -e "$TMP/open/oomkit.prom.tmp"
stop_daemon

# 6. The reports index.  ~90 processes in the job make the report's head far
# longer than 8 KiB; a hog named with a cut UTF-8 sequence is the largest.
rm -rf "$TMP/reports"
config "$TMP/reports" "$TMP/oomkit.prom"
start_daemon
check "the daemon's metrics file is written where it may" wait_for 10 test -f "$TMP/oomkit.prom"
cut=$(printf 'hog\342\202')
cp "$OOMKIT_HOG" "$TMP/$cut"
sleepers=
for i in $(seq 1 90); do
	sh -c 'echo $$ > "$1/cgroup.procs" && exec sleep 600' sh "$R/j" &
	sleepers="$sleepers $!"
done
T_HELPERS="$sleepers"
hog=$(HOG_BIN="$TMP/$cut" spawn j 64 512 1000)
check "many processes: the hog is killed" wait_for 20 dead "$hog"
check "many processes: a report is written" wait_for 10 has_reports 1
rep=$(latest_report)
check "the report is valid JSON with the cut name in it" test "$(json_get "$rep" "[c['comm'] for c in r['candidates'] if c['pid'] == $hog][0].encode('latin-1')")" = "b'hog\\xe2\\x82'"
check "the report's head is long" test "$(stat -c %s "$rep")" -gt 8192
line=$("$OOMKIT" reports | tail -n 1)
check "reports names the action, not ?" eval 'echo "$line" | grep -Eq " j +kill +$hog "'
stop_daemon
start_daemon
check "after a restart the index is read back: the action" eval '"$OOMKIT" reports | tail -n 1 | grep -Eq " j +kill +$hog "'
for p in $sleepers; do kill "$p" 2>/dev/null; done
T_HELPERS=

# The name of a process cannot forge a line of the log: the largest
# process's comm carries a newline and a syslog priority.
forged=$(printf 'hog\n<0>forged')
cp "$OOMKIT_HOG" "$TMP/$forged"
hog=$(HOG_BIN="$TMP/$forged" spawn j 64 512 1000)
check "a forging name: the hog is killed" wait_for 20 dead "$hog"
check "a forging name: the log names it escaped" wait_for 10 grep -qF 'hog\x0a<0>forged' "$TMP/log"
check "a forging name: no forged line" eval '! grep -q "^<0>forged" "$TMP/log"'
stop_daemon

# 7. A prompt open when a reload removes its job: the report keeps the job's
# name (it was filed under ""), is whole, and says what became of it.
rm -rf "$TMP/reports"
write_config 512M "report, kill-lowest, kernel" 8s <<EOF2
[job ask]
limit = 32M
policy = prompt, kill-largest, kernel
EOF2
cp "$TMP/oomkitd.conf" "$TMP/with-ask.conf"
start_daemon
mkfifo "$TMP/answers"
"$OOMKIT" prompt < "$TMP/answers" > "$TMP/prompt.out" 2>&1 &
ppid=$!
exec 3> "$TMP/answers"
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt.out" || fail "prompt: did not connect"
hog=$(spawn ask 64 512 1000)
check "the question is asked" wait_for 20 grep -q "kill $hog" "$TMP/prompt.out"
sed -i '/^\[job ask\]/,$d' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "the reload removes the job" wait_for 10 logged "reload: ask is no longer configured"
check "the kernel resolves the OOM of the job let go" wait_for 20 dead "$hog"
check "the prompt's report is finished under the job's name" wait_for 20 eval 'ls "$TMP/reports"/oom-*-ask.json >/dev/null 2>&1'
check "no report is filed under an empty name" test -z "$(ls "$TMP/reports"/oom-*-.json 2>/dev/null)"
rep=$(ls "$TMP/reports"/oom-*-ask.json | tail -n 1)
check "its outcome says the job is gone" eval 'json_get "$rep" "r[\"outcome\"]" | grep -q "no longer configured"'
check "reports lists it under ask" eval '"$OOMKIT" reports | grep -Eq " ask +prompt "'
"$OOMKIT" --json reports > "$TMP/reports.json"
json_ok() { python3 -c 'import json,sys; r = json.load(open(sys.argv[1])); assert r and all(isinstance(x["time"], (int, float)) and x["scope"] for x in r), r' "$1"; }
check "reports --json is valid: a scope and a time in every entry" json_ok "$TMP/reports.json"
exec 3>&-
kill "$ppid" 2>/dev/null
check "the daemon is alive" alive "$DPID"
finish
