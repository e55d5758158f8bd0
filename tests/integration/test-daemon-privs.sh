#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the daemon gives up: its capabilities are the five it uses (kill,
# dac_override, chown, ipc_lock, sys_nice), in the bounding set too, it runs with no
# new privileges under a seccomp filter (Seccomp: 2), and so does its guardian,
# even one restarted after being killed.  Under the filter the daemon kills
# another user's process, reloads, answers the CLI, restarts its guardian,
# and that guardian still hands a held memcg to the kernel when the daemon
# is SIGKILLed; the kernel logs no refused call of either (when dmesg is
# readable).  --no-seccomp runs without the filter.  Non-root peers of the
# control socket may not reload, and find no prompt of another's to answer
# (status, prompt and run are in test-cli; prompts of two users in
# test-agent).
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup privs
require_user_tools
NOBODY=$USER_A
chmod 755 "$TMP"
# nobody runs a copy of the hog: the build tree may be where only root can enter.
user_copy "$OOMKIT_HOG" $NOBODY >/dev/null || exit

write_config 512M "report, kill-lowest, kernel" 30s <<EOF2
[job j]
limit = 32M
policy = kill-largest, kernel
EOF2

status_of() { # PID KEY: the value of KEY in /proc/PID/status
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}
# The expected sets: CAP_CHOWN 0, CAP_DAC_OVERRIDE 1, CAP_KILL 5, CAP_IPC_LOCK 14,
# CAP_SYS_NICE 23, as far as this shell has them (a container may withhold some).
have=$((16#$(status_of $$ CapPrm)))
run=$(((1 << 0 | 1 << 1 | 1 << 5 | 1 << 14 | 1 << 23) & have))
resource=$(((1 << 24) & have))
hex() { printf '%016x' "$1"; }
guardian_of() { pgrep -P "$1" -x oomkit-guardian; }
released() { cg_out_of_oom "$R/j"; }
held_off() { cg_held "$R/j"; }

# denials PID...: the kernel's audit records of calls refused to these pids.
if dmesg >/dev/null 2>&1; then
	denials() {
		local p
		for p in "$@"; do
			dmesg | grep "type=1326" | grep " pid=$p " | grep -E 'comm="(oomkitd|oomkit-guardian)"' || true
		done
	}
else
	echo "# dmesg is not readable: refused calls are not looked for"
	denials() { :; }
fi

start_daemon
guardian=$(guardian_of "$DPID")
[ -n "$guardian" ] || fail "no guardian below the daemon"
check "daemon: CapEff is the run-time set" test "$(status_of "$DPID" CapEff)" = "$(hex $run)"
check "daemon: CapPrm is the run-time set" test "$(status_of "$DPID" CapPrm)" = "$(hex $run)"
check "daemon: CapBnd is the run-time set" test "$(status_of "$DPID" CapBnd)" = "$(hex $run)"
check "daemon: no inheritable or ambient capabilities" \
	test "$(status_of "$DPID" CapInh)$(status_of "$DPID" CapAmb)" = "$(hex 0)$(hex 0)"
check "daemon: no new privileges" test "$(status_of "$DPID" NoNewPrivs)" = 1
check "daemon: seccomp filter" test "$(status_of "$DPID" Seccomp)" = 2
check "guardian: seccomp filter" test "$(status_of "$guardian" Seccomp)" = 2
check "guardian: the run-time set (and cap_sys_resource, which set oom_score_adj)" \
	test "$(status_of "$guardian" CapEff)" = "$(hex $((run | resource)))"
check "guardian: CapBnd is the run-time set" test "$(status_of "$guardian" CapBnd)" = "$(hex $run)"
check "the daemon logs what it kept" grep -q "capabilities kept: " "$TMP/log"

# Work under the filter: another user's hog is killed (CAP_KILL), the CLI is
# answered, a reload is applied.
as_nobody() { as_user $NOBODY "$@"; }
# Root moves the shell into the job, which then becomes the hog as nobody (same pid).
# It stays under the limit until it is seen running as nobody; then root's
# smaller pusher takes the job over it, and kill-largest must pick nobody's.
hog=$(spawn_as $NOBODY j 24 512 1000)
owned_by_nobody() { alive "$hog" && [ "$(stat -c %u "/proc/$hog")" = $NOBODY ]; }
wait_for 20 usage_at_least j $((24 << 20)) || fail "nobody's hog did not allocate its 24 MiB"
owned_by_nobody || fail "the hog does not run as uid $NOBODY"
pusher=$(spawn j 16 512 1000)
check "filter on: another user's hog is killed" wait_for 20 dead "$hog"
check "filter on: root's pusher, the smaller, lives" alive "$pusher"
kill -9 "$pusher"
wait_for 10 dead "$pusher" || fail "the pusher did not exit"
check "filter on: the memcg leaves OOM" wait_for 10 released
check "filter on: by the daemon" wait_for 10 grep -q "j: killed $hog\$" "$TMP/log"
check "filter on: a report is written" wait_for 10 has_reports 1
status_ok() { "$OOMKIT" status >/dev/null; }
check "filter on: status answers" status_ok
kill -HUP "$DPID"
check "filter on: SIGHUP reloads" wait_for 10 grep -q "reloaded" "$TMP/log"

# The guardian killed: the daemon forks another one, under the same filter.
kill -9 "$guardian"
new_guardian() {
	local g
	g=$(guardian_of "$DPID")
	[ -n "$g" ] && [ "$g" != "$guardian" ]
}
check "guardian killed: the daemon starts another" wait_for 10 new_guardian
old_guardian=$guardian
guardian=$(guardian_of "$DPID")
check "new guardian: seccomp filter" test "$(status_of "$guardian" Seccomp)" = 2
check "new guardian: the run-time set" test "$(status_of "$guardian" CapEff)" = "$(hex $run)"

# Control socket: a non-root peer may not reload.
# A python that uid 65534 may run (a per-user installation may not be).
for PY in /usr/bin/python3 "$(command -v python3)"; do
	as_nobody "$PY" -c pass 2>/dev/null && break
done
as_nobody "$PY" -c pass 2>/dev/null || skip "no python3 that uid $NOBODY may run"
ask_as_nobody() { # LINE: the daemon's first reply line to a non-root peer
	as_nobody "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().rstrip("\n"))' "$SOCK" "$1"
}
# A non-root peer may answer only a prompt that concerns it (test-agent.sh);
# with none waiting, there is nothing to answer.
check "non-root answer: nothing waiting" test "$(ask_as_nobody "answer 1 kernel")" = "error no question 1 is waiting"
check "non-root prompt: accepted" test "$(ask_as_nobody "prompt")" = "ok"
check "non-root reload: refused" test "$(ask_as_nobody "reload")" = "error permission denied: only root may reload"

# The restarted guardian, under the filter, still releases a held memcg when
# the daemon dies in the middle of an OOM (chain: the prompt step is skipped,
# so 'report' leaves the OOM for the kernel after the 30 s delay).
sed -i 's/^policy = kill-largest, kernel$/policy = report/' "$TMP/oomkitd.conf"
kill -HUP "$DPID"
reloaded_twice() { [ "$(grep -c reloaded "$TMP/log")" = 2 ]; }
wait_for 10 reloaded_twice || fail "no second reload"
hog=$(spawn j 64 512 1000)
under_oom_held() { cg_under_oom "$R/j" && held_off; }
check "report only: the OOM is held" wait_for 20 under_oom_held
check "report only: the hog is blocked" alive "$hog"
pid=$DPID
{ kill -9 "$DPID"; wait "$DPID"; } 2>/dev/null
DPID=
check "daemon killed: the restarted guardian releases the memcg" wait_for 20 released
check "daemon killed: the kernel kills the hog" wait_for 10 dead "$hog"
check "daemon killed: the guardian exits" wait_for 10 dead "$guardian"
refused=$(denials "$pid" "$old_guardian" "$guardian")
[ -n "$refused" ] && echo "$refused" >&2
check "the kernel logged no refused call of the daemon or its guardians" test -z "$refused"

# --no-seccomp: capabilities still dropped, no filter.
start_daemon --no-seccomp
check "--no-seccomp: no filter" test "$(status_of "$DPID" Seccomp)" = 0
check "--no-seccomp: capabilities still dropped" test "$(status_of "$DPID" CapEff)" = "$(hex $run)"
check "--no-seccomp: logged" grep -q "seccomp: off (--no-seccomp)" "$TMP/log"
stop_daemon
finish
