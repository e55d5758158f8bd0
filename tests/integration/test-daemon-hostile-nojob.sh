#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A user leaves the jobs for a cgroup of its own: root made "escape", a memcg
# in the machine that no job is, and gave it to the user (its directory,
# cgroup.procs and tasks chowned, as a delegation does); the user moves its
# own hog into it.  Below a machine memcg of its own (cgroup v1 here) a
# process in no job was never protected: what must hold is that it is still
# chosen, before every job, that root's processes in the jobs live, and that
# the report and `oomkit ps` name it escaped, with its cgroup and its owner.
# (At the cgroup v2 root, where the rest of the machine is protected, the
# systemd guest's check sd_nojob_escape runs the same attack.)
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
setup hostile-nojob
OWNER=$(other_uid)
HOG=$(user_copy "$OOMKIT_HOG" "$OWNER") || exit

write_config 160M "kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 150M

[job batch]
priority = 100
limit = 100M
EOF2
start_daemon

mkdir "$R/escape" || fail "cannot make the escape memcg"
chown "$OWNER:$(user_gid "$OWNER")" "$R/escape" "$R/escape/cgroup.procs" "$R/escape/tasks" ||
	fail "cannot give the escape memcg to the user"
# The user moves itself (v1 asks only that it may write the destination).
as_user_bg "$OWNER" sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 40 1024 1000' sh "$R/escape" "$HOG" \
	>/dev/null 2>&1
hog=$!
check "the user's hog moved itself into the escape memcg" wait_for 10 in_memcg "$hog" "$M/escape"
wait_for 10 usage_at_least escape $((40 << 20)) || fail "the hog did not reach 40M"
batch=$(spawn batch 8)
web1=$(spawn web 60)
wait_for 10 usage_at_least web $((60 << 20)) || fail "web did not reach 60M"

ps_line() { oomkit_ps | grep -E "^ *$hog \\(escaped\\) \\[escape\\] "; }
oomkit_ps() { "$OOMKIT" --socket "$SOCK" ps 2>&1; }
check "oomkit ps names the hog escaped, in its cgroup" ps_line
check "and --json gives the cgroup's whole path" eval \
	'"$OOMKIT" --socket "$SOCK" ps --json | grep -q "\"pid\":$hog,\"job\":\"(escaped)\".*\"instance\":\"$M/escape\""'

web2=$(spawn web 80 512 2000)
check "the escaped hog is killed" wait_for 20 dead "$hog"
check "root's first web process lives" alive "$web1"
check "root's growing web process lives" alive "$web2"
check "root's batch process lives" alive "$batch"
check "the daemon decided, not the kernel" test "$(grep -c 'the kernel decides' "$TMP/log")" = 0
victim() {
	[ "$(json_get "$(latest_report)" "(r['decision']['victim_pid'], r['decision']['victim_job'], \
r['decision'].get('victim_escaped'), r['decision'].get('victim_cgroup'), r['decision'].get('victim_cgroup_owner'))" \
		2>/dev/null)" = "($hog, '(escaped)', True, '$M/escape', $OWNER)" ]
}
check "the report names it escaped, with its cgroup and owner" wait_for 10 victim
check "its reason says whose cgroup it is" eval \
	'json_get "$(latest_report)" "r[\"decision\"][\"reason\"]" | grep -q "in no job, in a cgroup uid $OWNER may write"'
kill -9 "$web1" "$web2" "$batch" 2>/dev/null
finish
