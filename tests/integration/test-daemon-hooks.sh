#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hooks: before_kill, after_kill on real job OOMs with the kernel
# killer held off (cgroup v1), run by the hook runner in memcgs of their own.
#   - the environment is as oomkitd.conf(5) documents it, every value from
#     the victim escaped; before_kill sees the victim alive, after_kill sees
#     it gone; each runs in its own memcg; the report records both;
#   - a hook that sleeps forever is killed at its timeout, and the kill goes on;
#   - a missing hook is logged, and the kill goes on;
#   - a hook that crashes is logged with its signal;
#   - a hook whose memcg runs out is the kernel's to kill there, and the next
#     OOM of another job is handled meanwhile.
#   - a runner that does not answer (SIGSTOP) holds nothing up: the kill goes
#     ahead at the hook's timeout and the hook is reported lost; a runner
#     that dies leaves hooks not run, and kills go on;
#   - the runner exits with the daemon, and the hooks' memcgs are removed.
#   - a victim gone before its kill (its before_kill ends it, as the kernel's
#     killer or its own exit would): the OOM goes on, so the same step
#     chooses again, and the next step (kernel) is not reached;
#   - a victim whose end frees nothing of its job's (its memory is charged
#     elsewhere), so no task waiting in the OOM wakes and no event comes
#     again: the chain runs again by itself, before the delay's kernel;
#   - a machine OOM runs the victim's job's before_kill, told that job.
#   - nine hooks at once in eight slots: the ninth is not run, its kill goes on.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
[ -x "${OOMKIT_HOOK_RUNNER:-}" ] || { echo "FAIL: \$OOMKIT_HOOK_RUNNER is not an executable" >&2; exit 1; }
setup hooks

# The hook that tells what it was given: its OOMKIT_* variables, whether the
# victim is alive, and its memcg, into files named after its first argument.
cat > "$TMP/hook" <<'EOF'
#!/bin/sh
out=$(dirname "$0")/$1
env | grep '^OOMKIT_' | sort > "$out.env"
# Alive: neither gone nor a zombie (the test's shell reaps its children late).
state=$(sed 's/.*) //' "/proc/$OOMKIT_PID/stat" 2>/dev/null | cut -d' ' -f1)
case "$state" in ''|Z|X|x) echo gone ;; *) echo alive ;; esac > "$out.victim"
# The memory controller's line: v1's, else v2's one hierarchy.
{ grep ':memory:' /proc/self/cgroup || grep '^0::' /proc/self/cgroup; } | cut -d: -f3 > "$out.memcg"
echo "hook $1 says hello"
EOF
chmod 755 "$TMP/hook"
# A victim whose comm holds an escape sequence: it must reach the hook escaped.
weird="$TMP/v$(printf '\033')]0;x$(printf '\a')"
cp "$OOMKIT_HOG" "$weird"

write_config 1G "report, kill-lowest, kernel" 4s <<EOF2
hook_memory = 16M

[job envy]
limit = 64M
policy = kill-largest, kernel
before_kill = $TMP/hook before
after_kill = $TMP/hook after

[job sleepy]
limit = 64M
policy = kill-largest, kernel
before_kill = /bin/sleep 1001
hook_timeout = 300ms

[job missing]
limit = 64M
policy = kill-largest, kernel
before_kill = $TMP/no-such-hook --at-all

[job crash]
limit = 64M
policy = kill-largest, kernel
after_kill = /bin/sh -c "kill -SEGV \$\$"

[job greedy]
limit = 64M
policy = kill-largest, kernel
before_kill = $OOMKIT_HOG 200
hook_timeout = 3s

[job next]
limit = 64M
policy = kill-largest, kernel

[job away]
limit = 200M
policy = kill-largest, kernel

[job vanish]
limit = 32M
policy = kill-largest, kernel
before_kill = $TMP/vanish-hook
hook_timeout = 3s

[job moved]
limit = 32M
policy = kill-largest, kernel
EOF2
# Ends the first victim it is told of, and only that one.
cat > "$TMP/vanish-hook" <<'EOF'
#!/bin/sh
mark=$(dirname "$0")/vanished
[ -e "$mark" ] && exit 0
echo "$OOMKIT_PID" > "$mark"
kill -KILL "$OOMKIT_PID"
# Gone (a zombie at most) before the hook ends, however loaded the machine:
# the daemon looks for it when the hook has ended.
while s=$(sed 's/.*) //' "/proc/$OOMKIT_PID/stat" 2>/dev/null | cut -d' ' -f1) && [ -n "$s" ]; do
	case "$s" in Z|X|x) break ;; esac
	sleep 0.01
done
EOF
chmod 755 "$TMP/vanish-hook"
start_daemon

reports_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort; }
report_of() { reports_of "$1" | tail -n 1; }
# complete_reports JOB N: JOB has N reports, each finished (its timings written).
complete_reports() { [ "$(reports_of "$1" | wc -l)" = "$2" ] && ! grep -L '"timings_ms"' $(reports_of "$1") | grep -q .; }
has_report_of() { [ -n "$(report_of "$1")" ]; }
hook_field() { json_get "$(report_of "$1")" "r['hooks'][$2]['$3']"; }
n_hooks() { json_get "$(report_of "$1")" "len(r.get('hooks', []))"; }
env_is() { grep -qxF -- "$2" "$TMP/$1.env"; }
line_of() { grep -n -- "$1" "$TMP/log" | head -n 1 | cut -d: -f1; }

# The environment, before and after.
a=$(HOG_BIN=$weird spawn envy 100)
check "envy: the victim is killed" wait_for 20 dead "$a"
check "envy: a report" wait_for 20 has_report_of envy
check "envy: the report records two hooks" wait_for 10 test "$(n_hooks envy)" = 2
rep=$(report_of envy)
check "envy: before_kill ran" test -s "$TMP/before.env"
check "envy: OOMKIT_HOOK" env_is before "OOMKIT_HOOK=before_kill"
check "envy: OOMKIT_JOB" env_is before "OOMKIT_JOB=envy"
check "envy: OOMKIT_PID" env_is before "OOMKIT_PID=$a"
check "envy: OOMKIT_CGROUP" env_is before "OOMKIT_CGROUP=$R/envy"
check "envy: OOMKIT_COMM, escaped" env_is before 'OOMKIT_COMM=v\x1b]0;x\x07'
check "envy: no raw escape byte reached the hook" test -z "$(grep -l "$(printf '\033')" "$TMP/before.env")"
rss=$(sed -n 's/^OOMKIT_RSS_BYTES=//p' "$TMP/before.env")
check "envy: OOMKIT_RSS_BYTES ($rss) is the victim's, most of 64 MiB" test "${rss:-0}" -ge $((32 << 20))
check "envy: OOMKIT_REASON" grep -q "^OOMKIT_REASON=.*largest" "$TMP/before.env"
check "envy: OOMKIT_REPORT is the report" env_is before "OOMKIT_REPORT=$rep"
check "envy: before_kill saw the victim alive" test "$(cat "$TMP/before.victim")" = alive
check "envy: after_kill saw it gone" test "$(cat "$TMP/after.victim")" = gone
check "envy: after_kill has the same details" env_is after "OOMKIT_PID=$a"
check "envy: each hook in a memcg of its own, below $M-hooks" grep -q "^/$M-hooks/[0-9]\$" "$TMP/before.memcg"
check "envy: the report: before_kill exited 0" test "$(hook_field envy 0 hook) $(hook_field envy 0 ended) $(hook_field envy 0 exit_status)" = "before_kill exited 0"
check "envy: the report: after_kill exited 0" test "$(hook_field envy 1 hook) $(hook_field envy 1 ended) $(hook_field envy 1 exit_status)" = "after_kill exited 0"
shown=$("$OOMKIT" reports show "$(json_get "$rep" "r['id']")" 2>&1)
check "envy: oomkit reports show lists the hooks" grep -q "hooks: *before_kill exited 0 after [0-9]* ms; after_kill exited 0" <<<"$shown"
check "envy: the hook's output is logged" grep -q "hook before_kill [0-9]*: hook before says hello" "$TMP/log"
ended=$(line_of "hook before_kill [0-9]*: exited 0")
killed=$(line_of "envy: killed $a")
check "envy: the kill waited for before_kill" test -n "$ended" -a -n "$killed" -a "${ended:-0}" -lt "${killed:-0}"
check "envy: the kernel killed nothing" test "$(cg_kills "$R/envy")" = 0
echo "figures: envy: before_kill ran $(hook_field envy 0 duration_ms) ms, after_kill $(hook_field envy 1 duration_ms) ms;" \
	"OOM -> decision $(json_get "$rep" "r['timings_ms']['decision']") ms, -> kill $(json_get "$rep" "r['timings_ms']['action']") ms"

# A hook that sleeps forever: killed at its timeout, and the kill goes on.
b=$(spawn sleepy 100)
check "sleepy: the victim is killed" wait_for 20 dead "$b"
check "sleepy: a report" wait_for 20 has_report_of sleepy
check "sleepy: the report says the hook timed out" wait_for 10 test "$(hook_field sleepy 0 ended 2>/dev/null)" = timeout
check "sleepy: at its timeout" test "$(hook_field sleepy 0 timeout_ms)" = 300
check "sleepy: the hook is gone" wait_for 10 sh -c '! pgrep -f "^/bin/sleep 1001" >/dev/null'
check "sleepy: logged" grep -q "hook before_kill [0-9]*: timed out after 300ms" "$TMP/log"
check "sleepy: the kernel killed nothing" test "$(cg_kills "$R/sleepy")" = 0

# A missing hook: logged, the kill goes on.
c=$(spawn missing 100)
check "missing: the victim is killed" wait_for 20 dead "$c"
check "missing: a report" wait_for 20 has_report_of missing
check "missing: the report says not run" wait_for 10 test "$(hook_field missing 0 ended 2>/dev/null)" = "not run"
check "missing: and why" test "$(hook_field missing 0 error)" = "No such file or directory"
check "missing: logged" grep -q "hook before_kill [0-9]*: not run: No such file or directory" "$TMP/log"

# A hook that crashes: its signal is logged and reported.
d=$(spawn crash 100)
check "crash: the victim is killed" wait_for 20 dead "$d"
check "crash: the report says SIGSEGV" wait_for 20 test "$(hook_field crash 0 signal 2>/dev/null)" = SIGSEGV
check "crash: logged" grep -q "hook after_kill [0-9]*: killed by SIGSEGV" "$TMP/log"

# A hook that runs out of its memcg (16M, the hog wants 200M) while another
# job's OOM comes: the daemon handles that one, and the hook's memcg's own
# OOM killer ends the hook.
slot_kills() { for d in "$R-hooks"/*/; do cg_kills "$d" 2>/dev/null; done | awk '{ n += $1 } END { print n + 0 }'; }
before_kills=$(slot_kills)
e=$(spawn greedy 100)
f=$(spawn next 100)
check "next: handled while greedy's hook runs out" wait_for 20 dead "$f"
check "next: by the daemon" wait_for 20 has_report_of next
check "next: the kernel killed nothing in it" test "$(cg_kills "$R/next")" = 0
echo "figures: next (no hook): OOM -> kill $(json_get "$(report_of next)" "r['timings_ms']['action']") ms"
check "greedy: the victim is killed" wait_for 20 dead "$e"
check "greedy: the hook was killed in its memcg" wait_for 20 test "$(hook_field greedy 0 signal 2>/dev/null)" = SIGKILL
check "greedy: by its memcg's OOM killer" test "$(slot_kills)" -gt "$before_kills"
check "the daemon is alive" kill -0 "$DPID"
runner=$(pgrep -P "$DPID" -x oomkit-hook-run)
check "the hook runner is alive" test -n "$runner"
echo "figures: hook runner $(grep -E '^(VmRSS|RssAnon|RssFile)' "/proc/$runner/status" | tr -s ' \t\n' ' ')"

# A victim gone before its kill, while the OOM goes on.  The largest
# process in vanish allocated its 100 MiB in away and moved in (cgroup v1
# leaves the charge where it was made): kill-largest chooses it, and its
# end frees nothing of vanish's, whose hog stays out of memory.  The step
# must choose again (the hog), not pass the OOM to the next step, kernel.
# move_big JOB: a process holding 100 MiB charged to away, moved into JOB; its pid.
move_big() {
	local pid
	pid=$(spawn away 100)
	wait_for 20 usage_at_least away $((100 << 20)) && echo "$pid" > "$R/$1/cgroup.procs" && echo "$pid"
}
big=$(move_big vanish)
check "vanish: a process holding 100 MiB charged to away moved in" in_memcg "$big" "$M/vanish"
small=$(spawn vanish 100)
check "vanish: the first victim, the big one, is gone" wait_for 20 dead "$big"
check "vanish: its before_kill ended it" test "$(cat "$TMP/vanished" 2>/dev/null)" = "$big"
check "vanish: the hog is killed next" wait_for 20 dead "$small"
check "vanish: two reports" wait_for 20 complete_reports vanish 2
first=$(reports_of vanish | head -n 1)
second=$(reports_of vanish | tail -n 1)
check "vanish: the first chose the big one" test "$(json_get "$first" "r['decision']['victim_pid']")" = "$big"
check "vanish: and says it was gone" grep -q "\"outcome\":\"$big was gone when before_kill had ended: nothing killed\"" "$first"
check "vanish: the second is kill-largest's again" test "$(json_get "$second" "r['decision']['policy']") $(json_get "$second" "r['decision']['victim_pid']")" = "kill-largest $small"
check "vanish: logged" grep -q "vanish: the victim was gone before the kill, and the OOM goes on: kill-largest chooses again" "$TMP/log"
check "vanish: not passed to the kernel" test "$(cg_kills "$R/vanish")" = 0

# The same move, killed by the daemon itself: its end frees nothing of
# moved's, the hog is not woken, and no event comes again.  The chain must
# run again by itself (the delay, 4 s, would have handed the OOM to the
# kernel) and kill the hog.
big=$(move_big moved)
check "moved: a process holding 100 MiB charged to away moved in" in_memcg "$big" "$M/moved"
small=$(spawn moved 100)
check "moved: the big one is killed first" wait_for 20 dead "$big"
check "moved: then the hog" wait_for 20 dead "$small"
check "moved: two reports" wait_for 20 complete_reports moved 2
first=$(reports_of moved | head -n 1)
second=$(reports_of moved | tail -n 1)
check "moved: the first killed the big one" test "$(json_get "$first" "r['decision']['victim_pid']")" = "$big"
check "moved: the second the hog, by kill-largest" test "$(json_get "$second" "r['decision']['policy']") $(json_get "$second" "r['decision']['victim_pid']")" = "kill-largest $small"
check "moved: logged" grep -q "moved: the victim has exited and the OOM goes on: the chain runs again" "$TMP/log"
check "moved: not passed to the kernel" test "$(cg_kills "$R/moved")" = 0

# A runner that does not answer (stopped): the daemon's own timer gives up
# on the hook a second after its timeout, and the kill went ahead at it.
n_sleepy=$(ls "$TMP/reports"/oom-*-sleepy.json | wc -l)
kill -STOP "$runner"
g=$(spawn sleepy 100)
check "stopped runner: the victim is killed all the same" wait_for 20 dead "$g"
two_sleepy() { [ "$(ls "$TMP/reports"/oom-*-sleepy.json | wc -l)" -gt "$n_sleepy" ]; }
check "stopped runner: a report" wait_for 20 two_sleepy
check "stopped runner: the hook is taken as lost" wait_for 10 test "$(hook_field sleepy 0 ended 2>/dev/null)" = lost
check "stopped runner: logged" grep -q "hook before_kill 0: no answer from the hook runner" "$TMP/log"
kill -CONT "$runner"
check "stopped runner: once it runs again, no hook is left behind" wait_for 10 sh -c '! pgrep -f "^/bin/sleep 1001" >/dev/null'

stop_daemon
check "the hook runner exits with the daemon" wait_for 10 sh -c "! kill -0 $runner 2>/dev/null"
check "the hooks' memcgs are removed" wait_for 10 test ! -d "$R-hooks"

# A runner that dies: its hooks are not run, the kills go on.
start_daemon
runner=$(pgrep -P "$DPID" -x oomkit-hook-run)
kill -KILL "$runner"
check "dead runner: the daemon notices" wait_for 10 grep -q "hooks: the hook runner $runner is gone" "$TMP/log"
h=$(spawn missing 100)
check "dead runner: the victim is killed all the same" wait_for 20 dead "$h"
check "dead runner: the report says the hook was not run" wait_for 20 test "$(hook_field missing 0 ended 2>/dev/null) $(json_get "$(report_of missing)" "r['decision']['victim_pid']")" = "not run $h"
check "dead runner: the daemon is alive" kill -0 "$DPID"
stop_daemon

# A machine OOM: the victim's job's hooks run, told the victim's job.
rm_tree "$R-hooks"
write_config 96M "report, kill-lowest, kernel" 4s <<EOF2
[job low]
priority = 100
policy = report, kernel
before_kill = $TMP/hook machine

[job high]
priority = 900
policy = report, kernel
EOF2
start_daemon
keep=$(spawn high 32)
check "machine: high's process holds 32 MiB" wait_for 20 usage_at_least high $((30 << 20))
v=$(spawn low 100)
check "machine: the victim in low dies" wait_for 20 dead "$v"
check "machine: high's process lives" alive "$keep"
mrep() { ls "$TMP/reports"/oom-*-machine.json 2>/dev/null | sort | tail -n 1; }
check "machine: a machine report" wait_for 20 test -n "$(mrep)"
check "machine: by kill-lowest" test "$(json_get "$(mrep)" "r['decision']['policy']")" = kill-lowest
check "machine: its before_kill ran, told the victim's job" env_is machine "OOMKIT_JOB=low"
check "machine: and the victim" env_is machine "OOMKIT_PID=$v"
check "machine: the report records it" test "$(json_get "$(mrep)" "r['hooks'][0]['hook']") $(json_get "$(mrep)" "r['hooks'][0]['ended']")" = "before_kill exited"
kill "$keep"
stop_daemon

# Nine hooks at once, eight slots: the ninth is not run, its kill goes on.
# The eight hold their slots until the test lets them go, so the ninth OOM
# finds them busy however slowly a loaded machine starts the nine hogs (a
# hook's timeout is tested by sleepy above).
rm_tree "$R-hooks"
cat > "$TMP/hold" <<'EOF'
#!/bin/sh
while [ ! -e "$1" ]; do sleep 0.1; done
EOF
chmod 755 "$TMP/hold"
for i in 1 2 3 4 5 6 7 8 9; do
	printf '[job busy%s]\nlimit = 32M\npolicy = kill-largest, kernel\nbefore_kill = %s %s\nhook_timeout = 500s\n\n' "$i" "$TMP/hold" "$TMP/release"
done | write_config 1G "report, kill-lowest, kernel" 600s
start_daemon
pids=
for i in 1 2 3 4 5 6 7 8 9; do pids="$pids $(spawn busy$i 64)"; done
check "busy: the ninth is not run" wait_for 60 grep -q "before_kill not run: 8 hooks run already" "$TMP/log"
touch "$TMP/release"
all_dead() { for p in $pids; do alive "$p" && return 1; done; return 0; }
check "busy: all nine victims are killed" wait_for 30 all_dead
busy_runs() { cat "$TMP/reports"/oom-*-busy*.json 2>/dev/null | grep -o '"ended":"[a-z ]*"' | sort | uniq -c | tr -s ' ' | tr '\n' ';'; }
nine_reports() { [ "$(ls "$TMP/reports"/oom-*-busy*.json 2>/dev/null | wc -l)" = 9 ] && ! grep -L '"timings_ms"' "$TMP/reports"/oom-*-busy*.json | grep -q .; }
check "busy: nine complete reports" wait_for 30 nine_reports
check "busy: eight hooks ran to their end, one was not run ($(busy_runs))" test "$(busy_runs)" = " 8 \"ended\":\"exited\"; 1 \"ended\":\"not run\";"
check "busy: the one not run says why" grep -q '"error":"Device or resource busy"' "$TMP/reports"/oom-*-busy*.json
check "busy: logged" grep -q "before_kill not run: 8 hooks run already" "$TMP/log"
stop_daemon
echo "$T_PASSED passed, $T_FAILED failed"
