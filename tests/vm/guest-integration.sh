#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
#
# guest-integration.sh - the integration tier (tests/integration) on cgroup
# v2 with systemd as PID 1: systemd.sh --checks runs this file in the
# systemd guest instead of guest-systemd.sh.  The host's build ships the test
# programs (--with: test-kill and the other library tests, the hog, the
# victim, the examples) and the test scripts with their helpers (--data:
# test-daemon-*.sh, daemon-lib.sh, control-client.py, ...) to /opt/oomkit-test;
# meson install put oomkitd and oomkit where an admin's install would.  No
# meson in the guest: each test runs here as meson runs it on the host, with
# the same environment, one at a time, and its exit status is its verdict
# (0 pass, 77 skip, anything else fail).  OOMKIT_REQUIRE_KERNEL stays unset:
# a test that skips on v2 says why (a v1-only kernel file), and the line
# shows it.
#
# Prints "sdguest: PASS NAME" / "sdguest: FAIL NAME" per test (what
# systemd.sh counts) and "sdguest: SKIP NAME: REASON"; a failed test's
# output follows its line.  SDG_ONLY / SDG_SKIP (--only / --skip) name tests
# as meson does (daemon-machine, kill), with _ for -; --only's run in its
# order, and one it names that was not shipped fails.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/guest-systemd-lib.sh"
bin=$here/bin

export OOMKITD OOMKIT
export OOMKIT_HOG=$bin/oomkit-hog OOMKIT_VICTIM=$bin/oomkit-victim OOMKIT_HOSTILE=$bin/oomkit-hostile
export OOMKIT_PRELOAD_HOG=$bin/liboomkit-preload-hog.so OOMKIT_EXAMPLES=$bin
unset OOMKIT_REQUIRE_KERNEL

# The tests, shell and C, by the name meson gives them: those of --only in
# its order (the cheap ones first, say), else all that were shipped.
tests() {
	local f n
	if [[ -n ${SDG_ONLY:-} ]]; then
		for n in ${SDG_ONLY//,/ }; do
			echo "${n//_/-}"
		done
		return
	fi
	for f in "$here"/test-*.sh "$bin"/test-*; do
		[[ -f $f ]] || continue
		f=${f##*/test-}
		echo "${f%.sh}"
	done
}

wanted() { # name
	local n=${1//-/_}
	[[ -z ${SDG_ONLY:-} || ,$SDG_ONLY, == *,"$n",* ]] && [[ ,${SDG_SKIP:-}, != *,"$n",* ]]
}

run_one() { # name
	local name=$1 out rc t0 why
	t0=$(uptime_s)
	say "RUN $name"
	if [[ -f $here/test-$name.sh ]]; then
		out=$(cd /tmp && timeout -k 10 480 bash "$here/test-$name.sh" 2>&1 </dev/null)
	elif [[ -x $bin/test-$name ]]; then
		out=$(cd /tmp && timeout -k 10 180 "$bin/test-$name" 2>&1 </dev/null)
	else
		out="not shipped to the guest (systemd.sh --data or --with)"
		false
	fi
	rc=$?
	note "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f s", b - a }')"
	case $rc in
	0)
		say "PASS $name"
		passed=$((passed + 1))
		;;
	77)
		why=$(grep -m 1 -E 'SKIP' <<<"$out" | sed 's/^.*SKIP[^:]*: *//')
		say "SKIP $name: ${why:-no reason given}"
		skipped=$((skipped + 1))
		;;
	*)
		tail -n 80 <<<"$out" | sed 's/^/sdguest:   | /'
		say "FAIL $name (exit $rc)"
		failed=$((failed + 1))
		;;
	esac
}

passed=0 failed=0 skipped=0
say "START"
note "cgroup v2: $(cat /sys/fs/cgroup/cgroup.controllers)"
for t in $(tests); do
	wanted "$t" && run_one "$t"
done
say "RESULT $passed passed, $failed failed, $skipped skipped"
sync
"$SDG_QEXIT" $((failed > 0 ? 1 : 0))
systemctl poweroff --force --force
