#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# guest-deb.sh - the Debian packages in the systemd guest (tests/vm/systemd.sh
# --debs --checks guest-deb.sh): installed with apt as an admin would, the
# unit enabled and started with systemctl, `oomkit status` as root and, with
# readonly_status, as a user; an upgrade to a rebuilt package of a higher
# version restarts the daemon without losing an OOM (the old daemon gives its
# holds back, the new one takes them again); apt purge leaves no file,
# process, unit, cgroup or user behind.  The check functions run in order,
# each on what the one before left.
#
# $SDG_DEBS holds the packages to install (liboomkit0, oomkit) and, in
# upgrade/, the same packages rebuilt with a higher version.

here=$(dirname "$(realpath "$0")")
. "$here/guest-systemd-lib.sh"

HOG=${SDG_HELPER_OOMKIT_HOG:?}
DEBS=${SDG_DEBS:?}
UNIT=oomkitd.service
CONF=/etc/oomkit/oomkitd.conf
# No dash in the name: systemd reads "a-b.slice" as b inside a.slice.
SLICE=oomkitdeb.slice
MACHINE=$SLICE/machine
JOB=$MACHINE/held
export DEBIAN_FRONTEND=noninteractive

apt_install() { # deb...
	apt-get install -y -q -o Dpkg::Options::=--force-confold "$@" </dev/null >/tmp/apt.log 2>&1 ||
		{ sed 's/^/sdguest:   apt: /' /tmp/apt.log; return 1; }
}

main_pid() { prop $UNIT MainPID; }
guardian_pid() { pgrep -P "$(main_pid)" -x oomkit-guardian; }
running() { [[ "$(prop $UNIT ActiveState)/$(prop $UNIT SubState)" == active/running ]]; }
version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }
users() { getent passwd | cut -d: -f1 | sort; getent group | cut -d: -f1 | sort; }

# A hog in the job's memcg, started by the shell that execs it, so the pid
# printed is the hog's: MIB to allocate, STEP_KIB at a time, PAUSE_US between.
hog_in_job() { # mib step_kib pause_us
	sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' sh "$CG/$JOB" "$HOG" "$1" "$2" "$3" \
		</dev/null >/dev/null 2>&1 &
	echo $!
}

kernel_kills() { kv "$CG/$JOB/memory.events" oom_kill || echo 0; }
reports() { find /var/lib/oomkit/reports -maxdepth 1 -name '*.json' 2>/dev/null | wc -l; }
more_reports() { (($(reports) > $1)); }
resolved_since() { (($(reports) > $1 || $(kernel_kills) > $2)); } # reports0 kills0
pid_changed() { [[ $(main_pid) != "$1" && $(main_pid) != 0 ]]; }
purged() { ! dpkg-query -W -f='${db:Status-Abbrev}\n' "$@" 2>/dev/null | grep -q '^[a-z][^n]'; }
only_daemon() { [[ "$(pgrep -x oomkitd)" == "$1" && "$(pgrep -x oomkit-guardian)" == "$(guardian_pid)" ]]; }
held_by() { held "$JOB" && [[ $(main_pid) == "$1" ]]; }

# The configuration of the upgrade: a machine in a slice of its own and one
# job with a limit, so that the daemon holds the job's OOM killer off.  The
# shipped file is edited as an admin would, so the upgrade must keep it.
held_config() {
	sed -i -e "s|^;machine = .*|&\nmachine = $CG/$MACHINE|" -e 's|^;delay = .*|delay = 5s|' $CONF
	cat >>$CONF <<-EOF

	[job held]
	priority = 500
	limit = 48M
	policy = report, kill-largest, kernel
	EOF
}

# ------------------------------------------------------------ checks

check_install() {
	users >/tmp/users.before
	note "system $(timeout 120 systemctl is-system-running --wait)"
	expect "apt installs liboomkit0 and oomkit from the .deb files" \
		apt_install "$DEBS"/liboomkit0_*.deb "$DEBS"/oomkit_*.deb
	note "installed oomkit $(version oomkit), liboomkit0 $(version liboomkit0)"
	expect "the configuration is a conffile" dpkg-query -W -f='${Conffiles}' oomkit | grep -q " $CONF "
	expect "the unit is installed where Debian puts units" test -f /lib/systemd/system/$UNIT
	expect "systemctl enable --now returns once the daemon is ready" timeout 120 systemctl enable --now $UNIT
	expect "the unit is enabled" [ "$(systemctl is-enabled $UNIT)" = enabled ]
	expect "the unit is active (running)" running
	expect "the main process is the packaged oomkitd" [ "$(readlink /proc/"$(main_pid)"/exe)" = /usr/sbin/oomkitd ]
	expect "its guardian runs" test -n "$(guardian_pid)"
	expect "the daemon said READY=1 once" [ "$(journal_count $UNIT 'oomkitd ready')" = 1 ]
	expect "systemd did not restart it" [ "$(prop $UNIT NRestarts)" = 0 ]
	note "as shipped: $(oomkitd --check --config $CONF 2>&1 | tail -n 1)"
	# The conffile sets nothing: on this systemd machine on cgroup v2 it
	# means the built-in default, the whole machine with systemd's units.
	expect "as shipped, the daemon takes the built-in default: the whole machine, four jobs of units" \
		[ "$(journal_count $UNIT 'oomkitd ready: machine /sys/fs/cgroup, 4 jobs')" = 1 ]
	expect "oomkit status shows the default's services job" bash -c 'oomkit status | grep -q "^services "'
	journal $UNIT | tail -n 5 | sed 's/^/sdguest:   journal: /'
}

check_status() {
	expect "oomkit status works as root" oomkit status >/dev/null
	note "$(oomkit status 2>&1 | head -n 3)"
	expect "a user may not read the status by default" \
		bash -c '! runuser -u test -- oomkit status >/dev/null 2>&1'
	note "as the user: $(runuser -u test -- oomkit status 2>&1 | head -n 1)"
	sed -i 's|^;readonly_status = no|readonly_status = yes|' $CONF
	expect "readonly_status = yes checks" oomkitd --check --config $CONF
	expect "the daemon reloads it" systemctl reload $UNIT
	expect "with readonly_status, a user reads the status" wait_for 30 runuser -u test -- oomkit status >/dev/null ||
		note "as the user: $(runuser -u test -- oomkit status 2>&1 | head -n 2)"
	expect "the reload keeps the default's jobs (the file still names no machine and no job)" \
		wait_for 30 bash -c "journalctl -b -u $UNIT -o cat | grep -q 'reloaded .*: 4 jobs'"
	# A machine and a job of the test's own (the machine changes only with a
	# restart).
	mkdir -p /run/systemd/system
	printf '[Slice]\nMemoryAccounting=yes\n' >/run/systemd/system/$SLICE
	systemctl daemon-reload
	systemctl start $SLICE
	held_config
	expect "the edited configuration checks" oomkitd --check --config $CONF
	expect "the daemon restarts on it" timeout 120 systemctl restart $UNIT
	expect "the daemon made the job" wait_for 30 test -d "$CG/$JOB"
	expect "the daemon holds the job's kernel OOM killer off" wait_for 30 held "$JOB"
}

check_upgrade() {
	local old new a b c reports0 kills0 vmstat0
	expect "the job exists before the upgrade" test -d "$CG/$JOB"
	old=$(main_pid) reports0=$(reports)
	a=$(hog_in_job 96 1024 1000)
	expect "an OOM before the upgrade is resolved" wait_for 60 dead "$a"
	expect "... by the daemon, with a report" wait_for 30 more_reports "$reports0"
	reports0=$(reports) kills0=$(kernel_kills) vmstat0=$(vmstat_oom_kill)
	# A hog that reaches the limit while the packages are being replaced:
	# its OOM is the old daemon's, or the new one's, or the kernel's once the
	# stopping daemon (or its guardian) has given the kernel killer back;
	# none may stay blocked.
	b=$(hog_in_job 96 512 50000)
	expect "apt upgrades both packages to the rebuilt version" \
		apt_install "$DEBS"/upgrade/liboomkit0_*.deb "$DEBS"/upgrade/oomkit_*.deb
	note "upgraded to oomkit $(version oomkit), liboomkit0 $(version liboomkit0)"
	expect "the upgrade restarted the daemon" wait_for 60 pid_changed "$old"
	expect "the new daemon is running" wait_for 60 running
	new=$(main_pid)
	expect "the old daemon and its guardian are gone" only_daemon "$new"
	expect "the OOM during the upgrade was resolved" wait_for 90 dead "$b"
	expect "... by a daemon (a report) or by the kernel in the job" resolved_since "$reports0" "$kills0"
	note "during the upgrade: reports $reports0 -> $(reports), the job's kernel kills $kills0 -> $(kernel_kills)," \
		"the machine's oom_kill $vmstat0 -> $(vmstat_oom_kill)"
	journal $UNIT | grep -iE 'release|gave|given|held|stopp' | tail -n 6 | sed 's/^/sdguest:   journal: /'
	expect "the new daemon holds the job's kernel OOM killer off again" wait_for 30 held_by "$new"
	expect "the edited configuration survived the upgrade" grep -q '^\[job held\]' $CONF
	reports0=$(reports) vmstat0=$(vmstat_oom_kill)
	c=$(hog_in_job 96 1024 1000)
	expect "an OOM after the upgrade is resolved" wait_for 60 dead "$c"
	expect "... by the new daemon, with a report" wait_for 30 more_reports "$reports0"
	expect "... not by the kernel" [ "$(vmstat_oom_kill)" = "$vmstat0" ]
	expect "systemd counts no crash" [ "$(prop $UNIT NRestarts)" = 0 ]
}

check_purge() {
	local left
	expect "apt purges both packages" apt-get purge -y -q oomkit liboomkit0 </dev/null >/tmp/apt.log 2>&1
	expect "the unit is gone" bash -c "! systemctl cat $UNIT >/dev/null 2>&1"
	expect "no oomkitd or guardian runs" bash -c '! pgrep -x oomkitd && ! pgrep -x oomkit-guardian'
	for f in /etc/oomkit /var/lib/oomkit /run/oomkit /usr/sbin/oomkitd /usr/bin/oomkit \
		/etc/systemd/system/multi-user.target.wants/$UNIT; do
		expect "$f is gone" bash -c "! test -e $f"
	done
	expect "dpkg knows neither package any more (not even its conffiles)" purged oomkit liboomkit0
	users >/tmp/users.after
	expect "no user or group was added or removed" cmp -s /tmp/users.before /tmp/users.after
	expect "nothing is held any more" [ -z "$(held_below "$SLICE")" ]
	systemctl stop $SLICE
	# Every cgroup left that oomkit made: its machine and jobs (the test's
	# and the shipped configuration's), its reserve.
	left=$(find $CG -type d \( -path "*/$MACHINE*" -o -name '*oomkit*' \) -not -name oomkit-checks.service 2>/dev/null)
	expect "no cgroup of oomkit's is left" [ -z "$left" ]
	[ -z "$left" ] || note "left: $(tr '\n' ' ' <<<"$left")"
	# Known: the built-in machine, /sys/fs/cgroup/memory/oomkit, is a v1 path;
	# on cgroup v2 the daemon makes its parent, "memory", as a cgroup of the
	# root, which nothing removes (a systemd machine's built-in default is
	# another: docs/systemd.md).
	[ ! -d $CG/memory ] || note "KNOWN: $CG/memory is left, the parent of the built-in default machine"
}

say "START"
run_checks "$0"
say "RESULT $checks_passed passed, $checks_failed failed"
sync
"$SDG_QEXIT" $((checks_failed > 0 ? 1 : 0))
systemctl poweroff --force --force
