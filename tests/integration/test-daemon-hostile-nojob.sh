#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A user leaves the jobs for a cgroup of its own: root made "escape", a memcg
# in the machine that no job is, and gave it to the user (its directory,
# cgroup.procs and tasks chowned, as a delegation does); the user moves its
# own hog into it.  Below a machine memcg of its own (cgroup v1 here) a
# process in no job was never protected: what must hold is that it is still
# chosen, before every job, that root's processes in the jobs live, and that
# the report and `oomkit ps` name it escaped, with its cgroup and its owner.
# (At the cgroup v2 root, where the rest of the machine is protected, the
# systemd guest's check sd_nojob_escape runs the same attack.)
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
setup hostile-nojob
OWNER=$(other_uid)
HOG=$(user_copy "$OOMKIT_HOG" "$OWNER") || exit

write_config 160M "kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 150M

[job batch]
priority = 100
limit = 100M
EOF2
start_daemon

mkdir "$R/escape" || fail "cannot make the escape memcg"
chown "$OWNER:$(user_gid "$OWNER")" "$R/escape" "$R/escape/cgroup.procs" "$R/escape/tasks" ||
	fail "cannot give the escape memcg to the user"
# The user moves itself (v1 asks only that it may write the destination).
as_user_bg "$OWNER" sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 40 1024 1000' sh "$R/escape" "$HOG" \
	>/dev/null 2>&1
hog=$!
check "the user's hog moved itself into the escape memcg" wait_for 10 in_memcg "$hog" "$M/escape"
wait_for 10 usage_at_least escape $((40 << 20)) || fail "the hog did not reach 40M"
batch=$(spawn batch 8)
# Root's own process in the machine itself, in no job: a candidate before
# every job too, but smaller than the hog, so it must not pay for it.
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 20 1024 1000' sh "$R" "$OOMKIT_HOG" >/dev/null 2>&1 &
rest=$!
wait_for 10 in_memcg "$rest" "$M" || fail "root's process did not join the machine"
web1=$(spawn web 60)
wait_for 10 usage_at_least web $((60 << 20)) || fail "web did not reach 60M"

ps_line() { oomkit_ps | grep -qE "^ *$hog \\(escaped\\) \\[escape\\] "; }
oomkit_ps() { "$OOMKIT" --socket "$SOCK" ps 2>&1; }
check "oomkit ps names the hog escaped, in its cgroup" ps_line
check "and --json gives the cgroup's whole path" eval \
	'"$OOMKIT" --socket "$SOCK" ps --json | grep -q "\"pid\":$hog,\"job\":\"(escaped)\".*\"instance\":\"$M/escape\""'

# 60 + 60 + 8 + 20 fit in the machine's 160M once the hog's 40 are freed.
web2=$(spawn web 60 512 2000)
check "the escaped hog is killed" wait_for 20 dead "$hog"
check "web grows to its full size" wait_for 20 usage_at_least web $((120 << 20))
check "one OOM, one report" test "$(report_count)" = 1
check "root's first web process lives" alive "$web1"
check "root's growing web process lives" alive "$web2"
check "root's batch process lives" alive "$batch"
check "root's process in the machine, in no job, lives" alive "$rest"
check "the daemon decided, not the kernel" test "$(grep -c 'the kernel decides' "$TMP/log")" = 0
victim() {
	[ "$(json_get "$(latest_report)" "(r['decision']['victim_pid'], r['decision']['victim_job'], \
r['decision'].get('victim_escaped'), r['decision'].get('victim_cgroup'), r['decision'].get('victim_cgroup_owner'))" \
		2>/dev/null)" = "($hog, '(escaped)', True, '$M/escape', $OWNER)" ]
}
check "the report names it escaped, with its cgroup and owner" wait_for 10 victim
check "its reason says whose cgroup it is" eval \
	'json_get "$(latest_report)" "r[\"decision\"][\"reason\"]" | grep -q "in no job, in a cgroup uid $OWNER may write"'
kill -9 "$web1" "$web2" "$batch" "$rest" 2>/dev/null
empty() { [ -z "$(cat "$R/$1/cgroup.procs")" ]; }
wait_for 10 empty web || fail "web did not empty"
wait_for 10 grep -q "under_oom 0" "$R/memory.oom_control" || fail "the machine stayed under OOM"

# Then it hides: a name with a tab and a terminal's escape (the kernel
# refuses a newline in a cgroup's name), nested 18 levels of 240 bytes down,
# past the 4 KiB the kernel shows of a path.  No open() or shell's cd takes
# such a path whole: the user's python walks down one name at a time, and
# so does the removal, which the library's cleanup could not do.
hostile=$'a\tb\e]0;pwned\a'
comps=("$hostile")
for i in $(seq 1 17); do comps+=("$(printf "%0240d" "$i")"); done
down='import os, sys
os.chdir(sys.argv[1])
for c in sys.argv[3:]:
    if sys.argv[2] == "mkdir":
        os.mkdir(c)
    os.chdir(c)
if sys.argv[2] == "hog":
    open("cgroup.procs", "w").write(str(os.getpid()))
    os.execv(os.environ["HOG"], [os.environ["HOG"], "40", "1024", "1000"])'
rm_deep() { # kills what is in the escape memcg's subtree, removes it deepest first
	python3 -c 'import os, signal, sys, time
os.chdir(sys.argv[1])
names = []
while True:
    for p in open("cgroup.procs").read().split():
        try: os.kill(int(p), signal.SIGKILL)
        except OSError: pass
    subs = sorted(d for d in os.listdir(".") if os.path.isdir(d))
    if not subs: break
    names.append(subs[0]); os.chdir(subs[0])
while names:
    os.chdir("..")
    for _ in range(200):
        try:
            os.rmdir(names[-1]); break
        except OSError:
            time.sleep(0.05)
    names.pop()' "$R/escape" 2>/dev/null
}
trap 'rc=$?; rm_deep; (exit $rc); cleanup' EXIT
as_user "$OWNER" python3 -c "$down" "$R/escape" mkdir "${comps[@]}" || fail "the user could not nest its cgroups"
as_user_bg "$OWNER" env HOG="$HOG" python3 -c "$down" "$R/escape" hog "${comps[@]}" >/dev/null 2>&1
deep=$!
under_escape() { grep -q ":memory:/$M/escape/a" "/proc/$1/cgroup" 2>/dev/null; }
check "the user's hog moved itself 18 levels down" wait_for 10 under_escape "$deep"
wait_for 10 usage_at_least escape $((40 << 20)) || fail "the deep hog did not reach 40M"
check "oomkit ps lists it, escaped, its path too long to show" eval \
	'oomkit_ps | grep -qE "^ *$deep \(escaped\) "'
check "and its name reaches no terminal raw" eval '! oomkit_ps | grep -q $'"'"'\e'"'"
batch=$(spawn batch 8)
web1=$(spawn web 60)
wait_for 10 usage_at_least web $((60 << 20)) || fail "web did not reach 60M"
web2=$(spawn web 80 512 2000)
check "the deep escaped hog is killed" wait_for 20 dead "$deep"
check "root's web processes live" eval 'alive "$web1" && alive "$web2"'
check "root's batch process lives" alive "$batch"
deep_victim() {
	[ "$(json_get "$(latest_report)" "(r['decision']['victim_pid'], r['decision']['victim_job'], \
r['decision'].get('victim_cgroup_cut'), r['decision'].get('victim_cgroup_owner'), \
r['decision'].get('victim_cgroup', '').startswith('$M/escape/a\\tb\\x1b]0;pwned\\x07/000'))" \
		2>/dev/null)" = "($deep, '(escaped)', True, $OWNER, True)" ]
}
check "the report names it escaped, its cgroup's start, cut, and its owner" wait_for 10 deep_victim
kill -9 "$web1" "$web2" "$batch" 2>/dev/null
finish
