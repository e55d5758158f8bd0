#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The growers held still while a person decides (daemon/freeze.h): during a
# machine-level question, a job that grows is frozen (here, on cgroup v1,
# through the freezer controller: its tasks moved into the frozen freezer
# cgroup oomkit-freeze/<memcg path>), its memory does not grow while a
# protected process beside it does, and it is thawed before anything is
# done about it:
#  1. a job whose process is named as a display server (Xorg) grows too
#     and is never frozen;
#     the person answers "kill" the grower: thawed, it dies (a frozen task
#     on v1 dies only once thawed), the rest of its job lives, thawed and
#     back at the freezer root; the report says what was frozen, how long;
#  2. no answer: thawed at the deadline, the chain kills the largest, the
#     kernel's killer never runs;
#  3. the daemon killed while a job is frozen: the next daemon thaws it
#     from its record (the file "frozen" beside the report directory).
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
FREEZER=/sys/fs/cgroup/freezer
[ -f "$FREEZER/freezer.state" ] || [ -d "$FREEZER" ] || skip "no cgroup v1 freezer at $FREEZER"
setup freeze
MIRROR="$FREEZER/oomkit-freeze/$M"

# Whatever a failed test left frozen is thawed before the memcgs are
# removed: a frozen task on v1 does not die of SIGKILL.
thaw_mirror() {
	local d p
	[ -d "$FREEZER/oomkit-freeze/$M" ] || return 0
	for d in $(find "$FREEZER/oomkit-freeze/$M" -depth -type d); do
		echo THAWED > "$d/freezer.state" 2>/dev/null
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do
			echo "$p" > "$FREEZER/cgroup.procs" 2>/dev/null
		done
		rmdir "$d" 2>/dev/null
	done
	rmdir "$FREEZER/oomkit-freeze" 2>/dev/null
	return 0
}
trap 'rc=$?; thaw_mirror; (exit $rc); cleanup' EXIT

cp "$OOMKIT_HOG" "$TMP/keephog"
# A job whose process is named as a display server: never frozen.
cp "$OOMKIT_HOG" "$TMP/Xorg"
# A question of 8 s (half the delay).
write_config 160M "report, prompt, kill-largest, kernel" 16s <<EOF
[job grow]
priority = 500
limit = 150M

[job ballast]
priority = 500
limit = 150M

[job keep]
priority = 500
limit = 150M
protect = comm:keephog

[job display]
priority = 500
limit = 150M
EOF
start_daemon

usage() { cat "$R/$1/memory.usage_in_bytes"; }
frozen() { [ "$(cat "$MIRROR/$1/freezer.state" 2>/dev/null)" = FROZEN ]; }
in_mirror() { grep -q ":freezer:/oomkit-freeze/$M/$2\$" "/proc/$1/cgroup" 2>/dev/null; }
at_freezer_root() { grep -q ":freezer:/\$" "/proc/$1/cgroup" 2>/dev/null; }
oom_kills() { sed -n 's/^oom_kill //p' "$R/memory.oom_control"; }
report() { ls "$TMP/reports"/oom-"$(printf %08u "$1")"-*.json 2>/dev/null; }
frozen_n() { [ "$(grep -c "grow: frozen while the question is open" "$TMP/log")" -ge "$1" ]; }
prompt_asked() { grep -q "^answer:" "$1"; }

# The OOM: a ballast, a protected process that grows slowly, the grower's
# job (a filler and a slow grower) run the machine out; the question is
# asked; then the test frees the ballast, so that both growers could go on.
# Sets BALLAST KEEP FILLER SLOW.
run_out() {
	BALLAST=$(spawn ballast 60)
	wait_for 10 usage_at_least ballast $((60 << 20)) || fail "the ballast did not grow"
	FILLER=$(spawn grow 16)
	wait_for 10 usage_at_least grow $((16 << 20)) || fail "the filler did not grow"
	KEEP=$(HOG_BIN="$TMP/keephog" spawn keep 100 256 20000)
	SLOW=$(spawn grow 200 256 20000)
}

mkfifo "$TMP/answers"
"$OOMKIT" prompt --once < "$TMP/answers" > "$TMP/p1.out" 2>&1 &
p1=$!
exec 3> "$TMP/answers"
wait_for 10 grep -q "waiting for OOMs" "$TMP/p1.out" || fail "the prompt did not connect"

# 1. Answered; beside the grower, a process named as a display server grows.
XORG=$(HOG_BIN="$TMP/Xorg" spawn display 100 256 20000)
run_out
check "1: the question is asked" wait_for 60 prompt_asked "$TMP/p1.out"
kill -9 "$BALLAST"
check "1: the daemon freezes the grower's job" wait_for 20 grep -q "grow: frozen while the question is open: it grew" "$TMP/log"
check "1: ... its tasks in the freezer cgroup" in_mirror "$SLOW" grow
check "1: ... and the filler beside it" in_mirror "$FILLER" grow
check "1: ... every one frozen" wait_for 20 frozen grow
frozen_usage=$(usage grow)
keep_usage=$(usage keep)
xorg_usage=$(usage display)
# The protected process goes on growing: the machine has room, yet the
# frozen job takes none of it.
check "1: the protected process grows meanwhile" wait_for 30 usage_at_least keep $((keep_usage + (8 << 20)))
check "1: ... while the frozen job's memory did not grow" test "$(usage grow)" -le "$frozen_usage"
check "1: the protected process's job is not frozen" test ! -e "$MIRROR/keep"
check "1: ... nor the ballast's" test ! -e "$MIRROR/ballast"
check "1: a job of a process named Xorg grows meanwhile" wait_for 30 usage_at_least display $((xorg_usage + (1 << 20)))
check "1: ... and is not frozen (a display server's name)" test ! -e "$MIRROR/display"
check "1: ... nor was it ever" sh -c "! grep -q 'display: frozen' '$TMP/log'"
# Gone before the answer, so that its growth brings no second OOM.
kill -9 "$XORG"
echo "kill $SLOW" >&3
check "1: the chosen grower dies" wait_for 20 dead "$SLOW"
check "1: the filler lives" alive "$FILLER"
check "1: ... thawed, back at the freezer root" wait_for 10 at_freezer_root "$FILLER"
check "1: ... the freezer cgroup removed" test ! -e "$MIRROR/grow"
check "1: the daemon says it thawed the job" grep -q "grow: thawed after .* (answered)" "$TMP/log"
wait_for 20 has_reports 1 || fail "no report of the question"
rep=$(report 1)
wait_for 20 grep -q '"frozen_ms"' "$rep"
check "1: the report: the user chose the grower" \
	test "$(json_get "$rep" "r['prompt_answer']")" = "1 kill $SLOW"
check "1: ... chosen by the user" \
	test "$(json_get "$rep" "r['followup']['reason']")" = "chosen by the user root: process $SLOW (oomkit-hog)"
check "1: the report names the frozen job" test "$(json_get "$rep" "r['frozen'][0]['job']")" = grow
check "1: ... and how long it was frozen" test "$(json_get "$rep" "r['frozen'][0]['frozen_ms'] > 0")" = True
check "1: ... thawed" test "$(json_get "$rep" "r['frozen'][0]['thawed']")" = True
check "1: ... and only it" test "$(json_get "$rep" "len(r['frozen'])")" = 1
check "1: oomkit reports show says it" sh -c "'$OOMKIT' reports show 1 | grep -q 'frozen: *grow for [0-9]* ms, after it grew'"
kill -9 "$KEEP" "$FILLER" 2>/dev/null
wait_for 10 dead "$KEEP"
wait "$p1" 2>/dev/null

# 2. No answer: a listener that never answers.
mkfifo "$TMP/silent"
"$OOMKIT" prompt --once < "$TMP/silent" > "$TMP/p2.out" 2>&1 &
p2=$!
exec 4> "$TMP/silent"
wait_for 10 grep -q "waiting for OOMs" "$TMP/p2.out" || fail "the second prompt did not connect"
kills_before=$(oom_kills)
run_out
check "2: the question is asked" wait_for 60 prompt_asked "$TMP/p2.out"
kill -9 "$BALLAST"
check "2: the grower's job is frozen" wait_for 20 frozen_n 2
wait_for 20 frozen grow || fail "2: not every task of the job froze"
check "2: no answer: thawed at the deadline" wait_for 30 grep -q "grow: thawed after .* (no answer in time)" "$TMP/log"
check "2: ... and back at the freezer root" wait_for 10 at_freezer_root "$FILLER"
# Thawed, with the machine out of memory again (the protected process took
# what the ballast left), the chain goes on: the largest it may kill is the
# grower (the filler is smaller, the protected process is protected).
check "2: the chain kills the grower" wait_for 60 dead "$SLOW"
check "2: the filler lives" alive "$FILLER"
check "2: the kernel's killer killed nothing" test "$(oom_kills)" = "$kills_before"
# (Thawed when memory was found again, the grower may run the machine out
# once more and be asked about again before the chain kills it.)
rep=$(grep -l '"frozen":\[' "$TMP/reports"/oom-*.json | tail -n 1)
check "2: the report of the question: no answer" test "$(json_get "$rep" "r['prompt_answer']")" = none
check "2: ... and what was frozen" test "$(json_get "$rep" "r['frozen'][0]['job']")" = grow
check "2: ... thawed" test "$(json_get "$rep" "r['frozen'][0]['thawed']")" = True
kill -9 "$KEEP" "$FILLER" 2>/dev/null
kill "$p2" 2>/dev/null
wait "$p2" 2>/dev/null

# 3. A daemon killed while a job is frozen: the next one thaws it.
"$OOMKIT" prompt --once < "$TMP/silent" > "$TMP/p3.out" 2>&1 &
p3=$!
wait_for 10 grep -q "waiting for OOMs" "$TMP/p3.out" || fail "the third prompt did not connect"
run_out
check "3: the question is asked" wait_for 60 prompt_asked "$TMP/p3.out"
kill -9 "$BALLAST"
wait_for 20 frozen_n 3 || fail "3: the grower's job was not frozen"
check "3: the grower's job is frozen" wait_for 20 frozen grow
check "3: the record names it" grep -qx "$M/grow" "$TMP/frozen"
kill -9 "$DPID"
wait "$DPID" 2>/dev/null
DPID=
check "3: the daemon gone, the job stays frozen" frozen grow
start_daemon
check "3: the next daemon thaws it" wait_for 10 at_freezer_root "$FILLER"
check "3: ... says so" grep -q "freeze: thawed $M/grow, left frozen by an earlier daemon" "$TMP/log"
check "3: ... and empties the record" test ! -s "$TMP/frozen"
kill -9 "$KEEP" "$FILLER" "$SLOW" 2>/dev/null
kill "$p3" 2>/dev/null
wait "$p3" 2>/dev/null
finish
