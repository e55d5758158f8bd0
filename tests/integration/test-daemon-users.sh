#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# User names after the seccomp filter (daemon/base/users.h).  The daemon runs in a
# mount namespace of its own where /etc/passwd and /etc/nsswitch.conf are
# the test's copies.  Once it is ready, the name service is made useless
# (nsswitch.conf names a service that does not exist, as a directory service
# behind a refused socket would be) and a user is added to /etc/passwd; a
# reload then names that user in a `prefer = user:` rule and as a new job's
# `owner =`.  The reload must work from /etc/passwd alone: the rule places
# the user's process first (kill-largest would take root's larger one), the
# job's memcg is delegated to the user and its group.  A name in neither is
# refused with file:line, and the running configuration stays.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
command -v unshare >/dev/null || skip "unshare (util-linux) is missing"
setup users

# A uid no one has on this machine: the test's user exists only in the copy.
LATE=oomkit-late
LATE_UID=64123
while getent passwd "$LATE_UID" >/dev/null; do LATE_UID=$((LATE_UID + 1)); done
getent passwd "$LATE" >/dev/null && skip "a user $LATE exists on this machine"
LATE_GID=$((LATE_UID + 7))
cp /etc/passwd "$TMP/passwd"
printf 'passwd: files\ngroup: files\nshadow: files\n' >"$TMP/nsswitch.conf"
HOG=$(user_copy "$OOMKIT_HOG") || exit

write_config 512M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel
avoid = user:nobody
EOF2
cp "$TMP/oomkitd.conf" "$TMP/start.conf"

# As start_daemon, inside the namespace (unshare and sh exec: $! is oomkitd).
line=$(($(wc -l <"$TMP/log" 2>/dev/null || echo 0) + 1))
unshare -m --propagation private sh -c 'mount --bind "$1" /etc/passwd && mount --bind "$2" /etc/nsswitch.conf &&
	exec "$3" -c "$4"' sh "$TMP/passwd" "$TMP/nsswitch.conf" "$OOMKITD" "$TMP/oomkitd.conf" >>"$TMP/log" 2>&1 &
DPID=$!
ready() { grep -q "oomkitd ready" "$TMP/log" 2>/dev/null && [ -S "$SOCK" ]; }
wait_for 10 ready || fail "oomkitd did not become ready"
check "the daemon sees the test's copy of /etc/passwd" \
	test "$(stat -L -c %i "/proc/$DPID/root/etc/passwd")" = "$(stat -c %i "$TMP/passwd")"

# The name service goes away, the user arrives (both files written in place:
# the bind mounts hold their inodes).
printf 'passwd: oomkit-none\ngroup: oomkit-none\nshadow: oomkit-none\n' >"$TMP/nsswitch.conf"
echo "$LATE:x:$LATE_UID:$LATE_GID:late user:/nonexistent:/usr/sbin/nologin" >>"$TMP/passwd"

# A name known nowhere is refused, naming the file and line.
sed -e 's/^avoid = user:nobody$/avoid = user:oomkit-nowhere/' "$TMP/start.conf" >"$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "an unknown user: the reload is refused with file:line" \
	wait_for 10 grep -q "$TMP/oomkitd.conf:.*unknown user 'oomkit-nowhere'" "$TMP/log"
check "an unknown user: the running configuration stays" wait_for 10 grep -q "the running configuration stays" "$TMP/log"

{
	sed -e "s/^avoid = user:nobody\$/avoid = user:nobody\nprefer = user:$LATE/" "$TMP/start.conf"
	printf '\n[job late]\npriority = 500\nlimit = 16M\nowner = %s\n' "$LATE"
} >"$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a user added after the start: the reload works" wait_for 10 grep -q "reloaded $TMP/oomkitd.conf: 2 jobs" "$TMP/log"
check "the new job's memcg is delegated to the user and its group (from /etc/passwd)" \
	wait_for 10 test "$(stat -c %u:%g "$R/late")" = "$LATE_UID:$LATE_GID"
check "the start's user: rule (nobody) still resolves" \
	eval '! grep -q "unknown user .nobody." "$TMP/log"'

# The rule is the user's uid: its process is chosen over root's larger one.
big=$(spawn web 20)
wait_for 10 usage_at_least web $((20 << 20)) || fail "root's hog did not reach 20M"
small=$(spawn_as "$LATE_UID" web 40 256 2000)
check "an OOM in web: the user's process is killed" wait_for 20 dead "$small"
check "root's larger process lives" alive "$big"
check "by oomkitd" wait_for 10 grep -q "web: killed $small\$" "$TMP/log"
check "the report says prefer" wait_for 10 has_reports 1
rep=$(latest_report)
check "the report's victim is the user's process" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$small"
check "the daemon asked no name service after its start (nothing refused, still running)" alive "$DPID"
stop_daemon
finish
