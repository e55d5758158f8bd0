#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run moves the process that asks, never one that took its pid.
# The exploit: a job's owner connects, hands the connection to a child and
# exits; a root process takes the pid; the child sends "run JOB".  Before the
# fix the daemon moved the root process into the owner's job, whose policy
# then killed it.  Tried with the kernel's pidfd of the peer (SO_PEERPIDFD)
# and with the path older kernels take (OOMKIT_TEST_NO_PEERPIDFD=1: the
# request's SCM_CREDENTIALS, opened as a pidfd and checked), and variants:
# the request's sender gone and its pid taken, a request sent in two pieces
# by two processes, credentials naming another process.
#
# Pids are reused on purpose inside a pid namespace of the test's own
# (ns_last_pid), so the machine's other processes are not disturbed: the test
# runs itself again inside one, the daemon included.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
command -v python3 >/dev/null || skip "python3 is missing"
command -v unshare >/dev/null || skip "unshare (util-linux) is missing"
if [ -z "${OOMKIT_IN_PIDNS:-}" ]; then
	OOMKIT_IN_PIDNS=1 exec unshare --pid --fork --mount-proc "$BASH" "$0" "$@"
	skip "cannot enter a pid namespace of its own"
fi
[ -w /proc/sys/kernel/ns_last_pid ] || skip "no writable /proc/sys/kernel/ns_last_pid in the test's pid namespace"
setup run
chmod 755 "$TMP"
client=$(user_copy "$(dirname "$0")/control-client.py") || exit
hog=$(user_copy "$OOMKIT_HOG") || exit
OWNER=$USER_A
# Where the owner's clients and the test leave each other word.
U="$TMP/u"
mkdir "$U" && chown $OWNER "$U" || fail "cannot make $U"

write_config 256M "kill-largest, kernel" 2s <<EOF
[job own]
priority = 500
limit = 32M
owner = $OWNER
policy = kill-largest, kernel
EOF

in_job() { grep -q "$CG_LINE/$M/own\$" "/proc/$1/cgroup"; }
not_in_job() { alive "$1" && ! in_job "$1"; }

# at_pid PID: a root process (a sleep) at exactly PID, or fails.  It ends
# with the namespace, when the test (its pid 1) exits.
at_pid() {
	local want=$1 i
	for i in 1 2 3 4 5; do
		echo $((want - 1)) > /proc/sys/kernel/ns_last_pid
		sleep 600 >/dev/null 2>&1 &
		[ $! = "$want" ] && { echo $!; return 0; }
		kill $! 2>/dev/null
		wait $! 2>/dev/null
	done
	return 1
}

# The exploit: the connecting process exits, root takes its pid, its child sends run.
exploit() { # WHAT: the reply's first line is in $U/go.reply, the root process's pid in $root
	rm -f "$U/go" "$U/go.reply"
	as_user_bg $OWNER python3 "$client" fd-run "$SOCK" own "$U/go" > "$TMP/fd-run.out"
	local p=$!
	wait "$p"
	connector=$(cat "$TMP/fd-run.out")
	[ -n "$connector" ] && dead "$connector" || fail "$1: the connecting process did not exit"
	root=$(at_pid "$connector") || fail "$1: could not put a root process at pid $connector"
	touch "$U/go"
	wait_for 20 test -s "$U/go.reply" || fail "$1: the child got no reply"
}

# The sender variant: the request queued behind junk, its sender gone, root at its pid.
reuse_sender() { # WHAT: the reply in $TMP/sender.out, the root process in $root
	rm -f "$U/gone" "$U/go"
	as_user_bg $OWNER python3 "$client" reuse-sender "$SOCK" own "$U" > "$TMP/sender.out"
	sender_client=$!
	wait_for 20 test -s "$U/gone" || fail "$1: the sender did not exit"
	root=$(at_pid "$(cat "$U/gone")") || fail "$1: could not put a root process at the sender's pid"
	touch "$U/go"
	wait "$sender_client"
}

# The kernel's pidfd of the peer came with Linux 6.5: an older kernel (the
# guests' Debian 12 kernel, 6.1) has only the credentials' path.
if python3 -c 'import socket; a, b = socket.socketpair(); a.getsockopt(socket.SOL_SOCKET, 77)' 2>/dev/null; then
	start_daemon
	exploit "pidfd"
	check "pidfd: the request of a connection whose process exited is refused" \
		grep -q "^error the process that asked to run in own has exited" "$U/go.reply"
	check "pidfd: the root process at its pid is not moved" not_in_job "$root"
	reuse_sender "pidfd, sender"
	check "pidfd: the connecting process (the owner's, alive) is the one moved" \
		grep -qx "ok" "$TMP/sender.out"
	check "pidfd: the root process at the sender's pid is not moved" not_in_job "$root"
	big=$(spawn_as $OWNER own 64 512 1000)
	check "pidfd: the job's OOM kills the owner's hog" wait_for 30 dead "$big"
	check "pidfd: the root process lives" alive "$root"
	stop_daemon
else
	echo "# no SO_PEERPIDFD in this kernel (before 6.5): only the credentials' path is tried"
fi

OOMKIT_TEST_NO_PEERPIDFD=1 start_daemon
exploit "credentials"
check "credentials: the sender (the owner's child, alive) is moved" grep -qx "ok" "$U/go.reply"
check "credentials: the root process at the connector's pid is not moved" not_in_job "$root"
reuse_sender "credentials, sender"
check "credentials: a sender whose pid another uid took is refused" \
	grep -q "^error permission denied: the process to move is not uid $OWNER's alone" "$TMP/sender.out"
check "credentials: the root process at the sender's pid is not moved" not_in_job "$root"
check "credentials: a request sent by two processes is refused" \
	test "$(as_user $OWNER python3 "$client" split-run "$SOCK" own)" = \
	"error run: the request must come from one process, in one piece"
check "credentials: the kernel refuses credentials naming another process" \
	test "$(as_user $OWNER python3 "$client" forge-creds "$SOCK" "$root")" = EPERM
big=$(spawn_as $OWNER own 64 512 1000)
check "credentials: the job's OOM kills the owner's hog" wait_for 30 dead "$big"
check "credentials: the root process lives" alive "$root"
check "root's own run still works" "$OOMKIT" run --job own -- sh -c 'grep -q "'"$CG_LINE"'/'"$M"'/own$" /proc/self/cgroup'
stop_daemon
finish
