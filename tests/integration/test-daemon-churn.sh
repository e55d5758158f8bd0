#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A delegated job's owner fills its job with empty sub-memcgs (10 000 of
# them, as many as its limit lets the kernel make) to slow the daemon's
# look at the processes until the delay hands the machine to the kernel,
# or until a process it cannot find makes another job pay.  On the
# machine's OOM the owner's hog must die by the daemon's hand, root's
# process in the high-priority job must live, and the kernel's killer must
# not have fired: first with the hog beside the empty cgroups, then with it
# several levels deep among them, then with the owner moving its processes
# (the hog among them) from sub-cgroup to sub-cgroup while the daemon looks.
# How long the decision takes is measured in bench/ (`churn`), not here.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
setup churn
# The library's cleanup removes a tree a cgroup at a time from the shell,
# minutes for 10 000: the owner's sub-cgroups go first, all at once.
eval "lib_cleanup() $(declare -f cleanup | tail -n +2)"
kill_owned() { # every process in the owner's tree, killed in one go
	find "$R/batch" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
}
cleanup() {
	local rc=$? sub
	trap - EXIT
	[ -n "${mv:-}" ] && kill "$mv" 2>/dev/null
	kill_owned
	for sub in 1 2 3 4 5; do
		find "$R/batch" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null && break
		sleep 0.1
		kill_owned
	done
	(exit $rc)
	lib_cleanup
}
trap cleanup EXIT
OWNER=$USER_A
SUBS=${OOMKIT_TEST_CHURN_SUBS:-10000}
OWNER_HOG=$(user_copy "$OOMKIT_HOG" $OWNER) || exit

# 10 000 memcgs cost the owner's job about 100 MiB of kernel memory, charged
# to it: batch's limit has room for them and the hog, the machine's does not
# have room for web's process and both.  A delay of 1 s: before the walk was
# bounded, 10 000 cgroups took it past that.
write_config 448M "report, kill-lowest, kernel" 1s <<EOF2
[job web]
priority = 900
limit = 200M

[job batch]
priority = 100
limit = 400M
owner = $OWNER
EOF2
start_daemon

# The owner makes them itself: a hundred groups of a hundred, and as many
# directly in its job, some of them three levels deep.
as_user $OWNER sh -c 'cd "$1" && seq -f c%g 1 "$2" | xargs mkdir' sh "$R/batch" $((SUBS / 2)) ||
	fail "the owner could not make its sub-cgroups"
as_user $OWNER sh -c 'cd "$1" && mkdir -p d1/d2/d3 && cd d1/d2/d3 && seq -f e%g 1 "$2" | xargs mkdir' \
	sh "$R/batch" $((SUBS / 2)) || fail "the owner could not make its deep sub-cgroups"
made=$(find "$R/batch" -mindepth 1 -type d | wc -l)
check "the owner made $SUBS sub-cgroups" test "$made" -ge "$SUBS"

# Any user may ask for the processes (status, ps, explain) as often as it
# likes, on the loop that handles the OOMs: a process deep among the empty
# cgroups is listed, by every one of them.
deep=$(spawn_as $OWNER batch/d1/d2/d3/e9 4)
check "ps lists the owner's process deep among them" sh -c '"$1" ps batch | grep -qw "$2"' sh "$OOMKIT" "$deep"
check "ps of the machine lists it" sh -c '"$1" ps | grep -qw "$2"' sh "$OOMKIT" "$deep"
batch_procs() {
	"$OOMKIT" status --json | python3 -c 'import json, sys
print([j["processes"] for j in json.load(sys.stdin)["jobs"] if j["name"] == "batch"])'
}
check "status counts it in batch" test "$(batch_procs)" = "[1]"
check "explain names it" sh -c '"$1" explain | grep -qw "$2"' sh "$OOMKIT" "$deep"
kill -9 "$deep"

oom_kills() { # the kernel killer's kills in the machine and its jobs
	{ cg_kills "$R"; cg_kills "$R/web"; cg_kills "$R/batch"; } | awk '{ n += $1 } END { print n + 0 }'
}
victim_is() { # PID JOB
	[ "$(json_get "$(latest_report)" "r['decision']['victim_pid'], r['decision']['victim_job']" 2>/dev/null)" = "($1, '$2')" ]
}
empty() { [ -z "$(cat "$R/$1/cgroup.procs")" ]; }

# phase NAME SUB [MOVER]: web holds 100 MiB, then the owner's hog at
# batch/SUB grows past the machine's limit.  With MOVER the owner moves the
# hog and a sleeper between its sub-cgroups all the while.
phase() {
	local name=$1 sub=$2 mover=${3:-} web hog sleeper kills reports
	mv=
	kills=$(oom_kills)
	reports=$(report_count)
	web=$(spawn web 100)
	wait_for 20 usage_at_least web $((100 << 20)) || fail "$name: web did not reach 100 MiB"
	hog=$(spawn_as $OWNER "$sub" 400 512 500)
	if [ -n "$mover" ]; then
		sleeper=$(spawn_as $OWNER "$sub" 1)
		# The owner's mover: each of its two processes to a sub-cgroup
		# after another, in the top group and the deep one, until killed.
		as_user_bg $OWNER sh -c '
			i=1
			while :; do
				echo "$3" > "$1/c$i/cgroup.procs"
				echo "$4" > "$1/d1/d2/d3/e$i/cgroup.procs"
				echo "$4" > "$1/c$i/cgroup.procs"
				echo "$3" > "$1/d1/d2/d3/e$i/cgroup.procs"
				i=$((i % $2 + 1))
			done' sh "$R/batch" $((SUBS / 2)) "$hog" "$sleeper" 2>/dev/null
		mv=$!
		T_HELPERS="${T_HELPERS:-} $mv"
		moved() { ! grep -q "$CG_LINE/$M/$sub\$" "/proc/$hog/cgroup" 2>/dev/null; }
		wait_for 10 moved || fail "$name: the owner's mover did not move the hog"
	fi
	check "$name: the owner's hog is killed" wait_for 60 dead "$hog"
	[ -n "$mv" ] && kill "$mv" 2>/dev/null
	check "$name: root's process in web lives" alive "$web"
	check "$name: the kernel killed nothing" test "$(oom_kills)" = "$kills"
	check "$name: one report more" wait_for 10 has_reports $((reports + 1))
	check "$name: the report names the hog, in batch" wait_for 10 victim_is "$hog" batch
	check "$name: the daemon decided, not the kernel" test "$(grep -c 'the kernel decides' "$TMP/log")" = 0
	echo "# $name: $(json_get "$(latest_report)" "r['timings_ms']")"
	[ -n "$mover" ] && kill -9 "$sleeper" 2>/dev/null
	kill -9 "$web" 2>/dev/null
	wait_for 10 empty web || fail "$name: web did not empty"
	wait_for 20 cg_out_of_oom "$R" || fail "$name: the machine stayed under OOM"
}
phase "beside $SUBS empty cgroups" batch
phase "four levels deep among them" batch/d1/d2/d3/e7
phase "moved between them all the while" batch/c1 mover
finish
