# SPDX-License-Identifier: LGPL-2.1-or-later
# test-agent-window.sh - oomkit-agent's window (GTK 4) as a person meets it:
# Xvfb with a window manager (openbox), each user's session bus, oomkitd on
# real memcgs, the agent of two users on the same screen.  The person's
# clicks and keys are xdotool's, on the real window; where to click is what
# the agent says of its controls (--log-layout: each control's accessible
# name and its centre in the window).
#
#   1. an OOM in the user's job -> a window (found by its title), above the
#      others, focused (nothing else was), rows naming the app from its
#      .desktop file and a process named with markup and a control byte as
#      plain, escaped text; no "Give it more memory" for a job that cannot
#      grow -> a click on "Close Big Editor" -> that process dies, the other
#      lives, the report says "chosen by the user nobody", the window says
#      what was killed.  Its screenshot is kept (docs/desktop-window.png).
#   2. another window has the keyboard -> the question's window opens above
#      it but does not take the keyboard; the person goes to it and presses
#      Escape -> the system decides: the chain kills the largest, the report
#      says everyone asked let the system decide.
#   3. a machine OOM with both users' processes -> each user's window (the
#      second at GDK_SCALE=2, screenshot kept) shows only that user's
#      processes; the first user closes theirs; the second's window goes.
#   4. a job the user owns, with room under its limit_max -> "Give it more
#      memory" is offered; a click on it -> the job's limit grows, the hogs
#      live on past the old limit, the report says grow, chosen by the user,
#      and the window says so, with the new limit the report and the memcg hold.
#   5. a user's agent with no display -> it says so, and falls back to
#      notifications (test-agent-fallback.sh clicks them on a server that
#      draws buttons).
#
# OOMKIT_TEST_OUTPUT (set by meson) is where the screenshots are kept.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/desktop-lib.sh"
require_kernel
require_user_tools
for t in Xvfb openbox xdotool xprop xmessage dbus-daemon dbus-send import convert; do
	command -v $t >/dev/null || skip "$t is missing (Debian: xvfb openbox xdotool x11-utils dbus-daemon dbus-bin imagemagick)"
done
[ -n "${OOMKIT_AGENT:-}" ] && [ -x "$OOMKIT_AGENT" ] || { echo "FAIL: \$OOMKIT_AGENT is not an executable" >&2; exit 1; }
"$OOMKIT_AGENT" --help | grep -q "in a window," || skip "this oomkit-agent was built without GTK 4"
CG2=/sys/fs/cgroup/unified
[ -f "$CG2/cgroup.procs" ] || skip "no cgroup2 mount at $CG2 for the app scope"
OUT=${OOMKIT_TEST_OUTPUT:-$(mktemp -d /tmp/oomkit-test-agent-window-out.XXXXXX)}
mkdir -p "$OUT"

setup agentwin
chmod 755 "$TMP"
A=$USER_A
B=$(other_uid) || exit
AGENT=$(user_copy "$OOMKIT_AGENT" "$A") || exit
user_copy "$OOMKIT_HOG" "$A" >/dev/null || exit
user_copy "$OOMKIT_HOG" "$B" >/dev/null || exit
SCOPES="$CG2/oomkit-test-agent-window-$$"
DESKTOP_LOGS="agent.log agent-b.log agent-c.log xvfb.log openbox.log bus-$A.log bus-$B.log"
desktop_trap

# --- the desktop: X and a window manager; each user's session
start_x 1600x1000
start_wm
session "$A"
session "$B"
SESS="$USER_DIR/session-$A"
# The app the first hog stands for, as a desktop would name it, with its icon.
printf '[Desktop Entry]\nType=Application\nName=Big Editor\nIcon=accessories-text-editor\nExec=true\n' \
	>"$SESS/share/applications/org.oomkit.BigEditor.desktop"
chown -R "$A" "$SESS"

# An agent: UID LOG [ENV...].  The cairo renderer: no software OpenGL on a
# shared test machine (a person's desktop uses its own).
start_agent() {
	local uid=$1 log=$2 s="$USER_DIR/session-$1"
	shift 2
	as_user_bg "$uid" env HOME="$s" XDG_RUNTIME_DIR="$s/run" XDG_DATA_DIRS="$s/share:/usr/share" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=$s/bus" GSK_RENDERER=cairo GTK_A11Y=none NO_AT_BRIDGE=1 \
		OOMKIT_SOCKET="$SOCK" "$@" "$AGENT" --log-layout >>"$log" 2>&1
	T_PIDS="$T_PIDS $!"
	wait_for 20 grep -q "listening for OOMs" "$log" || fail "the agent of uid $uid did not connect"
}

# --- oomkitd
write_config 200M "report, prompt, kill-largest, kernel" 60s <<EOF
[job desk]
priority = 500
limit = 48M
policy = report, prompt, kill-largest, kernel

[job shared]
priority = 500
EOF
start_daemon

start_agent "$A" "$TMP/agent.log" DISPLAY="$DISPLAY"
check "the agent asks in a window" grep -q "questions are shown in a window" "$TMP/agent.log"
start_agent "$B" "$TMP/agent-b.log" DISPLAY="$DISPLAY" GDK_SCALE=2

# The window asking question N of the agent logging to LOG, once drawn.
window_of() { # LOG N
	wait_for 30 grep -q "window $2: layout done" "$1" || return 1
	xdotool search --sync --name "^Out of memory - oomkit\$" | head -n 1
}
# Where the agent drew a control: "X Y" in its window.
control_at() { # LOG N NAME
	sed -n "s/.*window $2: control $3 at \([0-9]*\),\([0-9]*\)\$/\1 \2/p" "$1" | tail -n 1
}
click() { # WINDOW "X Y"
	xdotool mousemove --window "$1" $2 click 1
}
active_is() { [ "$(xdotool getactivewindow 2>/dev/null)" = "$1" ]; }

# --- 1. the person closes the app
# A process of the user's named with markup and a bell: shown as text.
MARKUP=$(printf '<b>bold<i>\a')
hog_bin=$(user_copy "$OOMKIT_HOG" "$A") || exit
cp "$hog_bin" "$USER_DIR/bin/$MARKUP" && chmod 755 "$USER_DIR/bin/$MARKUP" || fail "cannot stage the markup name"
mkdir -p "$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope"
editor=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "desk: the editor did not grow"
echo "$editor" >"$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope/cgroup.procs" || fail "cannot move the editor into its app scope"
other=$(HOG_BIN="$MARKUP" spawn_as "$A" desk 40 512 2000)
W=$(window_of "$TMP/agent.log" 1) && [ -n "$W" ] || fail "1: no window appeared"
ok "1: the window appears (xdotool found $W)"
check "1: it has the keyboard (nothing else had)" wait_for 10 active_is "$W"
check "1: the window manager keeps it above the others" \
	eval 'xprop -id "$W" _NET_WM_STATE | grep -q _NET_WM_STATE_ABOVE'
check "1: a row names the app from its .desktop file" grep -q "window 1 row: pid $editor Big Editor: " "$TMP/agent.log"
check "1: with its memory and growth" \
	grep -q "window 1 row: pid $editor Big Editor: [0-9]* MiB now, .* in the last [0-9]* s, job desk" "$TMP/agent.log"
check "1: the markup name is a plain row, its bell escaped" \
	grep -qF "window 1 row: pid $other <b>bold<i>\\x07: " "$TMP/agent.log"
check "1: Close Big Editor is on the screen" test -n "$(control_at "$TMP/agent.log" 1 "Close Big Editor")"
check "1: and Close for the markup name, by its escaped name" \
	test -n "$(control_at "$TMP/agent.log" 1 'Close <b>bold<i>\\x07')"
check "1: Let the system decide" test -n "$(control_at "$TMP/agent.log" 1 "Let the system decide")"
check "1: Details" test -n "$(control_at "$TMP/agent.log" 1 "Details")"
check "1: no Give it more memory for a job that cannot grow" \
	test -z "$(control_at "$TMP/agent.log" 1 "Give it more memory")"
check "1: the second user's agent is not asked" eval '! grep -q "question 1" "$TMP/agent-b.log"'
# Details open, for the screenshot: Tab to it from "Let the system decide", and Enter.
xdotool key Tab Return
import -display "$DISPLAY" -window root "$OUT/desktop-window-screen.png" || fail "no screenshot"
import -display "$DISPLAY" -window "$W" -frame "$OUT/desktop-window.png" 2>/dev/null ||
	import -display "$DISPLAY" -window "$W" "$OUT/desktop-window.png" || fail "no screenshot of the window"
check "1: the window is drawn (its screenshot is not blank)" \
	test "$(convert "$OUT/desktop-window.png" -format "%[fx:standard_deviation>0.01]" info:)" = 1
click "$W" "$(control_at "$TMP/agent.log" 1 "Close Big Editor")"
check "1: the click answers kill $editor" wait_for 10 grep -q "answer 1 kill $editor" "$TMP/agent.log"
check "1: the chosen process dies" wait_for 20 dead "$editor"
check "1: the other lives" alive "$other"
check "1: the report: chosen by the user nobody" \
	test "$(json_get "$(report_id 1)" "r['followup']['reason'].split(':')[0]")" = "chosen by the user nobody"
# What the window says is what was done: the process the report killed,
# with the size the report gives it (MiB, as the agent writes a size).
check "1: the report's victim is the editor" test "$(json_get "$(report_id 1)" "r['followup']['victim_pid']")" = "$editor"
size=$(($(json_get "$(report_id 1)" "[c['rss_bytes'] for c in r['candidates'] if c['pid'] == $editor][0]") >> 20))
check "1: the window says what was done: Killed Big Editor ($size MiB)" \
	wait_for 10 grep -qF "window 1 says: Killed Big Editor ($size MiB) because desk reached its memory limit (chosen by nobody); details: oomkit reports show 1" "$TMP/agent.log"
import -display "$DISPLAY" -window "$W" "$OUT/desktop-window-done.png" || true
xdotool key Escape
check "1: Escape then closes it" wait_for 10 eval '! xdotool search --name "^Out of memory" >/dev/null'
empty_job desk

# --- 2. typing elsewhere: no focus taken; Escape lets the system decide
xmessage -name elsewhere "a window the person types in" &
T_PIDS="$T_PIDS $!"
E=$(xdotool search --sync --classname elsewhere | head -n 1)
xdotool windowactivate --sync "$E" || fail "2: cannot focus the other window"
a=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "2: the first hog did not grow"
b=$(spawn_as "$A" desk 40 512 2000)
W=$(window_of "$TMP/agent.log" 2) && [ -n "$W" ] || fail "2: no window appeared"
check "2: the window is above the others" eval 'xprop -id "$W" _NET_WM_STATE | grep -q _NET_WM_STATE_ABOVE'
check "2: and urgent" eval 'xprop -id "$W" WM_HINTS | grep -qi urgen'
check "2: the other window keeps the keyboard" active_is "$E"
xdotool windowactivate --sync "$W" || fail "2: cannot go to the window"
xdotool key Escape
check "2: Escape answers: let the system decide" wait_for 10 grep -q "answer 2 chain" "$TMP/agent.log"
check "2: the chain kills the largest" wait_for 30 dead "$b"
check "2: the other lives" alive "$a"
check "2: the report: everyone asked let the system decide" \
	test "$(json_get "$(report_id 2)" "r['outcome'].startswith('everyone asked')")" = True
check "2: the window says what the chain's kill-largest did" \
	wait_for 10 grep -q "window [0-9]* says: Killed oomkit-hog (.*) because desk reached its memory limit (the system chose, by kill-largest)" "$TMP/agent.log"
xdotool key Escape
wait_for 10 eval '! xdotool search --name "^Out of memory" >/dev/null' || fail "2: the window stayed"
empty_job desk

# --- 3. a machine OOM: each user sees only their own
pa=$(spawn_as "$A" shared 70)
wait_for 10 usage_at_least shared $((70 << 20)) || fail "3: the first user's hog did not grow"
pb=$(spawn_as "$B" shared 60)
wait_for 10 usage_at_least shared $((130 << 20)) || fail "3: the second user's hog did not grow"
pc=$(spawn_as "$A" shared 100 512 2000)
wait_for 30 grep -q "window [0-9]*: layout done" "$TMP/agent-b.log" || fail "3: the second user has no window"
q=$(sed -n 's/.*question \([0-9]*\) (machine).*in a window/\1/p' "$TMP/agent.log" | tail -n 1)
check "3: the first user is asked about the machine" test -n "$q"
W=$(window_of "$TMP/agent.log" "$q")
check "3: the second user's window shows its process" grep -q "window $q row: pid $pb " "$TMP/agent-b.log"
check "3: and none of the first user's" \
	eval '! grep -q "window $q row: pid \($pa\|$pc\) " "$TMP/agent-b.log"'
details_b=$(sed -n "s/.*window $q details: pids//p" "$TMP/agent-b.log")
check "3: its details list its own process (pids:$details_b)" eval 'echo " $details_b " | grep -q " $pb "'
check "3: and none of the first user's" eval '! echo " $details_b " | grep -q " \($pa\|$pc\) "'
check "3: nor of anyone else: each is uid $B's" eval 'for p in $details_b; do [ ! -d /proc/$p ] || [ "$(stat -c %u /proc/$p)" = "$B" ] || exit 1; done'
check "3: the first user's window shows its own" grep -q "window $q row: pid $pa " "$TMP/agent.log"
check "3: and not the second user's" eval '! grep -q "window $q row: pid $pb " "$TMP/agent.log"'
WB=$(xdotool search --name "^Out of memory - oomkit\$" | grep -v "^$W\$" | head -n 1)
check "3: both windows are on the screen" test -n "$WB"
import -display "$DISPLAY" -window "$WB" "$OUT/desktop-window-2x.png" || fail "3: no screenshot at 2x"
check "3: the 2x window is twice as large (its width: $(identify -format %w "$OUT/desktop-window-2x.png") px)" \
	test "$(identify -format %w "$OUT/desktop-window-2x.png")" -ge 1000
click "$W" "$(control_at "$TMP/agent.log" "$q" "Close oomkit-hog")"
check "3: the first user's click kills its process" wait_for 20 eval '! alive "$pa" || ! alive "$pc"'
check "3: the second user's process lives" alive "$pb"
check "3: the second user's window goes when it is over" \
	wait_for 20 grep -q "question $q\|window $q" "$TMP/agent-b.log"
wait_for 20 eval '[ "$(xdotool search --name "^Out of memory - oomkit\$" | grep -c "^$WB\$")" = 0 ]'
check "3: the second user's window is gone" eval '[ "$(xdotool search --name "^Out of memory - oomkit\$" | grep -c "^$WB\$")" = 0 ]'
empty_job shared

# --- 4. a job that may grow: the person gives it more memory
# roomy is the user's own (owner), so its OOM is first the user's for the
# delay, then oomkitd's chain asks; a shorter delay keeps the test short.
stop_daemon
write_config 200M "report, prompt, kill-largest, kernel" 30s <<EOF
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

[job shared]
priority = 500
EOF
lines=$(wc -l <"$TMP/agent.log")
since() { tail -n +$((lines + 1)) "$TMP/agent.log"; }
start_daemon
wait_for 10 eval 'since | grep -q "listening for OOMs"' || fail "4: the agent did not come back to the restarted daemon"
a=$(spawn_as "$A" roomy 20)
wait_for 10 usage_at_least roomy $((20 << 20)) || fail "4: the first hog did not grow"
b=$(spawn_as "$A" roomy 40 512 2000)
# The owner's turn (the delay), then the question.
wait_for 60 eval 'since | grep -q "question [0-9]* (roomy).*in a window"' || fail "4: no question about roomy"
q=$(since | sed -n 's/.*question \([0-9]*\) (roomy).*in a window/\1/p' | head -n 1)
W=$(window_of "$TMP/agent.log" "$q") && [ -n "$W" ] || fail "4: no window appeared"
check "4: Give it more memory is on the screen" test -n "$(control_at "$TMP/agent.log" "$q" "Give it more memory")"
check "4: the window names the job and its limit" \
	grep -q "window $q what: The job roomy has reached its memory limit (.* of 48 MiB)\.\$" "$TMP/agent.log"
click "$W" "$(control_at "$TMP/agent.log" "$q" "Give it more memory")"
check "4: the click answers grow" wait_for 10 grep -q "answer $q grow" "$TMP/agent.log"
grown() { [ "$(cat "$R/roomy/memory.limit_in_bytes")" -gt $((48 << 20)) ]; }
check "4: the job's limit grows" wait_for 20 grown
check "4: the second hog grows past the old limit" wait_for 20 usage_at_least roomy $((60 << 20))
check "4: nothing is killed" sh -c "kill -0 $a && kill -0 $b"
rep=$(report_id "$q")
check "4: the report says grow" test "$(json_get "$rep" "r['followup']['action']")" = grow
check "4: chosen by the user nobody" \
	test "$(json_get "$rep" "r['followup']['reason'].split('; ')[-1]")" = "chosen by the user nobody"
new_limit=$(json_get "$rep" "r['followup']['new_limit_bytes']")
check "4: the report's new limit is the job's (${new_limit:-?})" \
	test "${new_limit:-0}" = "$(cat "$R/roomy/memory.limit_in_bytes")"
check "4: the window says what was done, with that limit" \
	wait_for 10 grep -q "window $q says: Gave roomy more memory (its limit is now $((new_limit >> 20)) MiB) because roomy reached its memory limit (chosen by nobody); details: oomkit reports show $q" "$TMP/agent.log"
import -display "$DISPLAY" -window "$W" "$OUT/desktop-window-grow.png" || true
xdotool key Escape
wait_for 10 eval '! xdotool search --name "^Out of memory" >/dev/null' || fail "4: the window stayed"
empty_job roomy

# --- 5. no display: the notification path
start_agent "$A" "$TMP/agent-c.log" DISPLAY=
check "5: an agent without a display says it cannot show a window" \
	grep -q "no display for a window" "$TMP/agent-c.log"

echo "screenshots: $OUT/desktop-window.png $OUT/desktop-window-2x.png"
finish
