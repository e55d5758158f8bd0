#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The service manager's notification protocol, spoken by oomkitd itself: the
# test binds the datagram socket a service manager would (a path, then an
# abstract name), hands its address over in NOTIFY_SOCKET, and checks what
# arrives and from which pid (the kernel's SCM_CREDENTIALS, which the manager
# trusts): READY=1 once the jobs are watched, WATCHDOG=1 repeatedly when
# WATCHDOG_USEC asks for it, RELOADING=1 and READY=1 around a SIGHUP, and
# STOPPING=1.  Without a watchdog meant for it, the daemon keeps no timer.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
command -v python3 >/dev/null || skip "python3 is needed to play the service manager"
setup notify

write_config 64M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
limit = 16M
EOF2

# The receiver writes one line per datagram: the sender's pid, then the
# datagram with its newlines as spaces.
cat > "$TMP/receiver.py" <<'EOF2'
import socket, struct, sys
address, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind("\0" + address[1:] if address.startswith("@") else address)
open(out + ".bound", "w").close()
while True:
    data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    pid = 0
    for level, kind, value in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", value[:12])[0]
    with open(out, "a") as f:
        f.write("%d %s\n" % (pid, data.decode(errors="replace").replace("\n", " ")))
EOF2

# receive ADDRESS OUT: a receiver in the background, bound before it returns.
receive() {
	timeout 170 python3 "$TMP/receiver.py" "$1" "$2" &
	T_HELPERS="${T_HELPERS:-} $!"
	wait_for 10 test -f "$2.bound" || fail "the receiver did not bind $1"
}

# start_notified [VAR=VALUE...]: oomkitd with only the given notification
# variables; the shell execs it, so $! is its pid and WATCHDOG_PID=self names
# it.  Each run gets a fresh log, so "ready" is this run's.
start_notified() {
	cat "$TMP/log" >> "$TMP/log.before" 2>/dev/null
	: > "$TMP/log"
	env -u NOTIFY_SOCKET -u WATCHDOG_USEC -u WATCHDOG_PID "$@" sh -c '[ "$WATCHDOG_PID" = self ] && export WATCHDOG_PID=$$; exec "$0" "$@"' \
		"$OOMKITD" -c "$TMP/oomkitd.conf" >>"$TMP/log" 2>&1 &
	DPID=$!
	wait_for 10 daemon_ready || fail "oomkitd did not become ready"
}

got() { grep -qx "$DPID $2" "$1"; }
count() { grep -cx "$DPID $2" "$1"; }
at_least() { [ "$(count "$1" "$2")" -ge "$3" ]; }

# A path socket, with a watchdog of 300 ms for this very process.
OUT="$TMP/path.txt"
receive "$TMP/notify" "$OUT"
start_notified NOTIFY_SOCKET="$TMP/notify" WATCHDOG_USEC=300000 WATCHDOG_PID=self
check "READY=1 arrives from the daemon's pid" wait_for 10 got "$OUT" "READY=1"
check "the watchdog is pinged again and again" wait_for 10 at_least "$OUT" "WATCHDOG=1" 3
# A one-shot timer reads 0 between its expiry and the loop arming it again:
# wait for the armed state rather than catch one instant.
check "the watchdog timer is armed" wait_for 10 armed "$DPID"
check "nothing comes from another pid" test -z "$(grep -v "^$DPID " "$OUT")"
kill -HUP "$DPID"
check "a reload sends RELOADING=1 with MONOTONIC_USEC" wait_for 10 grep -qx "$DPID RELOADING=1 MONOTONIC_USEC=[0-9]*" "$OUT"
check "a reload ends with READY=1 again" wait_for 10 at_least "$OUT" "READY=1" 2
pid=$DPID
stop_daemon
DPID=$pid
check "stopping sends STOPPING=1" wait_for 10 got "$OUT" "STOPPING=1"
check "STOPPING=1 is the last word" test "$(tail -n 1 "$OUT")" = "$pid STOPPING=1"
DPID=

# An abstract socket; the watchdog is meant for another process.
OUT="$TMP/abstract.txt"
receive "@oomkit-test-notify-$$" "$OUT"
start_notified NOTIFY_SOCKET="@oomkit-test-notify-$$" WATCHDOG_USEC=300000 WATCHDOG_PID=1
check "READY=1 arrives on an abstract socket" wait_for 10 got "$OUT" "READY=1"
check "a watchdog meant for another pid: no timer" disarmed "$DPID"
check "a watchdog meant for another pid: no ping so far" test "$(count "$OUT" "WATCHDOG=1")" = 0
stop_daemon

# No NOTIFY_SOCKET at all (started by hand): nothing to notify, no timer.
start_notified WATCHDOG_USEC=300000
check "without NOTIFY_SOCKET the daemon runs" alive "$DPID"
check "without NOTIFY_SOCKET there is no watchdog timer" disarmed "$DPID"
check "the missing socket is logged" grep -q "WATCHDOG_USEC is set but there is no NOTIFY_SOCKET" "$TMP/log"
stop_daemon
finish
