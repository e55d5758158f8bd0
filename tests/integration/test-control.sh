#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The control socket under attack by unprivileged users (floods,
# idle and dripping clients, forged names, other users' answers), against a live oomkitd on real memcgs.  After each
# attack: the daemon is alive, an OOM is handled by the right victim, root is
# served, and what reaches a terminal or a JSON reader is valid.
#  - one connection floods junk requests and never reads: the daemon stops
#    reading it, its memory does not grow, and it drops the client;
#  - every slot a non-root user can take is held (several uids), plus a
#    client that sends a request a byte at a time: root's status and run are
#    served, an OOM is handled, and the idle ones are dropped;
#  - a flood of listeners (desktop agents) from seven uids: a uid's fifth
#    and an eighth uid are refused, root's status, run and prompt are
#    served and answered, and root takes the oldest listener's slot when
#    its own are full;
#  - a process named with terminal escapes, newlines and "." lines: ps,
#    prompt and reports show print none of it raw, list every candidate,
#    and --json round-trips the name;
#  - a question about the machine goes to a job owner with only its own
#    processes; another user's answer is refused, the owner's is applied;
#  - the report of that OOM is the owner's to read (reports show, escaped;
#    the list holds it alone), and not another user's, also after a restart;
#  - the socket's directory: a user-writable one or a link is refused.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
setup control
chmod 755 "$TMP"
command -v python3 >/dev/null || skip "python3 is missing"
client=$(user_copy "$(dirname "$0")/control-client.py") || exit
hog=$(user_copy "$OOMKIT_HOG") || exit
cli=$(user_copy "$OOMKIT") || exit
UID_B=$(other_uid) || exit
user_copy "$OOMKIT_HOG" "$UID_B" >/dev/null || exit
no_raw_escapes() { ! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1"; }
valid_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"; }
daemon_alive() { alive "$DPID"; }
# as_user's output in the background: as_user_bg's pid is the client's own.
bg_client() { # UID OUTFILE ARGS...
	local uid=$1 out=$2
	shift 2
	as_user_bg "$uid" python3 "$client" "$@" > "$out" 2>&1
}

# A question waits half the delay for its answer: 60 s, longer than the
# checks between a question and its answer may take on a loaded machine
# (more than 10 s once, with two CPU hogs beside make check).  Nothing here
# waits for a question to expire.
write_config 96M "prompt, kill-largest, kernel" 120s <<EOF
[job a]
priority = 500
limit = 200M
owner = $USER_A

[job b]
priority = 500
limit = 200M
owner = $UID_B

[job plain]
priority = 100
limit = 32M
policy = kill-largest, kernel
EOF
start_daemon
as_root_status() { "$OOMKIT" status > "$TMP/status.out" 2>&1 && grep -Eq '^plain +100 ' "$TMP/status.out"; }
oom_in_plain() { # DESCRIPTION: a hog over plain's limit is killed by its chain
	local big
	big=$(spawn plain 64 512 1000)
	check "$1: an OOM in plain kills its hog" wait_for 30 dead "$big"
}

# --- 1. A flood of requests from a client that never reads.
usage_before=$(cat "$R-daemon/$USAGE_FILE")
bg_client $USER_A "$TMP/flood.out" flood "$SOCK"
flooder=$!
wait_for 60 grep -q "^accepted" "$TMP/flood.out" || fail "flood: the client never stalled"
accepted=$(sed -n 's/^accepted //p' "$TMP/flood.out")
check "flood: the daemon stopped reading (took $accepted bytes, not 64 MiB)" test "$accepted" -lt $((8 << 20))
check "flood: the daemon is alive" daemon_alive
usage_after=$(cat "$R-daemon/$USAGE_FILE")
check "flood: the daemon's memcg grew by less than 2 MiB ($usage_before -> $usage_after)" \
	test $((usage_after - usage_before)) -lt $((2 << 20))
check "flood: root's status is served meanwhile" as_root_status
oom_in_plain "flood"
check "flood: the client that never reads is dropped" wait_for 60 grep -q "^dropped" "$TMP/flood.out"
wait "$flooder"
check "flood: the daemon is alive after" daemon_alive

# --- 2. Every slot held by non-root users, and a slow drip.
# Seven uids take the 28 slots that are not root's: six hold four each (a
# fifth is refused), the seventh holds three and drips a request into the last.
# One interpreter forks them in turn, so all are in within the daemon's idle
# limit (5 s) however loaded the machine is.
specs=
for u in $USER_A $UID_B 60001 60002 60003 60004; do
	specs="$specs $u:$(user_gid "$u"):5:$TMP/hold.$u"
done
specs="$specs 60005:$(user_gid 60005):3:$TMP/hold.60005 60005:$(user_gid 60005):drip:$TMP/drip.out"
specs="$specs 60006:$(user_gid 60006):1:$TMP/hold.60006"
# shellcheck disable=SC2086
python3 "$client" hold-seq "$SOCK" $specs > "$TMP/holders.out" 2>&1 &
holders=$!
wait_for 60 grep -q "^all connected" "$TMP/holders.out" || fail "hold: the clients did not connect ($(cat "$TMP/holders.out"))"
# Accepted in the order they connected: every slot but root's is taken now.
check "slots: root's status is served while every other slot is held" as_root_status
served_at=$(date +%s.%N)
"$OOMKIT" run --job plain -- sh -c 'grep -q "'"$CG_LINE"'/'"$M"'/plain$" /proc/self/cgroup'
check "slots: root's run is served" test $? = 0
# After the run: a command started in a job at its limit may fail its exec
# (the kernel's SIGSEGV past the point of no return) before the OOM is handled.
big=$(spawn plain 64 512 1000)
check "slots: an OOM in plain kills its hog meanwhile" wait_for 30 dead "$big"
for u in $USER_A $UID_B 60001 60002 60003 60004; do
	check "slots: uid $u holds 4 connections, the 5th is refused" \
		wait_for 60 grep -q "^held 4 refused 1 error too many connections from uid $u" "$TMP/hold.$u"
done
check "slots: the seventh uid holds 3" wait_for 60 grep -q "^held 3 refused 0" "$TMP/hold.60005"
check "slots: past 28, other users are refused: root's slots are left" \
	wait_for 60 grep -q "^held 0 refused 1 error too many connections: only root's slots are left" "$TMP/hold.60006"
check "slots: a client sending a request a byte at a time is dropped" wait_for 60 grep -q "^dropped" "$TMP/drip.out"
wait $holders
first_drop=$(cat "$TMP"/hold.* | sed -n 's/^dropped first at //p' | sort -n | head -n 1)
check "slots: root was served before any idle client was dropped" \
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))' "$served_at" "$first_drop"
check "slots: the daemon logs the drops" grep -q "no request or read for" "$TMP/log"
check "slots: a user connects again after the drops" \
	test "$(as_user $USER_A python3 "$client" ask "$SOCK" status)" = \
	"error permission denied: only root may read status (see readonly_status)"
check "slots: the daemon is alive" daemon_alive

# --- 2b. A flood of desktop agents: listeners are never idle, so
# they hold their slots for as long as they listen; they count against the
# same budget.  Seven uids listen on every slot that is not root's (a fifth
# listener of a uid, and an eighth uid, are refused); root's status, run and
# prompt are served, a question about the machine reaches root and the
# listeners it concerns, and root's answer is applied; when root needs more
# than its own slots, the oldest listener makes room.
listeners=
listen_as() { # UID N
	bg_client "$1" "$TMP/listen.$1" listen "$SOCK" "$2" "$TMP/stop-listening"
	listeners="$listeners $!"
	wait_for 20 grep -q "^listening" "$TMP/listen.$1" || fail "agents: uid $1's listeners did not connect"
}
for u in $USER_A $UID_B 60001 60002 60003 60004 60005; do
	listen_as "$u" 5
done
for u in $USER_A $UID_B 60001 60002 60003 60004 60005; do
	check "agents: uid $u listens on 4 connections, the 5th is refused" \
		grep -q "^listening 4 refused 1 error too many connections from uid $u" "$TMP/listen.$u"
done
listen_as 60006 1
check "agents: past 28 listeners, other users are refused: root's slots are left" \
	grep -q "^listening 0 refused 1 error too many connections: only root's slots are left" "$TMP/listen.60006"
listen_as 0 1
check "agents: root listens beside them" grep -q "^listening 1 refused 0" "$TMP/listen.0"
check "agents: root's status is served" as_root_status
"$OOMKIT" run --job plain -- sh -c 'grep -q "'"$CG_LINE"'/'"$M"'/plain$" /proc/self/cgroup'
check "agents: root's run is served" test $? = 0
b=$(spawn_as "$UID_B" b 120 512 2000)
check "agents: root is asked about the machine's OOM" wait_for 30 grep -q "^asked" "$TMP/listen.0"
qid=$(sed -n 's/^asked //p' "$TMP/listen.0" | head -n 1)
asked_b() { test "$(grep -c "^asked $qid\$" "$TMP/listen.$UID_B")" = 4; }
check "agents: so are the four listeners of the victim's user" wait_for 10 asked_b
check "agents: and not those it does not concern" test -z "$(grep "^asked" "$TMP/listen.60001")"
check "agents: root's answer is applied" \
	test "$(python3 "$client" ask "$SOCK" "answer $qid kill $b" | head -n 1)" = ok
check "agents: the process root chose dies" wait_for 20 dead "$b"
python3 "$client" hold "$SOCK" 3 > "$TMP/hold-root" 2>&1 &
holders=$!
wait_for 20 grep -q "^connected" "$TMP/hold-root" || fail "agents: root's clients did not connect"
check "agents: root's own slots taken, root connects again" as_root_status
check "agents: the oldest listener made room for root" wait_for 10 grep -q "^dropped" "$TMP/listen.$USER_A"
check "agents: the daemon says so" grep -q "uid $USER_A's oldest connection makes room for root" "$TMP/log"
check "agents: no other listener was dropped" test "$(cat "$TMP"/listen.* | grep -c "^dropped")" = 1
touch "$TMP/stop-listening"
wait $listeners $holders
check "agents: the daemon is alive" daemon_alive

# --- 3 and 4. Hostile names, and who may answer a question.
# The hog, as a file named with a terminal title escape, newlines and a "." line:
# its comm and cmdline carry them.
evil=$'\e]0;pwned\a\n.\n'
cp "$hog" "$USER_DIR/bin/$evil" && chmod 755 "$USER_DIR/bin/$evil" || fail "cannot stage the named hog"
a=$(HOG_BIN="$evil" spawn_as $USER_A a 40)
wait_for 20 usage_at_least a $((40 << 20)) || fail "a: the named hog did not grow"
check "names: the hog's comm carries the escape" test "$(cat /proc/$a/comm)" = "$(printf '\e]0;pwned\a\n.')"

# And one whose name is not UTF-8: a stray byte, a sequence cut short.
bad=$'\xffbad\xc3'
cp "$hog" "$USER_DIR/bin/$bad" && chmod 755 "$USER_DIR/bin/$bad" || fail "cannot stage the second named hog"
a2=$(HOG_BIN="$bad" spawn_as $USER_A a 4)
wait_for 20 usage_at_least a $((44 << 20)) || fail "a: the second named hog did not grow"

"$OOMKIT" ps a > "$TMP/ps.txt"
check "ps: no raw control byte reaches the terminal" no_raw_escapes "$TMP/ps.txt"
check "ps: the hog's row, its name escaped, on one line" grep -Eq "^ *$a +a .*\\\\x1b]0;pwned" "$TMP/ps.txt"
check "ps: one line per process, nothing forged" test "$(wc -l < "$TMP/ps.txt")" = 3
check "ps: the name that is not UTF-8, escaped" grep -Eq "^ *$a2 +a .*\\\\xffbad\\\\xc3" "$TMP/ps.txt"
"$OOMKIT" --json ps a > "$TMP/ps.json"
check "ps --json: valid" valid_json "$TMP/ps.json"
check "ps --json: the comm round-trips" test "$(python3 -c '
import json, sys
comm = open("/proc/%s/comm" % sys.argv[2], "rb").read()[:-1].decode()
print([p["comm"] for p in json.load(open(sys.argv[1])) if p["pid"] == int(sys.argv[2])] == [comm])' "$TMP/ps.json" "$a")" = True
python3 "$client" frame "$SOCK" "ps a" > "$TMP/ps.frame"
check "ps: the wire holds one record, its fields escaped" \
	test "$(grep -c "^b'proc\\\\t$a\\\\ta\\\\t" "$TMP/ps.frame")" = 1 -a "$(wc -l < "$TMP/ps.frame")" = 3

# The machine's question goes to a's owner, with its own processes only.
# Read-write opens do not wait for the other end; the clients get no copy.
mkfifo "$TMP/answers" "$TMP/root-answers"
exec 3<>"$TMP/answers" 4<>"$TMP/root-answers"
# Not as_user_bg: a background command's own redirection is what keeps its stdin.
user_argv $USER_A
"${USER_ARGV[@]}" "$cli" prompt --once < "$TMP/answers" > "$TMP/prompt-a.out" 2>&1 3>&- 4>&- &
pa=$!
"$OOMKIT" prompt --once < "$TMP/root-answers" > "$TMP/prompt-root.out" 2>&1 3>&- 4>&- &
proot=$!
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt-a.out" || fail "prompt: a's owner did not connect: $(cat "$TMP/prompt-a.out")"
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt-root.out" || fail "prompt: root did not connect"
b=$(spawn_as "$UID_B" b 70 512 2000)
check "prompt: a's owner is asked about the machine" wait_for 30 grep -q "^OOM in machine (question" "$TMP/prompt-a.out"
wait_for 10 grep -q "^answer:" "$TMP/prompt-a.out" || fail "prompt: the question never ended"
id=$(sed -n 's/^OOM in machine (question \([0-9]*\)).*/\1/p' "$TMP/prompt-a.out")
check "prompt: the owner sees its own process" grep -q "kill $a " "$TMP/prompt-a.out"
check "prompt: and not another user's" sh -c "! grep -q 'kill $b ' '$TMP/prompt-a.out'"
check "prompt: the owner may not hand the machine to the kernel" grep -qx "answer: kill PID | chain (or skip)" "$TMP/prompt-a.out"
# A listener that connects while the question is open is asked at once
# (after the reply to its "prompt", before the reply to what it sends next),
# with the time left; one it does not concern is not.
as_user $USER_A python3 "$client" ask "$SOCK" prompt status > "$TMP/late-a.out"
late_ms=$(sed -n "s/^oom\t$id\tmachine\t\([0-9]*\)\$/\1/p" "$TMP/late-a.out")
check "prompt: a listener that comes late is sent the open question at once" test -n "$late_ms"
check "prompt: with the time left of the 60 s to answer ($late_ms ms)" test "${late_ms:-0}" -gt 0 -a "${late_ms:-0}" -lt 60000
check "prompt: the late listener sees its own process, not the other user's" \
	sh -c "grep -q '^candidate	$a	' '$TMP/late-a.out' && ! grep -q '^candidate	$b	' '$TMP/late-a.out'"
check "prompt: a late listener the question does not concern is not sent it" \
	test "$(as_user 60009 python3 "$client" ask "$SOCK" prompt status)" = \
	"$(printf 'ok\nerror permission denied: only root may read status (see readonly_status)')"
wait_for 10 grep -q "^answer:" "$TMP/prompt-root.out" || fail "prompt: root's question never ended"
check "prompt: root is shown every candidate, after the hostile name too" \
	test "$(grep -cE "^  kill ($a|$b) " "$TMP/prompt-root.out")" = 2
check "prompt: no raw control byte reaches the terminal" no_raw_escapes "$TMP/prompt-root.out"
check "prompt: another user's answer is refused" \
	test "$(as_user "$UID_B" python3 "$client" ask "$SOCK" "answer $id kill $a")" = \
	"error $a is not one of the candidates"
check "prompt: another user may not hand it to the kernel" \
	test "$(as_user "$UID_B" python3 "$client" ask "$SOCK" "answer $id kernel")" = \
	"error permission denied: only root or the job's owner may hand to the kernel it"
check "prompt: an owner may not kill another user's process" \
	test "$(as_user "$USER_A" python3 "$client" ask "$SOCK" "answer $id kill $b")" = \
	"error $b is not one of the candidates"
check "prompt: a user the question does not concern is refused" \
	test "$(as_user 60009 python3 "$client" ask "$SOCK" "answer $id kill $a")" = \
	"error permission denied: question $id does not concern uid 60009"
# Memory freed while the question is open (a's small second process ends)
# wakes the tasks in the OOM wait; b's hog takes it, enters the wait anew,
# and the kernel signals the OOM again: the same OOM, which the answer
# decides.  (The chain, run again, found the prompt busy and killed the
# largest process, the other user's, beside the one the owner then chose:
# seen twice on a loaded machine, where memory comes and goes by itself.)
kill -9 "$a2"
check "prompt: an OOM signalled again while the question is open waits for the answer" \
	wait_for 20 grep -q "machine: OOM while its question is open: waiting for the answer" "$TMP/log"
both_live() { alive "$a" && alive "$b"; }
check "prompt: both hogs still live" both_live
echo "kill $a" >&3
check "prompt: the owner's answer kills its process" wait_for 20 dead "$a"
check "prompt: the other user's process lives" alive "$b"
check "prompt: the answer is acknowledged" wait_for 10 grep -q "done: killed $a" "$TMP/prompt-a.out"
exec 3>&- 4>&-
wait "$pa"
kill "$proot" 2>/dev/null
wait "$proot" 2>/dev/null
wait_for 10 has_reports 1 || fail "no report of the machine's OOM"
rep=$(ls "$TMP/reports"/oom-*-machine.json | tail -n 1)
json_get "$rep" "r['id']" >/dev/null
"$OOMKIT" reports show "$(json_get "$rep" "r['id']")" > "$TMP/show.txt"
check "reports show: no raw control byte reaches the terminal" no_raw_escapes "$TMP/show.txt"
check "reports show: the hostile name, escaped" grep -q '\\x1b]0;pwned\\x07' "$TMP/show.txt"
"$OOMKIT" --json reports show "$(json_get "$rep" "r['id']")" > "$TMP/show.json"
check "reports show --json: valid" valid_json "$TMP/show.json"
"$OOMKIT" reports > "$TMP/reports.txt"
check "reports: no raw control byte reaches the terminal" no_raw_escapes "$TMP/reports.txt"

# --- 4b. Reports as their users read them (the agent's "details:
# oomkit reports show N"): the OOM killed a's owner's process, so that user
# reads its report, escaped, and sees no other; another user reads none of it.
mid=$(json_get "$rep" "r['id']")
plain_ids=$(for f in "$TMP"/reports/oom-*-plain.json; do json_get "$f" "r['id']"; done)
[ -n "$plain_ids" ] || fail "no report of plain's OOMs"
user_reads() { # UID WHEN: what that user may read of the reports
	local uid=$1 when=$2 p
	as_user "$uid" "$cli" reports show "$mid" > "$TMP/user-show.txt" 2>&1
	check "user reports ($when): the victim's user reads its report" \
		grep -q "^report $mid: machine OOM at " "$TMP/user-show.txt"
	check "user reports ($when): no raw control byte reaches its terminal" no_raw_escapes "$TMP/user-show.txt"
	check "user reports ($when): the hostile name, escaped" grep -q '\\x1b]0;pwned\\x07' "$TMP/user-show.txt"
	as_user "$uid" "$cli" --json reports show "$mid" > "$TMP/user-show.json" 2>&1
	check "user reports ($when): --json valid, the victim's comm round-trips" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(not (r["followup"]["victim_pid"] == int(sys.argv[2]) and "\x1b]0;pwned\x07" in r["followup"]["reason"]))' \
		"$TMP/user-show.json" "$a"
	as_user "$uid" "$cli" --json reports > "$TMP/user-reports.json" 2>&1
	check "user reports ($when): the list holds its report and none other" python3 -c '
import json, sys
sys.exit([r["id"] for r in json.load(open(sys.argv[1]))] != [int(sys.argv[2])])' "$TMP/user-reports.json" "$mid"
	for p in $plain_ids; do
		check "user reports ($when): plain's report $p does not concern it" \
			test "$(as_user "$uid" "$cli" reports show "$p" 2>&1)" = \
			"oomkit: permission denied: report $p does not concern uid $uid"
	done
	check "user reports ($when): another user may not read it" \
		test "$(as_user "$UID_B" "$cli" reports show "$mid" 2>&1)" = \
		"oomkit: permission denied: report $mid does not concern uid $UID_B"
	as_user "$UID_B" "$cli" --json reports > "$TMP/b-reports.json" 2>&1
	check "user reports ($when): nor list it" python3 -c '
import json, sys
sys.exit(int(sys.argv[2]) in [r["id"] for r in json.load(open(sys.argv[1]))])' "$TMP/b-reports.json" "$mid"
	check "user reports ($when): a report that does not exist" \
		test "$(as_user "$UID_B" python3 "$client" ask "$SOCK" "report 99999")" = "error no report 99999"
	check "user reports ($when): root reads every report" \
		test "$("$OOMKIT" --json reports | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" -gt 1
}
user_reads $USER_A "live"
# Restarted, the daemon reads who each report concerns back from the files
# (this one's uid is in its tail: the answer chose the victim).
stop_daemon
start_daemon
user_reads $USER_A "after a restart"
kill "$b" 2>/dev/null
check "the daemon is alive at the end" daemon_alive
stop_daemon

# --- 5. The socket's directory.
start_refused() { # WHAT: the daemon refuses to start on this socket path
	"$OOMKITD" -c "$TMP/oomkitd.conf" >"$TMP/refused.log" 2>&1 &
	local p=$!
	wait_for 20 dead "$p" || { kill -9 "$p"; fail "$1: the daemon started"; }
	grep -q "control socket" "$TMP/refused.log"
}
with_socket() { sed -i "s|^socket = .*|socket = $1|" "$TMP/oomkitd.conf"; }
mkdir "$TMP/userdir" && chown $USER_A "$TMP/userdir"
with_socket "$TMP/userdir/oomkitd.sock"
check "socket: a directory another user owns is refused" start_refused "user-owned directory"
mkdir -m 0777 "$TMP/opendir"
with_socket "$TMP/opendir/oomkitd.sock"
check "socket: a directory anyone may write is refused" start_refused "world-writable directory"
mkdir "$TMP/real" && ln -s "$TMP/real" "$TMP/link"
with_socket "$TMP/link/oomkitd.sock"
check "socket: a directory reached through a link is refused" start_refused "linked directory"
touch "$TMP/target" && chmod 600 "$TMP/target"
ln -s "$TMP/target" "$TMP/real/oomkitd.sock"
with_socket "$TMP/real/oomkitd.sock"
check "socket: a link planted at the socket's name is refused" start_refused "planted link"
check "socket: and what it points to is not touched" test "$(stat -c %a "$TMP/target")" = 600
rm "$TMP/real/oomkitd.sock"
with_socket "$TMP/new/oomkitd.sock"
SOCK="$TMP/new/oomkitd.sock"
export OOMKIT_SOCKET="$SOCK"
start_daemon
check "socket: a missing directory is made, root's and 0755" test "$(stat -c %u:%a "$TMP/new")" = 0:755
check "socket: everyone may connect" test "$(stat -c %a "$TMP/new/oomkitd.sock")" = 666
stop_daemon
finish
