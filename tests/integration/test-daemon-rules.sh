#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# protect, prefer and avoid on real job and machine OOMs: each rule
# kind changes which process dies.  Every scenario asserts who died, who
# lived, and which rule the report says placed the victim.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup rules

# Copies of the hog under other names, for rules on comm, exe and cmdline.
for n in prefhog avoidhog keephog machpref; do
	cp "$OOMKIT_HOG" "$TMP/$n"
done

# Line numbers matter: the report names the rule by its line (write_config
# writes 9 lines and a blank one before the jobs).
write_config 1G "report, kill-lowest, kernel" 4s <<EOF2
[job prefer]
limit = 48M
policy = kill-largest, kernel
prefer = comm:prefhog

[job avoid]
limit = 48M
policy = kill-largest, kernel
avoid = cmdline:*/avoidhog *

[job protect]
limit = 48M
policy = kill-largest, kernel
protect = exe:$TMP/keephog

[job sub]
limit = 48M
policy = kill-largest, kernel
prefer = cgroup:$M/sub/build
EOF2
start_daemon

report_of() { ls "$TMP/reports"/oom-*-"$1".json 2>/dev/null | sort | tail -n 1; }
has_report_of() { [ -n "$(report_of "$1")" ]; }
dec() { json_get "$(report_of "$1")" "r['decision']$2"; }

# prefer: the small preferred process goes, not the largest.
a=$(spawn prefer 30)
wait_for 10 usage_at_least prefer $((30 << 20)) || fail "prefer: first hog did not grow"
b=$(HOG_BIN="$TMP/prefhog" spawn prefer 30 512 2000)
check "prefer: the preferred process is killed" wait_for 20 dead "$b"
check "prefer: the largest lives" alive "$a"
wait_for 10 has_report_of prefer || fail "prefer: no report"
check "prefer: the report names the victim" test "$(dec prefer "['victim_pid']")" = "$b"
check "prefer: the report says prefer placed it" test "$(dec prefer "['victim_place']")" = prefer
check "prefer: the report names the rule and its line" \
	test "$(dec prefer "['victim_rule']")" = "prefer = comm:prefhog (line 14)"
check "prefer: the reason says so" \
	grep -q "placed first by prefer = comm:prefhog (line 14)" <<<"$(dec prefer "['reason']")"

# avoid: the largest is avoided (cmdline glob), so the smaller one goes.
a=$(HOG_BIN="$TMP/avoidhog" spawn avoid 30)
wait_for 10 usage_at_least avoid $((30 << 20)) || fail "avoid: first hog did not grow"
b=$(spawn avoid 30 512 2000)
check "avoid: the other process is killed" wait_for 20 dead "$b"
check "avoid: the avoided, larger one lives" alive "$a"
wait_for 10 has_report_of avoid || fail "avoid: no report"
check "avoid: the report names the victim" test "$(dec avoid "['victim_pid']")" = "$b"
check "avoid: no rule placed the victim" test "$(dec avoid "['victim_place']")" = none
check "avoid: the candidate list says which rule placed the survivor" \
	test "$(json_get "$(report_of avoid)" "[c['rule'] for c in r['candidates'] if c['pid'] == $a]")" \
	= "['avoid = cmdline:*/avoidhog * (line 19)']"
# ... last, not never: alone, the avoided process is chosen.
kill -9 "$a"
wait_for 10 dead "$a"
before=$(report_of avoid)
a=$(HOG_BIN="$TMP/avoidhog" spawn avoid 64 512 1000)
check "avoid: alone, the avoided process is killed" wait_for 20 dead "$a"
newer_report() { [ "$(report_of avoid)" != "$before" ]; }
wait_for 10 newer_report || fail "avoid: no second report"
check "avoid: the report says avoid placed it" test "$(dec avoid "['victim_place']")" = avoid
check "avoid: and names the rule" test "$(dec avoid "['victim_rule']")" = "avoid = cmdline:*/avoidhog * (line 19)"
check "avoid: the action was the daemon's kill" test "$(dec avoid "['action']")" = kill

# protect (by exe): the largest is protected, so the other goes; alone, the
# protected process is never chosen and the chain hands the OOM to the kernel.
a=$(HOG_BIN="$TMP/keephog" spawn protect 30)
wait_for 10 usage_at_least protect $((30 << 20)) || fail "protect: first hog did not grow"
b=$(spawn protect 30 512 2000)
check "protect: the unprotected process is killed" wait_for 20 dead "$b"
check "protect: the protected, larger one lives" alive "$a"
wait_for 10 has_report_of protect || fail "protect: no report"
check "protect: the candidate list marks it protected by the rule" \
	test "$(json_get "$(report_of protect)" "[(c['protected'], c['rule']) for c in r['candidates'] if c['pid'] == $a]")" \
	= "[(True, 'protect = exe:$TMP/keephog (line 24)')]"
kill -9 "$a"
wait_for 10 dead "$a"
before=$(report_of protect)
a=$(HOG_BIN="$TMP/keephog" spawn protect 64 512 1000)
newer_protect() { [ "$(report_of protect)" != "$before" ]; }
wait_for 20 newer_protect || fail "protect: no second report"
check "protect: alone, the chain hands it to the kernel" test "$(dec protect "['action']")" = kernel
check "protect: kill-largest found nothing to kill" \
	grep -q "kill-largest: no process may be killed" <<<"$(dec protect "['not_applied']")"
check "protect: the kernel resolved it" wait_for 20 dead "$a"

# cgroup: a process in the job's build/ sub-cgroup is preferred.
mkdir "$R/sub/build" || fail "cannot make $R/sub/build"
a=$(spawn sub 30)
wait_for 10 usage_at_least sub $((30 << 20)) || fail "sub: first hog did not grow"
b=$(spawn sub/build 30 512 2000)
check "cgroup: the process in build/ is killed" wait_for 20 dead "$b"
check "cgroup: the largest lives" alive "$a"
wait_for 10 has_report_of sub || fail "sub: no report"
check "cgroup: the report names the rule" test "$(dec sub "['victim_rule']")" = "prefer = cgroup:$M/sub/build (line 29)"
kill -9 "$a"
rmdir "$R/sub/build" 2>/dev/null
# exe: needs cap_sys_ptrace for other users' /proc/PID/exe: kept with one.
capeff() { printf '%d' "0x$(awk '/^CapEff/ {print $2}' "/proc/$DPID/status")"; }
check "exe: rule: the daemon kept cap_sys_ptrace" test $(( $(capeff) >> 19 & 1 )) = 1
"$OOMKIT" reports show "$(json_get "$(report_of prefer)" "r['id']")" > "$TMP/show.txt" ||
	fail "reports show failed"
check "reports show: names the rule that placed the victim" \
	grep -q "rule: *prefer = comm:prefhog (line 14)" "$TMP/show.txt"
stop_daemon

# The machine's own rules, on a machine OOM: kill-lowest would take the
# low-priority job's process; the machine prefers machpref in the important job.
write_config 80M "report, kill-lowest, kernel" 4s <<EOF2
prefer = comm:machpref

[job hi]
priority = 900

[job lo]
priority = 100
EOF2
# The rule belongs in [oomkitd]: write_config ends that section with a
# blank line, so move it up there.
sed -i '/^prefer = comm:machpref$/d' "$TMP/oomkitd.conf"
sed -i '1a prefer = comm:machpref' "$TMP/oomkitd.conf"
start_daemon
check "no exe: rule: the daemon gave up cap_sys_ptrace" test $(( $(capeff) >> 19 & 1 )) = 0
# A reload that adds the first exe: rule cannot be acted on: refused, and
# the running configuration stays.
cp "$TMP/oomkitd.conf" "$TMP/good.conf"
printf 'avoid = exe:/usr/bin/true\n' >> "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "reload with an exe: rule: refused, naming file:line" \
	wait_for 10 grep -qF "reload: $TMP/oomkitd.conf:$(wc -l < "$TMP/oomkitd.conf"): an exe: rule needs cap_sys_ptrace" "$TMP/log"
cp "$TMP/good.conf" "$TMP/oomkitd.conf"
a=$(spawn lo 30)
wait_for 10 usage_at_least lo $((30 << 20)) || fail "machine: lo's hog did not grow"
b=$(HOG_BIN="$TMP/machpref" spawn hi 70 512 2000)
check "machine rule: the preferred process of the important job is killed" wait_for 20 dead "$b"
check "machine rule: the low-priority job's process lives" alive "$a"
wait_for 10 has_report_of machine || fail "machine: no report"
check "machine rule: the report is the machine's" test "$(json_get "$(report_of machine)" "r['scope']")" = machine
check "machine rule: the report names the [oomkitd] rule" \
	test "$(dec machine "['victim_rule']")" = "prefer = comm:machpref ([oomkitd], line 2)"
check "machine rule: the reason says preferred" \
	grep -q "of the jobs with candidates preferred" <<<"$(dec machine "['reason']")"

# An invalid expression is an error naming file:line, and --check says so.
printf '[oomkitd]\nmachine = %s\n[job x]\navoid = exe:relative/path\n' "$R" > "$TMP/bad.conf"
out=$("$OOMKITD" -c "$TMP/bad.conf" --check 2>&1)
check "bad rule: --check fails" test $? != 0
check "bad rule: the error names file:line and the reason" \
	grep -qF "$TMP/bad.conf:4: [job x] avoid: 'relative/path' is not an absolute path" <<<"$out"
finish
