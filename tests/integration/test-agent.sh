# SPDX-License-Identifier: LGPL-2.1-or-later
# test-agent.sh - oomkit-agent on a real, headless desktop: Xvfb, a session
# bus (dbus-daemon) and a notification server (dunst) of the test user's
# own, oomkitd with jobs that user owns on real memcgs, the agent in that
# user's session.  What a person sees is checked through the server: the
# calls on the bus (dbus-monitor) and a screenshot of the screen, kept in the
# test's output directory.  The person's click is dunst's own: its context
# menu (dunstctl context) runs the configured dmenu, a script here that picks
# the action, and dunst emits ActionInvoked.
#
#   1. an OOM in the user's job -> a notification naming the app (from its
#      app-*.scope and .desktop file) -> "Close Big Editor" -> that process
#      dies, the other lives, the report says "chosen by the user nobody",
#      and a second notification says what was killed, naming the command
#      that shows the report, which the user may run (another may not); root's terminal
#      prompt is asked beside it; a second user is not asked, and its answer
#      is refused;
#   2. no answer -> the chain goes on (kill-largest), and the user is told;
#   3. "Give it more memory" -> the limit grows, nothing is killed;
#   4. no notification server -> the agent says so and lets the chain go on
#      at once;
#   5. processes named "<b>A&B<u>" and "gpg<U+202E>txt.exe" -> the body shows
#      the markup as entities and the override as \xNN, the labels and the
#      summary the override as \xNN; `oomkit ps`, `oomkit reports show` and
#      the report JSON (as \u202e) never hold it raw.
#
# The agents here run with --notify-only: a build with GTK 4 would ask in
# a window on this display (test-agent-window.sh tests that).
#
# OOMKIT_TEST_OUTPUT (set by meson) is where the screenshot is kept.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/desktop-lib.sh"
require_kernel
require_user_tools
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 for the second user's client"
for t in Xvfb dbus-daemon dbus-monitor dbus-send dunst dunstctl import convert; do
	command -v $t >/dev/null || skip "$t is missing (Debian: xvfb dbus-daemon dbus-bin dunst imagemagick)"
done
[ -n "${OOMKIT_AGENT:-}" ] && [ -x "$OOMKIT_AGENT" ] || { echo "FAIL: \$OOMKIT_AGENT is not an executable" >&2; exit 1; }
CG2=/sys/fs/cgroup/unified
[ -f "$CG2/cgroup.procs" ] || skip "no cgroup2 mount at $CG2 for the app scope"
OUT=${OOMKIT_TEST_OUTPUT:-$(mktemp -d /tmp/oomkit-test-agent-out.XXXXXX)}
mkdir -p "$OUT"

setup agent
chmod 755 "$TMP"   # the users reach the socket in it
A=$USER_A                # the desktop's user (nobody)
B=$(other_uid) || exit   # another user on the same machine
AGENT=$(user_copy "$OOMKIT_AGENT" "$A") || exit
CLI=$(user_copy "$OOMKIT" "$A") || exit
user_copy "$OOMKIT" "$B" >/dev/null || exit
user_copy "$OOMKIT_HOG" "$A" >/dev/null || exit
SCOPES="$CG2/oomkit-test-agent-$$"
DESKTOP_LOGS="agent.log agent2.log agent-b.log dunst.log monitor.log prompt.out"
desktop_trap

# --- the desktop: X, the user's session bus, the notification server
start_x 1024x600
session "$A"
SESS="$USER_DIR/session-$A"
BUS="unix:path=$SESS/bus"

# The person: dunst's dmenu gets the actions, one per line; this one picks
# the line holding what "want" says, and keeps what it was shown.
cat >"$SESS/dmenu" <<EOF
#!/bin/sh
cat > "$SESS/menu"
grep -m 1 -F -- "\$(cat "$SESS/want")" "$SESS/menu"
EOF
cat >"$SESS/dunstrc" <<EOF
[global]
    font = DejaVu Sans 11
    width = 520
    origin = top-right
    offset = 10x10
    dmenu = $SESS/dmenu
    frame_width = 2
[urgency_critical]
    background = "#2b2b2b"
    foreground = "#ffffff"
    frame_color = "#ff5555"
EOF
# The app the first hog stands for, as a desktop would name it.
printf '[Desktop Entry]\nType=Application\nName=Big Editor\nExec=true\n' \
	>"$SESS/share/applications/org.oomkit.BigEditor.desktop"
chown -R "$A" "$SESS" && chmod 755 "$SESS/dmenu"

start_dunst() {
	in_session_bg "$A" dunst -conf "$SESS/dunstrc" >>"$TMP/dunst.log" 2>&1
	DUNST=$!
	T_PIDS="$T_PIDS $DUNST"
	server_up() { in_session "$A" dunstctl is-paused >/dev/null 2>&1; }
	wait_for 10 server_up || fail "dunst did not take the notification name"
}
start_dunst
in_session_bg "$A" dbus-monitor --session "interface='org.freedesktop.Notifications'" >"$TMP/monitor.log" 2>&1
T_PIDS="$T_PIDS $!"
monitor_ready() { grep -q "NameAcquired\|member=" "$TMP/monitor.log"; }
wait_for 10 monitor_ready || fail "dbus-monitor did not start"

# --- oomkitd: the user's jobs
# desk has no owner: the user may still answer for its own processes, and
# the question comes at once.  roomy's owner is the user, who may therefore
# give it more memory; a delegated job's OOM is the owner's own for the
# delay (20 s) before the daemon asks.
write_config 512M "report, prompt, kill-largest, kernel" 20s <<EOF
[job desk]
priority = 500
limit = 48M
policy = report, prompt, kill-largest, kernel

[job roomy]
priority = 500
limit = 48M
limit_max = 96M
owner = $A
policy = report, prompt, kill-largest, kernel
EOF
start_daemon

start_agent() { # LOG [SESSION ENV...]
	local log=$1
	shift
	as_user_bg "$A" env HOME="$SESS" DISPLAY="$DISPLAY" XDG_DATA_DIRS="$SESS/share:/usr/share" \
		OOMKIT_SOCKET="$SOCK" "$@" "$AGENT" --notify-only >>"$log" 2>&1
	AGENT_PID=$!
	T_PIDS="$T_PIDS $AGENT_PID"
	wait_for 10 grep -q "listening for OOMs" "$log" || fail "the agent did not connect"
}
start_agent "$TMP/agent.log" DBUS_SESSION_BUS_ADDRESS="$BUS"

# The second user's agent, in a session of its own with no notification server.
session "$B"
as_user_bg "$B" env HOME="$USER_DIR/session-$B" DBUS_SESSION_BUS_ADDRESS="unix:path=$USER_DIR/session-$B/bus" \
	OOMKIT_SOCKET="$SOCK" "$AGENT" --notify-only >"$TMP/agent-b.log" 2>&1
T_PIDS="$T_PIDS $!"
wait_for 10 grep -q "listening for OOMs" "$TMP/agent-b.log" || fail "the second user's agent did not connect"
check "no notification server: the agent says so" grep -q "no notification server" "$TMP/agent-b.log"

# Root's terminal prompt, beside the agents.
mkfifo "$TMP/answers"
"$OOMKIT" prompt < "$TMP/answers" > "$TMP/prompt.out" 2>&1 &
T_PIDS="$T_PIDS $!"
exec 3> "$TMP/answers"
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt.out" || fail "oomkit prompt did not connect"

# A region of the screen, as "mean standard_deviation" of its pixels.
notification_area() { # PNG
	convert "$1" -crop 540x260+474+0 +repage -format "%[fx:mean] %[fx:standard_deviation]" info:
}
blank() { [ "$(echo "$1" | cut -d' ' -f2)" = 0 ]; }
import -display "$DISPLAY" -window root "$OUT/agent-before.png" || fail "no screenshot"
check "before an OOM: the notification area is blank" blank "$(notification_area "$OUT/agent-before.png")"


# --- 1. the person closes the app
mkdir -p "$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope"
editor=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "desk: the editor did not grow"
echo "$editor" > "$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope/cgroup.procs" || fail "cannot move the editor into its app scope"
other=$(spawn_as "$A" desk 40 512 2000)
check "1: the agent shows the question" wait_for 20 grep -q "question 1 (desk)" "$TMP/agent.log"
check "1: Notify on the bus, with the app's name from its .desktop file" \
	wait_for 10 grep -q 'string "Close Big Editor (' "$TMP/monitor.log"
check "1: and a choice for the other process" grep -q 'string "Close oomkit-hog (' "$TMP/monitor.log"
check "1: and let the system decide" grep -q 'string "Let the system decide"' "$TMP/monitor.log"
check "1: no grow offered where the job cannot grow" test -z "$(grep 'Give it more memory' "$TMP/monitor.log")"
shown() { import -display "$DISPLAY" -window root "$OUT/agent-notification.png" && ! blank "$(notification_area "$OUT/agent-notification.png")"; }
check "1: the notification is on the screen (screenshot not blank)" wait_for 10 shown
check "1: root's terminal prompt is asked too" wait_for 10 grep -q "kill $editor" "$TMP/prompt.out"
check "1: the second user's agent is not asked" test -z "$(grep question "$TMP/agent-b.log")"
refused_b=$(as_user "$B" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(("answer 1 kill %s\n" % sys.argv[2]).encode())
print(s.makefile().readline().rstrip("\n"))' "$SOCK" "$editor" 2>&1)
check "1: the second user's answer is refused" test "$refused_b" = "error permission denied: question 1 does not concern uid $B"
check "1: the editor still lives after it" alive "$editor"

echo "Close Big Editor" > "$SESS/want"
in_session "$A" dunstctl context
check "1: dunst emits ActionInvoked for the choice" wait_for 10 grep -q "string \"kill:$editor\"" "$TMP/monitor.log"
check "1: the chosen process dies" wait_for 20 dead "$editor"
check "1: the other lives" alive "$other"
r1=$(report_id 1)
check "1: the report: chosen by the user nobody" \
	test "$(json_get "$r1" "r['followup']['reason'].split(':')[0]")" = "chosen by the user nobody"
check "1: the report: answered by uid $A" test "$(json_get "$r1" "r['answered_by']['uid']")" = "$A"
check "1: the user is told what was killed" \
	wait_for 10 grep -q 'string "Killed Big Editor (' "$TMP/monitor.log"
check "1: why, and where the details are" \
	grep -q 'because desk reached its memory limit (chosen by nobody); details: oomkit reports show 1' "$TMP/monitor.log"
import -display "$DISPLAY" -window root "$OUT/agent-result.png"
# The command the notification names works for the person it was shown to
# (the report concerns that uid), and for no other user.
details=$(sed -n 's/.*; details: oomkit \(reports show [0-9]*\)".*/\1/p' "$TMP/monitor.log" | head -n 1)
check "1: the notification names a command ($details)" test "$details" = "reports show 1"
as_user "$A" "$CLI" $details > "$TMP/details.txt" 2>&1
check "1: the user runs it: the report of desk's OOM" grep -q "^report 1: job OOM of job desk at " "$TMP/details.txt"
check "1: it shows the person's choice" grep -q "chosen by the user nobody" "$TMP/details.txt"
check "1: another user may not read it" \
	test "$(as_user "$B" "$CLI" $details 2>&1)" = "oomkit: permission denied: report 1 does not concern uid $B"
exec 3>&-
empty_job desk

# --- 2. no answer: the chain goes on
# The second agent, started now, cannot reach the daemon yet (see below).
OLD_AGENT=$AGENT_PID
as_user_bg "$A" env HOME="$SESS" DISPLAY="$DISPLAY" XDG_DATA_DIRS="$SESS/share:/usr/share" \
	DBUS_SESSION_BUS_ADDRESS="$BUS" OOMKIT_SOCKET="$TMP/late.sock" "$AGENT" --notify-only >>"$TMP/agent2.log" 2>&1
AGENT_PID=$!
T_PIDS="$T_PIDS $AGENT_PID"
wait_for 10 grep -q "cannot reach oomkitd" "$TMP/agent2.log" || fail "2: the second agent did not start"
a=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "desk: the first hog did not grow"
b=$(spawn_as "$A" desk 40 512 2000)
check "2: the agent shows the question" wait_for 20 grep -q "question 2 (desk)" "$TMP/agent.log"
# A second agent of the session reaches the daemon only while the question
# is open (its socket's name appears then; it tries every 2 s): it is asked
# at once.  Then the first one goes, taking its notification with it.
ln -s "$SOCK" "$TMP/late.sock"
check "2: an agent that comes while the question is open is asked at once" \
	wait_for 8 grep -q "question 2 (desk)" "$TMP/agent2.log"
left=$(sed -n 's/.*question 2 (desk): .* shown, \([0-9]*\) ms to answer.*/\1/p' "$TMP/agent2.log")
check "2: with the time left of the 10 s to answer (${left:-?} ms)" test "${left:-0}" -gt 0 -a "${left:-0}" -lt 10000
kill "$OLD_AGENT"
wait_for 10 dead "$OLD_AGENT" || fail "2: the first agent did not stop"
check "2: no answer: the chain kills the largest" wait_for 30 dead "$b"
check "2: the other lives" alive "$a"
check "2: the report: no answer" test "$(json_get "$(report_id 2)" "r['prompt_answer']")" = none
check "2: the user is told" wait_for 10 grep -q 'string "Killed oomkit-hog (' "$TMP/monitor.log"
check "2: that the system chose" \
	grep -q "because desk reached its memory limit (the system chose, by kill-largest); details: oomkit reports show [0-9]*" "$TMP/monitor.log"
empty_job desk

# --- 3. more memory
a=$(spawn_as "$A" roomy 20)
wait_for 10 usage_at_least roomy $((20 << 20)) || fail "roomy: the first hog did not grow"
b=$(spawn_as "$A" roomy 40 512 2000)
check "3: grow is offered, after the owner's turn" wait_for 60 grep -q 'string "Give it more memory"' "$TMP/monitor.log"
wait_for 10 grep -q "question 4 (roomy)" "$TMP/agent2.log" || fail "3: no question"
echo "Give it more memory" > "$SESS/want"
in_session "$A" dunstctl context
check "3: dunst emits ActionInvoked grow" wait_for 10 grep -q 'string "grow"' "$TMP/monitor.log"
grown() { [ "$(cat "$R/roomy/$LIMIT_FILE")" -gt $((48 << 20)) ]; }
check "3: the limit grows" wait_for 20 grown
check "3: the second hog reaches its size" wait_for 20 usage_at_least roomy $((60 << 20))
check "3: nothing is killed" sh -c "kill -0 $a && kill -0 $b"
check "3: the report says grow" test "$(json_get "$(report_id 4)" "r['followup']['action']")" = grow
limit=$(($(cat "$R/roomy/memory.limit_in_bytes") >> 20))
check "3: the report's new limit is the job's" \
	test "$(($(json_get "$(report_id 4)" "r['followup']['new_limit_bytes']") >> 20))" = "$limit"
check "3: the user is told, with that limit ($limit MiB)" \
	wait_for 10 grep -qF "string \"Gave roomy more memory (its limit is now $limit MiB)\"" "$TMP/monitor.log"
empty_job roomy

# --- 4. the notification server goes away
kill "$DUNST"
wait_for 10 dead "$DUNST" || fail "dunst did not stop"
a=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "desk: the first hog did not grow"
b=$(spawn_as "$A" desk 40 512 2000)
check "4: no server: the agent says so" wait_for 20 grep -q "cannot show a notification" "$TMP/agent2.log"
check "4: the chain goes on at once: the largest dies" wait_for 20 dead "$b"
check "4: the report: declined" test "$(json_get "$(report_id 5)" "r['prompt_answer']")" = declined
check "4: because everyone asked declined, not at the deadline" \
	test "$(json_get "$(report_id 5)" "r['outcome'].startswith('everyone asked')")" = True
empty_job desk

# --- 5. names that would restyle or fake the question
# Two of the user's processes named to attack what shows them: markup the
# notification server would render (<b>, <u>, an entity) and a right-to-left
# override that turns "gpg\u202etxt.exe" into "gpgexe.txt" on the screen.
# Each must reach the person escaped: in the notification (the body's markup
# as entities, the override as \xNN), in `oomkit ps` and in the report.
start_dunst
RLO=$(printf '\xe2\x80\xae')
MARKUP='<b>A&B<u>'
OVERRIDE="gpg${RLO}txt.exe"
hog_bin=$(user_copy "$OOMKIT_HOG" "$A") || exit
for name in "$MARKUP" "$OVERRIDE"; do
	cp "$hog_bin" "$USER_DIR/bin/$name" && chmod 755 "$USER_DIR/bin/$name" || fail "5: cannot stage $name"
done
m=$(HOG_BIN="$MARKUP" spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "5: the first hog did not grow"
check "5: the kernel gives the process its markup name" test "$(cat /proc/$m/comm)" = "$MARKUP"
"$OOMKIT" ps > "$TMP/ps5.txt" 2>&1
check "5: ps shows the markup name as it is (harmless on a terminal)" grep -qF -- "$MARKUP" "$TMP/ps5.txt"
line=$(($(wc -l < "$TMP/agent2.log") + 1))
o=$(HOG_BIN="$OVERRIDE" spawn_as "$A" desk 40 512 2000)
check "5: the kernel gives the process its override name" test "$(cat /proc/$o/comm)" = "$OVERRIDE"
"$OOMKIT" ps > "$TMP/ps5.txt" 2>&1
check "5: ps shows the override escaped (its column may cut the rest)" grep -qF -- 'gpg\xe2\x80\xae' "$TMP/ps5.txt"
check "5: ps holds no raw override" eval '! grep -qF -- "$RLO" "$TMP/ps5.txt"'
check "5: the agent shows the question" wait_for 20 eval 'tail -n +$line "$TMP/agent2.log" | grep -q "question [0-9]* (desk)"'
check "5: Notify's body: the markup name as entities" \
	wait_for 10 grep -qF -- '&lt;b&gt;A&amp;B&lt;u&gt;' "$TMP/monitor.log"
check "5: Notify's body: the override escaped" grep -qF -- 'gpg\xe2\x80\xaetxt.exe —' "$TMP/monitor.log"
check "5: the action's label (plain text): the override escaped" \
	grep -qF -- 'string "Close gpg\xe2\x80\xaetxt.exe (' "$TMP/monitor.log"
check "5: no raw markup name in any body" eval '! grep -qF -- "$MARKUP —" "$TMP/monitor.log"'
check "5: no raw override anywhere on the bus" eval '! grep -qF -- "$RLO" "$TMP/monitor.log"'
shown5() { import -display "$DISPLAY" -window root "$OUT/agent-names.png" && ! blank "$(notification_area "$OUT/agent-names.png")"; }
check "5: the notification is on the screen" wait_for 10 shown5
echo "Let the system decide" > "$SESS/want"
in_session "$A" dunstctl context
check "5: the chain kills the largest: the override's process" wait_for 30 dead "$o"
check "5: the markup's process lives" alive "$m"
check "5: the user is told, the name escaped in the summary" \
	wait_for 10 grep -qF -- 'string "Killed gpg\xe2\x80\xaetxt.exe (' "$TMP/monitor.log"
rep=$(ls "$TMP/reports"/oom-*-desk.json | sort | tail -n 1)
check "5: the report file holds no raw override" eval '! grep -qF -- "$RLO" "$rep"'
check "5: the report writes the override as \\u202e" grep -qF -- 'gpg\u202etxt.exe' "$rep"
check "5: the report's JSON gives back the exact names" test "$(json_get "$rep" \
	"sorted(set(c['comm'] for c in r['candidates']) & {'$MARKUP', 'gpg\u202etxt.exe'})")" = "['$MARKUP', 'gpg\u202etxt.exe']"
check "5: the report's victim is the override's process" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$o"
"$OOMKIT" reports show "$(basename "$rep" | sed 's/^oom-0*\([0-9]*\)-.*/\1/')" > "$TMP/show5.txt" 2>&1
check "5: reports show: the override escaped, none raw" \
	sh -c "grep -qF -- 'gpg\\xe2\\x80\\xaetxt.exe' '$TMP/show5.txt' && ! grep -qF -- '$RLO' '$TMP/show5.txt'"
empty_job desk

check "the agents live on" sh -c "kill -0 $AGENT_PID"
echo "screenshots: $OUT/agent-notification.png $OUT/agent-result.png"
finish
