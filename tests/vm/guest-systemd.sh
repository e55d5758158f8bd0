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
SLICE=oomkit-test.slice
MACHINE=$SLICE/machine # the daemon's machine, relative to the cgroup root
REPORTS=/var/lib/oomkit/reports
SOCK=/run/oomkit/oomkitd.sock

# ------------------------------------------------------------ helpers

# The configuration of the checks: a machine the daemon creates in a slice of
# its own (systemd creates the slice, with the memory controller, and leaves
# what is below it alone), two jobs with limits and one without.
daemon_config() {
	cat >"$OOMKITD_CONF" <<-EOF
	[oomkitd]
	machine = $CG/$MACHINE
	machine_limit = 256M
	policy = report, kill-lowest, kernel
	delay = 5s
	report_dir = $REPORTS
	socket = $SOCK
	metrics = /var/lib/oomkit/oomkit.prom

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

# Starts a process in a job the way its user would: oomkit run, which keeps
# the pid.  Prints the pid.
run_in_job() { # job command...
	local job=$1
	shift
	oomkit --socket $SOCK run --job "$job" -- "$@" </dev/null >/dev/null 2>&1 &
	echo $!
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
	systemctl daemon-reload
	systemctl start $SLICE
	daemon_config
	# Type=notify: systemctl returns when the daemon has sent READY=1.
	expect "systemctl enable --now returns once the daemon is ready" timeout 120 systemctl enable --now $UNIT
	expect "the unit is active (running)" [ "$(prop $UNIT ActiveState)/$(prop $UNIT SubState)" = active/running ]
	expect "systemctl status succeeds" systemctl status $UNIT >/dev/null
	expect "the daemon said READY=1 once" [ "$(journal_count $UNIT 'oomkitd ready')" = 1 ]
	expect "systemd did not restart it" [ "$(prop $UNIT NRestarts)" = 0 ]
	expect "the main process is oomkitd" [ "$(cat /proc/"$(main_pid)"/comm)" = oomkitd ]
	expect "the daemon built its machine and jobs" test -d $CG/$MACHINE/web -a -d $CG/$MACHINE/batch
	note "main pid $(main_pid), guardian $(guardian_pid); unit cgroup: $(tr '\n' ' ' <$CG/system.slice/$UNIT/cgroup.procs)"
}

say "START"
run_checks "$0"
say "RESULT $checks_passed passed, $checks_failed failed"
sync
"$SDG_QEXIT" $((checks_failed > 0 ? 1 : 0))
systemctl poweroff --force --force
