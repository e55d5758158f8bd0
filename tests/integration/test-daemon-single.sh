#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One daemon stays one.  While a daemon runs, a second one started in the
# foreground is refused with a message naming what it collides on, and
# exits non-zero having changed nothing of the first's:
#   - the same configuration (the socket's lock, taken before anything);
#   - the same machine behind another socket and report directory (the
#     flock on the machine's memcg);
#   - the same report directory for another machine and socket (the flock on
#     the directory);
#   - `oomkitd --release` on the running daemon's configuration.
# After each, the first still has its socket (the same inode), answers
# `oomkit status`, holds its job (kernel killer off) and handles an OOM
# itself: the hog killed by oomkitd, a report written, the kernel's oom_kill
# unchanged.  Then the first is SIGKILLed: its locks go with it, and a new
# daemon starts on the lock files it left behind, though an unprivileged
# user holds an flock on the machine's memcg directory (the lock files are
# where only root can open them); stopped, it removes its lock files.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup single

# Another machine of this test, for the variants that must not touch ours;
# removed even on failure.
R2="$R-two"
trap 'rc=$?; kill_tree "$R2"; rm_tree "$R2"; (exit $rc); cleanup' EXIT

write_config 512M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel
EOF2

start_daemon
held_off() { cg_held "$R/$1"; }
oom_kills() { cg_kills "$R/web"; }
sock_inode() { stat -c %i "$SOCK"; }
check "the first daemon holds web" held_off web
check "the first daemon holds the machine" held_off .
inode=$(sock_inode)

# second CONFIG NAME: runs a second daemon in the foreground (bounded: one
# that is not refused would run on); its output in $TMP/second-NAME.
second() {
	timeout 20 "$OOMKITD" -c "$1" >"$TMP/second-$2" 2>&1
}

# variant NAME machine socket report_dir: a configuration like the first's
# with those three keys as given.
variant() {
	sed -e "s|^machine = .*|machine = $2|" -e "s|^socket = .*|socket = $3|" \
		-e "s|^report_dir = .*|report_dir = $4|" -e "s|^metrics = .*|metrics = $TMP/$1.prom|" \
		"$TMP/oomkitd.conf" >"$TMP/$1.conf"
	echo "$TMP/$1.conf"
}

# The first daemon is as it was: its socket, its holds, its answers.
first_untouched() { # WHAT
	check "$1: the first daemon runs" alive "$DPID"
	check "$1: the socket is the first daemon's (same inode)" test -S "$SOCK" -a "$(sock_inode)" = "$inode"
	check "$1: oomkit status answers" "$OOMKIT" status
	check "$1: web is still held (kernel killer off)" held_off web
	check "$1: the machine is still held" held_off .
}

second "$TMP/oomkitd.conf" same
check "same configuration: refused (exit 1)" test $? = 1
check "same configuration: the message names the socket" \
	grep -q "not started: another oomkitd is running on the socket $SOCK" "$TMP/second-same"
check "same configuration: it did not get as far as liboomkit" eval '! grep -q "cannot\|ready" "$TMP/second-same"'
first_untouched "same configuration"

conf=$(variant machine "$R" "$TMP/other.sock" "$TMP/other-reports")
second "$conf" machine
check "same machine, another socket: refused (exit 1)" test $? = 1
check "same machine: the message names the machine" \
	grep -q "not started: machine $R is handled by another oomkitd" "$TMP/second-machine"
check "same machine: no socket of its own was left" test ! -e "$TMP/other.sock"
first_untouched "same machine"

conf=$(variant reports "$R2" "$TMP/other.sock" "$TMP/reports")
second "$conf" reports
check "same report directory: refused (exit 1)" test $? = 1
check "same report directory: the message names it" \
	grep -q "another oomkitd writes its reports to $TMP/reports" "$TMP/second-reports"
check "same report directory: the other machine was not created" test ! -d "$R2"
first_untouched "same report directory"

conf=$(variant socket "$R2" "$SOCK" "$TMP/other-reports")
second "$conf" socket
check "same socket, another machine: refused (exit 1)" test $? = 1
check "same socket: the message names the socket" \
	grep -q "another oomkitd is running on the socket $SOCK" "$TMP/second-socket"
check "same socket: the other machine was not created" test ! -d "$R2"
first_untouched "same socket"

"$OOMKITD" -c "$TMP/oomkitd.conf" --release >"$TMP/second-release" 2>&1
check "--release while it runs: refused (exit 1)" test $? = 1
check "--release: the message says why" grep -q "^.*--release refused (it is for after oomkitd was stopped or killed): another oomkitd is running on the socket $SOCK" "$TMP/second-release"
conf=$(variant release "$R" "$TMP/other.sock" "$TMP/other-reports")
"$OOMKITD" -c "$conf" --release >"$TMP/second-release2" 2>&1
check "--release of its machine through another socket: refused (exit 1)" test $? = 1
check "--release: the message names the machine" \
	grep -q "machine $R is handled by another oomkitd" "$TMP/second-release2"
first_untouched "--release"

# The first daemon still handles an OOM, and reports it.
kills=$(oom_kills)
line=$(($(wc -l <"$TMP/log") + 1))
hog=$(spawn web 64)
check "an OOM in web: the hog is killed" wait_for 20 dead "$hog"
check "by the first daemon" wait_for 10 grep -q "web: killed $hog\$" "$TMP/log"
check "the kernel killed nothing (oom_kill unchanged)" test "$(oom_kills)" = "$kills"
check "a report is written" wait_for 10 has_reports 1
rep=$(latest_report)
check "the report names the hog" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$hog"
check "web is held after the OOM" held_off web

# A daemon that died leaves its lock files, never its locks.
guardian=$(pgrep -P "$DPID" -x oomkit-guardian)
{ kill -9 "$DPID"; wait "$DPID"; } 2>/dev/null
DPID=
check "the lock file is left behind" test -f "$SOCK.lock"
check "and the machine's, naming the machine" grep -qx "[0-9]* /$M" /run/oomkit/machine-*.lock
[ -z "$guardian" ] || wait_for 10 dead "$guardian"
# Meanwhile an unprivileged user holds an flock on the machine's memcg
# directory, which anyone may open: that is no lock of the daemon's.
require_user_tools
# One process that holds it (flock(1) would leave its command behind).
as_user_bg "$USER_A" python3 -c 'import fcntl, os, sys, time
fcntl.flock(os.open(sys.argv[1], os.O_RDONLY), fcntl.LOCK_EX)
time.sleep(600)' "$R" >/dev/null 2>&1
holder=$!
T_HELPERS="${T_HELPERS:-} $holder"
user_holds() { grep -q "FLOCK .* $holder " /proc/locks; }
check "a user holds an flock on the machine's directory" wait_for 10 user_holds
start_daemon
check "a new daemon starts over a dead one's lock files, and a user's flock" alive "$DPID"
check "and holds web" wait_for 10 held_off web
kill "$holder"
wait "$holder" 2>/dev/null
stop_daemon
ours() { grep -lx "[0-9]* /$M" /run/oomkit/machine-*.lock 2>/dev/null; }
check "a stopped daemon removes its lock files" \
	eval 'test ! -e "$SOCK.lock" -a ! -e "$TMP/reports/.oomkitd.lock" -a -z "$(ours)"'
check "a stopped daemon leaves its locks free: --release works" \
	"$OOMKITD" -c "$TMP/oomkitd.conf" --release
finish
