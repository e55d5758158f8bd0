#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A daemon restarted in the middle of an OOM.  The job's chain starts with a
# prompt, and a prompt client that never answers is connected, so each daemon
# killed here dies while the OOM is held and its hog blocked (delay 30 s: the
# prompt waits 15 s).
#   1. The daemon alone is SIGKILLed: its guardian gives the memcg its kernel
#      killer back at once, so the kernel resolves the OOM before any new
#      daemon exists; a new daemon then adopts the job and holds it again.
#   2. The daemon and its guardian are SIGKILLed together (as a whole-unit
#      kill does): the memcg stays held, the hog blocked; a new daemon on the
#      same configuration, with no prompt client, adopts the job, gets the
#      OOM as it registers, skips the prompt and kills the hog itself: the
#      kernel's oom_kill counter does not move and the new daemon reports it.
#   4. Both SIGKILLed, then `oomkitd --release` (the unit's ExecStopPost)
#      gives the kernel its killer back and the kernel resolves the OOM.
#   3. The daemon SIGKILLed and a new one started at once: the guardian and
#      the new daemon race; either may resolve the OOM, but it is resolved.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup restart

write_config 512M "report, kill-lowest, kernel" 30s <<EOF2
[job held]
limit = 32M
policy = prompt, kill-largest, kernel
EOF2

blocked() { cg_under_oom "$R/held"; }
released() { cg_out_of_oom "$R/held"; }
held_off() { cg_held "$R/held"; }
guardian_of() { pgrep -P "$1" -x oomkit-guardian; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# connect_prompt N: a prompt client that never answers (its stdin stays open).
connect_prompt() {
	mkfifo "$TMP/answers$1"
	"$OOMKIT" prompt --once < "$TMP/answers$1" > "$TMP/prompt$1.out" 2>&1 &
	T_HELPERS="${T_HELPERS:-} $!"
	exec {fd}> "$TMP/answers$1"
	wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt$1.out" || fail "prompt client $1 did not connect"
}

# oom_under_prompt N [CGROUP]: a hog in the job (or CGROUP below it), held
# under OOM while the daemon asks.
oom_under_prompt() {
	hog=$(spawn "${2:-held}" 64 512 1000)
	wait_for 20 grep -q "kill $hog" "$TMP/prompt$1.out" || fail "no question about $hog reached prompt client $1"
	# A charge given back in the job wakes the hog, which clears under_oom
	# until it fails its charge again: waited for, not read once.
	wait_for 20 blocked || fail "the job is not under OOM while the daemon asks"
	held_off || fail "the job's kernel killer is not held off while the daemon asks"
	alive "$hog" || fail "the hog died before the daemon was killed"
}

# kill_daemon: SIGKILL, reaped quietly (bash would report the kill).
kill_daemon() {
	{ kill -9 "$DPID"; wait "$DPID"; } 2>/dev/null
	DPID=
}

# kill_both: the daemon and its guardian SIGKILLed together, as a whole-unit
# kill does (the daemon stopped first, so it cannot restart its guardian).
kill_both() {
	guardian=$(guardian_of "$DPID")
	[ -n "$guardian" ] || fail "no guardian below the daemon"
	kill -STOP "$DPID"
	kill -9 "$guardian"
	wait_for 10 dead "$guardian" || fail "the guardian did not die"
	kill_daemon
}

logged_since() { # LINE PATTERN: the daemon log from that line on has it
	tail -n +"$1" "$TMP/log" | grep -q "$2"
}

# 1. The daemon alone dies; its guardian hands the OOM to the kernel.
start_daemon
connect_prompt 1
oom_under_prompt 1
kills=$(cg_kills "$R/held")
guardian=$(guardian_of "$DPID")
[ -n "$guardian" ] || fail "no guardian below the daemon"
kill_daemon
check "daemon killed: its guardian exits" wait_for 10 gone "$guardian"
check "daemon killed: the memcg leaves OOM with no daemon running" wait_for 20 released
check "daemon killed: the hog is dead" wait_for 10 dead "$hog"
check "daemon killed: the kernel killer is given back" cg_released "$R/held"
check "daemon killed: the kernel killed the hog (oom_kill +1)" test "$(cg_kills "$R/held")" = $((kills + 1))

line=$(($(wc -l < "$TMP/log") + 1))
start_daemon
check "new daemon: adopts the job" logged_since "$line" "held: adopted $M/held"
check "new daemon: holds the kernel killer off again" held_off
reports_before=$(report_count)

# 2. The daemon and its guardian die together: nobody releases the memcg.
connect_prompt 2
oom_under_prompt 2
kills=$(cg_kills "$R/held")
kill_both
check "both killed: the memcg stays held" held_off
check "both killed: the OOM is still there" wait_for 20 blocked
check "both killed: the hog is blocked, not killed" alive "$hog"

line=$(($(wc -l < "$TMP/log") + 1))
start_daemon
check "restart: the new daemon kills the hog" wait_for 20 dead "$hog"
check "restart: the memcg leaves OOM" wait_for 10 released
check "restart: the kernel killed nothing (oom_kill unchanged)" test "$(cg_kills "$R/held")" = "$kills"
check "restart: the new daemon adopted the job" logged_since "$line" "held: adopted $M/held with 1 processes"
check "restart: the new daemon says it killed the hog" wait_for 10 logged_since "$line" "held: killed $hog\$"
has_new_report() { [ "$(report_count)" -gt "$reports_before" ]; }
check "restart: the new daemon wrote a report" wait_for 10 has_new_report
rep=$(latest_report)
check "restart: the report names the hog, by kill-largest" \
	test "$(json_get "$rep" "r['decision']['victim_pid'], r['decision']['policy'], r['outcome']")" = "($hog, 'kill-largest', 'killed $hog')"
check "restart: the prompt was skipped: nobody to ask" \
	test "$(json_get "$rep" "r['decision']['not_applied'].startswith('prompt')")" = True
check "restart: the job is held off again" held_off

# 3. A new daemon at once: the guardian and it race; the OOM is resolved either way.
connect_prompt 3
oom_under_prompt 3
kills=$(cg_kills "$R/held")
line=$(($(wc -l < "$TMP/log") + 1))
kill_daemon
start_daemon
check "race: the hog is dead" wait_for 20 dead "$hog"
check "race: the memcg leaves OOM" wait_for 10 released
if [ "$(cg_kills "$R/held")" = $((kills + 1)) ]; then
	who=kernel
else
	who=oomkitd
	check "race: no kernel kill, so the new daemon killed it" wait_for 10 logged_since "$line" "held: killed $hog\$"
fi
echo "# race: resolved by the $who"
check "race: the new daemon holds the job" wait_for 10 held_off
stop_daemon
check "stop: the kernel killer is given back" cg_released "$R/held"

# 4. Both killed together, then what the unit's ExecStopPost runs: oomkitd --release.
# Another handler's hold below the job (an owner's own liboomkit handler,
# say) is not this daemon's to give back; made before the OOM,
# when the job still has room for a memcg.
# On v2 a cgroup whose children have the memory controller holds no
# process: there the hog runs in a leaf beside theirs.
hogcg=held
if [ "$CG_MODE" = v2 ]; then
	echo +memory >"$R/held/cgroup.subtree_control" && mkdir "$R/held/work" ||
		fail "cannot give the job's children the memory controller"
	hogcg=held/work
fi
mkdir "$R/held/theirs" && cg_hold "$R/held/theirs"
start_daemon
connect_prompt 4
oom_under_prompt 4 $hogcg
kills=$(cg_kills "$R/held")
kill_both
check "release: held with nobody watching" held_off
"$OOMKITD" -c "$TMP/oomkitd.conf" --release >>"$TMP/log" 2>&1
check "release: oomkitd --release exits 0" test $? = 0
check "release: the kernel killer is back" cg_released "$R/held"
check "release: the machine's too" cg_released "$R"
check "release: another handler's hold below the job stays" cg_held "$R/held/theirs"
check "release: the kernel resolves the OOM" wait_for 20 dead "$hog"
check "release: it was the kernel (oom_kill + 1)" test "$(cg_kills "$R/held")" = $((kills + 1))
finish
