#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# oomkit explain: what a chain would do now, then the OOM, on the
# same candidates: the victim the daemon kills is the one explain put first,
# and the rules it names are the report's.  The OOM is brought on by a
# process the machine protects (protect = comm:brake), which is no
# candidate, so the candidates explain saw are the ones the daemon decides
# among.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup explain
chmod 755 "$TMP" # the socket, for another user's refusal

cp "$OOMKIT_HOG" "$TMP/prefhog"
cp "$OOMKIT_HOG" "$TMP/keephog"
cp "$OOMKIT_HOG" "$TMP/brake"

write_config 96M "report, kill-lowest, kernel" 4s <<EOF2
[job ex]
limit = 64M
policy = report, kill-newest, kill-largest, kernel
prefer = comm:prefhog
protect = comm:keephog

[job lo]
priority = 100

[job hi]
priority = 900

[job inst]
cgroup = $M/ext/svc-*
policy = kill-largest, kernel

[job hk]
limit = 64M
policy = kill-largest, kernel
before_kill = $TMP/hook
after_kill = $TMP/hook
hook_timeout = 300ms

[job cut]
limit = 64M
policy = kill-largest, kernel
before_kill = $TMP/hook
hook_timeout = 3s
kill_signal = SIGTERM
kill_grace = 2s

[job sh]
limit = 64M
policy = shed, kill-largest, kernel
shed_command = $TMP/hook
shed_wait = 200ms
EOF2
printf '#!/bin/sh\nexit 0\n' > "$TMP/hook"
chmod 755 "$TMP/hook"
# The job's instances: cgroups that exist before the daemon adopts them.
mkdir -p "$R/ext/svc-1" "$R/ext/svc-2" || fail "cannot make the instances' cgroups"
sed -i '1a protect = comm:brake' "$TMP/oomkitd.conf" # into [oomkitd]: the machine's rule
start_daemon

report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1; }
has_report_of() { [ -n "$(report_of "$1")" ]; }
# py FILE EXPR: a python expression on the JSON document "r" in FILE.
py() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# The brake: a hog no policy may choose, which pushes its scope over.
brake() { HOG_BIN="$TMP/brake" spawn "$1" "$2" 512 2000; }
# mib_of REL: the memcg's usage in MiB.
mib_of() { echo $(($(cat "$R$1/$USAGE_FILE") >> 20)); }
rss_at_least() { [ "$(awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)" -ge "$2" ]; }
# Each victim holds 30M: a brake sized to overshoot the limit by half of
# that brings on one OOM, and fits once the victim is gone, whatever a
# build's allocator adds to each process (ASan's is several MiB).

# --- A job: kill-newest would take the preferred process first, ahead of a
# newer one; keephog is protected.
# A process's start time is counted in clock ticks: c is started only once
# the clock has passed a's tick, or the two tie and size decides instead.
start_tick() { awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat"; }
past_start() { [ "$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", $1 * hz }' /proc/uptime)" -gt "$(($(start_tick "$1") + 1))" ]; }
k=$(HOG_BIN="$TMP/keephog" spawn ex 2)
a=$(spawn ex 6)
b=$(HOG_BIN="$TMP/prefhog" spawn ex 30)
wait_for 10 past_start "$a" || fail "ex: the clock did not pass a's start"
c=$(spawn ex 2) # the newest
for p in "$k" "$a" "$b" "$c"; do wait_for 10 rss_at_least "$p" 2048 || fail "ex: $p did not grow"; done
wait_for 10 rss_at_least "$b" $((30 << 10)) || fail "ex: the preferred hog did not grow"

"$OOMKIT" explain ex --json > "$TMP/ex.json" || fail "explain ex failed"
check "explain: valid JSON for the job" py "$TMP/ex.json" "r['oomkitd_explain']"
check "explain: the chain as configured" \
	test "$(py "$TMP/ex.json" "r['chain']")" = "report, kill-newest, kill-largest, kernel"
check "explain: kill-newest ranks the preferred first, then by start" \
	test "$(py "$TMP/ex.json" "[c['pid'] for c in r['steps'][1]['ranking']]")" = "[$b, $c, $a]"
check "explain: kill-largest ranks the preferred first, then by size" \
	test "$(py "$TMP/ex.json" "[c['pid'] for c in r['steps'][2]['ranking']]")" = "[$b, $a, $c]"
check "explain: the rule that placed it" \
	test "$(py "$TMP/ex.json" "r['steps'][1]['ranking'][0]['rule']")" = "prefer = comm:prefhog (line 15)"
check "explain: kill-newest decides, kill-largest is not reached" \
	test "$(py "$TMP/ex.json" "[(s['decides'], s['reached']) for s in r['steps']]")" \
	= "[(False, True), (True, True), (False, False), (False, False)]"
check "explain: the protected process is never chosen, and why" \
	test "$(py "$TMP/ex.json" "[(c['pid'], c['excluded']) for c in r['excluded']]")" \
	= "[($k, 'protected by protect = comm:keephog (line 16)')]"
check "explain: the chain would kill the preferred process" \
	test "$(py "$TMP/ex.json" "(r['decision']['action'], r['decision']['victim_pid'])")" = "('kill', $b)"
"$OOMKIT" explain ex > "$TMP/ex.txt" || fail "explain ex (text) failed"
cat "$TMP/ex.txt" # for whoever reads the log: what a person sees
check "explain (text): says what the chain would do" grep -q "the chain: kill: process $b started last of the" "$TMP/ex.txt"
check "explain (text): fits 80 columns" awk 'length > 80 { bad = 1 } END { exit bad }' "$TMP/ex.txt"
check "explain (text): shows the rule" grep -q "prefer = comm:prefhog (line 15)" "$TMP/ex.txt"

# Now the OOM, on the same candidates.
size=$((64 + 15 - $(mib_of /ex)))
x=$(brake ex "$size")
check "OOM: the process explain put first is killed" wait_for 20 dead "$b"
check "OOM: the others live" alive "$a"
check "OOM: ... all of them" alive "$c"
check "OOM: ... and the protected" alive "$k"
wait_for 10 has_report_of ex || fail "ex: no report"
rep=$(report_of ex)
check "OOM: the report's victim is explain's" test "$(json_get "$rep" "r['decision']['victim_pid']")" = "$b"
check "OOM: the same policy and step decided" \
	test "$(json_get "$rep" "(r['decision']['policy'], r['decision']['step'])")" \
	= "$(py "$TMP/ex.json" "(r['decision']['policy'], r['decision']['step'])")"
check "OOM: the same rule placed it" \
	test "$(json_get "$rep" "r['decision']['victim_rule']")" = "$(py "$TMP/ex.json" "r['decision']['victim_rule']")"
wait_for 20 rss_at_least "$x" $((size << 10)) || fail "ex: the brake did not reach its size"
check "OOM: one OOM, one kill" test "$(ls "$TMP"/reports/oom-*-ex.json | wc -l)" = 1
kill -9 "$a" "$c" "$k" "$x" 2>/dev/null
for p in "$a" "$c" "$k" "$x"; do wait_for 10 dead "$p" || fail "ex: $p did not end"; done

# --- Hooks: what explain says the chain would run around the kill, and for
# how long, is what the report then records.  The delay is 4s: an OOM's
# actions have 3.6s of it (a tenth is kept back).
# hook_oom JOB: a 30M victim and the brake; explain first, into $TMP/JOB.json.
hook_oom() {
	v=$(spawn "$1" 30)
	wait_for 10 rss_at_least "$v" $((30 << 10)) || fail "$1: the hog did not grow"
	"$OOMKIT" explain "$1" --json > "$TMP/$1.json" || fail "explain $1 failed"
	"$OOMKIT" explain "$1" > "$TMP/$1.txt" || fail "explain $1 (text) failed"
	cat "$TMP/$1.txt"
	size=$((64 + 15 - $(mib_of "/$1")))
	x=$(brake "$1" "$size")
	check "$1 OOM: the victim explain named is killed" wait_for 20 dead "$v"
	wait_for 10 has_report_of "$1" || fail "$1: no report"
	rep=$(report_of "$1")
	check "$1 OOM: the victim is first in explain's kill-largest" test "$v" \
		= "$(py "$TMP/$1.json" "[s for s in r['steps'] if s['policy'] == 'kill-largest'][0]['ranking'][0]['pid']")"
	kill -9 "$x" 2>/dev/null
	wait_for 10 dead "$x" || fail "$1: the brake did not end"
}
# hooks_of FILE: explain's hooks as (hook, job, runs, timeout_ms, timeout_by).
hooks_of() { py "$1" "[(h['hook'], h['job'], h['runs'], h['timeout_ms'], h['timeout_by']) for h in r['hooks']]"; }

hook_oom hk
check "explain hk: before_kill and after_kill, each its hook_timeout" test "$(hooks_of "$TMP/hk.json")" \
	= "[('before_kill', 'hk', True, 300, 'hook_timeout'), ('after_kill', 'hk', True, 300, 'hook_timeout')]"
check "explain hk (text): the kill waits for before_kill" \
	grep -q "before_kill of job hk, the kill waits for it, at most 300ms" "$TMP/hk.txt"
check "explain hk (text): fits 80 columns" awk 'length > 80 { bad = 1 } END { exit bad }' "$TMP/hk.txt"
check "hk OOM: the report's hooks and timeouts are explain's" \
	test "$(json_get "$rep" "[(h['hook'], h['ended'], h['timeout_ms']) for h in r['hooks']]")" \
	= "[('before_kill', 'exited', 300), ('after_kill', 'exited', 300)]"

# hook_timeout 3s is cut to what the delay leaves after kill_grace:
# 3.6s - 2s.  The OOM's own cut is that less the time since its event.
hook_oom cut
check "explain cut: before_kill cut by the delay to 1.6s" test "$(hooks_of "$TMP/cut.json")" \
	= "[('before_kill', 'cut', True, 1600, 'delay')]"
# (The field wraps at 80 columns: read as one line.)
check "explain cut (text): says the delay cut it" \
	grep -q "at most 1600ms (cut by the delay)" <<<"$(tr -s ' \n' '  ' < "$TMP/cut.txt")"
t=$(json_get "$rep" "[h['timeout_ms'] for h in r['hooks'] if h['hook'] == 'before_kill'][0]")
check "cut OOM: the report's before_kill had at most explain's 1.6s, cut too" test "$t" -le 1600 -a "$t" -gt 0

# A shed: its shed_command for shed_wait, then (nothing came back) the kill.
hook_oom sh
check "explain sh: the chain would shed" test "$(py "$TMP/sh.json" "r['decision']['action']")" = shed
check "explain sh: shed_command for shed_wait" test "$(hooks_of "$TMP/sh.json")" \
	= "[('shed_command', 'sh', True, 200, 'shed_wait')]"
check "sh OOM: the report's shed_command had explain's 200ms" \
	test "$(json_get "$(ls "$TMP"/reports/oom-*-sh.json | sort | head -n 1)" \
		"[(h['hook'], h['timeout_ms']) for h in r.get('hooks', [])]")" = "[('shed_command', 200)]"

# --- The machine: kill-lowest takes the lowest-priority job's largest.
l1=$(spawn lo 4)
l2=$(spawn lo 30)
h=$(spawn hi 10)
# A process whose name is a terminal escape and a newline: shown escaped.
evil=$'\e]0;pwn\a\nx'
cp "$OOMKIT_HOG" "$TMP/$evil"
e=$(HOG_BIN="$TMP/$evil" spawn lo 1)
for p in "$l1" "$l2" "$h" "$e"; do wait_for 10 rss_at_least "$p" 1024 || fail "$p did not grow"; done
wait_for 10 rss_at_least "$l2" $((30 << 10)) || fail "lo: the largest hog did not grow"
wait_for 10 rss_at_least "$h" $((10 << 10)) || fail "hi: the hog did not grow"
"$OOMKIT" explain --json > "$TMP/m.json" || fail "explain (machine) failed"
check "explain machine: the machine's scope" test "$(py "$TMP/m.json" "(r['scope'], r['job'])")" = "('machine', None)"
check "explain machine: kill-lowest ranks lo's before hi's, largest first" \
	test "$(py "$TMP/m.json" "[c['pid'] for c in r['steps'][1]['ranking']]")" = "[$l2, $l1, $e, $h]"
check "explain machine: the name is exact in JSON" \
	test "$(py "$TMP/m.json" "[c['comm'] for c in r['steps'][1]['ranking'] if c['pid'] == $e] == ['\\x1b]0;pwn\\x07\\nx']")" = True
"$OOMKIT" explain > "$TMP/m.txt" || fail "explain (machine, text) failed"
check "explain machine (text): no control byte reaches the terminal" \
	python3 -c 'import sys; t = open(sys.argv[1], "rb").read(); sys.exit(any(b < 0x20 and b != 0x0a for b in t))' "$TMP/m.txt"
cat "$TMP/m.txt"
check "explain machine (text): the name shown escaped" grep -qF '\x1b]0;pwn\x07' "$TMP/m.txt"
check "explain machine: the chain would kill lo's largest" \
	test "$(py "$TMP/m.json" "r['decision']['victim_pid']")" = "$l2"
size=$((96 + 15 - $(mib_of "")))
x=$(brake hi "$size")
check "machine OOM: the process explain put first is killed" wait_for 20 dead "$l2"
check "machine OOM: the others live" alive "$l1"
check "machine OOM: ... all of them" alive "$e"
check "machine OOM: ... and hi's" alive "$h"
wait_for 10 has_report_of machine || fail "machine: no report"
check "machine OOM: the report's victim is explain's" \
	test "$(json_get "$(report_of machine)" "r['decision']['victim_pid']")" = "$l2"
wait_for 20 rss_at_least "$x" $((size << 10)) || fail "machine: the brake did not reach its size"
check "machine OOM: one OOM, one kill" test "$(ls "$TMP"/reports/oom-*-machine.json | wc -l)" = 1
kill -9 "$x" 2>/dev/null

# A job that adopts cgroups: each instance explained on its own.
i1=$(spawn ext/svc-1 8)
i2=$(spawn ext/svc-2 4)
"$OOMKIT" explain inst --json > "$TMP/inst.json" || fail "explain inst failed"
check "explain instances: one document per instance" \
	test "$(py "$TMP/inst.json" "sorted(i['cgroup'] for i in r['instances'])")" = "['$M/ext/svc-1', '$M/ext/svc-2']"
check "explain instances: each ranks its own processes" \
	test "$(py "$TMP/inst.json" "sorted([c['pid'] for c in i['steps'][0]['ranking']] for i in r['instances'])")" \
	= "$(python3 -c 'import sys; print(sorted([[int(sys.argv[1])], [int(sys.argv[2])]]))' "$i1" "$i2")"
"$OOMKIT" explain inst > "$TMP/inst.txt" || fail "explain inst (text) failed"
cat "$TMP/inst.txt"
check "explain instances (text): both shown" test "$(grep -c '^job inst \[' "$TMP/inst.txt")" = 2
kill -9 "$i1" "$i2" 2>/dev/null

# Errors: an unknown job, and other users without readonly_status.
out=$("$OOMKIT" explain nosuchjob 2>&1)
check "explain: an unknown job is an error" test $? = 1
check "explain: the error names it" grep -q "no job nosuchjob" <<<"$out"
cli=$(user_copy "$OOMKIT") || exit
out=$(as_user "$USER_A" "$cli" explain 2>&1)
check "explain: refused to another user" test "$out" = "oomkit: permission denied: only root may explain (see readonly_status)"
finish
