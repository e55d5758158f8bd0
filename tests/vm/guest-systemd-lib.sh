# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# guest-systemd-lib.sh - what the checks of guest-systemd.sh share: reporting,
# bounded waits, reading the kernel's cgroup files and systemd's properties.
# Sourced by guest-systemd.sh inside the systemd guest, as root.
#
# A check is a function check_NAME in guest-systemd.sh.  It states what it
# expects with `expect DESCRIPTION COMMAND...` (a failed expectation fails
# the check, and the check goes on so that one run shows every broken
# expectation), prints what helps a reader with `note`, and cleans up after
# itself.  run_checks runs the check functions in the order they are defined
# and prints one line per check: "sdguest: PASS NAME" or "sdguest: FAIL NAME".

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER='' SYSTEMD_COLORS=0
CG=/sys/fs/cgroup
# Where commands started in the background put their error output; it is
# shown under the check if the check fails.
SDG_STDERR=/run/sdguest.stderr

uptime_s() {
	local up _
	read -r up _ </proc/uptime
	echo "$up"
}

say() {
	echo "sdguest: $*"
}

# Lines of detail, indented under the check they belong to.
note() {
	echo "sdguest:   $*"
}

# Lines other programs parse (the benchmark reads these from the console log):
# "sdguest: DATA KIND key=value ...".
data() {
	echo "sdguest: DATA $*"
}

check_failed=0

expect() { # description command...
	local what=$1
	shift
	if "$@"; then
		return 0
	fi
	note "not ok: $what"
	check_failed=1
	[[ -n ${check_first_failed:-} ]] || check_first_failed=$what
	return 1
}

# Polls a real condition until it holds, at most timeout seconds (a bound
# for a busy, emulated machine, not a claim about how long things take).
wait_for() { # timeout_s command...
	local end
	end=$(awk -v t="$1" -v u="$(uptime_s)" 'BEGIN { printf "%d", (u + t) * 10 }')
	shift
	until "$@"; do
		(($(awk -v u="$(uptime_s)" 'BEGIN { printf "%d", u * 10 }') < end)) || return 1
		sleep 0.1
	done
}

# The value of KEY in a "key value" file (memory.events, memory.stat, ...).
kv() { # file key
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1" 2>/dev/null
}

vmstat_oom_kill() {
	kv /proc/vmstat oom_kill
}

alive() { # pid
	local state
	state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $state && $state != Z && $state != X ]]
}

dead() { # pid
	! alive "$1"
}

# The cgroup (v2 path, from the root) a process is in.
cgroup_of() { # pid
	sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null
}

# Whether the cgroup holds the kernel OOM killer off: oomkit's v2 hold is
# memory.high below memory.max.
held() { # cgroup (relative to the root)
	local high max
	high=$(cat "$CG/$1/memory.high" 2>/dev/null) && max=$(cat "$CG/$1/memory.max" 2>/dev/null) || return 1
	[[ $high != max && $max != max ]] && ((high < max))
}

# Every cgroup from rel down that is held.
held_below() { # cgroup
	local d
	for d in $(find "$CG/$1" -type d 2>/dev/null); do
		held "${d#"$CG"/}" && echo "${d#"$CG"/}"
	done
	return 0
}

prop() { # unit property
	systemctl show -P "$2" "$1"
}

# The unit's journal since the boot, as plain messages.
journal() { # unit
	journalctl -b -u "$1" -o cat --no-pager 2>/dev/null
}

journal_count() { # unit pattern
	journal "$1" | grep -c -- "$2" || true
}

journal_has_more() { # unit pattern n0
	(($(journal_count "$1" "$2") > $3))
}

# Waits for a line matching the pattern in the unit's journal, beyond the
# first n0 such lines.
wait_journal() { # timeout_s unit pattern [n0]
	wait_for "$1" journal_has_more "$2" "$3" "${4:-0}"
}

# A job that fits (the swap checks' and the swap benchmark's): writes to
# PATH a script that runs the hog for MIB MiB, waits until it holds nearly
# all of it (resident and in swap), holds it HOLD_S seconds and stops it;
# it fails if the hog dies first.  (A script of its own: systemd would
# expand the $ of a command line.)
fits_script() { # path hog mib hold_s
	cat >"$1" <<-EOF
	$2 $3 1024 2000 &
	p=\$!
	while [ "\$(awk '/^(RssAnon|VmSwap):/ { k += \$2 } END { print int(k / 1024) }' /proc/\$p/status)" -lt $(($3 - 8)) ]; do
		kill -0 \$p || exit 1
		sleep 1
	done
	sleep $4
	kill \$p || exit 1
	EOF
}

# The machine's full memory stall as PSI averages it over 10 s, in percent
# times 100 (avg10 with its two decimals, without the point).
full_avg10() {
	sed -n 's/^full avg10=\([0-9]*\)\.\([0-9]*\) .*/\1\2/p' /proc/pressure/memory
}

# Samples full_avg10 (a call, a sample) and keeps in $full_peak the highest
# avg10 seen and in $full_held the highest level that avg10 held through a
# whole S seconds (the least of the samples of the last S seconds, once
# they span that long): how near a job came to a rule of "full stall above
# a limit all through a duration".  full_reset starts again.
full_sample() { # s
	local a t i m=100000
	a=$(full_avg10)
	[ -n "$a" ] || return 0
	a=$((10#$a)) t=$(cut -d. -f1 /proc/uptime)
	full_t+=("$t") full_v+=("$a")
	((a > full_peak)) && full_peak=$a
	# Drop what is older than S, keeping one sample at or before it.
	while ((${#full_t[@]} > 1 && full_t[1] <= t - $1)); do
		full_t=("${full_t[@]:1}") full_v=("${full_v[@]:1}")
	done
	((full_t[0] <= t - $1)) || return 0
	for i in "${full_v[@]}"; do ((i < m)) && m=$i; done
	((m > full_held)) && full_held=$m
	return 0
}

full_reset() {
	full_t=() full_v=() full_peak=0 full_held=0
}

# A share in percent times 100, as "12.34".
pct() { # x100
	printf '%d.%02d' $(($1 / 100)) $(($1 % 100))
}

# Runs every check_* function of the file, in the order it defines them, or
# only those named in $SDG_ONLY (a comma list), and none named in $SDG_SKIP.
run_checks() { # file
	local name t0 passed=0 failed=0
	for name in $(sed -n 's/^check_\([a-z0-9_]*\)() {$/\1/p' "$1"); do
		[[ -z ${SDG_ONLY:-} || ,$SDG_ONLY, == *,"$name",* ]] || continue
		[[ ,${SDG_SKIP:-}, != *,"$name",* ]] || continue
		t0=$(uptime_s)
		say "RUN $name"
		check_failed=0 check_first_failed=
		"check_$name"
		if ((check_failed)) && [[ -s "$SDG_STDERR" ]]; then
			sed 's/^/sdguest:   stderr: /' "$SDG_STDERR"
		fi
		rm -f "$SDG_STDERR"
		note "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f s", b - a }')"
		if ((check_failed)); then
			# The first expectation that failed, on the line a log's
			# tail shows.
			say "FAIL $name (first not ok: $check_first_failed)"
			failed=$((failed + 1))
		else
			say "PASS $name"
			passed=$((passed + 1))
		fi
	done
	checks_passed=$passed checks_failed=$failed
}
