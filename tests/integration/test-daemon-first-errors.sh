#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Errors that name their cause: oomkitd started by another user than root
# says it needs root, first and alone (not the failures that follow from
# it), while --check works as any user; a hook runner that is not there is
# named with why, at start and by --check of a configuration with hooks,
# and no "No child processes" is logged.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup first-errors
require_user_tools
NOBODY=$USER_A
chmod 755 "$TMP"

write_config 256M "report, kernel" <<EOF2
[job web]
limit = 32M
before_kill = /bin/true
EOF2
chmod 644 "$TMP/oomkitd.conf"
USER_OOMKITD=$(user_copy "$OOMKITD" $NOBODY) || exit

# As nobody: one line, that one; nothing made or opened.
as_user $NOBODY "$USER_OOMKITD" -c "$TMP/oomkitd.conf" >"$TMP/nobody.out" 2>&1
rc=$?
check "as another user: exit 1" test $rc = 1
check "as another user: says it needs root" grep -q "oomkitd needs root" "$TMP/nobody.out"
check "as another user: nothing else (got: $(cat "$TMP/nobody.out"))" test "$(wc -l <"$TMP/nobody.out")" = 1
check "as another user: no machine memcg made" test ! -d "$R"
as_user $NOBODY "$USER_OOMKITD" --release >"$TMP/release.out" 2>&1
check "--release as another user: exit 1, needs root" \
	eval "[ $? = 1 ] && grep -q 'oomkitd needs root' '$TMP/release.out'"
out=$(as_user $NOBODY "$USER_OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check as another user reads the file ($out)" \
	eval "[ \$? = 0 ] && echo \"\$out\" | grep -qx '$TMP/oomkitd.conf: ok, 1 job'"

# A runner that is not there: --check names it and says hooks will not run.
missing=$TMP/no-such-runner
out=$(OOMKIT_HOOK_RUNNER=$missing "$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check, runner missing: still ok" eval "[ \$? = 0 ] && echo \"\$out\" | grep -q ': ok, 1 job'"
check "--check, runner missing: named, with why ($out)" \
	eval "echo \"\$out\" | grep -qF '$TMP/oomkitd.conf: the hook runner $missing: No such file or directory; hooks will not run'"
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check, runner there: no word of it ($out)" eval "! echo \"\$out\" | grep -q 'hook runner'"
sed '/^before_kill/d' "$TMP/oomkitd.conf" >"$TMP/nohooks.conf"
out=$(OOMKIT_HOOK_RUNNER=$missing "$OOMKITD" --check -c "$TMP/nohooks.conf" 2>&1)
check "--check without hooks: no word of the runner ($out)" eval "! echo \"\$out\" | grep -q 'hook runner'"

# At start: the runner named with why, an error since there are hooks, and
# the daemon runs without them.
OOMKIT_HOOK_RUNNER=$missing start_daemon
check "start, runner missing: named, with why" \
	grep -qF "<3>hooks: the hook runner $missing: No such file or directory; hooks will not run" "$TMP/log"
check "start, runner missing: no 'No child processes'" eval "! grep -q 'No child processes' '$TMP/log'"
check "start, runner missing: the daemon answers" "$OOMKIT" status
check "start with a job: no word of having none" eval "! grep -q 'no job' '$TMP/log'"
stop_daemon

# prompt with the default delay: one second to answer.  --check still
# accepts the file, and warns naming the chain's line; with 10s, no word.
write_config 256M "report, prompt, kill-lowest, kernel" <<EOF2
[job web]
limit = 32M
EOF2
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check, prompt with 2s: ok, and warns at the policy line ($out)" \
	eval "[ \$? = 0 ] && echo \"\$out\" | grep -qxF '$TMP/oomkitd.conf:4: warning: [oomkitd] policy: prompt waits half the delay for an answer, 1s (delay = 2s at line 5): too short for a person to read the question and answer; give it a delay of at least 10s'"
sed -i 's/^delay = 2s$/delay = 10s/' "$TMP/oomkitd.conf"
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check, prompt with 10s: no warning ($out)" eval "! echo \"\$out\" | grep -q 'prompt waits'"

# No job: the daemon runs and handles no OOM.  --check and the start say so,
# why, and what to do: the file to add jobs to, the man page's examples.
case $(stat -fc %T "$MEMROOT") in
cgroup2fs) why="the file names none" ;;
*) why="the memory controller is on cgroup v1, which has no built-in jobs" ;;
esac
advice="no job: oomkitd handles no OOM on this machine ($why); add [job NAME] sections to $TMP/oomkitd.conf: see EXAMPLES in oomkitd.conf(5) (man oomkitd.conf)"
write_config 256M "report, kernel" </dev/null
out=$("$OOMKITD" --check -c "$TMP/oomkitd.conf" 2>&1)
check "--check, no job: ok, and says it handles nothing, why and what to do ($out)" \
	eval "[ \$? = 0 ] && echo \"\$out\" | grep -qx '$TMP/oomkitd.conf: ok, 0 jobs' &&
		echo \"\$out\" | grep -qxF '$TMP/oomkitd.conf: warning: $advice'"
if [ "$(stat -fc %T "$MEMROOT")" != cgroup2fs ]; then
	# No file at all: the built-in default, which has no job on cgroup v1;
	# the file named is the one the unit reads.
	out=$("$OOMKITD" --check 2>&1)
	check "--check, no file on cgroup v1: no job, and where to add them ($out)" \
		eval "echo \"\$out\" | grep -q '^(built-in): warning: no job: oomkitd handles no OOM on this machine (the memory controller is on cgroup v1, which has no built-in jobs); add \[job NAME\] sections to /.*/oomkit/oomkitd.conf: see EXAMPLES in oomkitd.conf(5)'"
fi
start_daemon
check "start, no job: the warning follows the ready line" \
	eval "grep -A1 'oomkitd ready: machine $R, 0 jobs' '$TMP/log' | grep -qxF '<4>$advice'"
stop_daemon
finish
