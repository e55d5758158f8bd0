# SPDX-License-Identifier: LGPL-2.1-or-later
# desktop-lib.sh - sourced by the test-agent*.sh tests, after daemon-lib.sh
# and its setup: a headless desktop of the tests' own.  An X server
# (Xvfb), a window manager, each user's session bus (without service
# activation: the notification server is the one a test starts, or none),
# and a cleanup that ends all of it, and the cgroup2 app scopes the test
# made, on any exit.
#
# A test sets, before desktop_trap:
#   SCOPES      the cgroup2 directory under which it makes app scopes
#   DESKTOP_LOGS the files in $TMP whose tail is shown when it fails
# and adds every process it starts in the background to T_PIDS.

T_PIDS=
DESKTOP_LOGS=${DESKTOP_LOGS:-}

desktop_cleanup() {
	local rc=$? p f d
	if [ $rc != 0 ]; then
		for f in $DESKTOP_LOGS; do
			[ -f "$TMP/$f" ] && { echo "--- $f" >&2; tail -n 120 "$TMP/$f" >&2; }
		done
	fi
	for p in $T_PIDS; do
		kill "$p" 2>/dev/null
	done
	if [ -n "${SCOPES:-}" ]; then
		for p in $(cat "$SCOPES"/*/cgroup.procs 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
		for d in "$SCOPES"/*/ "$SCOPES"; do
			[ -d "$d" ] && wait_for 5 rmdir "$d" 2>/dev/null
		done
	fi
	(exit $rc)
	cleanup
}

desktop_trap() { trap desktop_cleanup EXIT; }

# start_x WIDTHxHEIGHT: an X server on a free display; sets DISPLAY.
start_x() {
	Xvfb -displayfd 3 -ac -nolisten tcp -screen 0 "$1x24" 3>"$TMP/display" >"$TMP/xvfb.log" 2>&1 &
	T_PIDS="$T_PIDS $!"
	wait_for 10 test -s "$TMP/display" || fail "Xvfb did not start"
	export DISPLAY=":$(cat "$TMP/display")"
}

# start_wm: openbox on $DISPLAY, up when it has announced itself (EWMH).
start_wm() {
	openbox --sm-disable >"$TMP/openbox.log" 2>&1 &
	T_PIDS="$T_PIDS $!"
	wm_up() { xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id"; }
	wait_for 10 wm_up || fail "openbox did not start"
}

bus_config() { # SOCKET
	cat <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$1</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
}

# A bus is up when it answers (its socket exists a moment before it listens).
bus_ready() { # UID ADDRESS
	as_user "$1" dbus-send --bus="$2" --print-reply --dest=org.freedesktop.DBus / \
		org.freedesktop.DBus.GetId >/dev/null 2>&1
}

# session UID: its session directory $USER_DIR/session-UID (share/applications
# for .desktop files, run/ for XDG_RUNTIME_DIR), its bus at bus in it, running.
session() {
	local s="$USER_DIR/session-$1"
	mkdir -p "$s/share/applications" "$s/run" && chown -R "$1" "$s" && chmod 700 "$s" "$s/run"
	bus_config "$s/bus" >"$s/bus.conf"
	as_user_bg "$1" dbus-daemon --config-file="$s/bus.conf" --nofork --nopidfile >"$TMP/bus-$1.log" 2>&1
	T_PIDS="$T_PIDS $!"
	wait_for 10 test -S "$s/bus" && wait_for 10 bus_ready "$1" "unix:path=$s/bus" ||
		fail "the session bus of uid $1 did not start"
}

# in_session UID CMD...: CMD as the user, in its session, on $DISPLAY.
in_session() {
	local uid=$1 s="$USER_DIR/session-$1"
	shift
	as_user "$uid" env HOME="$s" XDG_RUNTIME_DIR="$s/run" DISPLAY="$DISPLAY" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=$s/bus" "$@"
}
in_session_bg() {
	local uid=$1 s="$USER_DIR/session-$1"
	shift
	as_user_bg "$uid" env HOME="$s" XDG_RUNTIME_DIR="$s/run" DISPLAY="$DISPLAY" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=$s/bus" "$@"
}

# A job's memcg ($R/JOB) holds no process.
empty() { [ -z "$(cat "$R/$1/cgroup.procs")" ]; }
# JOB: its processes killed and gone.
empty_job() {
	kill_tree "$R/$1"
	wait_for 10 empty "$1" || fail "$1 did not empty"
}
# Report N (a question's id is its report's; an unanswered one's chain goes on in the next).
report_id() { ls "$TMP/reports"/oom-"$(printf %08u "$1")"-*.json 2>/dev/null; }
