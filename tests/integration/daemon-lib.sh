# SPDX-License-Identifier: LGPL-2.1-or-later
# daemon-lib.sh - sourced by the test-daemon-*.sh and test-cli-*.sh tests:
# a private machine memcg per test (oomkit-test-daemon-PID-N directly under
# the memory root), oomkitd started on a config of the test's own, hogs in
# jobs, bounded waits on real conditions, and cleanup that runs on any exit.
#
# Environment (set by meson): OOMKITD, OOMKIT, OOMKIT_HOG; optionally
# OOMKIT_EXAMPLES (directory of the example handlers).
#
# Running programs as an unprivileged user (see "Other users" below):
# USER_A=65534 (nobody), other_uid (a second, dedicated test user),
# user_copy FILE, as_user UID CMD..., as_user_bg UID CMD..., spawn_as UID JOB MIB.

set -u

# The hierarchy the tests run on, from the mounts: cgroup v1 (the memory
# controller at /sys/fs/cgroup/memory), else cgroup v2 (the unified
# hierarchy at /sys/fs/cgroup with the memory controller).  CG_MODE is v1 or
# v2 (empty: neither); MEMROOT the mount; the FILE names below are the
# hierarchy's files for the same thing, so a test about oomkit's behaviour
# reads "$R/web/$LIMIT_FILE" on both; HOLD_FILE is where the daemon holds
# the kernel OOM killer off; MACHINE_KIND what oomkitd --check calls a
# machine below the mount.  require_kernel sets BASE, the
# cgroup below which the test's machine is made (relative to MEMROOT, empty
# for the mount itself).
if [ -f /sys/fs/cgroup/memory/memory.oom_control ]; then
	CG_MODE=v1 MEMROOT=/sys/fs/cgroup/memory CG_LINE=:memory:
	LIMIT_FILE=memory.limit_in_bytes USAGE_FILE=memory.usage_in_bytes HOLD_FILE=memory.oom_control
	MACHINE_KIND="a memcg in the cgroup v1 memory hierarchy"
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG_MODE=v2 MEMROOT=/sys/fs/cgroup CG_LINE=::
	LIMIT_FILE=memory.max USAGE_FILE=memory.current HOLD_FILE=memory.high
	MACHINE_KIND="a cgroup in the cgroup v2 hierarchy"
else
	CG_MODE='' MEMROOT=/sys/fs/cgroup/memory CG_LINE=:memory:
	LIMIT_FILE=memory.limit_in_bytes USAGE_FILE=memory.usage_in_bytes
fi
BASE=
# The CLI's tables are as wide as $COLUMNS says; without it, and writing to
# a file, 80 columns, which the tests that check widths expect.
unset COLUMNS
T_PASSED=0
T_FAILED=0

skip() {
	if [ "${OOMKIT_REQUIRE_KERNEL:-0}" = 1 ]; then
		# CI sets it so that nothing passes by skipping; the reason is
		# whatever is missing (a kernel feature, a tool, a user), said as is.
		echo "FAIL (OOMKIT_REQUIRE_KERNEL=1): $*" >&2
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

require_kernel() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -n "$CG_MODE" ] || skip "no memory controller: neither cgroup v1's at /sys/fs/cgroup/memory" \
		"nor cgroup v2's at /sys/fs/cgroup"
	[ "$CG_MODE" = v1 ] || v2_base "$@"
	for v in OOMKITD OOMKIT OOMKIT_HOG; do
		eval "p=\${$v:-}"
		[ -n "$p" ] && [ -x "$p" ] || { echo "FAIL: \$$v is not an executable: '$p'" >&2; exit 1; }
	done
}

# require_v1 WHY / require_v2 WHY: the test (or the rest of it) is about a
# file or a behaviour that only that hierarchy has; skips elsewhere, saying
# why (OOMKIT_REQUIRE_KERNEL=1 does not turn this skip into a failure: the
# other hierarchy's run covers it).
require_v1() { [ "$CG_MODE" = v1 ] || { echo "SKIP: cgroup v1 only: $*"; exit 77; }; }
require_v2() { [ "$CG_MODE" = v2 ] || { echo "SKIP: cgroup v2 only: $*"; exit 77; }; }

# v2_base: where the test may make cgroups on cgroup v2, in BASE.  On a
# systemd machine a cgroup belongs to its unit; a program makes its own only
# in a delegated one.  The test runs itself again inside a transient scope
# with Delegate=yes (systemd enables the memory controller along the path
# to it), moves itself into a leaf of it (a cgroup with processes cannot
# give controllers to its children) and makes its machine beside that leaf;
# systemd removes the scope once the test is gone.  Without systemd, BASE
# is the mount itself, with the memory controller given to its children.
v2_base() {
	local own
	if [ -d /run/systemd/system ] && [ -z "${OOMKIT_TEST_SCOPE:-}" ]; then
		command -v systemd-run >/dev/null || skip "systemd runs this machine, and systemd-run is missing"
		export OOMKIT_TEST_SCOPE=1
		exec systemd-run --scope --quiet --collect -p Delegate=yes -- bash "$0"
	fi
	if [ -n "${OOMKIT_TEST_SCOPE:-}" ]; then
		own=$(sed -n 's/^0:://p' /proc/self/cgroup)
		# A test that runs itself again (in a pid namespace, say) finds
		# itself already in the scope's leaf.
		case $own in *.scope/test) own=${own%/test} ;; esac
		case $own in
		*.scope) ;;
		*) fail "systemd-run --scope left this test in $own, not a scope" ;;
		esac
		mkdir -p "$MEMROOT$own/test" && echo $$ >"$MEMROOT$own/test/cgroup.procs" &&
			echo +memory >"$MEMROOT$own/cgroup.subtree_control" ||
			fail "cannot give the memory controller to the children of the delegated scope $own"
		BASE=${own#/}
	else
		grep -qw memory "$MEMROOT/cgroup.subtree_control" || echo +memory >"$MEMROOT/cgroup.subtree_control" ||
			fail "cannot give the memory controller to the children of $MEMROOT"
	fi
}

# The daemon's hold and the kernel's verdicts, read from the kernel's files
# of cgroup DIR (an absolute path) on either hierarchy:
# cg_held DIR: the kernel OOM killer is held off (v1 oom_kill_disable 1;
# v2 memory.high below memory.max, lib/cgroup-v2.c);
# cg_released DIR: not held off;
# cg_under_oom DIR: in an OOM with the killer held off (v1 under_oom 1; v2
# held, with usage within the hold's margin of memory.max and a quarter of
# it, which is where the library sees an OOM, lib/cgroup-v2.c);
# cg_out_of_oom DIR: not in one (v1 under_oom 0; v2 the opposite of the above);
# cg_kills DIR: the kernel OOM killer's kills in DIR and below (v1
# oom_control's oom_kill; v2 memory.events' oom_kill).
# cg_key FILE KEY: sets CG_VAL to KEY's value in a "key value" file, with no
# fork (test-daemon-scale asks a thousand jobs).
cg_key() {
	local k v
	CG_VAL=
	while read -r k v; do
		[ "$k" = "$2" ] && { CG_VAL=$v; return 0; }
	done <"$1"
	return 1
}
cg_held() {
	if [ "$CG_MODE" = v2 ]; then
		local high max
		read -r high <"$1/memory.high" && read -r max <"$1/memory.max" || return 1
		[ "$high" != max ] && { [ "$max" = max ] || [ "$high" -lt "$max" ]; }
	else
		cg_key "$1/memory.oom_control" oom_kill_disable && [ "$CG_VAL" = 1 ]
	fi
}
cg_released() {
	if [ "$CG_MODE" = v2 ]; then
		[ -f "$1/memory.high" ] && ! cg_held "$1"
	else
		cg_key "$1/memory.oom_control" oom_kill_disable && [ "$CG_VAL" = 0 ]
	fi
}
cg_under_oom() {
	if [ "$CG_MODE" = v2 ]; then
		local high cur max
		read -r high <"$1/memory.high" && read -r max <"$1/memory.max" &&
			read -r cur <"$1/memory.current" || return 1
		[ "$high" != max ] && [ "$max" != max ] && [ "$high" -lt "$max" ] &&
			[ "$cur" -ge $((max - (max - high) * 5 / 4)) ]
	else
		cg_key "$1/memory.oom_control" under_oom && [ "$CG_VAL" = 1 ]
	fi
}
cg_out_of_oom() {
	if [ "$CG_MODE" = v2 ]; then
		[ -f "$1/memory.current" ] && ! cg_under_oom "$1"
	else
		cg_key "$1/memory.oom_control" under_oom && [ "$CG_VAL" = 0 ]
	fi
}
# cg_mkdir [-p] DIR...: makes each cgroup, as mkdir does, with the memory
# controller: on v2 its parent gives it (as systemd does along the path to
# a unit that has a limit), after which the parent holds no process; on v1
# every memcg has it.
cg_mkdir() {
	local d p=
	[ "$1" = -p ] && { p=1; shift; }
	for d; do
		[ -n "$p" ] && [ -d "$d" ] && continue
		[ -n "$p" ] && [ ! -d "${d%/*}" ] && { cg_mkdir -p "${d%/*}" || return 1; }
		if [ "$CG_MODE" = v2 ] && ! grep -qw memory "${d%/*}/cgroup.subtree_control"; then
			echo +memory >"${d%/*}/cgroup.subtree_control" || return 1
		fi
		mkdir "$d" || return 1
	done
}
# cg_hold DIR / cg_unhold DIR: another handler's hold on DIR (an owner's own
# liboomkit, say) made and undone, the way that handler would write it.
cg_hold() {
	if [ "$CG_MODE" = v2 ]; then
		local max
		read -r max <"$1/memory.max" || return 1
		[ "$max" = max ] && max=$((1 << 40))
		echo $((max - max / 8)) >"$1/memory.high"
	else
		echo 1 >"$1/memory.oom_control"
	fi
}
cg_unhold() {
	if [ "$CG_MODE" = v2 ]; then
		echo max >"$1/memory.high"
	else
		echo 0 >"$1/memory.oom_control"
	fi
}
cg_kills() {
	if [ "$CG_MODE" = v2 ]; then
		sed -n 's/^oom_kill //p' "$1/memory.events"
	else
		sed -n 's/^oom_kill //p' "$1/memory.oom_control"
	fi
}

# Sets M (relative machine), R (absolute machine path), TMP, SOCK.
setup() {
	M="${BASE:+$BASE/}oomkit-test-daemon-$$-${1:-x}"
	R="$MEMROOT/$M"
	TMP=$(mktemp -d /tmp/oomkit-test-daemon.XXXXXX)
	SOCK="$TMP/oomkitd.sock"
	export OOMKIT_SOCKET="$SOCK"
	DPID=
	# Where user_copy stages programs for other uids (see "Other users");
	# made here, in the test's shell, since user_copy runs in $(...).
	USER_DIR=$(mktemp -d /tmp/oomkit-test-user.XXXXXX)
	trap cleanup EXIT
	mkdir "$USER_DIR/bin" && chmod 755 "$USER_DIR" "$USER_DIR/bin" || fail "cannot prepare $USER_DIR"
	trap 'exit 1' INT TERM
}

kill_tree() {
	local cg=$1 p
	[ -d "$cg" ] || return 0
	for sub in "$cg"/*/; do
		[ -d "$sub" ] && kill_tree "${sub%/}"
	done
	# Killed processes of a memcg whose killer is disabled still exit: SIGKILL wins.
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
}

rm_tree() {
	local cg=$1 i
	[ -d "$cg" ] || return 0
	for sub in "$cg"/*/; do
		[ -d "$sub" ] && rm_tree "${sub%/}"
	done
	for i in $(seq 1 100); do
		rmdir "$cg" 2>/dev/null && return 0
		kill_tree "$cg"
		sleep 0.05
	done
	echo "cleanup: could not remove $cg" >&2
}

# refused_calls PID...: the kernel's audit records (dmesg) of system calls
# that oomkitd's seccomp filter refused to these daemon or guardian
# processes; nothing when dmesg cannot be read.
refused_calls() {
	local p
	for p in "$@"; do
		dmesg 2>/dev/null | grep "type=1326" | grep " pid=$p " | grep -E 'comm="(oomkitd|oomkit-guardian)"'
	done
	return 0
}

stop_daemon() {
	[ -n "$DPID" ] || return 0
	local guardian refused
	guardian=$(pgrep -P "$DPID" -x oomkit-guardian)
	kill -TERM "$DPID" 2>/dev/null
	for i in $(seq 1 100); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	refused=$(refused_calls "$DPID" $guardian)
	DPID=
	# Every daemon test runs under the filter: a call it refused is a gap in
	# the allow-list (daemon/base/privs.c), even if the test passed around it.
	if [ -n "$refused" ]; then
		echo "$refused" >&2
		[ -n "${IN_CLEANUP:-}" ] || fail "the seccomp filter refused system calls of oomkitd (daemon/base/privs.c)"
	fi
}

cleanup() {
	local rc=$?
	trap - EXIT
	IN_CLEANUP=1
	stop_daemon
	for p in ${T_HELPERS:-}; do
		kill "$p" 2>/dev/null
	done
	kill_tree "$R"
	rm_tree "$R"
	kill_tree "$R-daemon"
	rm_tree "$R-daemon"
	kill_tree "$R-hooks"
	rm_tree "$R-hooks"
	if [ $rc != 0 ] && [ -f "$TMP/log" ]; then
		echo "--- oomkitd log" >&2
		cat "$TMP/log" >&2
	fi
	rm -rf "$TMP"
	[ -z "${USER_DIR:-}" ] || rm -rf "$USER_DIR"
	exit $rc
}

# write_config MACHINE_LIMIT CHAIN [DELAY] < job sections on stdin
write_config() {
	{
		echo "[oomkitd]"
		echo "machine = $R"
		echo "machine_limit = $1"
		echo "policy = $2"
		echo "delay = ${3:-2s}"
		echo "reserve = 16M"
		echo "report_dir = $TMP/reports"
		echo "socket = $SOCK"
		echo "metrics = $TMP/oomkit.prom"
		echo
		cat
	} > "$TMP/oomkitd.conf"
}

# wait_for TIMEOUT_S CMD...: polls CMD every 20 ms until it succeeds.
wait_for() {
	local timeout=$1 i
	shift
	for i in $(seq 1 $((timeout * 50))); do
		"$@" && return 0
		sleep 0.02
	done
	return 1
}

# timers_of PID: the it_value of each of its timerfds, one per line.
timers_of() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[timerfd]" ] || continue
		sed -n 's/^it_value: //p' "/proc/$1/fdinfo/${fd##*/}"
	done
}

# disarmed PID: it has timerfds and none is armed, so no timer can wake it.
disarmed() {
	local t
	t=$(timers_of "$1")
	[ -n "$t" ] && [ -z "$(echo "$t" | grep -v '^(0, 0)$')" ]
}

armed() { timers_of "$1" | grep -qv '^(0, 0)$'; }

daemon_ready() {
	grep -q "oomkitd ready" "$TMP/log" 2>/dev/null && [ -S "$SOCK" ]
}

# start_daemon [ARGS...]: waits for this daemon's own "ready": one killed
# before it leaves its line in the log and its socket behind.
start_daemon() {
	local before
	before=$(cat "$TMP/log" 2>/dev/null | grep -c "oomkitd ready")
	"$OOMKITD" -c "$TMP/oomkitd.conf" "$@" >>"$TMP/log" 2>&1 &
	DPID=$!
	# The log may not exist yet: the daemon's shell opens it.
	ready_after() { [ "$(grep -c "oomkitd ready" "$TMP/log" 2>/dev/null)" -gt "$before" ] 2>/dev/null && [ -S "$SOCK" ]; }
	wait_for 10 ready_after || fail "oomkitd did not become ready"
}

# in_memcg PID REL: PID's memory cgroup is REL (relative to the memory root).
# CG_LINE is what starts that line of /proc/PID/cgroup before the path.
in_memcg() { grep -q "^[0-9]*$CG_LINE/$2\$" "/proc/$1/cgroup" 2>/dev/null; }

# joined PID REL: PID is in REL, or has given up (gone, or a zombie).
joined() { in_memcg "$1" "$2" || ! alive "$1"; }

# spawn JOB MIB [STEP_KIB [PAUSE_US]]: a hog in the job; prints its pid once
# it is in the job (a test that asks where it is must not race its join).
# The shell execs the hog, so the pid is the hog's own.
spawn() {
	local job=$1 mib=$2 step=${3:-1024} pause=${4:-1000} bin=${HOG_BIN:-$OOMKIT_HOG}
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' sh "$R/$job" "$bin" "$mib" "$step" "$pause" \
		>/dev/null 2>&1 &
	local pid=$!
	wait_for 10 joined "$pid" "$M/$job"
	echo "$pid"
}

# --- Other users
#
# A test that runs a program as another uid must not run it from the build
# tree: the tree may live where only root can enter (a 0700 home, a mktemp -d
# clone).  user_copy stages the program (and the libraries it loads that the
# system does not provide, such as liboomkit.so from the build tree) in USER_DIR, a
# 0755 directory under /tmp that cleanup removes, and prints the copy's path:
#
#	hog=$(user_copy "$OOMKIT_HOG") || exit    # "|| exit": a skip inside $(...)
#	as_user $USER_A "$hog" 8 1024 1000          # foreground, exit code is the program's
#	as_user_bg $USER_A "$hog" 8 > "$TMP/out"; pid=$!   # background: $! is the program's own pid
#	pid=$(spawn_as $USER_A job 64)              # like spawn, the hog runs as that uid
#
# USER_A is nobody (65534), on every Debian system.  other_uid prints a second
# unprivileged uid, distinct from USER_A, for "another user" in a test: the
# system user oomkit-test (its own group, no home, no login shell), created on
# first use, once per machine (idempotent, safe when tests race).  Remove it
# with `userdel oomkit-test`.  Each missing prerequisite skips (or fails under
# OOMKIT_REQUIRE_KERNEL=1) naming itself, never the kernel.
USER_A=65534
TEST_USER=oomkit-test

# require_user_tools: setpriv runs a command as another uid.
require_user_tools() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
}

# other_uid: the uid of TEST_USER, created if it does not exist.
other_uid() {
	local uid
	uid=$(id -u "$TEST_USER" 2>/dev/null) && { echo "$uid"; return 0; }
	command -v useradd >/dev/null || skip "no useradd to create the test user $TEST_USER"
	# The lock serializes tests that create it at once; the second finds it.
	flock /tmp/oomkit-test-user.lock sh -c 'id -u "$1" >/dev/null 2>&1 ||
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin --comment "oomkit tests" "$1"' sh "$TEST_USER" >&2
	uid=$(id -u "$TEST_USER" 2>/dev/null) || skip "could not create the test user $TEST_USER (useradd failed)"
	[ "$uid" != 0 ] && [ "$uid" != "$USER_A" ] || skip "the test user $TEST_USER has uid $uid, not a second unprivileged uid"
	echo "$uid"
}

# user_gid UID: the user's primary group; the same number for a uid that
# has no entry in the user database.
user_gid() { id -g "$1" 2>/dev/null || echo "$1"; }

# user_argv UID: sets USER_ARGV to the words that run a command as UID
# (its primary group, no supplementary groups; staged libraries
# found first).  setpriv execs its command while it still holds root's
# capabilities, so it finds a program even where UID may not go (and a test
# seems to pass) while whatever that program opens or runs fails; env, which
# runs as UID with none, execs CMD the way that user would.
user_argv() {
	USER_ARGV=(setpriv --reuid "$1" --regid "$(user_gid "$1")" --clear-groups --)
	USER_ARGV+=(env LD_LIBRARY_PATH="${USER_DIR:-/nonexistent}/lib")
}

# as_user UID CMD...: CMD as UID, in the foreground; its exit code.
as_user() {
	user_argv "$1"
	shift
	"${USER_ARGV[@]}" "$@"
}

# as_user_bg UID CMD...: CMD as UID in the background.  setpriv and env exec,
# and no subshell is between, so $! afterwards is CMD's own pid and this
# shell may wait for it.  Inside $(...) it would be a subshell's: see spawn_as.
as_user_bg() {
	user_argv "$1"
	shift
	"${USER_ARGV[@]}" "$@" &
}

# unreachable PATH UID: the first directory on PATH's way that UID cannot
# enter, or PATH itself when it cannot read and execute it; nothing if it can.
unreachable() {
	local path=$1 uid=$2 d=""
	local IFS=/
	for part in ${path#/}; do
		d="$d/$part"
		if [ "$d" = "$path" ]; then
			as_user "$uid" test -r "$d" -a -x "$d" 2>/dev/null || echo "$d"
			return 0
		fi
		as_user "$uid" test -x "$d" 2>/dev/null || { echo "$d"; return 0; }
	done
}

# user_copy FILE [UID]: prints the path of a copy of FILE that UID (default
# USER_A) may run; skips naming the reason if it still cannot.
user_copy() {
	local src=$1 uid=${2:-$USER_A} dst lib where
	require_user_tools
	[ -f "$src" ] || { echo "FAIL: user_copy: no file '$src'" >&2; exit 1; }
	[ -n "${USER_DIR:-}" ] || { echo "FAIL: user_copy before setup" >&2; exit 1; }
	dst="$USER_DIR/bin/${src##*/}"
	if [ ! -e "$dst" ]; then
		cp "$src" "$dst" && chmod 755 "$dst" || fail "cannot copy $src to $dst"
		# The shared libraries it loads from outside the system's (the
		# build tree's, found through meson's LD_LIBRARY_PATH or a
		# RUNPATH), and any UID could not read.
		# The system's libraries (in ldconfig's cache) are asked about in
		# one go: a program linked with GTK loads a hundred.
		local libs system readable
		libs=$(ldd "$src" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')
		system=$(ldconfig -p 2>/dev/null | awk '{ print $NF }' | grep -xF -- "$libs")
		readable=$(as_user "$uid" sh -c 'for l; do test -r "$l" && echo "$l"; done' sh $system 2>/dev/null)
		for lib in $libs; do
			echo "$readable" | grep -qxF -- "$lib" && continue
			mkdir -p "$USER_DIR/lib" && chmod 755 "$USER_DIR/lib" &&
				cp "$lib" "$USER_DIR/lib/" && chmod 644 "$USER_DIR/lib/${lib##*/}" ||
				fail "cannot copy $lib to $USER_DIR/lib"
		done
	fi
	where=$(unreachable "$dst" "$uid")
	if [ "$where" = "$dst" ] && findmnt -no OPTIONS -T "$dst" 2>/dev/null | grep -qw noexec; then
		skip "uid $uid cannot execute $dst: $(findmnt -no TARGET -T "$dst") is mounted noexec" >&2
	fi
	[ -z "$where" ] || skip "uid $uid cannot reach $where, on the way to its copy of $src" >&2
	if as_user "$uid" ldd "$dst" 2>/dev/null | grep -q "not found"; then
		skip "uid $uid cannot load the libraries of $dst:$(as_user "$uid" ldd "$dst" 2>&1 | grep "not found" | tr -s ' \t\n' ' ')" >&2
	fi
	echo "$dst"
}

# spawn_as UID JOB MIB [STEP_KIB [PAUSE_US]]: like spawn, but the hog runs as
# UID: root moves the shell into the job, which then becomes UID and the hog
# (same pid).  Stage the hog first (user_copy "$OOMKIT_HOG" UID), since this
# runs in $(...) and a skip there would not end the test.
spawn_as() {
	local uid=$1 job=$2 mib=$3 step=${4:-1024} pause=${5:-1000} bin
	bin=${HOG_BIN:-$OOMKIT_HOG}
	bin="${USER_DIR:-/nonexistent}/bin/${bin##*/}"
	[ -x "$bin" ] || { echo "FAIL: spawn_as: stage the hog with user_copy first" >&2; exit 1; }
	sh -c 'echo $$ > "$1/cgroup.procs" && exec setpriv --reuid "$2" --regid "$3" --clear-groups -- \
		env LD_LIBRARY_PATH="$4/lib" "$5" "$6" "$7" "$8"' \
		sh "$R/$job" "$uid" "$(user_gid "$uid")" "$USER_DIR" "$bin" "$mib" "$step" "$pause" >/dev/null 2>&1 &
	local pid=$!
	wait_for 10 joined "$pid" "$M/$job"
	echo "$pid"
}

# alive PID: exists and is neither a zombie nor dead (the meaning of
# th_alive in tests/helpers/testhelp.c).  The state is the field after the
# last ") ": a comm may hold spaces, parentheses and newlines.
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	s=${s%% *}
	[ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ] && [ "$s" != x ]
}

dead() { ! alive "$1"; }

usage_at_least() { # REL BYTES
	[ "$(cat "$R/$1/$USAGE_FILE" 2>/dev/null || echo 0)" -ge "$2" ]
}

report_count() { # regular files only: a planted link is not a report
	find "$TMP/reports" -maxdepth 1 -type f -name 'oom-*.json' 2>/dev/null | wc -l
}

has_reports() { [ "$(report_count)" -ge "$1" ]; }

# json_get FILE EXPR: a python expression on the parsed report "r".  A report
# is completed after its action, so an unfinished one is read again (10 s at most).
json_get() {
	python3 -c '
import json, sys, time
for _ in range(200):
    try:
        r = json.load(open(sys.argv[1]))
        break
    except (ValueError, OSError):
        time.sleep(0.05)
else:
    sys.exit("no complete report at %s" % sys.argv[1])
print(eval(sys.argv[2]))' "$1" "$2"
}

# The newest complete report (a report is finished after its action).
latest_report() {
	ls "$TMP/reports"/oom-*.json 2>/dev/null | sort | tail -n 1
}

ok() {
	T_PASSED=$((T_PASSED + 1))
	echo "ok - $*"
}

fail() {
	T_FAILED=$((T_FAILED + 1))
	echo "FAIL - $*" >&2
	echo "$T_PASSED passed, $T_FAILED failed"
	exit 1
}

check() { # DESCRIPTION CMD...
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}

finish() {
	echo "$T_PASSED passed, $T_FAILED failed"
	[ "$T_FAILED" = 0 ]
}
