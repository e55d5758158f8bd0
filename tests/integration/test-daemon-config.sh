#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The configuration against a live daemon: --check and startup
# accept and refuse the same machine paths, with the same words; a
# configuration file replaced by a FIFO, then SIGHUP, is refused at once, and
# the daemon goes on answering and handling OOMs with the configuration it
# has; a file with CR line ends is refused rather than read as one line.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup config

write_config 256M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel
EOF2
cp "$TMP/oomkitd.conf" "$TMP/good.conf"

# with_machine PATH: the good file with another machine line.
with_machine() {
	sed "s|^machine = .*|machine = $1|" "$TMP/good.conf" > "$TMP/m.conf"
}

# Every spelling of the memory root, and paths that leave it, are refused by
# --check and by startup alike.  Startup runs as --dry-run, which creates and
# takes over nothing, so a check that failed here could not make the daemon
# take the memory root of the host.
# On cgroup v2 the mount itself may be the machine, named, with jobs that
# adopt cgroups (config_resolve_machine()): there the spellings of the mount
# are not a refused machine (the systemd guest's checks run such a machine).
roots=("$MEMROOT" "$MEMROOT/" "$MEMROOT//" "$MEMROOT/." "$MEMROOT/./" "$MEMROOT/$M/..")
[ "$CG_MODE" = v2 ] && roots=()
for m in "${roots[@]}" / // "$MEMROOT/../memory/$M" "${MEMROOT#/}/$M" "/tmp/$M" "${MEMROOT}x/$M"; do
	with_machine "$m"
	out=$(timeout 10 "$OOMKITD" --check -c "$TMP/m.conf" 2>&1)
	rc=$?
	check "--check refuses machine = $m" test $rc = 1
	check "--check names file:line and key for machine = $m" \
		test "${out#"$TMP/m.conf:2: [oomkitd] machine: "}" != "$out"
	started=$(timeout 10 "$OOMKITD" --dry-run -c "$TMP/m.conf" 2>&1)
	rc=$?
	check "startup refuses machine = $m" test $rc = 1
	check "startup says what --check says for machine = $m" grep -qF -- "$out" <<<"$started"
done
[ -d "$R" ] && fail "a refused machine was created"

# Spellings of a good path mean it, for both.
for m in "$MEMROOT//$M/" "/$MEMROOT/$M//"; do
	with_machine "$m"
	out=$(timeout 10 "$OOMKITD" --check -c "$TMP/m.conf" 2>&1)
	check "--check accepts machine = $m" test "$(head -n 1 <<<"$out")" = "$TMP/m.conf: ok, 1 job"
done
cp "$TMP/m.conf" "$TMP/oomkitd.conf"
start_daemon
machine=$(timeout 10 "$OOMKIT" --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"]["cgroup"])')
check "startup takes a machine with extra slashes as the machine itself" test "$machine" = "$M"

# A FIFO in place of the file: --check does not wait for a writer.
mv "$TMP/oomkitd.conf" "$TMP/real.conf"
mkfifo "$TMP/oomkitd.conf"
out=$(timeout 10 "$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
rc=$?
check "--check refuses a FIFO at once" test $rc = 1
check "--check says it is a FIFO" test "$out" = "$TMP/oomkitd.conf: cannot read: not a regular file (a FIFO)"

# SIGHUP with the FIFO: refused, logged, and the loop goes on.
kill -HUP "$DPID"
check "SIGHUP with a FIFO logs why" \
	wait_for 10 grep -qF "$TMP/oomkitd.conf: cannot read: not a regular file (a FIFO)" "$TMP/log"
check "SIGHUP with a FIFO keeps the running configuration" \
	wait_for 10 grep -q "reload: .* has errors; the running configuration stays" "$TMP/log"
check "the daemon still runs" alive "$DPID"
jobs=$(timeout 10 "$OOMKIT" --json status | python3 -c 'import json,sys; print([j["name"] for j in json.load(sys.stdin)["jobs"]])')
check "the daemon still answers status, with its jobs" test "$jobs" = "['web']"
a=$(spawn web 48)
check "the daemon still handles an OOM: the hog over the job's limit is killed" wait_for 20 dead "$a"
check "the OOM is reported as the daemon's kill" wait_for 10 has_reports 1
rep=$(latest_report)
check "the report names the hog as the victim" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$a"
check "the report says kill-largest decided" test "$(json_get "$rep" "r['decision']['policy']")" = kill-largest

# CR line ends: refused, with its line, and the running configuration stays.
rm -f "$TMP/oomkitd.conf"
tr '\n' '\r' < "$TMP/real.conf" > "$TMP/oomkitd.conf"
out=$(timeout 10 "$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check refuses CR line ends" test $? = 1
check "--check names line 1 for CR line ends" \
	test "$out" = "$TMP/oomkitd.conf:1: carriage return inside a line (lines end with LF or CR LF, not CR alone)"
kill -HUP "$DPID"
check "SIGHUP with CR line ends logs the error" wait_for 10 grep -qF "$out" "$TMP/log"

# The real file back: the next SIGHUP reloads.
cp "$TMP/real.conf" "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "SIGHUP with the regular file again reloads" wait_for 10 grep -q "reloaded .*: 1 jobs" "$TMP/log"

# A limit in percent of the machine's MemTotal (about 64M on any machine),
# with a '#' comment after it, taken on SIGHUP: the job's memcg gets
# MemTotal times the percent, rounded down to 4 KiB.
total=$(($(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo) * 1024))
h=$((64 * 1024 * 1024 * 10000 / total))
[ $h -ge 1 ] || h=1
pct="$((h / 100)).$(printf %02d $((h % 100)))%"
want=$(((total / 10000 * h + total % 10000 * h / 10000) / 4096 * 4096))
sed "s/^limit = 32M$/limit = $pct # of the machine/" "$TMP/real.conf" > "$TMP/oomkitd.conf"
check "the file has the percent limit" grep -q "^limit = $pct # of the machine$" "$TMP/oomkitd.conf"
out=$(timeout 10 "$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
# Its first line is the verdict; the lines after it say which machine.
check "--check accepts limit = $pct # of the machine ($out)" test "$(echo "$out" | head -n 1)" = "$TMP/oomkitd.conf: ok, 1 job"
check "--check names the machine it would manage" grep -qF "machine: $R, $MACHINE_KIND" <<< "$out"
kill -HUP "$DPID"
reloaded_twice() { [ "$(grep -c "reloaded .*: 1 jobs" "$TMP/log")" -ge 2 ]; }
check "SIGHUP with a percent limit reloads" wait_for 10 reloaded_twice
check "the job's limit is $pct of MemTotal: $want bytes (got $(cat "$R/web/$LIMIT_FILE"))" \
	test "$(cat "$R/web/$LIMIT_FILE")" = "$want"

# memory_priority on cgroup v1, which has neither memory.low nor
# memory.reclaim: accepted, said once, and nothing more (its once-a-second
# look is not armed: the daemon stays idle).  Its bad values are refused
# with file:line.
if [ "$(stat -f -c %T "$MEMROOT")" != cgroup2fs ]; then
	sed 's/^\[oomkitd\]$/[oomkitd]\nmemory_priority = yes/' "$TMP/real.conf" > "$TMP/oomkitd.conf"
	kill -HUP "$DPID"
	check "memory_priority on cgroup v1: the daemon says it is off there" \
		wait_for 10 grep -q "memory_priority: needs cgroup v2 (memory.low, memory.reclaim); off on cgroup v1" "$TMP/log"
	check "and its timers are disarmed when nothing happens" wait_for 10 disarmed "$DPID"
	check "the metrics say memory priority is not acting" \
		wait_for 10 grep -q '^oomkit_memory_priority_active 0$' "$TMP/oomkit.prom"
fi
printf '[oomkitd]\nmemory_priority_stall = 0%%\nmemory_priority_step = 1K\n' > "$TMP/bad.conf"
out=$(timeout 10 "$OOMKITD" --check -c "$TMP/bad.conf" 2>&1)
check "--check refuses memory_priority_stall = 0% with file:line ($out)" \
	grep -q "^$TMP/bad.conf:2: \[oomkitd\] memory_priority_stall: " <<< "$out"
check "--check refuses memory_priority_step = 1K with file:line" \
	grep -q "^$TMP/bad.conf:3: \[oomkitd\] memory_priority_step: " <<< "$out"
finish
