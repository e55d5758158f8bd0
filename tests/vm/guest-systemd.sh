#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# guest-systemd.sh - the checks of the systemd guest tier, run by systemd in
# the guest as oomkit-checks.service once the system is up (tests/vm/systemd.sh
# builds and boots the guest).  oomkitd is the installed units/oomkitd.service,
# started, reloaded, restarted and stopped with systemctl; each check judges it
# by the kernel's own files (cgroup.procs, memory.events, /proc/vmstat) and by
# what systemd says, and asserts which process died and which survived.
#
# Adding a check is adding one function check_NAME below (see
# guest-systemd-lib.sh for expect, wait_for and the rest); they run in the order
# they appear, each after the previous one, sharing one daemon configuration
# (daemon_config) unless a check writes its own.

here=$(dirname "$(realpath "$0")")
. "$here/guest-systemd-lib.sh"

HOG=${SDG_HELPER_OOMKIT_HOG:?}
UNIT=oomkitd.service
SLICE=oomkit.slice # no dash: systemd nests a-b.slice in a.slice
MACHINE=$SLICE/machine # the daemon's machine, relative to the cgroup root
REPORTS=/var/lib/oomkit/reports
SOCK=/run/oomkit/oomkitd.sock

# ------------------------------------------------------------ helpers

# The configuration of the checks: a machine the daemon creates in a slice of
# its own (systemd creates the slice, with the memory controller, and leaves
# what is below it alone), two jobs with limits and one without.  The delay is
# long so that a prompt waits (half of it) longer than any check takes to look.
daemon_section() {
	cat <<-EOF
	[oomkitd]
	machine = $CG/$MACHINE
	machine_limit = 256M
	policy = report, kill-lowest, kernel
	delay = 30s
	report_dir = $REPORTS
	socket = $SOCK
	metrics = /var/lib/oomkit/oomkit.prom
	EOF
}

daemon_config() {
	{ daemon_section; cat; } >"$OOMKITD_CONF" <<-EOF

	[job web]
	priority = 900

	[job batch]
	priority = 100
	limit = 64M
	policy = report, kill-largest, kernel

	[job held]
	priority = 500
	limit = 48M
	policy = prompt, kill-largest, kernel
	EOF
}

main_pid() {
	prop $UNIT MainPID
}

guardian_pid() {
	pgrep -P "$(main_pid)" -x oomkit-guardian
}

active() {
	[[ $(prop $UNIT ActiveState) == active ]]
}

# Starts a process in a job the way its user would, with oomkit run, which
# keeps the pid: sets VAR to it.  The process is this shell's child, so
# `wait` gives its exit status.
start_in_job() { # var job command...
	local -n ret=$1
	local job=$2
	shift 2
	oomkit --socket $SOCK run --job "$job" -- "$@" </dev/null >/dev/null 2>>"$SDG_STDERR" &
	ret=$!
}

rss_mib() { # pid
	awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0
}

rss_at_least() { # pid mib
	(($(rss_mib "$1") >= $2))
}

kill_quietly() { # pid...
	local p
	for p in "$@"; do
		kill -9 "$p" 2>/dev/null
	done
	for p in "$@"; do
		wait "$p" 2>/dev/null
	done
	return 0
}

report_count() {
	find "$REPORTS" -maxdepth 1 -name '*.json' 2>/dev/null | wc -l
}

newest_report() {
	ls -t "$REPORTS"/*.json 2>/dev/null | head -n 1
}

# ------------------------------------------------------------ checks

# The seccomp audit records (type 1326: the guest boots with audit=1) of calls
# refused to the daemon, its guardian or --release: the daemon's own filter
# logs each one.  journald takes them from the audit socket ("SECCOMP ...").
refused_calls() {
	journalctl -b -o cat --no-pager | grep -E '^SECCOMP |type=1326' | grep 'comm="oomkit'
}

# The unit's SystemCallFilter= makes a call fail with EPERM without a record;
# the daemon logs what failed.
no_refused_calls() {
	[ -z "$(refused_calls)" ] && [ "$(journal_count $UNIT 'Operation not permitted')" = 0 ]
}

check_guest() {
	local state
	state=$(timeout 120 systemctl is-system-running --wait)
	note "system $state; $(systemd-analyze time | head -n 1)"
	systemctl --failed --no-legend --plain | sed 's/^/sdguest:   failed unit: /'
	note "$(systemctl --version | head -n 1); kernel $(uname -r)"
	note "root subtree_control [$(cat $CG/cgroup.subtree_control)]"
	expect "systemd is PID 1" [ "$(cat /proc/1/comm)" = systemd ]
	expect "the unified hierarchy is mounted" [ "$(stat -fc %T $CG)" = cgroup2fs ]
	expect "the memory controller is enabled below the root" grep -qw memory $CG/cgroup.subtree_control
	expect "PSI is on" test -r /proc/pressure/memory
	expect "the unit is installed" systemctl cat $UNIT >/dev/null
}

check_unit_starts() {
	mkdir -p /run/systemd/system
	printf '[Slice]\nMemoryAccounting=yes\n' >/run/systemd/system/$SLICE
	daemon_config
	# enable reloads systemd, which then knows the slice too (one reload less:
	# each takes seconds under emulation).  Type=notify: start returns when
	# the daemon has sent READY=1.
	expect "systemctl enable succeeds" timeout 120 systemctl enable $UNIT
	expect "the slice starts" timeout 60 systemctl start $SLICE
	expect "systemctl start returns once the daemon is ready" timeout 120 systemctl start $UNIT
	expect "the unit is active (running)" [ "$(prop $UNIT ActiveState)/$(prop $UNIT SubState)" = active/running ]
	expect "systemctl status succeeds" systemctl status $UNIT >/dev/null
	expect "the daemon said READY=1 once" [ "$(journal_count $UNIT 'oomkitd ready')" = 1 ]
	expect "systemd did not restart it" [ "$(prop $UNIT NRestarts)" = 0 ]
	expect "the main process is oomkitd" [ "$(cat /proc/"$(main_pid)"/comm)" = oomkitd ]
	expect "the daemon built its machine and jobs" test -d $CG/$MACHINE/web -a -d $CG/$MACHINE/batch
	# systemd manages the slice's own controllers; a daemon-reload must not
	# take the memory controller from the machine below it.
	systemctl daemon-reload
	expect "the machine keeps its memory controller across daemon-reload" \
		grep -qw memory $CG/$SLICE/cgroup.subtree_control
	expect "and its jobs their limits" [ "$(cat $CG/$MACHINE/batch/memory.max)" = $((64 << 20)) ]
	note "main pid $(main_pid), guardian $(guardian_pid); unit cgroup: $(tr '\n' ' ' <$CG/system.slice/$UNIT/cgroup.procs)"
}

check_reserve_is_unit() {
	local unit_cg=/system.slice/$UNIT pid gpid
	pid=$(main_pid) gpid=$(guardian_pid)
	expect "the daemon stayed in its unit's cgroup" [ "$(cgroup_of "$pid")" = "$unit_cg" ]
	expect "its guardian is there too" eval '[ -n "$gpid" ] && [ "$(cgroup_of "$gpid")" = "$unit_cg" ]'
	expect "no reserve memcg of its own beside the machine" [ ! -e "$CG/$MACHINE-daemon" ]
	expect "the unit's MemoryMin= protects it" [ "$(cat "$CG$unit_cg/memory.min")" = "$(prop $UNIT MemoryMin)" ]
	expect "the unit's MemoryMax= bounds it" [ "$(cat "$CG$unit_cg/memory.max")" = "$(prop $UNIT MemoryMax)" ]
	expect "MemoryMin= is set" [ "$(prop $UNIT MemoryMin)" -gt 0 ]
	expect "the daemon uses less than half its MemoryMax=" \
		[ $(($(cat "$CG$unit_cg/memory.current") * 2)) -lt "$(cat "$CG$unit_cg/memory.max")" ]
	expect "the daemon's memory is locked" [ "$(kv /proc/"$pid"/status VmLck:)" -gt 0 ]
	expect "systemd gave it oom_score_adj -1000" [ "$(cat /proc/"$pid"/oom_score_adj)" = -1000 ]
	expect "and its guardian too" [ "$(cat /proc/"$gpid"/oom_score_adj 2>/dev/null)" = -1000 ]
	data "reserve current_bytes=$(cat "$CG$unit_cg/memory.current") peak_bytes=$(cat "$CG$unit_cg/memory.peak")" \
		"min_bytes=$(cat "$CG$unit_cg/memory.min") max_bytes=$(cat "$CG$unit_cg/memory.max")" \
		"daemon_locked_kib=$(kv /proc/"$pid"/status VmLck:) guardian_locked_kib=$(kv /proc/"$gpid"/status VmLck:)"
}

# A job reaches its own limit: the job's chain (report, kill-largest) kills
# the largest process of that job and nothing else, before the kernel could.
check_job_oom() {
	local k0 r0 keeper web hog st report
	k0=$(vmstat_oom_kill) r0=$(report_count)
	start_in_job keeper batch "$HOG" 8
	start_in_job web web "$HOG" 16
	expect "a small process runs in batch" wait_for 30 rss_at_least "$keeper" 8
	expect "a process runs in web" wait_for 30 rss_at_least "$web" 16
	start_in_job hog batch "$HOG" 128
	expect "the hog in batch (limit 64M) dies" wait_for 60 dead "$hog"
	wait "$hog" 2>/dev/null
	st=$?
	expect "killed by SIGKILL (status $st)" [ "$st" = 137 ]
	expect "the other process of batch lives" alive "$keeper"
	expect "web's process lives" alive "$web"
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 10 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the hog as the victim" grep -q "\"victim_pid\":$hog," "$report"
	expect "and kill-largest in job batch" grep -q '"policy":"kill-largest"' "$report"
	expect "batch is held again" held "$MACHINE/batch"
	kill_quietly "$keeper" "$web"
}

# The unit's hardening leaves every system call the daemon makes allowed: by
# now it has started, killed and written a report (no_refused_calls looks
# again at the end, after reloads, restarts and --release).
check_hardening() {
	local pid status
	pid=$(main_pid)
	status=/proc/$pid/status
	expect "no_new_privs is set" [ "$(kv "$status" NoNewPrivs:)" = 1 ]
	expect "a seccomp filter is on" [ "$(kv "$status" Seccomp:)" = 2 ]
	# chown 0, dac_override 1, kill 5, ipc_lock 14, sys_nice 23, as oomkitd(8) says.
	expect "it keeps exactly its five capabilities ($(kv "$status" CapEff:))" \
		[ "$(kv "$status" CapEff:)" = 0000000000804023 ]
	expect "no system call was refused" no_refused_calls
	expect "no warning or error from the daemon" \
		eval '[ -z "$(journalctl -b -u $UNIT -p warning -o cat --no-pager _PID="$pid")" ]'
	journalctl -b -u $UNIT -p warning -o cat --no-pager | sed 's/^/sdguest:   warning: /'
	note "$(systemd-analyze security $UNIT --no-pager 2>/dev/null | tail -n 1)"
}

# systemctl reload sends SIGHUP (ExecReload=): the daemon reads the file again;
# a bad file keeps the configuration it has.
check_reload() {
	local pid n0
	pid=$(main_pid) n0=$(journal_count $UNIT 'reloaded ')
	daemon_config
	printf '\n[job extra]\npriority = 300\nlimit = 32M\n' >>"$OOMKITD_CONF"
	expect "systemctl reload succeeds" timeout 60 systemctl reload $UNIT
	expect "the daemon reloaded" wait_journal 30 $UNIT 'reloaded .*: 4 jobs' "$n0"
	expect "the new job exists and is held" held "$MACHINE/extra"
	echo 'this is not a configuration' >>"$OOMKITD_CONF"
	n0=$(journal_count $UNIT 'running configuration stays')
	expect "systemctl reload of a bad file succeeds" timeout 60 systemctl reload $UNIT
	expect "the daemon says it keeps its configuration" wait_journal 30 $UNIT 'running configuration stays' "$n0"
	expect "and still holds the new job" held "$MACHINE/extra"
	daemon_config
	expect "systemctl reload back to the first file" timeout 60 systemctl reload $UNIT
	expect "the daemon reloaded again" wait_journal 30 $UNIT 'reloaded .*: 3 jobs' 0
	expect "the same process all along" [ "$(main_pid)" = "$pid" ]
	expect "the unit is still active" active
}

# WatchdogSec= in the unit: the daemon pings (WATCHDOG=1) and is never killed
# for silence.  systemd stamps each ping it receives.
# The desktop agent as a user's systemd manager runs it: its user
# unit, with its hardening, in a real user@.service with the session bus
# dbus-user-session gives it, and oomkitd's socket.  No notification server
# runs here, so when a job the user owns runs out the agent is asked, says
# it cannot show anything, and lets the system decide at once: the chain's
# kill-largest acts long before the prompt's 15 s are up.
agent_journal() { # uid
	journalctl -b "_SYSTEMD_USER_UNIT=oomkit-agent.service" "_UID=$1" -o cat --no-pager 2>/dev/null
}

agent_said() { # uid pattern
	agent_journal "$1" | grep -q -- "$2"
}

check_agent_unit() {
	local user=oomdesk uid n0 small hog report as
	expect "the agent is installed with its user unit" command -v oomkit-agent
	id -u $user >/dev/null 2>&1 || useradd --create-home --shell /bin/bash $user
	uid=$(id -u $user)
	as=(systemctl --user -M "$user@")
	n0=$(journal_count $UNIT 'reloaded .*: 4 jobs')
	daemon_config
	printf '\n[job desk]\npriority = 500\nlimit = 48M\nowner = %s\npolicy = report, prompt, kill-largest, kernel\n' \
		"$uid" >>"$OOMKITD_CONF"
	expect "a job the user owns" timeout 60 systemctl reload $UNIT
	expect "the daemon reloaded" wait_journal 30 $UNIT 'reloaded .*: 4 jobs' "$n0"
	expect "the user's manager starts (linger)" loginctl enable-linger $user
	expect "and runs" wait_for 60 systemctl is-active --quiet "user@$uid.service"
	# Its condition wants a display (it belongs to a graphical session); none
	# is needed for the socket and the bus.
	expect "the user's manager is told of a display" timeout 60 "${as[@]}" set-environment DISPLAY=:0
	expect "systemctl --user start oomkit-agent succeeds" timeout 60 "${as[@]}" start oomkit-agent.service
	expect "the agent's unit is active" [ "$(timeout 30 "${as[@]}" show -P ActiveState oomkit-agent.service)" = active ]
	expect "the agent listens on oomkitd's socket" wait_for 30 agent_said "$uid" "listening for OOMs at $SOCK"
	expect "and says no notification server answers" agent_said "$uid" "no notification server"
	start_in_job small desk "$HOG" 8
	expect "a small process runs in desk" wait_for 30 rss_at_least "$small" 8
	start_in_job hog desk "$HOG" 96
	# A job with an owner waits the delay (30 s) for the owner's own handler first.
	expect "the agent is asked about desk" wait_for 90 agent_said "$uid" "question [0-9]* (desk)"
	expect "the hog dies" wait_for 60 dead "$hog"
	wait "$hog" 2>/dev/null
	expect "the small process lives" alive "$small"
	# The question's report, then the chain's own (its kill) in a second one.
	report=$(grep -l '"prompt_answer":"declined"' "$REPORTS"/oom-*-desk.json 2>/dev/null | head -n 1)
	expect "the question's report: everyone asked declined" test -n "$report"
	expect "at once, not at the prompt's deadline" grep -q '"outcome":"everyone asked let the system decide' "$report"
	expect "the chain's report: kill-largest killed the hog" grep -q "\"victim_pid\":$hog," "$(newest_report)"
	expect "the agent is still active" [ "$(timeout 30 "${as[@]}" show -P ActiveState oomkit-agent.service)" = active ]
	note "agent: $(agent_journal "$uid" | tr '\n' '|' | cut -c1-1200)"
	note "daemon: $(journal $UNIT | grep -a -e desk -e control -e prompt | tail -n 12 | tr '\n' '|' | cut -c1-1500)"
	kill_quietly "$small"
	timeout 60 "${as[@]}" stop oomkit-agent.service
	loginctl disable-linger $user
	n0=$(journal_count $UNIT 'reloaded .*: 3 jobs')
	daemon_config
	expect "back to the shared configuration" timeout 60 systemctl reload $UNIT
	expect "the daemon reloaded" wait_journal 30 $UNIT 'reloaded .*: 3 jobs' "$n0" ||
		note "daemon: $(journal $UNIT | tail -n 6 | tr '\n' '|' | cut -c1-800)"
	# The reload leaves the job's memcg as it is; the later checks want none of it.
	expect "the job's memcg is removed" wait_for 30 rmdir "$CG/$MACHINE/desk"
}

check_watchdog() {
	local ts0
	ts0=$(prop $UNIT WatchdogTimestampMonotonic)
	note "WatchdogUSec=$(prop $UNIT WatchdogUSec), last ping at ${ts0} us"
	expect "the unit sets WatchdogSec=" eval '[ "$(prop $UNIT WatchdogUSec)" != 0 ] && [ "$(prop $UNIT WatchdogUSec)" != infinity ]'
	# The daemon pings every WatchdogSec/2; two periods is a bound.
	expect "a new ping arrives" wait_for 60 eval '[ "$(prop $UNIT WatchdogTimestampMonotonic)" != "$ts0" ]'
	expect "systemd never restarted the daemon" [ "$(prop $UNIT NRestarts)" = 0 ]
	expect "no watchdog timeout was logged" [ "$(journal_count $UNIT 'Watchdog timeout')" = 0 ]
}

# An OOM is held (the job's chain asks a prompt client, which never answers)
# when systemctl restart stops the daemon: the OOM is resolved (by the kernel,
# once the stopping daemon gives it back, or by the new daemon), the other
# process lives, and the new daemon holds the job again with nothing pending.
check_restart_during_oom() {
	local fifo=/run/sdg-prompt out=/run/sdg-prompt.out prompt fd keeper hog pid0 k0
	rm -f $fifo && mkfifo $fifo
	oomkit --socket $SOCK prompt --once <$fifo >$out 2>&1 &
	prompt=$!
	exec {fd}>$fifo
	expect "a prompt client connects" wait_for 30 grep -q 'waiting for OOMs' $out
	start_in_job keeper held "$HOG" 4
	expect "a small process runs in held" wait_for 30 rss_at_least "$keeper" 4
	start_in_job hog held "$HOG" 64 512 1000
	expect "the daemon asks about the hog" wait_for 60 grep -q "kill $hog " $out
	expect "the OOM is held" held "$MACHINE/held"
	expect "the hog is alive while the daemon asks" alive "$hog"
	pid0=$(main_pid) k0=$(vmstat_oom_kill)
	expect "systemctl restart succeeds" timeout 120 systemctl restart $UNIT
	expect "the hog dies" wait_for 60 dead "$hog"
	expect "the small process lives" alive "$keeper"
	note "resolved by $( (($(vmstat_oom_kill) > k0)) && echo "the kernel (oom_kill +$(($(vmstat_oom_kill) - k0)))" || echo "the new daemon")"
	expect "a new daemon runs" eval '[ "$(main_pid)" != "$pid0" ] && active'
	expect "the new daemon holds the job again" held "$MACHINE/held"
	expect "with nothing pending (usage below the hold)" \
		[ "$(cat $CG/$MACHINE/held/memory.current)" -lt "$(cat $CG/$MACHINE/held/memory.high)" ]
	exec {fd}>&-
	kill_quietly "$keeper" "$prompt"
	wait "$hog" 2>/dev/null
}

# systemctl kill --signal=SIGKILL kills the daemon and its guardian at once,
# so nobody gives the held jobs back: ExecStopPost=oomkitd --release does,
# and Restart= brings the daemon back.
check_unit_killed() {
	local n0 r0 pid0
	n0=$(journal_count $UNIT 'released: the kernel OOM killer is back') r0=$(prop $UNIT NRestarts) pid0=$(main_pid)
	expect "jobs are held before" [ -n "$(held_below $MACHINE)" ]
	expect "systemctl kill succeeds" systemctl kill --signal=SIGKILL $UNIT
	expect "ExecStopPost gives the held jobs back" wait_journal 60 $UNIT 'released: the kernel OOM killer is back in [1-9]' "$n0"
	expect "systemd restarts the daemon" wait_for 60 eval '[ "$(prop $UNIT NRestarts)" -gt "$r0" ] && active'
	expect "a new daemon" [ "$(main_pid)" != "$pid0" ]
	expect "that holds the jobs again" wait_for 30 held "$MACHINE/batch"
}

# systemctl stop: the daemon gives every hold back, ExecStopPost=oomkitd
# --release runs and succeeds, and nothing of the daemon stays behind.
check_stop_releases() {
	local n0
	n0=$(journal_count $UNIT 'released: the kernel OOM killer is back')
	expect "jobs are held before" [ -n "$(held_below $MACHINE)" ]
	expect "systemctl stop succeeds" timeout 120 systemctl stop $UNIT
	expect "the unit is inactive" [ "$(prop $UNIT ActiveState)" = inactive ]
	expect "ExecStopPost ran" wait_journal 30 $UNIT 'released: the kernel OOM killer is back' "$n0"
	expect "and exited 0" grep -q 'code=exited ; status=0 ' <<<"$(prop $UNIT ExecStopPost)"
	expect "nothing is held: $(held_below $MACHINE | tr '\n' ' ')" [ -z "$(held_below $MACHINE)" ]
	expect "no daemon or guardian is left" wait_for 30 eval '! pgrep -x "oomkitd|oomkit-guardian" >/dev/null'
}

# ------------------------------------------------------------ with systemd

# Hooks under the unit (oomkitd.conf(5), HOOKS): run by the daemon's hook
# runner, in a memcg of their own below the machine's -hooks, inside the
# unit's sandbox: /run/oomkit is writable to them, /var is not.
check_hooks() {
	local hog
	{ daemon_section; cat; } >"$OOMKITD_CONF" <<-EOF

	[job hooked]
	priority = 500
	limit = 48M
	policy = kill-largest, kernel
	before_kill = /bin/sh -c "cat /proc/self/cgroup >/run/oomkit/hook-cgroup; touch /var/hook || echo ro >/run/oomkit/hook-ro"
	after_kill = /bin/sh -c "test -e /proc/\$OOMKIT_PID/status || echo gone >/run/oomkit/hook-after"
	EOF
	rm -f /run/oomkit/hook-*
	expect "the daemon restarts with a job that has hooks" timeout 120 systemctl restart $UNIT
	expect "its hook runner runs" wait_for 30 pgrep -x oomkit-hook-run
	start_in_job hog hooked "$HOG" 128
	expect "the hog in hooked (limit 48M) dies" wait_for 60 dead "$hog"
	wait "$hog" 2>/dev/null
	expect "before_kill ran below $MACHINE-hooks ($(cat /run/oomkit/hook-cgroup 2>/dev/null))" \
		wait_for 10 grep -q "^0::/.*$MACHINE-hooks/[0-9]\$" /run/oomkit/hook-cgroup
	expect "inside the unit's sandbox: /var is read-only to it" [ -s /run/oomkit/hook-ro ]
	expect "after_kill saw the victim gone" wait_for 10 grep -q gone /run/oomkit/hook-after
	expect "the report records both hooks" wait_for 10 eval "grep -q '\"hook\":\"after_kill\"' \"\$(newest_report)\""
	daemon_log_if_failed 30
	daemon_config
	expect "the daemon restarts with the checks' configuration" timeout 120 systemctl restart $UNIT
}

# The jobs of the systemd checks adopt units by pattern: sdbatch's and
# sdheld's are services the checks start with their own MemoryMax=, sdrun's
# the scopes `oomkit run` asks systemd for.  The daemon runs as its unit with
# this configuration; each check restarts it, so that it runs alone (--only).
SD_STATE=/run/oomkit/systemd-units

sd_config() {
	# A prompt waits half the delay: longer than a daemon-reload takes under
	# emulation on a loaded machine.
	{ daemon_section | sed 's/^delay = .*/delay = 120s/'; cat; } >"$OOMKITD_CONF" <<-EOF

	[job sdbatch]
	priority = 100
	cgroup = system.slice/sdbatch-*.service
	policy = report, kill-newest, kernel

	[job sdheld]
	priority = 500
	cgroup = system.slice/sdheld-*.service
	policy = prompt, kill-largest, kernel

	[job sdrun]
	priority = 300
	cgroup = sdrun.slice/sdrun-*.scope
	limit = 64M
	policy = report, kill-largest, kernel
	EOF
}

sd_daemon() {
	mkdir -p /run/systemd/system
	printf '[Slice]\nMemoryAccounting=yes\n' >/run/systemd/system/$SLICE
	sd_config
	systemctl daemon-reload
	systemctl start $SLICE
	expect "the daemon (re)starts with the systemd jobs" timeout 120 systemctl restart $UNIT
	expect "its systemd helper runs" wait_for 30 eval "pgrep -x oomkitd-systemd >/dev/null"
}

# The end of a systemd check: its unit and the daemon stopped, as the checks
# after it expect (check_oomd_baseline and check_oomkitd_anchor start from a
# stopped daemon).
sd_done() { # unit...
	(($#)) && systemctl stop "$@" 2>/dev/null
	timeout 120 systemctl stop $UNIT
	return 0
}

# A service of a pattern's: a small keeper at once, and a hog of HOG_MIB
# once /run/sdd/NAME.go is written to (a fifo); pids in /run/sdd/NAME.*.
# OOMPolicy=continue: a kernel OOM kill (when oomkitd gives an OOM back)
# kills the hog, not the whole unit, as oomkitd's own kills do.
sd_unit() { # name memory_max hog_mib
	mkdir -p /run/sdd
	rm -f /run/sdd/"$1".* && mkfifo /run/sdd/"$1".go
	systemd-run --quiet --unit="$1" -p MemoryMax="$2" -p MemoryAccounting=yes -p OOMPolicy=continue /bin/sh -c \
		"$HOG 4 & echo \$! >/run/sdd/$1.keeper; read x </run/sdd/$1.go; $HOG $3 1024 2000 & echo \$! >/run/sdd/$1.hog; wait"
}

# After a failed check: the daemon's last N lines of journal (default 20).
daemon_log_if_failed() { # [n]
	((check_failed)) || return 0
	journal $UNIT | tail -n "${1:-20}" | sed 's/^/sdguest:   oomkitd: /'
}

# After a failed check: what the daemon and its helper said, and what the
# unit's cgroup and systemd hold.
sd_diag() { # unit
	((check_failed)) || return 0
	daemon_log_if_failed 40
	sd_limits "$1"
}

# What a unit's cgroup files and systemd say of its limits.
sd_limits() { # unit
	note "$1: memory.high $(cat $CG/system.slice/"$1"/memory.high 2>&1) memory.max" \
		"$(cat $CG/system.slice/"$1"/memory.max 2>&1); MemoryHigh=$(prop "$1" MemoryHigh)" \
		"MemoryMax=$(prop "$1" MemoryMax) ActiveState=$(prop "$1" ActiveState)"
	return 0
}

# What systemd says of a unit's MemoryHigh=, as the kernel file spells it.
sd_high() { # unit
	local v
	v=$(prop "$1" MemoryHigh)
	[[ $v == infinity ]] && echo max || echo "$v"
}

# systemd says what the kernel has: MemoryHigh= is the cgroup's memory.high.
sd_truthful() { # unit
	[ "$(sd_high "$1")" = "$(cat "$CG/system.slice/$1/memory.high")" ]
}

# An adopted unit with its own MemoryMax= reaches it: the
# job's chain (kill-newest) runs inside the unit, the keeper lives, systemd
# says the unit is active, and what it says of MemoryHigh= is the hold.
check_sd_unit_limit() {
	local u=sdbatch-1.service k0 r0 keeper hog report helper
	sd_daemon
	k0=$(vmstat_oom_kill) r0=$(report_count)
	sd_unit ${u%.service} 64M 128
	expect "the unit's keeper runs" wait_for 30 eval "[ -s /run/sdd/sdbatch-1.keeper ]"
	keeper=$(cat /run/sdd/sdbatch-1.keeper)
	expect "the unit is adopted and held" wait_for 30 held system.slice/$u
	expect "systemctl show tells the hold (MemoryHigh=$(prop $u MemoryHigh))" sd_truthful $u
	expect "and MemoryMax= is the unit's own" [ "$(prop $u MemoryMax)" = $((64 << 20)) ]
	expect "oomkit status shows the instance under its job" eval \
		"oomkit --socket $SOCK status | grep -q 'sdbatch \[$u\]'"
	helper=$(pgrep -x oomkitd-systemd)
	expect "D-Bus is not in the daemon: no libsystemd in its memory" eval "! grep -q libsystemd /proc/$(main_pid)/maps"
	expect "the systemd helper holds it, unlocked" eval \
		"grep -q libsystemd /proc/$helper/maps && [ \"\$(kv /proc/$helper/status VmLck:)\" = 0 ]"
	data "sdbus helper_rss_kib=$(kv /proc/"$helper"/status VmRSS:) helper_locked_kib=$(kv /proc/"$helper"/status VmLck:)" \
		"daemon_rss_kib=$(kv /proc/"$(main_pid)"/status VmRSS:) daemon_locked_kib=$(kv /proc/"$(main_pid)"/status VmLck:)"
	echo go >/run/sdd/sdbatch-1.go
	expect "the hog starts" wait_for 30 eval "[ -s /run/sdd/sdbatch-1.hog ]"
	hog=$(cat /run/sdd/sdbatch-1.hog)
	expect "the hog (the newest) dies" wait_for 60 dead "$hog"
	expect "the keeper lives" alive "$keeper"
	expect "systemd says the unit is still active" [ "$(prop $u ActiveState)" = active ]
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 10 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "it names the hog, kill-newest" grep -q "\"victim_pid\":$hog,.*kill-newest\|kill-newest.*\"victim_pid\":$hog," "$report"
	expect "oomkit reports lists it with the unit under its job" eval \
		"oomkit --socket $SOCK reports | grep -A1 ' sdbatch ' | grep -qxF '                      [$u]'"
	expect "the unit is held again, and systemd says so" eval "held system.slice/$u && sd_truthful $u"
	sd_diag $u
	sd_done $u
}

# An OOM is held (the chain asks a prompt that never
# answers) through a systemctl daemon-reload - systemd writes the unit's
# limits again, and the hold is among them - and then a systemctl restart of
# oomkitd: resolved, nothing left held, systemctl show consistent.
check_sd_hold_reload() {
	local u=sdheld-1.service fifo=/run/sdd-prompt out=/run/sdd-prompt.out prompt fd keeper hog high0 k0
	sd_daemon
	sd_unit ${u%.service} 48M 96
	expect "the unit is adopted and held" wait_for 30 held system.slice/$u
	high0=$(cat $CG/system.slice/$u/memory.high)
	expect "systemd says MemoryHigh=$high0" sd_truthful $u
	rm -f $fifo && mkfifo $fifo
	oomkit --socket $SOCK prompt --once <$fifo >$out 2>&1 &
	prompt=$!
	exec {fd}>$fifo
	expect "a prompt client connects" wait_for 30 grep -q 'waiting for OOMs' $out
	keeper=$(cat /run/sdd/sdheld-1.keeper)
	echo go >/run/sdd/sdheld-1.go
	expect "the hog starts" wait_for 30 eval "[ -s /run/sdd/sdheld-1.hog ]"
	hog=$(cat /run/sdd/sdheld-1.hog)
	expect "the daemon asks about the hog" wait_for 60 grep -q "kill $hog " $out
	expect "systemctl daemon-reload succeeds" timeout 120 systemctl daemon-reload
	expect "the OOM is still held after it" held system.slice/$u
	expect "memory.high is the hold still ($(cat $CG/system.slice/$u/memory.high))" \
		[ "$(cat $CG/system.slice/$u/memory.high)" = "$high0" ]
	expect "the hog is alive: the kernel did not step in" alive "$hog"
	k0=$(vmstat_oom_kill)
	expect "systemctl restart oomkitd succeeds" timeout 120 systemctl restart $UNIT
	expect "the hog dies" wait_for 60 dead "$hog"
	note "resolved by $( (($(vmstat_oom_kill) > k0)) && echo "the kernel, given the OOM back" || echo "the new daemon")"
	expect "the keeper lives" alive "$keeper"
	expect "the unit is active" [ "$(prop $u ActiveState)" = active ]
	expect "the new daemon holds the unit again" wait_for 30 held system.slice/$u
	expect "with nothing pending (usage below the hold)" \
		[ "$(cat $CG/system.slice/$u/memory.current)" -lt "$(cat $CG/system.slice/$u/memory.high)" ]
	expect "and systemd says so" sd_truthful $u
	exec {fd}>&-
	kill_quietly "$prompt"
	sd_diag $u
	sd_done $u
}

# A restart of an adopted unit (a new cgroup at the same path): systemd
# makes the new cgroup with the hold already in it (the runtime MemoryHigh=
# it was told), the daemon adopts it again and its chain runs in it.
check_sd_unit_restart() {
	local u=sdbatch-3.service pid0 keeper hog k0
	sd_daemon
	mkdir -p /run/sdd
	rm -f /run/sdd/sdbatch-3.* && mkfifo /run/sdd/sdbatch-3.go
	# systemd reads "$$" as a "$".
	cat >/run/systemd/system/$u <<-EOF
	[Service]
	MemoryMax=64M
	OOMPolicy=continue
	ExecStartPre=/bin/rm -f /run/sdd/sdbatch-3.keeper /run/sdd/sdbatch-3.hog
	ExecStart=/bin/sh -c '$HOG 4 & echo \$\$! >/run/sdd/sdbatch-3.keeper; read x </run/sdd/sdbatch-3.go; $HOG 128 1024 2000 & echo \$\$! >/run/sdd/sdbatch-3.hog; wait'
	EOF
	systemctl daemon-reload
	expect "the unit starts" timeout 60 systemctl start $u
	expect "it is adopted and held" wait_for 30 eval "held system.slice/$u && sd_truthful $u"
	pid0=$(prop $u MainPID)
	expect "systemctl restart of the unit succeeds" timeout 60 systemctl restart $u
	expect "a new main process" [ "$(prop $u MainPID)" != "$pid0" ]
	expect "the new cgroup is held: systemd kept the hold ($(prop $u MemoryHigh))" \
		wait_for 30 eval "held system.slice/$u && sd_truthful $u"
	expect "the daemon adopted it again" wait_journal 30 $UNIT "sdbatch \[$u\]: adopted" 1
	expect "the new keeper runs" wait_for 30 eval "[ -s /run/sdd/sdbatch-3.keeper ]"
	keeper=$(cat /run/sdd/sdbatch-3.keeper) k0=$(vmstat_oom_kill)
	echo go >/run/sdd/sdbatch-3.go
	expect "the hog starts" wait_for 30 eval "[ -s /run/sdd/sdbatch-3.hog ]"
	hog=$(cat /run/sdd/sdbatch-3.hog)
	expect "the job's chain kills the hog in the restarted unit" wait_for 60 dead "$hog"
	expect "the keeper lives" alive "$keeper"
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	sd_diag $u
	sd_done $u
	rm -f /run/systemd/system/$u
}

# What the daemon changed in systemd is put back however it ends: stopped
# (the daemon itself), its main process killed (its helper, which outlives
# it), the whole unit killed (ExecStopPost=oomkitd --release, from the
# helper's state file).  Each time MemoryHigh= is what it was.
check_sd_release() {
	local u=sdbatch-2.service r0
	sd_daemon
	sd_unit ${u%.service} 64M 8
	expect "the unit is adopted and held" wait_for 30 held system.slice/$u
	expect "MemoryHigh= is the hold" [ "$(sd_high $u)" != max ]
	expect "the helper's state file names the unit" grep -q "^$u " $SD_STATE
	expect "systemctl stop oomkitd succeeds" timeout 120 systemctl stop $UNIT
	expect "MemoryHigh= is infinity again" [ "$(prop $u MemoryHigh)" = infinity ]
	expect "and memory.high max" [ "$(cat $CG/system.slice/$u/memory.high)" = max ]
	expect "no state file is left" [ ! -e $SD_STATE ]
	expect "the daemon starts" timeout 120 systemctl start $UNIT
	expect "and holds the unit" wait_for 30 eval "held system.slice/$u && [ \"\$(sd_high $u)\" != max ]"
	r0=$(prop $UNIT NRestarts)
	expect "the daemon's main process is SIGKILLed" systemctl kill --kill-whom=main --signal=SIGKILL $UNIT
	expect "its helper puts MemoryHigh= back" wait_for 60 eval "[ \"\$(prop $u MemoryHigh)\" = infinity ]"
	expect "systemd restarts the daemon" wait_for 60 eval '[ "$(prop $UNIT NRestarts)" -gt "$r0" ] && active'
	expect "which holds the unit again" wait_for 30 eval "held system.slice/$u && [ \"\$(sd_high $u)\" != max ]"
	r0=$(prop $UNIT NRestarts)
	expect "the whole unit is SIGKILLed" systemctl kill --signal=SIGKILL $UNIT
	expect "ExecStopPost puts MemoryHigh= back" wait_for 60 eval "[ \"\$(prop $u MemoryHigh)\" = infinity ]"
	expect "systemd restarts the daemon" wait_for 60 eval '[ "$(prop $UNIT NRestarts)" -gt "$r0" ] && active'
	expect "which holds the unit again" wait_for 30 eval "held system.slice/$u && sd_truthful $u"
	sd_diag $u
	sd_done $u
}

# A burst of changes while the systemd helper cannot keep up (stopped here):
# its queue takes 93, the rest wait in the daemon, the latest of each unit,
# and go once it has room.  Ten units adopted, then twelve reloads that raise
# their job's limit: a change of each unit's memory.max and one of its hold
# per reload, 240 changes.  At the end systemd has been told the
# last of each unit: systemctl show tells the truth, nothing was dropped.
sd_many_limit() { # MiB
	sed -i "/^\[job sdmany\]/,/^\$/s/^limit = .*/limit = $1M/" "$OOMKITD_CONF"
}

all_held() { # unit...
	local u
	for u in "$@"; do
		held system.slice/"$u" || return 1
	done
}

sd_reload() {
	local n0
	n0=$(journal_count $UNIT 'reloaded ')
	timeout 60 systemctl reload $UNIT && wait_journal 30 $UNIT 'reloaded ' "$n0"
}

check_sd_behind() {
	local i u helper behind0 caught0 mib=40 units=()
	sd_daemon
	cat >>"$OOMKITD_CONF" <<-EOF

	[job sdmany]
	priority = 200
	cgroup = system.slice/sdmany-*.service
	limit = ${mib}M
	policy = report, kill-largest, kernel
	EOF
	expect "the daemon takes the new job" sd_reload
	for i in $(seq 1 10); do
		units+=(sdmany-$i.service)
		systemd-run --quiet --unit=sdmany-$i -p MemoryMax=32M -p MemoryAccounting=yes sleep infinity
	done
	if ! expect "the ten units are adopted and held" wait_for 60 all_held "${units[@]}"; then
		# Seen twice (2026-12-05): which unit, and what each side says.  The
		# second time: memory.high 35M (the 40M job's hold), memory.max and
		# MemoryMax= 32M (the unit's own), so the helper's lines too.
		for u in "${units[@]}"; do
			held system.slice/"$u" && continue
			sd_limits "$u"
			journal $UNIT | grep -F "$u" | tail -n 10 | sed 's/^/sdguest:   oomkitd: /'
		done
	fi
	# An admin's MemoryMax= over the job's limit (systemd writes it into the
	# cgroup, as it writes a unit's own value after the daemon may have
	# adopted it): the job's limit again, in the kernel and in what systemd
	# says.  (The log line is test-daemon-adopt's: lines are rate-limited.)
	u=${units[0]}
	expect "set-property MemoryMax=32M on $u" systemctl set-property --runtime "$u" MemoryMax=32M
	expect "$u: memory.max and MemoryMax= are the job's ${mib}M again" wait_for 30 eval \
		"[ \"\$(cat $CG/system.slice/$u/memory.max)\" = $((mib << 20)) ] && [ \"\$(prop $u MemoryMax)\" = $((mib << 20)) ]" ||
		sd_limits "$u"
	expect "$u is still held" held system.slice/"$u"
	# Stopped only now: a unit started in the slice makes systemd write its
	# siblings' cgroup attributes again, and what it has not heard of yet is
	# undone (the helper is there to tell it).
	helper=$(pgrep -x oomkitd-systemd)
	behind0=$(journal_count $UNIT 'is behind: changes wait') caught0=$(journal_count $UNIT 'caught up')
	expect "the helper is stopped" kill -STOP "$helper"
	for i in $(seq 1 12); do
		mib=$((40 + i))
		sd_many_limit $mib
		expect "reload $i: the job's limit is ${mib}M" sd_reload
	done
	expect "the helper's queue filled: changes wait" wait_journal 10 $UNIT 'is behind: changes wait' "$behind0"
	expect "the helper goes on" kill -CONT "$helper"
	expect "and the daemon's waiting changes go" wait_journal 120 $UNIT 'caught up' "$caught0"
	# The helper has the changes now; systemd hears of them one call each.
	wait_for 60 eval "[ \"\$(prop ${units[-1]} MemoryMax)\" = $((mib << 20)) ]"
	for u in "${units[@]}"; do
		expect "$u: systemd tells its MemoryMax=, ${mib}M" [ "$(prop $u MemoryMax)" = $((mib << 20)) ]
		expect "$u: and its MemoryHigh=, the hold" sd_truthful $u
	done
	expect "no change was dropped" eval "! journal $UNIT | grep -q 'systemd not told'"
	sd_diag "${units[0]}"
	((check_failed)) && journalctl -b -o cat --no-pager -u dbus.service | tail -n 8 | sed 's/^/sdguest:   dbus: /'
	((check_failed)) && journal $UNIT | grep -E 'sdmany|helper|system bus' | head -n 30 | sed 's/^/sdguest:   oomkitd: /'
	kill -CONT "$helper" 2>/dev/null # whatever failed: the daemon's stop waits for it
	sd_done "${units[@]}"
}

# A job held at memory.high on a machine with swap (the swap rule of
# oomkitd.conf(5), JOBS AND SWAP): held there, its cgroup swaps rather than
# runs out.  It is out of memory only once it cannot swap (its
# memory.swap.max reached, or the machine's swap full) or its own
# memory.pressure says it is stuck.  Each check turns a swap file on and off.
JOB_SWAPFILE=/var/tmp/sdg-job-swap

job_swap_on() {
	swapoff -a 2>/dev/null
	rm -f $JOB_SWAPFILE
	expect "a 256 MiB swap file is made" eval \
		'fallocate -l 256M $JOB_SWAPFILE && chmod 600 $JOB_SWAPFILE && mkswap -q $JOB_SWAPFILE >/dev/null'
	expect "and turned on" swapon $JOB_SWAPFILE
}

job_swap_off() {
	swapoff $JOB_SWAPFILE 2>/dev/null
	rm -f $JOB_SWAPFILE
}

# A unit of job sdbatch (pattern system.slice/sdbatch-*.service): a keeper of
# 4 MiB at once; once /run/sdd/NAME.go is written to, a hog of HOG_MIB whose
# pid goes to /run/sdd/NAME.hog and, when it ends, its wait status to
# /run/sdd/NAME.status (143: the check's SIGTERM; 137: a SIGKILL).  The unit
# lives on with its keeper until it is stopped.  (A script of its own:
# systemd would expand the $ of a command line.)
sd_swap_unit() { # name hog_mib systemd-run-property...
	local n=$1 mib=$2
	shift 2
	mkdir -p /run/sdd
	rm -f /run/sdd/"$n".* && mkfifo /run/sdd/"$n".go
	cat >/run/sdd/"$n".sh <<-SH
	$HOG 4 & echo \$! >/run/sdd/$n.keeper
	read x </run/sdd/$n.go
	$HOG $mib 1024 2000 &
	p=\$!
	echo \$p >/run/sdd/$n.hog
	wait \$p
	echo \$? >/run/sdd/$n.status
	wait
	SH
	systemctl reset-failed "$n.service" 2>/dev/null
	systemd-run --quiet --unit="$n" -p MemoryAccounting=yes -p OOMPolicy=continue "$@" /bin/sh /run/sdd/"$n".sh
}

# (1) The job fits in its limit and the swap it may use: a hog of 96 MiB
# (1.5x the unit's MemoryMax=64M) gets all of it, part in swap, and ends when
# the check stops it; nothing is killed.
check_sd_job_swap_fits() {
	local n=sdbatch-swapfits u=sdbatch-swapfits.service cg k0 r0 o0 hog a peak=0 s swap_peak=0 end
	cg=$CG/system.slice/$u
	sd_daemon
	job_swap_on
	k0=$(vmstat_oom_kill) r0=$(report_count) o0=$(journal_count $UNIT "sdbatch \[$u\]: OOM")
	sd_swap_unit $n 96 -p MemoryMax=64M
	expect "the unit is adopted and held" wait_for 30 held system.slice/$u
	expect "its swap is not limited (memory.swap.max $(cat $cg/memory.swap.max))" [ "$(cat $cg/memory.swap.max)" = max ]
	echo go >/run/sdd/$n.go
	expect "the hog starts" wait_for 30 eval "[ -s /run/sdd/$n.hog ]"
	hog=$(cat /run/sdd/$n.hog)
	# Until it holds nearly all of its 96 MiB (in RAM and swap), or dies.
	end=$(($(awk '{ print int($1) }' /proc/uptime) + 300))
	while alive "$hog" && (($(awk '{ print int($1) }' /proc/uptime) < end)); do
		a=$(anon_mib "$hog") s=$(cat $cg/memory.swap.current 2>/dev/null || echo 0)
		((a > peak)) && peak=$a
		((s > swap_peak)) && swap_peak=$s
		((a >= 92)) && break
		sleep 0.5
	done
	note "$u: hog peak $peak MiB (RAM + swap), memory.swap.current up to $((swap_peak >> 20)) MiB," \
		"memory.current $(cat $cg/memory.current 2>&1), events: $(tr '\n' ' ' <$cg/memory.events 2>&1)"
	expect "the hog got (nearly) all of its 96 MiB ($peak MiB)" [ "$peak" -ge 92 ]
	expect "part of it in swap (memory.swap.current up to $swap_peak bytes)" [ "$swap_peak" -gt 0 ]
	expect "the hog still lives" alive "$hog"
	expect "the kernel killed nothing in the unit (memory.events oom_kill)" [ "$(kv $cg/memory.events oom_kill)" = 0 ]
	kill -TERM "$hog" 2>/dev/null
	expect "the hog ends by the check's SIGTERM, not a kill" wait_for 60 eval \
		"[ \"\$(cat /run/sdd/$n.status 2>/dev/null)\" = 143 ]"
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "no report: oomkitd acted on nothing" [ "$(report_count)" = "$r0" ]
	expect "oomkitd logged no OOM of the unit" [ "$(journal_count $UNIT "sdbatch \[$u\]: OOM")" = "$o0" ]
	data "job-swap fits: hog_peak_mib=$peak swap_peak_bytes=$swap_peak oom_kill_delta=$(($(vmstat_oom_kill) - k0))"
	sd_diag $u
	sd_done $u
	job_swap_off
}

# (2) The same job with memory.swap.max 16M: once that is swapped it cannot
# swap any more, and the hog (the newest process: kill-newest) dies by
# oomkitd's hand, not the kernel's; the keeper lives; the log and the report
# say why.
check_sd_job_swap_full() {
	local n=sdbatch-swapfull u=sdbatch-swapfull.service cg k0 r0 w0 hog keeper s swap_peak=0 report end
	local why='at its limit, memory.swap.max reached'
	cg=$CG/system.slice/$u
	sd_daemon
	job_swap_on
	k0=$(vmstat_oom_kill) r0=$(report_count) w0=$(journal_count $UNIT "sdbatch \[$u\]: out of memory: $why")
	sd_swap_unit $n 160 -p MemoryMax=64M -p MemorySwapMax=16M
	expect "the unit is adopted and held" wait_for 30 held system.slice/$u
	expect "memory.swap.max is 16M" [ "$(cat $cg/memory.swap.max)" = $((16 << 20)) ]
	expect "the unit's keeper runs" wait_for 30 eval "[ -s /run/sdd/$n.keeper ]"
	keeper=$(cat /run/sdd/$n.keeper)
	echo go >/run/sdd/$n.go
	expect "the hog starts" wait_for 30 eval "[ -s /run/sdd/$n.hog ]"
	hog=$(cat /run/sdd/$n.hog)
	end=$(($(awk '{ print int($1) }' /proc/uptime) + 300))
	while alive "$hog" && (($(awk '{ print int($1) }' /proc/uptime) < end)); do
		s=$(cat $cg/memory.swap.current 2>/dev/null || echo 0)
		((s > swap_peak)) && swap_peak=$s
		sleep 0.5
	done
	note "$u: memory.swap.current up to $((swap_peak >> 20)) MiB; events: $(tr '\n' ' ' <$cg/memory.events 2>&1)"
	expect "the hog dies" dead "$hog"
	expect "killed (wait status $(cat /run/sdd/$n.status 2>/dev/null))" wait_for 30 eval \
		"[ \"\$(cat /run/sdd/$n.status 2>/dev/null)\" = 137 ]"
	expect "by oomkitd: the kernel killed nothing in the unit (memory.events oom_kill)" \
		[ "$(kv $cg/memory.events oom_kill)" = 0 ]
	expect "nor anywhere (vmstat oom_kill)" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "the keeper lives" alive "$keeper"
	expect "oomkitd said why ($why)" wait_journal 30 $UNIT "sdbatch \[$u\]: out of memory: $why" "$w0"
	journal $UNIT | grep -F "[$u]" | grep -E 'out of memory|OOM:' | tail -n 2 | sed 's/^/sdguest:   journal: /'
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the hog as the victim" grep -q "\"victim_pid\":$hog," "$report"
	expect "and why the OOM was declared (oom_cause swap-max)" grep -q '"oom_cause":"swap-max"' "$report"
	expect "in words too" grep -qF "\"why\":\"$why" "$report"
	data "job-swap full: swap_peak_bytes=$swap_peak victim=$(grep -q "\"victim_pid\":$hog," "$report" && echo hog || echo other)" \
		"oom_kill_delta=$(($(vmstat_oom_kill) - k0))"
	sd_diag $u
	sd_done $u
	job_swap_off
}

# oomkit run in a job of patterns: systemd starts the
# process in a transient scope (keeping its pid) in the slice the pattern
# names, and the job adopts the scope.
check_sd_run_scope() {
	local pid scope
	sd_daemon
	start_in_job pid sdrun "$HOG" 4
	scope=sdrun-oomkit-run-$pid.scope
	expect "the process runs with its pid" wait_for 30 rss_at_least "$pid" 4
	expect "in the scope systemd made ($(cgroup_of "$pid"))" [ "$(cgroup_of "$pid")" = /sdrun.slice/$scope ]
	expect "systemd says the scope is active" [ "$(prop $scope ActiveState)" = active ]
	expect "in sdrun.slice" [ "$(prop $scope Slice)" = sdrun.slice ]
	expect "systemctl status shows it under the slice" eval "systemctl status sdrun.slice | grep -q '$scope'"
	expect "the job adopts and holds the scope" wait_for 30 held sdrun.slice/$scope
	expect "its limit went through systemd (MemoryMax=$(prop $scope MemoryMax))" \
		[ "$(prop $scope MemoryMax)" = $((64 << 20)) ]
	expect "and the hold (MemoryHigh=$(prop $scope MemoryHigh))" \
		[ "$(prop $scope MemoryHigh)" = "$(cat $CG/sdrun.slice/$scope/memory.high)" ]
	expect "oomkit status shows it" eval "oomkit --socket $SOCK status | grep -q 'sdrun \[$scope\]'"
	expect "oomkit run in a job without a scope pattern is refused" eval \
		"! oomkit --socket $SOCK run --job sdheld -- true 2>/dev/null"
	daemon_log_if_failed 30
	kill_quietly "$pid"
	sd_done
}

# ------------------------------------------------------------ the machine at the v2 root

# The whole machine, the cgroup v2 root, with jobs adopting what
# systemd runs.  systemd-oomd is stopped meanwhile: the test is of oomkitd.
# The [oomkitd] section of a configuration whose machine is the v2 root.
root_section() {
	cat <<-EOF
	[oomkitd]
	machine = $CG
	machine_available = 128M
	policy = report, kill-lowest, kernel
	report_dir = $REPORTS
	socket = $SOCK
	metrics = /var/lib/oomkit/oomkit.prom
	EOF
}

root_config() {
	{ root_section; cat <<-EOF; } >"$OOMKITD_CONF"

	[job redis]
	priority = 900
	cgroup = system.slice/redis-server.service

	[job batch]
	priority = 100
	cgroup = system.slice/sdg-batch-*.service
	EOF
}

# Context switches of a process so far: each is a wakeup (or a preemption).
ctxt_switches() { # pid
	awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }' "/proc/$1/status" 2>/dev/null
}

# Wakeups of the daemon and its guardian in 3 s of nothing happening.  A
# window in which the daemon pinged systemd's watchdog (WatchdogSec=) is not
# idle by design and is measured again, at most three times.
idle_wakeups() {
	local pid gpid d0 g0 w0 i n
	pid=$(main_pid) gpid=$(guardian_pid)
	for i in 1 2 3; do
		w0=$(prop $UNIT WatchdogTimestampMonotonic) d0=$(ctxt_switches "$pid") g0=$(ctxt_switches "$gpid")
		sleep 3
		n=$(($(ctxt_switches "$pid") - d0 + $(ctxt_switches "$gpid") - g0))
		[[ $(prop $UNIT WatchdogTimestampMonotonic) == "$w0" ]] && break
	done
	echo "$n"
}

redis_keys() {
	redis-cli DBSIZE 2>/dev/null
}

# N keys of 1 KiB each through redis-cli --pipe (the mass insertion protocol).
redis_fill() { # n
	local v
	v=$(head -c 1024 /dev/zero | tr '\0' x)
	seq 1 "$1" | awk -v v="$v" '{ k = "key:" $1; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v }' |
		redis-cli --pipe >/dev/null
}

unit_cgroup_has() { # unit pid
	[ "$(cgroup_of "$2")" = "/system.slice/$1" ]
}

# Starts a batch unit running the hog with the given arguments; sets VAR to
# its main pid.
start_batch() { # var unit hog-args...
	local -n ret=$1
	local unit=$2
	shift 2
	systemctl reset-failed "$unit" 2>/dev/null
	systemd-run --quiet --unit="$unit" --property=Type=exec \
		${OOMKIT_HOG_FILL:+--setenv=OOMKIT_HOG_FILL=$OOMKIT_HOG_FILL} "$HOG" "$@"
	ret=$(prop "$unit" MainPID)
}

# The machine runs out while a high-priority redis holds data and a batch
# unit's hog (fast: 1 MiB steps without a pause; slow: 1 MiB every 50 ms)
# eats the rest: oomkitd, woken by the machine's first memory stall, sees
# MemAvailable below machine_available and kills in the lowest-priority job.
# The kernel's OOM killer never fires, redis keeps every key.
machine_runs_out() { # unit hog-args...
	local unit=$1 hog k0 r0 keys0 report
	shift
	k0=$(vmstat_oom_kill) r0=$(report_count) keys0=$(redis_keys)
	note "before: $(head -n 1 /proc/pressure/memory)"
	start_batch hog "$unit" "$@"
	expect "the batch unit runs the hog" eval '[ -n "$hog" ] && [ "$hog" != 0 ]'
	expect "the batch unit is adopted as an instance of batch" \
		wait_journal 60 $UNIT "batch \[$unit\]: adopted"
	expect "the hog dies" wait_for 240 dead "$hog"
	expect "the batch unit is no longer active" wait_for 30 eval '[ "$(prop $unit ActiveState)" != active ]'
	note "$unit: Result=$(prop "$unit" Result), MemAvailable now $(($(kv /proc/meminfo MemAvailable:) >> 10)) MiB"
	note "after: $(head -n 1 /proc/pressure/memory)"
	journalctl -b -u $UNIT -o short-monotonic --no-pager | grep -E 'machine: |batch' | tail -n 8 | sed 's/^/sdguest:   journal: /'
	journalctl -k -b -o short-monotonic --no-pager | grep -E 'invoked oom-killer|Out of memory' | tail -n 2 | sed 's/^/sdguest:   kernel: /'
	note "daemon fds: $(ls -l /proc/"$(main_pid)"/fd 2>/dev/null | grep -c pressure) on /proc/pressure; uptime $(uptime_s)"
	expect "redis lives" active_unit redis-server.service
	expect "redis keeps every key ($keys0 before, $(redis_keys) after)" [ "$(redis_keys)" = "$keys0" ]
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "oomkitd said the machine was out of memory" wait_journal 30 $UNIT 'machine: MemAvailable .* is below machine_available'
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the hog as the victim" grep -q "\"victim_pid\":$hog," "$report"
	expect "chosen by kill-lowest in job batch" grep -q '"policy":"kill-lowest"' "$report"
	note "report: $(grep -o '"reason":"[^"]*"' "$report" | head -n 1)"
	daemon_log_if_failed 20
	data "oomkitd-root workload=$unit victim=$( (($(vmstat_oom_kill) > k0)) && echo kernel || echo "$unit")" \
		"keys_before=$keys0 keys_after=$(redis_keys) oom_kill_delta=$(($(vmstat_oom_kill) - k0))"
}

active_unit() {
	[ "$(prop "$1" ActiveState)" = active ]
}

check_machine_root() {
	local keys rpid
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	expect "redis-server runs as its own unit" wait_for 60 active_unit redis-server.service
	redis-cli CONFIG SET save "" >/dev/null
	redis_fill 40000
	# A server has page cache; this fresh guest has almost none: 160 MiB of
	# a file read, which the kernel reclaims (and stalls on) as memory runs out.
	dd if=/dev/zero of=/var/tmp/sdg-cache bs=1M count=160 conv=fsync status=none
	cat /var/tmp/sdg-cache >/dev/null
	keys=$(redis_keys)
	rpid=$(prop redis-server.service MainPID)
	expect "redis holds 40000 keys ($keys)" [ "$keys" = 40000 ]
	note "redis: $(($(kv /proc/"$rpid"/status VmRSS:) >> 10)) MiB resident; MemAvailable $(($(kv /proc/meminfo MemAvailable:) >> 10)) MiB"
	root_config
	expect "oomkitd --check takes the v2 root as the machine" "$OOMKITD" --check --config "$OOMKITD_CONF"
	expect "oomkitd starts with the root as its machine" timeout 120 systemctl restart $UNIT
	if ! active; then
		journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'
		return
	fi
	expect "the daemon says the machine is the v2 root" wait_journal 30 $UNIT 'machine: the cgroup v2 root; out of memory when'
	expect "redis is adopted as an instance of redis" wait_journal 30 $UNIT 'redis \[redis-server.service\]: adopted'
	expect "systemd's own top-level settings are untouched" eval '[ ! -e $CG/memory.high ] && [ "$(cat $CG/system.slice/memory.high)" = max ]'
	machine_runs_out sdg-batch-fast.service 2000
	# The slow hog runs out the same machine named by default: check_natural_config.
	expect "systemd's slices still untouched" eval '[ "$(cat $CG/system.slice/memory.high)" = max ] && [ "$(cat $CG/system.slice/memory.max)" = max ]'
}

# The configuration an admin naturally writes on a systemd machine: jobs that
# adopt units by cgroup =, priorities, a chain, and no machine = line.  Its
# machine is the v2 root, never the v1 default (a cgroup "memory" below the
# root holding none of the units: the machine's OOM never reached oomkitd,
# and the kernel's killer took redis), so the batch unit pays when the
# machine runs out, redis keeps its keys and the kernel kills nothing (the
# slow hog of check_machine_root's pair: the fast one ran with machine = named).
# machine_available as in root_section: a key of the machine, not of where it
# is (under emulation the default leaves the kernel's killer too little room).
natural_config() {
	{ root_section | grep -v '^machine = '; cat <<-EOF; } >"$OOMKITD_CONF"

	[job redis]
	priority = 900
	cgroup = system.slice/redis-server.service

	[job web]
	priority = 500
	cgroup = system.slice/sdg-web-*.service

	[job batch]
	priority = 100
	cgroup = system.slice/sdg-batch-*.service
	EOF
}

check_natural_config() {
	local out ready0 adopted0
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	expect "redis-server runs" wait_for 60 active_unit redis-server.service
	if [ "$(redis_keys)" != 40000 ]; then
		redis-cli CONFIG SET save "" >/dev/null
		redis_fill 40000
	fi
	natural_config
	expect "the file names no machine" eval '! grep -q "^machine *=" "$OOMKITD_CONF"'
	out=$("$OOMKITD" --check --config "$OOMKITD_CONF" 2>&1)
	note "--check: $(tr '\n' '|' <<<"$out")"
	expect "--check says the machine is the v2 root, by default" grep -qxF \
		"machine: $CG, the root of the cgroup v2 hierarchy (the default: the file names no machine)" <<<"$out"
	expect "--check says the hierarchy" grep -qxF \
		"hierarchy: cgroup v2, memory controller at $CG, systemd runs this machine" <<<"$out"
	ready0=$(journal_count $UNIT "oomkitd ready: machine $CG, 3 jobs")
	adopted0=$(journal_count $UNIT 'redis \[redis-server.service\]: adopted')
	expect "oomkitd starts" timeout 120 systemctl restart $UNIT
	if ! active; then
		journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'
		return
	fi
	expect "it is ready with the v2 root as its machine and 3 jobs" \
		wait_journal 30 $UNIT "oomkitd ready: machine $CG, 3 jobs" "$ready0"
	expect "redis is adopted as an instance of redis" \
		wait_journal 30 $UNIT 'redis \[redis-server.service\]: adopted' "$adopted0"
	machine_runs_out sdg-batch-slow.service 2000 1024 10000
	expect "systemd's slices untouched" eval '[ "$(cat $CG/system.slice/memory.high)" = max ] && [ "$(cat $CG/system.slice/memory.max)" = max ]'
}

# The machine at the v2 root with a swap file, the default rule
# (machine_available = 2% of RAM + swap, machine_full_stall = 60% in each
# third of 30 s):
# out of memory when RAM and swap together run out, not when RAM does.
SWAPFILE=/var/tmp/sdg-swap
PROBE_OUT=/run/sdg-probe.max

swap_config() {
	root_section | grep -v '^machine_available' >"$OOMKITD_CONF"
	cat <<-EOF >>"$OOMKITD_CONF"

	[job redis]
	priority = 900
	cgroup = system.slice/redis-server.service

	[job batch]
	priority = 100
	cgroup = system.slice/sdg-batch-*.service
	EOF
}

# A timer task in a unit of no job: sleeps 100 ms again and again and keeps
# in PROBE_OUT the worst lateness of a wake-up so far, in ms.  Reported, not
# asserted: the machine's responsiveness while it swaps.
# (A script of its own: systemd would expand the $ of a command line.)
probe_start() {
	systemctl stop sdg-probe.service 2>/dev/null
	systemctl reset-failed sdg-probe.service 2>/dev/null
	echo 0 >"$PROBE_OUT"
	cat >/run/sdg-probe.sh <<-EOF
	worst=0
	while :; do
		t0=\${EPOCHREALTIME/./}
		sleep 0.1
		late=\$(((\${EPOCHREALTIME/./} - t0 - 100000) / 1000))
		if ((late > worst)); then worst=\$late; echo "\$worst" >$PROBE_OUT; fi
	done
	EOF
	systemd-run --quiet --unit=sdg-probe.service /bin/bash /run/sdg-probe.sh
	expect "the probe runs" wait_for 30 active_unit sdg-probe.service
}

probe_reset() {
	systemctl restart sdg-probe.service 2>/dev/null
	echo 0 >"$PROBE_OUT"
}

probe_worst() {
	cat "$PROBE_OUT" 2>/dev/null || echo "?"
}

# A pid's anonymous memory, resident and swapped out, in MiB.
anon_mib() { # pid
	awk '/^(RssAnon|VmSwap):/ { k += $2 } END { print int(k / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0
}

full_stall_ms() {
	awk '/^full/ { sub(/total=/, "", $5); print int($5 / 1000) }' /proc/pressure/memory
}

swap_used_mib() {
	echo $((($(kv /proc/meminfo SwapTotal:) - $(kv /proc/meminfo SwapFree:)) >> 10))
}

# What a machine OOM left behind: who lived, the kernel's killer, the probe.
swap_outcome() { # label k0 keys0 full0
	note "$1: oom_kill $2 -> $(vmstat_oom_kill), worst wake-up delay $(probe_worst) ms," \
		"full stall $(($(full_stall_ms) - $4)) ms, swap used $(swap_used_mib) MiB"
	expect "redis lives" active_unit redis-server.service
	expect "redis keeps every key ($3 before, $(redis_keys) after)" [ "$(redis_keys)" = "$3" ]
	expect "the kernel OOM killer killed nothing (oom_kill $2 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$2" ]
}

# A batch job that needs 1.2x RAM (it fits in RAM + swap), holds it 15 s
# once it has all of it and exits 0; nobody kills it.  Its unit succeeds
# only if the hog got there and lived to be stopped.  (A script of its own:
# systemd would expand the $ of a command line.)
swap_fits() { # keys0 label [mib]
	local unit=sdg-batch-fits.service mib k0 r0 pid full0 peak=0 a i swap_peak=0 s
	mib=${3:-$(($(kv /proc/meminfo MemTotal:) * 12 / 10 >> 10))}
	k0=$(vmstat_oom_kill) r0=$(report_count) full0=$(full_stall_ms)
	probe_reset
	fits_script /run/sdg-fits.sh "$HOG" "$mib" 15
	systemctl reset-failed $unit 2>/dev/null
	systemd-run --quiet --unit=$unit --property=Type=exec ${OOMKIT_HOG_FILL:+--setenv=OOMKIT_HOG_FILL=$OOMKIT_HOG_FILL} \
		/bin/sh /run/sdg-fits.sh
	expect "the job's unit is adopted as an instance of batch" wait_journal 60 $UNIT "batch \[$unit\]: adopted"
	for i in $(seq 1 60); do
		pid=$(pgrep -f "^$HOG $mib" | head -n 1)
		[ -n "$pid" ] && break
		sleep 1
	done
	full_reset
	while [ -n "$pid" ] && alive "$pid"; do
		a=$(anon_mib "$pid") s=$(swap_used_mib)
		((a > peak)) && peak=$a
		((s > swap_peak)) && swap_peak=$s
		full_sample 30
		sleep 1
	done
	expect "the job's unit ends" wait_for 120 eval '[ "$(prop $unit ActiveState)" != active ]'
	note "$unit: $mib MiB asked, peak $peak MiB of it held, at most $swap_peak MiB of swap used, Result=$(prop $unit Result)"
	# How near the thrashing rule came: what the daemon measures in three
	# pieces of 30 s, PSI's avg10 says all through it.
	note "$unit: full stall avg10 up to $(pct $full_peak) %, held through 30 s up to $(pct $full_held) %"
	expect "the job got (nearly) all it asked ($peak of $mib MiB)" [ "$peak" -ge $((mib - 16)) ]
	expect "the job completed: its unit succeeded (Result=$(prop $unit Result))" [ "$(prop $unit Result)" = success ]
	expect "no report: oomkitd acted on nothing" [ "$(report_count)" = "$r0" ]
	swap_outcome "$2: fits in RAM + swap" "$k0" "$1" "$full0"
	data "$2 fits: victim=$([ "$(prop $unit Result)" = success ] && echo none || echo "$unit")" \
		"oom_kill_delta=$(($(vmstat_oom_kill) - k0)) worst_wakeup_ms=$(probe_worst)" \
		"full_avg10_peak=$(pct $full_peak) full_held30=$(pct $full_held)"
}

# A leak in a batch unit: it dies when RAM and swap are nearly gone, by
# oomkitd's hand, before the kernel's; the report names it.
swap_leak() { # label keys0 pattern
	local unit=sdg-batch-leak.service hog k0 r0 full0 report n0
	k0=$(vmstat_oom_kill) r0=$(report_count) full0=$(full_stall_ms)
	n0=$(journal_count $UNIT "$3")
	probe_reset
	start_batch hog $unit 4000 1024 5000
	expect "the leak's unit is adopted as an instance of batch" wait_journal 60 $UNIT "batch \[$unit\]: adopted"
	expect "the leak dies" wait_for 300 dead "$hog"
	expect "oomkitd said why ($3)" wait_journal 30 $UNIT "$3" "$n0"
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the leak as the victim" grep -q "\"victim_pid\":$hog," "$report"
	journalctl -b -u $UNIT -o short-monotonic --no-pager | grep -E 'machine: .*(out of memory|stalls \()' |
		tail -n 2 | sed 's/^/sdguest:   journal: /'
	swap_outcome "$1" "$k0" "$2" "$full0"
	data "$1: victim=$( (($(vmstat_oom_kill) > k0)) && echo kernel || echo leak)" \
		"oom_kill_delta=$(($(vmstat_oom_kill) - k0)) worst_wakeup_ms=$(probe_worst)"
	systemctl stop $unit 2>/dev/null
}

check_machine_swap() {
	local keys
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	swapoff -a 2>/dev/null
	expect "redis-server runs as its own unit" wait_for 60 active_unit redis-server.service
	redis-cli CONFIG SET save "" >/dev/null
	[ "$(redis_keys)" = 40000 ] || redis_fill 40000
	keys=$(redis_keys)
	expect "redis holds 40000 keys ($keys)" [ "$keys" = 40000 ]
	swap_config
	expect "oomkitd starts with the default machine rule" timeout 120 systemctl restart $UNIT
	if ! active; then
		journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'
		return
	fi
	expect "the daemon says the machine is the v2 root" wait_journal 30 $UNIT 'machine: the cgroup v2 root; out of memory when'
	journal $UNIT | grep 'machine: the cgroup v2 root' | tail -n 1 | sed 's/^/sdguest:   journal: /'
	# Swap turned on after the daemon started: counted at the next look.
	rm -f $SWAPFILE
	expect "a 512 MiB swap file is made" eval \
		'fallocate -l 512M $SWAPFILE && chmod 600 $SWAPFILE && mkswap -q $SWAPFILE >/dev/null'
	expect "and turned on" swapon $SWAPFILE
	probe_start
	swap_fits "$keys" swap-file
	swap_leak "swap-file leak" "$keys" 'machine: MemAvailable .* + usable swap .* is below machine_available'
	# Swap turned off: the RAM rule again.
	expect "swap is turned off" swapoff $SWAPFILE
	swap_leak "no-swap leak" "$keys" 'machine: MemAvailable .* + usable swap 0 MiB (free 0 of 0 MiB) is below machine_available'
	systemctl stop sdg-probe.service 2>/dev/null
	rm -f $SWAPFILE
	daemon_log_if_failed 30
}

# zram, set up after oomkitd started, as zram-tools or zram-generator would
# (half of RAM, lzo-rle): counted by what it can still free.  The hog's
# pages are half random (OOMKIT_HOG_FILL=50), so zram stores them at a
# little over half their size: a job that needs RAM and a quarter of the
# zram device fits and lives; a leak dies by oomkitd's hand.
check_machine_zram() {
	local keys size
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	swapoff -a 2>/dev/null
	expect "redis-server runs as its own unit" wait_for 60 active_unit redis-server.service
	redis-cli CONFIG SET save "" >/dev/null
	[ "$(redis_keys)" = 40000 ] || redis_fill 40000
	keys=$(redis_keys)
	expect "redis holds 40000 keys ($keys)" [ "$keys" = 40000 ]
	swap_config
	expect "oomkitd starts with the default machine rule" timeout 120 systemctl restart $UNIT
	if ! active; then
		journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'
		return
	fi
	expect "the daemon says the machine is the v2 root" wait_journal 30 $UNIT 'machine: the cgroup v2 root; out of memory when'
	expect "the kernel's zram module loads" eval 'depmod -a && modprobe zram num_devices=1'
	# No udev in the guest: devtmpfs makes the node a moment later.
	expect "its device appears" wait_for 30 test -b /dev/zram0 -a -e /sys/block/zram0/disksize
	size=$(($(kv /proc/meminfo MemTotal:) / 2 >> 10))
	expect "a zram device of half of RAM ($size MiB) is made" eval \
		'zramctl /dev/zram0 --algorithm lzo-rle --size ${size}M && mkswap -q /dev/zram0 >/dev/null'
	expect "and turned on" swapon -p 100 /dev/zram0
	note "$(cat /proc/swaps | tail -n +2)"
	probe_start
	export OOMKIT_HOG_FILL=50
	swap_fits "$keys" zram $(($(kv /proc/meminfo MemAvailable:) / 1024 + size / 4))
	note "zram mm_stat: $(cat /sys/block/zram0/mm_stat)"
	swap_leak "zram leak" "$keys" 'machine: MemAvailable .* + usable swap .* is below machine_available'
	note "zram mm_stat: $(cat /sys/block/zram0/mm_stat)"
	unset OOMKIT_HOG_FILL
	systemctl stop sdg-probe.service 2>/dev/null
	swapoff /dev/zram0
	daemon_log_if_failed 30
}

# Memory priority (memory_priority = yes, protect-rule.h): while a batch job
# of priority 100 that fits in RAM + swap pushes the machine into swap,
# redis (priority 900) gets a memory.low of its working set (and
# system.slice, its parent, as much: the kernel protects no further than the
# parent is), the batch job's cold memory is pulled out through
# memory.reclaim (counted in the metrics; on kernels that count it, in its
# memory.stat's pgsteal_proactive), nobody is killed, and once the stall is
# over every memory.low is what it was.
prio_low() { # cgroup (relative)
	cat "$CG/$1/memory.low" 2>/dev/null || echo 0
}

prio_metric() { # name label-filter
	awk -v n="$1" -v f="$2" '(index($0, n "{") == 1 || index($0, n " ") == 1) && index($0, f) { v = $NF } END { print v + 0 }' \
		/var/lib/oomkit/oomkit.prom 2>/dev/null
}

check_memory_priority() {
	local unit=sdg-batch-prio.service rcg=system.slice/redis-server.service bcg keys mib k0 r0 pid low0 slow0
	local low=0 slow=0 steal0 steal n0 reclaimed report
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	swapoff -a 2>/dev/null
	expect "redis-server runs as its own unit" wait_for 60 active_unit redis-server.service
	redis-cli CONFIG SET save "" >/dev/null
	[ "$(redis_keys)" = 40000 ] || redis_fill 40000
	keys=$(redis_keys)
	swap_config
	sed -i 's/^\[oomkitd\]$/[oomkitd]\nmemory_priority = yes/' "$OOMKITD_CONF"
	expect "oomkitd starts with memory_priority = yes" timeout 120 systemctl restart $UNIT
	active || { journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'; return; }
	rm -f $SWAPFILE
	expect "a 512 MiB swap file is made" eval \
		'fallocate -l 512M $SWAPFILE && chmod 600 $SWAPFILE && mkswap -q $SWAPFILE >/dev/null'
	expect "and turned on" swapon $SWAPFILE
	low0=$(prio_low $rcg) slow0=$(prio_low system.slice)
	k0=$(vmstat_oom_kill) r0=$(report_count) n0=$(journal_count $UNIT 'memory stalls are over')
	mib=$(($(kv /proc/meminfo MemTotal:) * 12 / 10 >> 10))
	cat >/run/sdg-prio.sh <<-EOF
	$HOG $mib 1024 2000 &
	p=\$!
	while [ "\$(awk '/^(RssAnon|VmSwap):/ { k += \$2 } END { print int(k / 1024) }' /proc/\$p/status)" -lt $((mib - 8)) ]; do
		kill -0 \$p || exit 1
		sleep 1
	done
	sleep 5
	kill \$p || exit 1
	EOF
	systemctl reset-failed $unit 2>/dev/null
	systemd-run --quiet --unit=$unit --property=Type=exec /bin/sh /run/sdg-prio.sh
	expect "the batch unit is adopted" wait_journal 60 $UNIT "batch \[$unit\]: adopted"
	bcg=system.slice/$unit
	steal0=$(kv $CG/$bcg/memory.stat pgsteal_proactive || echo none)
	expect "the machine stalls and memory priority acts" wait_journal 240 $UNIT 'memory stalls .* protecting the working sets'
	expect "redis gets a memory.low (it had $low0)" wait_for 60 eval '(($(prio_low $rcg) > low0))'
	low=$(prio_low $rcg) slow=$(prio_low system.slice)
	expect "system.slice is protected as far ($slow >= $low)" [ "$slow" -ge "$low" ]
	expect "the metrics show redis's memory.low ($low)" wait_for 30 eval \
		'(($(prio_metric oomkit_job_memory_low_bytes redis-server.service) > 0))'
	expect "memory is reclaimed from the batch job (metrics)" wait_for 240 eval \
		'(($(prio_metric oomkit_job_reclaimed_bytes_total $unit) > 0))'
	steal=$(kv $CG/$bcg/memory.stat pgsteal_proactive || echo none)
	if [ "$steal0" != none ]; then
		expect "the kernel counts it as proactive reclaim (pgsteal_proactive $steal0 -> $steal)" [ "$steal" -gt "$steal0" ]
	fi
	reclaimed=$(prio_metric oomkit_job_reclaimed_bytes_total $unit)
	# An OOM meanwhile (a batch unit at its MemoryMax= with no swap of its
	# own): its report says what memory priority had done.
	# Its hog starts once oomkitd holds the unit, or the kernel's killer
	# could be first on a machine this busy.
	sd_swap_unit sdg-batch-oomer 64 -p MemoryMax=32M -p MemorySwapMax=0
	expect "the oomer's unit is adopted and held" wait_for 120 held system.slice/sdg-batch-oomer.service
	echo go >/run/sdd/sdg-batch-oomer.go
	expect "the oomer's OOM is reported" wait_for 180 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report says memory priority was acting" grep -q '"memory_priority":{"on":true,"active":true' "$report"
	expect "the report has redis's memory.low" grep -qE '"job":"redis \[redis-server.service\]","cgroup":"system.slice/redis-server.service","memory_low":[1-9]' "$report"
	expect "the report has what was reclaimed from the batch job" \
		grep -qE '"job":"batch \['$unit'\]","cgroup":"system.slice/'$unit'","memory_low":0,"reclaimed_bytes":[1-9]' "$report"
	grep -o '"memory_priority":.\{0,600\}' "$report" | sed 's/^/sdguest:   report: /'
	expect "the oomer's hog dies (the kernel, after the report)" wait_for 120 eval \
		'[ -s /run/sdd/sdg-batch-oomer.status ]'
	systemctl stop sdg-batch-oomer.service 2>/dev/null
	r0=$(report_count) k0=$(vmstat_oom_kill)
	expect "redis is never reclaimed from" [ "$(prio_metric oomkit_job_reclaimed_bytes_total redis-server.service)" = 0 ]
	pid=$(systemctl show -P MainPID $unit)
	expect "the batch job's unit ends" wait_for 300 eval '[ "$(prop $unit ActiveState)" != active ]'
	expect "the job completed: its unit succeeded (Result=$(prop $unit Result))" [ "$(prop $unit Result)" = success ]
	expect "no report: oomkitd killed nothing" [ "$(report_count)" = "$r0" ]
	expect "the stall is over and oomkitd says so" wait_journal 240 $UNIT 'memory stalls are over' "$n0"
	expect "redis's memory.low is put back ($(prio_low $rcg), was $low0)" [ "$(prio_low $rcg)" = "$low0" ]
	expect "system.slice's memory.low is put back ($(prio_low system.slice), was $slow0)" [ "$(prio_low system.slice)" = "$slow0" ]
	expect "the metrics say no memory.low now" wait_for 30 eval \
		'(($(prio_metric oomkit_job_memory_low_bytes redis-server.service) == 0))'
	expect "one episode or more counted" [ "$(prio_metric oomkit_memory_priority_episodes_total '')" -ge 1 ]
	expect "redis keeps every key" [ "$(redis_keys)" = "$keys" ]
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	journal $UNIT | grep -E 'memory stalls|memory.low' | tail -n 6 | sed 's/^/sdguest:   journal: /'
	data "memory-priority: redis_low_bytes=$low system_slice_low_bytes=$slow reclaimed_bytes=$reclaimed" \
		"pgsteal_proactive=$steal0..$steal pid=$pid"
	swapoff $SWAPFILE
	rm -f $SWAPFILE
	daemon_log_if_failed 30
}

# systemd's ManagedOOMPreference=omit (the user.oomd_omit xattr systemd
# writes on the unit's cgroup) spares a unit: of two batch units, the one
# that is omitted is the larger, and the machine running out kills in the
# other.
check_oomd_preference() {
	local keeper hog k0 r0 report
	active || { root_config; timeout 120 systemctl restart $UNIT; }
	k0=$(vmstat_oom_kill) r0=$(report_count)
	systemctl reset-failed sdg-batch-keep.service 2>/dev/null
	systemd-run --quiet --unit=sdg-batch-keep.service --property=Type=exec \
		--property=ManagedOOMPreference=omit "$HOG" 160
	keeper=$(prop sdg-batch-keep.service MainPID)
	expect "the omitted unit says so" [ "$(prop sdg-batch-keep.service ManagedOOMPreference)" = omit ]
	expect "the omitted unit holds 160 MiB" wait_for 120 rss_at_least "$keeper" 160
	expect "and is adopted by batch" wait_journal 60 $UNIT 'batch \[sdg-batch-keep.service\]: adopted'
	start_batch hog sdg-batch-leak.service 2000 1024 20000
	expect "the leak in the other batch unit dies" wait_for 240 dead "$hog"
	expect "the omitted unit lives" alive "$keeper"
	note "omitted unit: $(rss_mib "$keeper") MiB resident"
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the leak as the victim" grep -q "\"victim_pid\":$hog," "$report"
	systemctl stop sdg-batch-keep.service
}

# ManagedOOMPreference=avoid (user.oomd_avoid) makes a unit the last choice
# among its priority, not never, and not before a job the file ranks higher:
# the avoided batch unit leaks and is the larger, the other holds 24 MiB.
# The machine running out kills the plain unit first, then the avoided one
# (its report says why), and never redis, priority 900.
avoid_reported() { # report
	grep -q '"victim_place":"avoid"' "$1" && grep -q '"victim_rule":"avoid (ManagedOOMPreference=avoid)"' "$1"
}

check_oomd_avoid() {
	local idle leak k0 r0 first second
	active || { root_config; timeout 120 systemctl restart $UNIT; }
	k0=$(vmstat_oom_kill) r0=$(report_count)
	start_batch idle sdg-batch-idle.service 24
	expect "the plain unit holds 24 MiB" wait_for 120 rss_at_least "$idle" 24
	expect "and is adopted by batch" wait_journal 60 $UNIT 'batch \[sdg-batch-idle.service\]: adopted'
	systemctl reset-failed sdg-batch-avoid.service 2>/dev/null
	systemd-run --quiet --unit=sdg-batch-avoid.service --property=Type=exec \
		--property=ManagedOOMPreference=avoid "$HOG" 2000 1024 20000
	leak=$(prop sdg-batch-avoid.service MainPID)
	expect "the avoided unit says so" [ "$(prop sdg-batch-avoid.service ManagedOOMPreference)" = avoid ]
	expect "the plain unit dies" wait_for 240 dead "$idle"
	expect "then the avoided leak, all that is left of batch" wait_for 240 dead "$leak"
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "two reports were written" wait_for 30 eval '(($(report_count) >= r0 + 2))'
	# Reports are named oom-<sequence>-<scope>.json: the name orders them.
	first=$(grep -l "\"victim_pid\":$idle," "$REPORTS"/*.json | head -n 1)
	second=$(grep -l "\"victim_pid\":$leak," "$REPORTS"/*.json | head -n 1)
	note "plain: ${first##*/}, avoided: ${second##*/}"
	expect "a report names each victim" eval '[ -n "$first" ] && [ -n "$second" ]'
	# (A [[ ]] cannot be expect's command: its < would redirect.)
	expect "the plain unit's kill came first" test "${first##*/}" \< "${second##*/}"
	expect "the avoided unit's report says why" avoid_reported "$second"
	expect "redis lives" active_unit redis-server.service
	systemctl stop sdg-batch-idle.service sdg-batch-avoid.service 2>/dev/null
}

# A unit started after oomkitd is adopted when its cgroup appears, by an
# inotify event: the daemon sleeps before and after (0 wakeups in 3 s).
check_adopt_later() {
	local before after pid
	active || { root_config; timeout 120 systemctl restart $UNIT; }
	# An emulated guest on a loaded host stalls, which the guest's PSI
	# counts as memory pressure, and the daemon wakes to watch it: what is
	# checked is a 3 s window without a wakeup within 30 s, before and after.
	expect "the daemon sleeps before" wait_for 30 eval 'before=$(idle_wakeups); [ "$before" = 0 ]'
	start_batch pid sdg-batch-later.service 8
	expect "the new unit is adopted" wait_journal 60 $UNIT 'batch \[sdg-batch-later.service\]: adopted'
	expect "the daemon sleeps after" wait_for 30 eval 'after=$(idle_wakeups); [ "$after" = 0 ]'
	systemctl stop sdg-batch-later.service
	expect "a stopped unit is dropped" wait_journal 60 $UNIT 'batch \[sdg-batch-later.service\]: .*no longer an instance'
	data "adopt-later wakeups_before=$before wakeups_after=$after"
	# The checks after these get the machine as they would have had it.
	redis-cli FLUSHALL >/dev/null 2>&1
	rm -f /var/tmp/sdg-cache
	daemon_config
	systemctl stop $UNIT
}

# examples/kubernetes-node.conf as shipped (its metrics path moved
# to where the unit may write), on slices and scopes named exactly as kubelet
# names them with the systemd cgroup driver (kubepods-besteffort-pod<uid>.slice
# nests in kubepods.slice/kubepods-besteffort.slice, a guaranteed pod's
# kubepods-pod<uid>.slice in kubepods.slice), each holding a process.  The
# node runs out because of a besteffort pod: it dies first, the guaranteed and
# the burstable pods live, the kernel's killer kills nothing.
check_kubernetes_node() {
	local preset=/opt/oomkit-test/kubernetes-node.conf g b be k0 r0 report
	sed 's|^metrics = .*|metrics = /var/lib/oomkit/oomkit.prom|' $preset >"$OOMKITD_CONF"
	expect "the preset passes oomkitd --check here" "$OOMKITD" --check --config "$OOMKITD_CONF"
	expect "oomkitd starts with the preset" timeout 120 systemctl restart $UNIT
	dd if=/dev/zero of=/var/tmp/sdg-cache bs=1M count=160 conv=fsync status=none
	cat /var/tmp/sdg-cache >/dev/null
	systemd-run --quiet --unit=cri-containerd-g1.scope --scope --slice=kubepods-pod0a1b2c3d.slice "$HOG" 48 </dev/null >/dev/null 2>&1 &
	g=$!
	systemd-run --quiet --unit=cri-containerd-b1.scope --scope --slice=kubepods-burstable-pod1b2c3d4e.slice "$HOG" 32 </dev/null >/dev/null 2>&1 &
	b=$!
	expect "the guaranteed pod's process runs in kubepods.slice/kubepods-pod0a1b2c3d.slice" \
		wait_for 60 eval '[ "$(cgroup_of $g)" = /kubepods.slice/kubepods-pod0a1b2c3d.slice/cri-containerd-g1.scope ]'
	expect "the burstable pod's process runs in its slice" wait_for 60 eval \
		'[ "$(cgroup_of $b)" = /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e.slice/cri-containerd-b1.scope ]'
	expect "the guaranteed pod is adopted" wait_journal 60 $UNIT 'guaranteed \[kubepods-pod0a1b2c3d.slice\]: adopted'
	expect "the burstable pod is adopted" wait_journal 60 $UNIT 'burstable \[kubepods-burstable-pod1b2c3d4e.slice\]: adopted'
	expect "both hold their memory" wait_for 60 eval 'rss_at_least $g 48 && rss_at_least $b 32'
	k0=$(vmstat_oom_kill) r0=$(report_count)
	# A fast climb, 200 MiB/s: 4 MiB between two of the daemon's looks.  At
	# the emulator's full speed (120 MiB in one 20 ms look, measured) the
	# kernel's killer could come first, as oomkitd.conf(5) says.
	systemd-run --quiet --unit=cri-containerd-e1.scope --scope --slice=kubepods-besteffort-pod2c3d4e5f.slice "$HOG" 2000 1024 5000 </dev/null >/dev/null 2>&1 &
	be=$!
	expect "the besteffort pod is adopted" wait_journal 60 $UNIT 'besteffort \[kubepods-besteffort-pod2c3d4e5f.slice\]: adopted'
	expect "the besteffort pod's process dies" wait_for 240 dead "$be"
	expect "the guaranteed pod lives" alive "$g"
	expect "the burstable pod lives" alive "$b"
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the besteffort process, by kill-lowest" \
		eval "grep -q '\"victim_pid\":$be,' '$report' && grep -q '\"policy\":\"kill-lowest\"' '$report'"
	note "report: $(grep -o '"reason":"[^"]*"' "$report" | head -n 1)"
	daemon_log_if_failed 20
	kill_quietly "$g" "$b" "$be"
	rm -f /var/tmp/sdg-cache
	daemon_config
	systemctl stop $UNIT
}

# examples/server.conf as shipped: a service that holds data (redis, one of
# the preset's protected databases), another service doing its work, and a
# batch unit in batch.slice (as systemd-run --slice=batch.slice starts it)
# that runs the machine out.  The batch unit dies; redis keeps every
# key, the other service lives, the kernel's killer kills nothing.
check_server_preset() {
	local preset=/opt/oomkit-test/server.conf unit=sdg-nightly.service worker hog keys0 k0 r0 report
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	cp $preset "$OOMKITD_CONF"
	expect "the preset passes oomkitd --check here" "$OOMKITD" --check --config "$OOMKITD_CONF"
	expect "redis-server runs as its own unit" wait_for 60 active_unit redis-server.service
	redis-cli CONFIG SET save "" >/dev/null
	redis_fill 20000
	keys0=$(redis_keys)
	expect "redis holds 20000 keys ($keys0)" [ "$keys0" = 20000 ]
	expect "oomkitd starts with the preset" timeout 120 systemctl restart $UNIT
	expect "redis is adopted as an instance of databases" \
		wait_journal 60 $UNIT 'databases \[redis-server.service\]: adopted'
	dd if=/dev/zero of=/var/tmp/sdg-cache bs=1M count=160 conv=fsync status=none
	cat /var/tmp/sdg-cache >/dev/null
	systemctl reset-failed sdg-worker.service $unit 2>/dev/null
	systemd-run --quiet --unit=sdg-worker.service --property=Type=exec "$HOG" 32
	worker=$(prop sdg-worker.service MainPID)
	expect "the worker is adopted as an instance of services" \
		wait_journal 60 $UNIT 'services \[sdg-worker.service\]: adopted'
	expect "the worker holds its memory" wait_for 60 rss_at_least "$worker" 32
	k0=$(vmstat_oom_kill) r0=$(report_count)
	# 200 MiB/s, as in check_kubernetes_node.
	systemd-run --quiet --unit=$unit --slice=batch.slice --property=Type=exec "$HOG" 2000 1024 5000
	hog=$(prop $unit MainPID)
	expect "the batch unit runs in batch.slice" eval '[ "$(cgroup_of "$hog")" = /batch.slice/$unit ]'
	expect "the batch unit is adopted as an instance of batch" wait_journal 60 $UNIT "batch \[$unit\]: adopted"
	expect "the batch unit's process dies" wait_for 240 dead "$hog"
	expect "the batch unit is no longer active" wait_for 30 eval '[ "$(prop $unit ActiveState)" != active ]'
	expect "redis lives" active_unit redis-server.service
	expect "redis keeps every key ($keys0 before, $(redis_keys) after)" [ "$(redis_keys)" = "$keys0" ]
	expect "the worker lives" alive "$worker"
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the batch process, by kill-lowest" \
		eval "grep -q '\"victim_pid\":$hog,' '$report' && grep -q '\"policy\":\"kill-lowest\"' '$report'"
	note "report: $(grep -o '"reason":"[^"]*"' "$report" | head -n 1)"
	daemon_log_if_failed 20
	systemctl stop sdg-worker.service $unit 2>/dev/null
	redis-cli FLUSHALL >/dev/null 2>&1
	rm -f /var/tmp/sdg-cache
	daemon_config
	systemctl stop $UNIT
}

# A lingering user's own systemd runs an app scope
# (systemd-run --user --scope, in user@UID.service/app.slice) and a process
# of its session's slice; the user-app pattern adopts the app, and when the
# app runs the machine out it, not the session, pays.
check_user_apps() {
	local user=sdguser uid session app k0 r0 report
	id $user >/dev/null 2>&1 || useradd -m $user
	uid=$(id -u $user)
	expect "lingering starts the user's manager" loginctl enable-linger $user
	expect "user@$uid.service runs" wait_for 120 eval '[ "$(prop user@$uid.service ActiveState)" = active ]'
	{ root_section; cat <<-EOF; } >"$OOMKITD_CONF"

	[job user-apps]
	priority = 200
	cgroup = user.slice/user-*.slice/user@*.service/app.slice/*
	EOF
	expect "oomkitd starts with the user-app job" timeout 120 systemctl restart $UNIT
	dd if=/dev/zero of=/var/tmp/sdg-cache bs=1M count=160 conv=fsync status=none
	cat /var/tmp/sdg-cache >/dev/null
	user_run() { # unit slice command...
		local unit=$1 slice=$2
		shift 2
		runuser -u $user -- env XDG_RUNTIME_DIR=/run/user/$uid \
			systemd-run --user --quiet --scope --unit="$unit" --slice="$slice" "$@" </dev/null >/dev/null 2>&1 &
	}
	# runuser stays the parent: the process is found in its scope.
	local mgr=$CG/user.slice/user-$uid.slice/user@$uid.service
	user_run sdg-session.scope session.slice "$HOG" 32
	expect "a session process runs in the user's session.slice" wait_for 60 \
		grep -qs . $mgr/session.slice/sdg-session.scope/cgroup.procs
	session=$(head -n 1 $mgr/session.slice/sdg-session.scope/cgroup.procs 2>/dev/null)
	expect "and holds its memory" wait_for 60 rss_at_least "$session" 32
	k0=$(vmstat_oom_kill) r0=$(report_count)
	# 200 MiB/s, as in check_kubernetes_node.
	user_run app-sdg-hog.scope app.slice "$HOG" 2000 1024 5000
	expect "the app runs in app.slice/app-sdg-hog.scope" wait_for 60 grep -qs . $mgr/app.slice/app-sdg-hog.scope/cgroup.procs
	app=$(head -n 1 $mgr/app.slice/app-sdg-hog.scope/cgroup.procs 2>/dev/null)
	expect "the app scope is adopted by user-apps" wait_journal 60 $UNIT 'user-apps \[app-sdg-hog.scope\]: adopted'
	expect "the app dies" wait_for 240 dead "$app"
	expect "the session process lives" alive "$session"
	expect "the user's manager lives" [ "$(prop user@$uid.service ActiveState)" = active ]
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the app" grep -q "\"victim_pid\":$app," "$report"
	note "report: $(grep -o '"reason":"[^"]*"' "$report" | head -n 1)"
	daemon_log_if_failed 20
	kill -9 "$session" "$app" 2>/dev/null
	loginctl disable-linger $user
	rm -f /var/tmp/sdg-cache
	daemon_config
	systemctl stop $UNIT
}

# A person asked about a machine-level OOM on a desktop, with the preset's
# apps job (each app scope of the user's manager an instance): the app that
# grows is frozen (cgroup v2 cgroup.freeze on its app scope) while the
# question is open, its memory does not grow, an app that does not grow is
# not frozen, nor the session, and a timer task in the session goes on
# ticking meanwhile; the answer kills the chosen app (thawed first); with no
# answer it is thawed at the deadline and the chain, never the kernel, kills.
# The person is root's `oomkit prompt` (the guest has no display for the
# agent's window; the agent is asked the same question: check_agent_unit).
# A minute to answer: with 20 s, a loaded host's emulated guest took longer
# than the question to show its app scope frozen, and the deadline thawed it.
check_desktop_freeze() {
	local user=sdgfreeze uid mgr probe idle grow usage ticks k0 report
	id $user >/dev/null 2>&1 || useradd -m $user
	uid=$(id -u $user)
	expect "lingering starts the user's manager" loginctl enable-linger $user
	expect "user@$uid.service runs" wait_for 120 eval '[ "$(prop user@$uid.service ActiveState)" = active ]'
	cat >"$OOMKITD_CONF" <<-EOF
	[oomkitd]
	machine = $CG
	machine_available = 128M
	policy = report, prompt, kill-largest, kernel
	delay = 120s
	report_dir = $REPORTS
	socket = $SOCK
	metrics = /var/lib/oomkit/oomkit.prom

	[job apps]
	priority = 300
	cgroup = user.slice/user-*.slice/user@*.service/app.slice/*
	EOF
	expect "oomkitd starts with the apps job" timeout 120 systemctl restart $UNIT
	mgr=$CG/user.slice/user-$uid.slice/user@$uid.service
	user_scope() { # unit slice command...
		local unit=$1 slice=$2
		shift 2
		runuser -u $user -- env XDG_RUNTIME_DIR=/run/user/$uid \
			systemd-run --user --quiet --scope --unit="$unit" --slice="$slice" "$@" </dev/null >/dev/null 2>&1 &
	}
	first_pid() { head -n 1 "$1/cgroup.procs" 2>/dev/null; }
	# The responsiveness probe: a timer task of the session, every 100 ms;
	# it writes how many times it woke and the longest gap between two
	# since the file sdg-probe-reset was last made.
	# Bash builtins only (a wait on a fifo no one writes, EPOCHREALTIME):
	# what it measures is whether the session gets the CPU, not how long an
	# exec takes to page its program back in.
	cat >/var/tmp/sdg-probe.sh <<-'EOF'
	exec 9<>/var/tmp/sdg-probe-fifo
	n=0 max=0 last=${EPOCHREALTIME/./}
	while :; do
		read -r -t 0.1 -u 9
		now=${EPOCHREALTIME/./} n=$((n + 1))
		gap=$(((now - last) / 1000)) last=$now
		[ -e /var/tmp/sdg-probe-reset ] && max=0 && : >/var/tmp/sdg-probe-reset.seen
		((gap > max)) && max=$gap
		printf '%s %s\n' "$n" "$max" >/var/tmp/sdg-probe
	done
	EOF
	mkfifo /var/tmp/sdg-probe-fifo
	user_scope sdg-probe.scope session.slice bash /var/tmp/sdg-probe.sh
	expect "the probe ticks in the session" wait_for 60 test -s /var/tmp/sdg-probe
	probe=$(first_pid $mgr/session.slice/sdg-probe.scope)
	user_scope app-sdg-idle.scope app.slice "$HOG" 32
	expect "an app that does not grow runs" wait_for 60 eval '[ -n "$(first_pid $mgr/app.slice/app-sdg-idle.scope)" ]'
	idle=$(first_pid $mgr/app.slice/app-sdg-idle.scope)
	expect "and holds its memory" wait_for 60 rss_at_least "$idle" 32
	ticks_now() { cut -d' ' -f1 /var/tmp/sdg-probe 2>/dev/null || echo 0; }
	# The longest gap: the probe rewrites its file, which may read empty a moment.
	probe_gap() {
		local l i
		for i in 1 2 3 4 5 6 7 8 9 10; do
			l=$(cat /var/tmp/sdg-probe 2>/dev/null)
			[[ $l == *' '* ]] && break
		done
		echo "${l#* }"
	}
	ticks_past() { local t; t=$(ticks_now); ((${t:-0} >= $1)); }
	not_frozen() { grep -qx "frozen 0" "$1/cgroup.events" 2>/dev/null; }
	is_frozen() { grep -qx "frozen 1" "$1/cgroup.events" 2>/dev/null; }

	# 1. Answered.
	mkfifo /var/tmp/sdg-answers
	oomkit prompt --once </var/tmp/sdg-answers >/var/tmp/sdg-prompt1 2>&1 &
	exec 7>/var/tmp/sdg-answers
	expect "the person's prompt listens" wait_for 30 grep -q "waiting for OOMs" /var/tmp/sdg-prompt1
	k0=$(vmstat_oom_kill)
	# 20 MiB/s: frozen within the question's first half second, long before
	# it could take what machine_available keeps.
	user_scope app-sdg-grow.scope app.slice "$HOG" 2000 1024 50000
	expect "the growing app runs" wait_for 60 eval '[ -n "$(first_pid $mgr/app.slice/app-sdg-grow.scope)" ]'
	grow=$(first_pid $mgr/app.slice/app-sdg-grow.scope)
	expect "the app scopes are adopted by apps" wait_journal 60 $UNIT 'apps \[app-sdg-grow.scope\]: adopted'
	expect "the person is asked" wait_for 240 grep -q "^answer:" /var/tmp/sdg-prompt1
	expect "the growing app is frozen" wait_journal 30 $UNIT 'apps \[app-sdg-grow.scope\]: frozen while the question is open'
	expect "its app scope: cgroup.events frozen 1" wait_for 30 is_frozen $mgr/app.slice/app-sdg-grow.scope
	usage=$(cat $mgr/app.slice/app-sdg-grow.scope/memory.current)
	note "before the freeze, the probe's longest gap: $(probe_gap) ms"
	touch /var/tmp/sdg-probe-reset
	wait_for 30 test -e /var/tmp/sdg-probe-reset.seen
	rm -f /var/tmp/sdg-probe-reset
	ticks=$(ticks_now)
	expect "the session's timer task goes on ticking (20 ticks)" wait_for 60 ticks_past $((ticks + 20))
	# Within 1 MiB (the kernel charges in per-CPU batches): unfrozen, the app
	# takes 20 MiB a second.
	local now
	now=$(cat $mgr/app.slice/app-sdg-grow.scope/memory.current)
	expect "the frozen app's memory did not grow meanwhile ($usage -> $now bytes)" \
		eval '((now <= usage + (1 << 20)))'
	expect "the app that does not grow is not frozen" not_frozen $mgr/app.slice/app-sdg-idle.scope
	expect "nor the session's scope" not_frozen $mgr/session.slice/sdg-probe.scope
	note "probe: longest gap between two 100 ms ticks while the app was frozen: $(probe_gap) ms"
	note "machine: MemAvailable $(($(kv /proc/meminfo MemAvailable:) >> 10)) MiB while frozen"
	echo "kill $grow" >&7
	expect "the chosen app dies" wait_for 60 dead "$grow"
	expect "the app that does not grow lives" alive "$idle"
	expect "the probe lives" alive "$probe"
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	answered_report() { grep -l '"prompt_answer":"[0-9]* kill '"$grow"'"' "$REPORTS"/*.json 2>/dev/null | head -n 1; }
	expect "the question's report: the person chose it" wait_for 30 eval '[ -n "$(answered_report)" ]'
	report=$(answered_report)
	expect "... and says it was frozen" grep -q '"frozen":\[{"job":"apps \[app-sdg-grow.scope\]"' "$report"
	note "frozen: $(grep -o '"frozen":\[{[^}]*}' "$report")"
	exec 7>&-

	# 2. No answer: thawed at the deadline, the chain kills the largest.
	mkfifo /var/tmp/sdg-silent
	oomkit prompt --once </var/tmp/sdg-silent >/var/tmp/sdg-prompt2 2>&1 &
	exec 7>/var/tmp/sdg-silent
	expect "2: the prompt listens" wait_for 30 grep -q "waiting for OOMs" /var/tmp/sdg-prompt2
	k0=$(vmstat_oom_kill)
	user_scope app-sdg-grow2.scope app.slice "$HOG" 2000 1024 50000
	expect "2: the growing app runs" wait_for 60 eval '[ -n "$(first_pid $mgr/app.slice/app-sdg-grow2.scope)" ]'
	grow=$(first_pid $mgr/app.slice/app-sdg-grow2.scope)
	expect "2: the person is asked" wait_for 240 grep -q "^answer:" /var/tmp/sdg-prompt2
	expect "2: the growing app is frozen" wait_journal 30 $UNIT 'apps \[app-sdg-grow2.scope\]: frozen while the question is open'
	expect "2: no answer: thawed at the deadline" wait_journal 60 $UNIT 'apps \[app-sdg-grow2.scope\]: thawed after .* (no answer in time)'
	expect "2: the chain kills the grown app" wait_for 120 dead "$grow"
	expect "2: the app that does not grow lives" alive "$idle"
	expect "2: the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "2: by kill-largest" eval "grep -l '\"victim_pid\":$grow,' \"\$REPORTS\"/*.json | xargs grep -q '\"policy\":\"kill-largest\"'"
	note "probe: longest gap between two 100 ms ticks since the first freeze: $(probe_gap) ms"
	daemon_log_if_failed 30
	exec 7>&-
	kill -9 "$idle" "$probe" 2>/dev/null
	loginctl disable-linger $user
	rm -f /var/tmp/sdg-answers /var/tmp/sdg-silent /var/tmp/sdg-probe /var/tmp/sdg-probe.sh /var/tmp/sdg-prompt[12] \
		/var/tmp/sdg-probe-fifo /var/tmp/sdg-probe-reset.seen
	daemon_config
	systemctl stop $UNIT
}

# Everything the daemon did in this boot - start, kills, reports, reloads, a
# restart under OOM, a whole-unit kill and --release, stop - passed the
# unit's system call filter and its own.
check_no_refused_calls() {
	expect "no system call was refused" no_refused_calls
	refused_calls | sed 's/^/sdguest:   /'
}

# The baseline of bench 8's comparison (docs/performance.md): systemd-oomd with
# ManagedOOMMemoryPressure=kill on a slice holding a unit that keeps data and
# a unit whose allocations stall at its MemoryHigh=.  Records which unit
# systemd-oomd killed, after how long, and what the other unit kept, in one
# DATA line; oomkitd is stopped first.  The limit and duration are quick
# ones for the test; the benchmark sets Fedora's (SDG_OOMD_LIMIT=50%,
# SDG_OOMD_DURATION=20s: ManagedOOMMemoryPressureLimit= and
# DefaultMemoryPressureDurationSec= of its systemd-oomd-defaults).
check_oomd_baseline() {
	local slice=oomd-test.slice limit=${SDG_OOMD_LIMIT:-20%} duration=${SDG_OOMD_DURATION:-2s} keeper_rss0 keeper_rss1 victim line t0 t1 waited_ms
	# Swap, as on the desktops systemd-oomd is made for: the kernel can push
	# the keeper's data out, which is what the keeper loses.
	# systemd-oomd alone: a check before may have left oomkitd running.
	timeout 120 systemctl stop $UNIT
	fallocate -l 256M /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile
	expect "swap is on" [ "$(kv /proc/meminfo SwapTotal:)" -gt 0 ]
	mkdir -p /run/systemd/oomd.conf.d
	printf '[OOM]\nDefaultMemoryPressureDurationSec=%s\n' $duration >/run/systemd/oomd.conf.d/sdguest.conf
	printf '[Slice]\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=%s\n' $limit \
		>/run/systemd/system/$slice
	printf '[Service]\nSlice=%s\nExecStart=%s 64\n' $slice "$HOG" >/run/systemd/system/oomd-keeper.service
	printf '[Service]\nSlice=%s\nMemoryHigh=40M\nMemoryMax=400M\nExecStart=%s 300\n' $slice "$HOG" \
		>/run/systemd/system/oomd-hog.service
	systemctl daemon-reload
	expect "systemd-oomd restarts with the test's settings" timeout 60 systemctl restart systemd-oomd
	expect "the keeper starts" systemctl start oomd-keeper.service
	expect "the keeper holds its data" wait_for 30 rss_at_least "$(prop oomd-keeper.service MainPID)" 64
	keeper_rss0=$(kv /proc/"$(prop oomd-keeper.service MainPID)"/status VmRSS:)
	expect "systemd-oomd watches the slice" wait_for 30 eval 'oomctl | grep -q $slice'
	systemctl start oomd-hog.service
	waited_ms=$(date +%s%3N)
	expect "systemd-oomd kills a unit of the slice" wait_for $((${duration%s} + 120)) eval \
		'[ "$(prop oomd-hog.service ActiveState)" != active ] || [ "$(prop oomd-keeper.service ActiveState)" != active ]'
	# How long it was given: when it kills nothing, its time is known only
	# to be longer than this (make bench reports it so).
	waited_ms=$(($(date +%s%3N) - waited_ms))
	victim=none
	for u in oomd-hog oomd-keeper; do
		[[ $(prop $u.service Result) == oom-kill ]] && victim=$u.service
	done
	expect "the victim's Result is oom-kill" [ $victim != none ]
	t0=$(prop oomd-hog.service ExecMainStartTimestampMonotonic)
	t1=$(prop "${victim/none/oomd-hog.service}" ExecMainExitTimestampMonotonic)
	keeper_rss1=$(kv /proc/"$(prop oomd-keeper.service MainPID)"/status VmRSS: || echo 0)
	line=$(journal systemd-oomd.service | grep -m1 'Killed .* due to memory pressure')
	if [[ $victim == none ]]; then
		note "slice pressure: $(tr '\n' ' ' <$CG/$slice/memory.pressure)"
		note "hog: $(cat $CG/$slice/oomd-hog.service/memory.current) bytes, events $(tr '\n' ' ' <$CG/$slice/oomd-hog.service/memory.events)"
		oomctl | sed 's/^/sdguest:   oomctl: /'
		journal systemd-oomd.service | tail -n 5 | sed 's/^/sdguest:   systemd-oomd: /'
	fi
	note "systemd-oomd: $line"
	data "systemd-oomd workload=pressure limit=$limit duration=$duration victim=$victim" \
		"kill_after_ms=$(((t1 - t0) / 1000)) waited_ms=$waited_ms pressure_pct=$(sed -n 's/.* being \([0-9.]*\)% .*/\1/p' <<<"$line")" \
		"keeper_rss_kib_before=$keeper_rss0 keeper_rss_kib_after=$keeper_rss1"
	systemctl stop oomd-hog.service oomd-keeper.service 2>/dev/null
	swapoff /swapfile && rm -f /swapfile
}

# The other side of bench 8's comparison: the same units as
# check_oomd_baseline (a keeper holding 64 MiB, a hog stalling at its
# MemoryHigh=, in the same slice, with the same swap), this time with
# systemd-oomd stopped and oomkitd watching the slice as its machine, the two
# units adopted by pattern as jobs of priority 900 (keeper) and 100 (hog).
# The slice's budget, machine_limit, is less than the two want together, so
# the machine runs out while the hog grows: the chain kill-lowest must pick
# the hog, and the keeper keep its data.  One DATA line, like the baseline's.
check_oomkitd_anchor() {
	local slice=oomd-test.slice keeper_rss0 keeper_rss1 keeper_swap1 victim t0 t1 slice_cg k0
	fallocate -l 256M /swapfile && chmod 600 /swapfile && mkswap -q /swapfile && swapon /swapfile
	expect "swap is on" [ "$(kv /proc/meminfo SwapTotal:)" -gt 0 ]
	expect "systemd-oomd stops" timeout 60 systemctl stop systemd-oomd
	expect "the keeper starts" systemctl start oomd-keeper.service
	expect "the keeper holds its data" wait_for 30 rss_at_least "$(prop oomd-keeper.service MainPID)" 64
	keeper_rss0=$(kv /proc/"$(prop oomd-keeper.service MainPID)"/status VmRSS:)
	slice_cg=$(prop $slice ControlGroup)
	cat >"$OOMKITD_CONF" <<-EOF
	[oomkitd]
	machine = $CG$slice_cg
	machine_limit = 96M
	policy = report, kill-lowest, kernel
	delay = 30s
	report_dir = $REPORTS
	socket = $SOCK

	[job keeper]
	cgroup = ${slice_cg#/}/oomd-keeper.service
	priority = 900

	[job hog]
	cgroup = ${slice_cg#/}/oomd-hog.service
	priority = 100
	EOF
	expect "the anchor's configuration checks" oomkitd --check --config "$OOMKITD_CONF" >/dev/null
	# restart: a check before this one may have left the daemon running.
	expect "oomkitd (re)starts on it" timeout 120 systemctl restart $UNIT
	expect "it adopted the keeper" wait_journal 30 $UNIT 'keeper \[oomd-keeper.service\]: adopted'
	k0=$(vmstat_oom_kill)
	systemctl start oomd-hog.service
	expect "oomkitd kills a unit of the slice" wait_for 120 eval \
		'[ "$(prop oomd-hog.service ActiveState)" != active ] || [ "$(prop oomd-keeper.service ActiveState)" != active ]'
	victim=none
	for u in oomd-hog oomd-keeper; do
		[[ $(prop $u.service ActiveState) != active ]] && victim=$u.service
	done
	expect "the victim is the hog, the lower priority" [ $victim = oomd-hog.service ]
	expect "the keeper lives" [ "$(prop oomd-keeper.service ActiveState)" = active ]
	expect "the kernel OOM killer killed nothing" [ "$(vmstat_oom_kill)" = "$k0" ]
	t0=$(prop oomd-hog.service ExecMainStartTimestampMonotonic)
	t1=$(prop "${victim/none/oomd-hog.service}" ExecMainExitTimestampMonotonic)
	keeper_rss1=$(kv /proc/"$(prop oomd-keeper.service MainPID)"/status VmRSS: || echo 0)
	keeper_swap1=$(kv /proc/"$(prop oomd-keeper.service MainPID)"/status VmSwap: || echo 0)
	if ((check_failed)); then
		journal $UNIT | tail -n 25 | sed 's/^/sdguest:   journal: /'
		note "slice: max $(cat "$CG$slice_cg/memory.max") high $(cat "$CG$slice_cg/memory.high")" \
			"current $(cat "$CG$slice_cg/memory.current"), events $(tr '\n' ' ' <"$CG$slice_cg/memory.events.local")"
	else
		journal $UNIT | grep -E 'kill|OOM' | tail -n 4 | sed 's/^/sdguest:   journal: /'
	fi
	data "oomkitd workload=pressure machine_limit=96M victim=$victim" \
		"kill_after_ms=$(((t1 - t0) / 1000))" \
		"keeper_rss_kib_before=$keeper_rss0 keeper_rss_kib_after=$keeper_rss1 keeper_swap_kib_after=$keeper_swap1"
	systemctl stop oomd-hog.service oomd-keeper.service 2>/dev/null
	systemctl stop $UNIT
	swapoff /swapfile && rm -f /swapfile
	daemon_config # the shared configuration again, for any check after this one
}

# No configuration file on a systemd machine: the built-in default adopts
# systemd's units (services, user apps, login sessions, machines) under the
# v2-root machine, leaves out the daemon's own unit and what must never die,
# and a hog in a service pays when the machine runs out; sshd, journald and a
# login session (a real one, over ssh) live, and the kernel kills nothing.
check_builtin_default() {
	local hog ssh0 jd0 sess k0 r0 report out unit=sdg-default-hog.service
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	systemctl stop $UNIT
	rm -f "$OOMKITD_CONF"
	out=$("$OOMKITD" --check 2>&1)
	expect "oomkitd --check with no file prints the systemd default" eval \
		'grep -qx "machine = /sys/fs/cgroup" <<<"$out" && grep -qx "\[job services\]" <<<"$out" && grep -qx "(built-in): ok, 4 jobs" <<<"$out"'
	expect "ssh.service runs" wait_for 60 active_unit ssh.service
	# A login session, as a user makes one: root over ssh with a key.
	mkdir -p -m 700 /root/.ssh
	[[ -e /root/.ssh/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f /root/.ssh/id_ed25519
	cat /root/.ssh/id_ed25519.pub >>/root/.ssh/authorized_keys
	ssh -n -o StrictHostKeyChecking=no -o BatchMode=yes -i /root/.ssh/id_ed25519 root@127.0.0.1 \
		'exec sleep 3600' </dev/null >/dev/null 2>>"$SDG_STDERR" &
	expect "the ssh login is a session scope" wait_for 60 eval \
		'sess=$(pgrep -n -f "^sleep 3600$") && grep -q "/session-[0-9]*\.scope$" /proc/$sess/cgroup'
	sess=$(pgrep -n -f '^sleep 3600$')
	ssh0=$(prop ssh.service MainPID) jd0=$(prop systemd-journald.service MainPID)
	expect "the unit starts with no configuration file" timeout 120 systemctl restart $UNIT
	if ! active; then
		journal $UNIT | tail -n 20 | sed 's/^/sdguest:   journal: /'
		return
	fi
	expect "the daemon says the machine is the v2 root" wait_journal 30 $UNIT 'machine: the cgroup v2 root; out of memory when'
	expect "the login session is an instance of sessions" wait_journal 30 $UNIT 'sessions \[session-[0-9]*\.scope\]: adopted'
	k0=$(vmstat_oom_kill) r0=$(report_count)
	# 200 MiB/s, as in check_kubernetes_node: at the emulator's full speed
	# the kernel's killer may come first (oomkitd.conf(5)).
	start_batch hog $unit 2000 1024 5000
	expect "the hog's unit is an instance of services" wait_journal 60 $UNIT "services \[$unit\]: adopted"
	out=$(oomkit --socket $SOCK status 2>&1)
	expect "oomkit status shows the default's instances" eval \
		'grep -q "services \[$unit\]" <<<"$out" && grep -q "sessions \[session-" <<<"$out"'
	expect "nor oomkitd, ssh, journald or logind is adopted" eval \
		'! grep -qE "\[(oomkitd|ssh|systemd-journald|systemd-logind|dbus)\.service\]" <<<"$out"'
	expect "the hog dies" wait_for 240 dead "$hog"
	expect "its unit is no longer active" wait_for 30 eval '[ "$(prop $unit ActiveState)" != active ]'
	expect "oomkitd said the machine was out of memory" wait_journal 30 $UNIT 'machine: MemAvailable .* is below machine_available'
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the hog as the victim" grep -q "\"victim_pid\":$hog," "$report"
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "sshd lives" eval '[ "$(prop ssh.service MainPID)" = "$ssh0" ] && alive "$ssh0"'
	expect "journald lives" eval '[ "$(prop systemd-journald.service MainPID)" = "$jd0" ] && alive "$jd0"'
	expect "the login session lives" alive "$sess"
	daemon_log_if_failed 25
	kill "$sess" 2>/dev/null
	systemctl stop $unit 2>/dev/null
	systemctl stop $UNIT
	daemon_config # the shared configuration again, for any check after this one
}

# A job's owner hides a hog from the jobs: with the built-in default (the
# machine at the v2 root, apps and services adopted by pattern), a user with
# a real user@UID.service makes a cgroup of its own beside app.slice, which no
# job's pattern takes, and moves a hog into it.  A process in no job is
# protected only where root alone may have put it; this one is in a cgroup
# its user may write, so at the machine's OOM it is a candidate ranked with
# the lowest-priority job ("(escaped)"): the hog dies, not root's service, not
# redis, not the user's small escaped process, and the kernel kills nothing.
check_sd_nojob_escape() {
	local user=sdguser uid mgr svc=sdg-nojob-svc.service svcpid rpid quiet hog k0 r0 report out
	systemctl stop systemd-oomd.service systemd-oomd.socket 2>/dev/null
	systemctl stop $UNIT
	rm -f "$OOMKITD_CONF"
	id $user >/dev/null 2>&1 || useradd -m $user
	uid=$(id -u $user)
	mgr=user.slice/user-$uid.slice/user@$uid.service
	expect "lingering starts the user's manager" loginctl enable-linger $user
	expect "user@$uid.service runs" wait_for 120 eval '[ "$(prop user@$uid.service ActiveState)" = active ]'
	expect "systemd delegated $mgr to the user" eval '[ "$(stat -c %u $CG/$mgr/cgroup.procs)" = "$uid" ]'
	expect "redis-server runs" wait_for 60 active_unit redis-server.service
	rpid=$(prop redis-server.service MainPID)
	start_batch svcpid $svc 32
	expect "root's service holds its memory" wait_for 60 rss_at_least "$svcpid" 32
	expect "the unit starts with no configuration file" timeout 120 systemctl restart $UNIT
	expect "root's service is an instance of services" wait_journal 60 $UNIT "services \[$svc\]: adopted"
	# Started in a scope of the user's app.slice, as the user's own
	# systemd-run makes it, the process moves itself out (the user may
	# write both cgroups and their common ancestor) and runs the hog.
	escape() { # cgroup hog-args...
		local cg=$1
		shift
		runuser -u $user -- mkdir -p "$CG/$mgr/$cg" 2>>"$SDG_STDERR"
		runuser -u $user -- env XDG_RUNTIME_DIR=/run/user/$uid systemd-run --user --quiet --scope \
			--slice=app.slice sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$mgr/$cg" "$HOG" "$@" \
			</dev/null >/dev/null 2>>"$SDG_STDERR" &
		wait_for 60 grep -qs . "$CG/$mgr/$cg/cgroup.procs" && head -n 1 "$CG/$mgr/$cg/cgroup.procs"
	}
	quiet=$(escape sdg-quiet 16)
	expect "a small process escaped to $mgr/sdg-quiet" eval '[ -n "$quiet" ] && alive "$quiet"'
	expect "and holds its memory" wait_for 60 rss_at_least "$quiet" 16
	out=$(oomkit --socket $SOCK ps 2>&1)
	expect "oomkit ps names it escaped" eval 'grep -qE "^ *$quiet \(escaped\) \[sdg-quiet\]" <<<"$out"'
	out=$(oomkit --socket $SOCK explain --json 2>&1)
	expect "oomkit explain ranks it, escaped, with the cgroup and its owner" eval \
		'grep -q "\"pid\":$quiet,\"job\":\"(escaped)\",\"priority\":200," <<<"$out" &&
		 grep -q "\"escaped\":true,\"cgroup\":\"$mgr/sdg-quiet\",\"cgroup_owner\":$uid" <<<"$out"'
	k0=$(vmstat_oom_kill) r0=$(report_count)
	# 200 MiB/s, as in check_builtin_default.
	hog=$(escape sdg-evil 2000 1024 5000)
	expect "the hog escaped to $mgr/sdg-evil" eval '[ -n "$hog" ]'
	expect "the hog dies" wait_for 240 dead "$hog"
	expect "oomkitd said the machine was out of memory" wait_journal 30 $UNIT 'machine: MemAvailable .* is below machine_available'
	expect "a report was written" wait_for 30 eval '(($(report_count) > r0))'
	report=$(newest_report)
	expect "the report names the hog as the victim" grep -q "\"victim_pid\":$hog," "$report"
	expect "and says where it escaped to and whose that is" grep -q \
		"\"victim_escaped\":true,\"victim_cgroup\":\"$mgr/sdg-evil\",\"victim_cgroup_owner\":$uid," "$report"
	note "report: $(grep -o '"reason":"[^"]*"' "$report" | head -n 1)"
	expect "the kernel OOM killer killed nothing (oom_kill $k0 -> $(vmstat_oom_kill))" [ "$(vmstat_oom_kill)" = "$k0" ]
	expect "root's service lives" eval 'alive "$svcpid" && active_unit $svc'
	expect "redis lives" eval '[ "$(prop redis-server.service MainPID)" = "$rpid" ] && alive "$rpid"'
	expect "the user's small escaped process lives" alive "$quiet"
	expect "the user's manager lives" [ "$(prop user@$uid.service ActiveState)" = active ]
	daemon_log_if_failed 25
	kill -9 "$quiet" "$hog" 2>/dev/null
	wait_for 30 eval '! grep -qs . $CG/$mgr/sdg-quiet/cgroup.procs && ! grep -qs . $CG/$mgr/sdg-evil/cgroup.procs'
	rmdir "$CG/$mgr/sdg-quiet" "$CG/$mgr/sdg-evil" 2>/dev/null
	systemctl stop $svc 2>/dev/null
	loginctl disable-linger $user
	systemctl stop $UNIT
	daemon_config # the shared configuration again, for any check after this one
}

# make demo on this machine (cgroup v2, systemd as PID 1): scripts/demo.sh
# run by demo-check.sh with the installed programs.  The demo's cgroups live
# in a transient scope with Delegate=yes, where systemd lets a program make
# its own; the low-priority job's process dies, the others live, the kernel
# kills nothing, and neither the scope nor a cgroup of the demo's is left.
check_demo() {
	local out rc
	systemctl stop $UNIT 2>/dev/null
	out=$(OOMKIT_HOG=$HOG bash "$here/demo-check.sh" "$here/demo.sh" /nonexistent --quiet-machine 2>&1)
	rc=$?
	grep -v '^demo|' <<<"$out" | sed 's/^/sdguest:   /'
	expect "the demo's story (demo-check.sh)" [ "$rc" = 0 ]
	expect "told first that it runs in a scope systemd delegated to it" grep -qE \
		'^demo\| demo: cgroup v2 with systemd: the scope oomkit-demo-[0-9]+\.scope \(Delegate=yes\)' <<<"$out"
	expect "systemd has no scope of the demo's left" \
		eval '! systemctl list-units --all --no-legend "oomkit-demo-*" | grep -q .'
	((rc == 0)) || grep '^demo|' <<<"$out" | tail -n 60 | sed 's/^/sdguest:   /'
}

say "START"
run_checks "$0"
say "RESULT $checks_passed passed, $checks_failed failed"
sync
"$SDG_QEXIT" $((checks_failed > 0 ? 1 : 0))
systemctl poweroff --force --force
