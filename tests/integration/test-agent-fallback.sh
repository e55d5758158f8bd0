# SPDX-License-Identifier: LGPL-2.1-or-later
# test-agent-fallback.sh - oomkit-agent where it cannot show a window, on a
# notification server that draws the actions as buttons (xfce4-notifyd, as
# an Xfce desktop has; test-agent.sh tests dunst, whose actions live in a
# context menu).  Xvfb with a window manager (openbox), the user's session
# bus, oomkitd with a job on real memcgs.  The agent runs with neither
# DISPLAY nor WAYLAND_DISPLAY, so GTK cannot open a display and the agent
# asks in a notification (the path of an agent built without GTK 4, or run
# with --notify-only, too), while the notification server draws on the
# screen; the person clicks the notification's button where xfce4-notifyd
# drew it (found in a screenshot of the notification: notify-buttons.py).
#
#   1. an OOM in the user's job -> the notification, with a button for each
#      action in the order the agent sent them -> a click on "Close Big
#      Editor" -> ActionInvoked, that process dies, the other lives, the
#      report says "chosen by the user nobody", and a second notification
#      says what was killed, as the report has it (pid, size, who chose).
#      Its screenshots are kept (docs/desktop-notification*.png).
#   2. a click on the notification beside its buttons dismisses it -> the
#      agent lets the system decide: the chain kills the largest, the report
#      says everyone asked let the system decide, and the notification says
#      the system chose, by kill-largest.
#
# OOMKIT_TEST_OUTPUT (set by meson) is where the screenshots are kept.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/desktop-lib.sh"
require_kernel
require_user_tools
for t in Xvfb openbox xdotool xprop dbus-daemon dbus-send dbus-monitor import convert python3; do
	command -v $t >/dev/null ||
		skip "$t is missing (Debian: xvfb openbox xdotool x11-utils dbus-daemon dbus-bin imagemagick python3)"
done
NOTIFYD=
for f in /usr/lib/*/xfce4/notifyd/xfce4-notifyd /usr/lib/xfce4/notifyd/xfce4-notifyd; do
	[ -x "$f" ] && NOTIFYD=$f && break
done
[ -n "$NOTIFYD" ] || skip "xfce4-notifyd is missing (Debian: xfce4-notifyd)"
[ -n "${OOMKIT_AGENT:-}" ] && [ -x "$OOMKIT_AGENT" ] || { echo "FAIL: \$OOMKIT_AGENT is not an executable" >&2; exit 1; }
CG2=/sys/fs/cgroup/unified
[ -f "$CG2/cgroup.procs" ] || skip "no cgroup2 mount at $CG2 for the app scope"
OUT=${OOMKIT_TEST_OUTPUT:-$(mktemp -d /tmp/oomkit-test-agent-fallback-out.XXXXXX)}
mkdir -p "$OUT"
BUTTONS="$(cd "$(dirname "$0")" && pwd)/notify-buttons.py"

setup agentfb
chmod 755 "$TMP"
A=$USER_A
AGENT=$(user_copy "$OOMKIT_AGENT" "$A") || exit
user_copy "$OOMKIT_HOG" "$A" >/dev/null || exit
SCOPES="$CG2/oomkit-test-agent-fallback-$$"
DESKTOP_LOGS="agent.log notifyd.log monitor.log xvfb.log openbox.log bus-$A.log"
desktop_trap

# --- the desktop: X, a window manager, the session, its notification server
start_x 1024x600
start_wm
session "$A"
SESS="$USER_DIR/session-$A"
printf '[Desktop Entry]\nType=Application\nName=Big Editor\nIcon=accessories-text-editor\nExec=true\n' \
	>"$SESS/share/applications/org.oomkit.BigEditor.desktop"
chown -R "$A" "$SESS"
in_session_bg "$A" "$NOTIFYD" >"$TMP/notifyd.log" 2>&1
T_PIDS="$T_PIDS $!"
server_is() { # NAME: the notification name is owned, by that server
	in_session "$A" dbus-send --session --print-reply --dest=org.freedesktop.Notifications \
		/org/freedesktop/Notifications org.freedesktop.Notifications.GetServerInformation 2>/dev/null |
		grep -q "string \"$1\""
}
wait_for 20 server_is "Xfce Notify Daemon" || fail "xfce4-notifyd did not take the notification name"
in_session_bg "$A" dbus-monitor --session "interface='org.freedesktop.Notifications'" >"$TMP/monitor.log" 2>&1
T_PIDS="$T_PIDS $!"
wait_for 10 grep -q "NameAcquired\|member=" "$TMP/monitor.log" || fail "dbus-monitor did not start"

# --- oomkitd and the agent, without a display of its own
write_config 200M "report, prompt, kill-largest, kernel" 30s <<EOF
[job desk]
priority = 500
limit = 48M
policy = report, prompt, kill-largest, kernel
EOF
start_daemon
s="$USER_DIR/session-$A"
as_user_bg "$A" env -u DISPLAY -u WAYLAND_DISPLAY HOME="$s" XDG_RUNTIME_DIR="$s/run" \
	XDG_DATA_DIRS="$s/share:/usr/share" DBUS_SESSION_BUS_ADDRESS="unix:path=$s/bus" GTK_A11Y=none \
	NO_AT_BRIDGE=1 OOMKIT_SOCKET="$SOCK" "$AGENT" >"$TMP/agent.log" 2>&1
T_PIDS="$T_PIDS $!"
wait_for 20 grep -q "listening for OOMs" "$TMP/agent.log" || fail "the agent did not connect"
check "no display: the agent says it asks in notifications" \
	grep -q "no display for a window (GTK could not start): questions are shown as notifications\|built without GTK 4: questions are shown as notifications" "$TMP/agent.log"
check "and not in a window" eval '! grep -q "questions are shown in a window" "$TMP/agent.log"'
check "the server can show actions (the agent asked it)" eval '! grep -q "cannot show actions" "$TMP/agent.log"'

# The labels of the actions of the last Notify call whose summary is $1, in
# the order sent, one a line (the array of keys and labels after the body).
action_labels() { # SUMMARY
	python3 - "$TMP/monitor.log" "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
calls = [c for c in text.split("method call")[1:] if "member=Notify" in c.split("\n")[0]]
calls = [c for c in calls if '   string "%s"' % sys.argv[2] in c]
if calls:
    arr = calls[-1].split("array [", 1)[1].split("]", 1)[0]
    strings = re.findall(r'^\s*string "(.*)"$', arr, re.M)
    print("\n".join(strings[1::2]))
EOF
}
# A visible notification window of xfce4-notifyd with a row of COUNT
# buttons: NW its window, BUTTONS_AT their centres ("X Y" a line).
find_notification() { # COUNT
	local w
	for w in $(xdotool search --onlyvisible --classname xfce4-notifyd 2>/dev/null); do
		BUTTONS_AT=$(timeout 20 import -display "$DISPLAY" -window "$w" -depth 8 ppm:- 2>/dev/null |
			python3 "$BUTTONS" "$1" 2>/dev/null) && NW=$w && return 0
	done
	return 1
}
no_notification() { [ -z "$(xdotool search --onlyvisible --classname xfce4-notifyd 2>/dev/null)" ]; }
# A notification window on the screen other than $1: RW.
other_notification() { # WINDOW
	RW=$(xdotool search --onlyvisible --classname xfce4-notifyd 2>/dev/null | grep -vx "$1" | tail -n 1)
	[ -n "$RW" ]
}
# MiB as the agent writes a size under a GiB ("21 MiB").
mib() { echo "$(($1 >> 20)) MiB"; }

# --- 1. the person clicks "Close Big Editor"
check "before an OOM: no notification on the screen" no_notification
mkdir -p "$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope"
editor=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "1: desk: the editor did not grow"
echo "$editor" >"$SCOPES/app-oomkit-org.oomkit.BigEditor-1.scope/cgroup.procs" ||
	fail "1: cannot move the editor into its app scope"
other=$(spawn_as "$A" desk 40 512 2000)
wait_for 40 grep -q "question [0-9]* (desk): .* notification [1-9]" "$TMP/agent.log" || fail "1: no question"
q=$(sed -n 's/.*question \([0-9]*\) (desk): .* notification [1-9].*/\1/p' "$TMP/agent.log" | head -n 1)
ok "1: the agent asks question $q in a notification"
labels=$(action_labels "Out of memory: what should be closed?")
n=$(echo "$labels" | grep -c .)
check "1: the actions: a Close for each process, and let the system decide ($n)" \
	test "$n" = 3 -a "$(echo "$labels" | tail -n 1)" = "Let the system decide"
check "1: Close names the app from its .desktop file" eval 'echo "$labels" | grep -q "^Close Big Editor ("'
# Each look at the screen takes a screenshot and reads it: first wait for a
# window (cheap), then for its buttons to be drawn.
check "1: a notification is on the screen" wait_for 20 eval '! no_notification'
check "1: with its $n buttons drawn" wait_for 5 find_notification "$n"
import -display "$DISPLAY" -window "$NW" "$OUT/desktop-notification.png" || fail "1: no screenshot"
import -display "$DISPLAY" -window root "$OUT/desktop-notification-screen.png" || true
i=$(echo "$labels" | grep -n "^Close Big Editor (" | cut -d: -f1)
at=$(echo "$BUTTONS_AT" | sed -n "${i}p")
xdotool mousemove --window "$NW" $at click 1
check "1: the server says the person chose kill:$editor" \
	wait_for 10 grep -q "string \"kill:$editor\"" "$TMP/monitor.log"
check "1: the agent answers kill $editor" wait_for 10 grep -q "answer $q kill $editor" "$TMP/agent.log"
check "1: the chosen process dies" wait_for 20 dead "$editor"
check "1: the other lives" alive "$other"
# The server's default lifetime for the result (10 s for xfce4-notifyd): it
# is looked at as soon as it is sent, before the report is read.
check "1: the agent sends what was done" wait_for 10 grep -qF 'string "Killed Big Editor (' "$TMP/monitor.log"
check "1: the question's notification is gone" \
	wait_for 10 eval '! xdotool search --onlyvisible --classname xfce4-notifyd | grep -qx "$NW"'
check "1: the result's is on the screen" wait_for 10 other_notification "$NW"
import -display "$DISPLAY" -window "$RW" "$OUT/desktop-notification-done.png" || true
rep=$(report_id "$q")
check "1: the report: chosen by the user nobody" \
	test "$(json_get "$rep" "r['followup']['reason'].split(':')[0]")" = "chosen by the user nobody"
check "1: the report's victim is the editor" test "$(json_get "$rep" "r['followup']['victim_pid']")" = "$editor"
# What the notification says is what was done: the process the report
# killed, its size as the report has it, who chose.
size=$(mib "$(json_get "$rep" "[c['rss_bytes'] for c in r['candidates'] if c['pid'] == $editor][0]")")
check "1: the notification says what was done: Killed Big Editor ($size)" \
	wait_for 10 grep -qF "string \"Killed Big Editor ($size)\"" "$TMP/monitor.log"
check "1: because, chosen by whom, and the command for the report" \
	grep -qF "because desk reached its memory limit (chosen by nobody); details: oomkit reports show $q" "$TMP/monitor.log"
empty_job desk

# --- 2. dismissed: the system decides
# The result of 1 goes first, as the person would close it.
for w in $(xdotool search --onlyvisible --classname xfce4-notifyd 2>/dev/null); do
	xdotool mousemove --window "$w" 10 10 click 1
done
wait_for 20 no_notification || fail "2: the notification of 1 stayed"
lines=$(wc -l <"$TMP/agent.log")
a=$(spawn_as "$A" desk 20)
wait_for 10 usage_at_least desk $((20 << 20)) || fail "2: the first hog did not grow"
b=$(spawn_as "$A" desk 40 512 2000)
wait_for 40 eval 'tail -n +$((lines + 1)) "$TMP/agent.log" | grep -q "question [0-9]* (desk): .* notification [1-9]"' ||
	fail "2: no question"
q=$(tail -n +$((lines + 1)) "$TMP/agent.log" | sed -n 's/.*question \([0-9]*\) (desk): .*/\1/p' | head -n 1)
wait_for 20 eval '! no_notification' && wait_for 5 find_notification 3 || fail "2: the notification is not on the screen"
# Beside the buttons: its top left corner, above the icon.
mlines=$(wc -l <"$TMP/monitor.log")
xdotool mousemove --window "$NW" 4 4 click 1
dismissed() { tail -n +$((mlines + 1)) "$TMP/monitor.log" | grep -A2 "member=NotificationClosed" | grep -q "uint32 2\$"; }
check "2: the server says the person dismissed it" wait_for 10 dismissed
check "2: the agent lets the system decide" wait_for 10 grep -q "answer $q chain" "$TMP/agent.log"
check "2: the chain kills the largest" wait_for 30 dead "$b"
check "2: the other lives" alive "$a"
check "2: the report: everyone asked let the system decide" \
	test "$(json_get "$(report_id "$q")" "r['outcome'].startswith('everyone asked')")" = True
check "2: the notification says the system chose, by kill-largest" \
	wait_for 10 grep -q "because desk reached its memory limit (the system chose, by kill-largest); details: oomkit reports show [0-9]*" "$TMP/monitor.log"
check "2: and what it killed" grep -q 'string "Killed oomkit-hog (' "$TMP/monitor.log"
empty_job desk

echo "screenshots: $OUT/desktop-notification.png $OUT/desktop-notification-done.png"
finish
