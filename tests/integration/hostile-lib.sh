# SPDX-License-Identifier: LGPL-2.1-or-later
# hostile-lib.sh - sourced (after daemon-lib.sh) by the test-daemon-hostile-*.sh
# tests: a job's owner, a user with no privilege, tries to make another job
# pay for its memory.  The machine of the attack: 256M, chain
# "report, kill-lowest, kernel", delay 2 s; the low-priority job batch (100)
# delegated to the owner with owner =, and root's job web (900) holding a
# 100 MiB process.  Each attack must end with the owner's hog killed by
# oomkitd, root's process alive and the kernel's killer idle.
#
# Environment (set by meson): OOMKIT_HOSTILE (tests/helpers/hostile.c), and
# OOMKIT_PRELOAD_HOG (tests/helpers/preload-hog.c) for the LD_PRELOAD attack.

require_kernel
require_user_tools
[ -x "${OOMKIT_HOSTILE:-}" ] || { echo "FAIL: \$OOMKIT_HOSTILE is not an executable: '${OOMKIT_HOSTILE:-}'" >&2; exit 1; }

# hostile_setup NAME: sets OWNER and HOSTILE (the owner's copy of the hog).
hostile_setup() {
	setup "$1"
	OWNER=$USER_A
	HOSTILE=$(user_copy "$OOMKIT_HOSTILE" $OWNER) || exit
}

# hostile_start [MACHINE_SECTION_LINES] [BATCH_SECTION_LINES]: the machine
# above, oomkitd on it; sets WEB (root's 100 MiB process in web) and KILLS0
# (the kernel's kills so far).
hostile_start() {
	write_config 256M "report, kill-lowest, kernel" 2s <<EOF2
${1:-}

[job web]
priority = 900
limit = 200M

[job batch]
priority = 100
limit = 240M
owner = $OWNER
${2:-}
EOF2
	start_daemon
	WEB=$(spawn web 100)
	wait_for 20 usage_at_least web $((100 << 20)) || fail "root's web process did not reach 100M"
	KILLS0=$(kernel_kills)
}

# kernel_kills: the kernel OOM killer's kills in the machine and below.
kernel_kills() { cg_kills "$R"; }

# threads_alive PID: some thread of the process has not exited, whatever
# its leader is (alive() reads the leader only, a zombie after pthread_exit()).
threads_alive() {
	local t s
	for t in /proc/"$1"/task/*/stat; do
		{ read -r s < "$t"; } 2>/dev/null || continue
		s=${s##*) }
		s=${s%% *}
		[ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ] && return 0
	done
	return 1
}
gone() { ! threads_alive "$1"; }

# leader_exited PID: the leader is a zombie and a thread runs on.
leader_exited() { ! alive "$1" && threads_alive "$1"; }

# owner_run SUB CMD...: the owner moves itself into batch's SUB (a path
# under the machine) and execs CMD; prints the pid once it is there.
owner_run() {
	local sub=$1 pid
	shift
	as_user_bg $OWNER sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$R/$sub" "$@" \
		>/dev/null 2>&1
	pid=$!
	wait_for 10 joined "$pid" "$M/$sub"
	echo "$pid"
}

# report_says EXPR: the newest report's python expression on r.
report_says() { json_get "$(latest_report)" "$1" 2>/dev/null; }

# victim_is PID JOB: the newest report's decision killed PID of JOB.
victim_is() {
	[ "$(report_says "r['decision']['victim_pid'], r['decision']['victim_job']")" = "($1, '$2')" ]
}

# attacked NAME PID [REPORTS_BEFORE]: the outcome every attack must have:
# the owner's process gone, killed by oomkitd (the newest report's victim,
# in batch, listed as a candidate there with its memory), root's web
# process alive, the kernel's killer idle, and the machine out of OOM.
attacked() {
	local name=$1 pid=$2 before=${3:-0}
	check "$name: the owner's process is killed" wait_for 30 gone "$pid"
	check "$name: root's web process lives" alive "$WEB"
	check "$name: a report was written" wait_for 10 has_reports $((before + 1))
	check "$name: the report's victim is the owner's process, in batch" wait_for 10 victim_is "$pid" batch
	check "$name: the report lists it in batch with its memory" test "$(report_says \
		"[(c['job'], c['rss_bytes'] > 50 << 20) for c in r['candidates'] if c['pid'] == $pid]")" = "[('batch', True)]"
	check "$name: the kernel killed nothing" test "$(kernel_kills)" = "$KILLS0"
	check "$name: oomkitd decided, not the kernel" test "$(grep -c 'the kernel decides' "$TMP/log")" = 0
	wait_for 10 cg_out_of_oom "$R" || fail "$name: the machine stayed under OOM"
}
