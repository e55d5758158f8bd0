#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A job's owner buys its hog protection with a name: [oomkitd] protects
# systemd by name (comm:), a root daemon by its executable (exe:), and the
# owner's hog renames itself (prctl(PR_SET_NAME)), runs the protected
# executable through a symlink of its own, or runs it with LD_PRELOAD
# memory.  A protect rule by name shields only root's processes: oomkitd
# must kill the hog in its job, never root's web process, while root's own
# process of the protected name, beside the hog, stays protected.
# Then by cgroup: [oomkitd] protects batch/*shield: batch/shield, a sub-cgroup the owner
# makes itself in its delegated job, and moves its hog into.  A cgroup:
# protect rule shields no process its user could have put there itself:
# the hog dies, while in batch/rootshield, which root made and the owner
# cannot write, root's process and one of the owner's that root put there
# stay protected.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
[ -f "${OOMKIT_PRELOAD_HOG:-}" ] || { echo "FAIL: \$OOMKIT_PRELOAD_HOG is not a file: '${OOMKIT_PRELOAD_HOG:-}'" >&2; exit 1; }
SLEEP=$(readlink -f "$(command -v sleep)")
[ -x "$SLEEP" ] || skip "no sleep executable"
hostile_setup hostile-protect
# The protected executable: the owner's copy of the hostile hog, which
# user_copy stages root's, mode 755.
PROTECTED=$HOSTILE
hostile_start "protect = comm:systemd, exe:$PROTECTED, exe:$SLEEP, cgroup:$M/batch/*shield"
check "the protected executable is root's" test "$(stat -c %u "$PROTECTED")" = 0
PRELOAD=$(user_copy "$OOMKIT_PRELOAD_HOG" $OWNER) || exit
# A directory of the owner's own, for its symlink.
mkdir "$USER_DIR/home" && chown $OWNER "$USER_DIR/home" || fail "cannot make the owner's directory"

# Root's own process named systemd, in batch beside the hog: protected.
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -n systemd 8' sh "$R/batch" "$OOMKIT_HOSTILE" >/dev/null 2>&1 &
root_systemd=$!
wait_for 10 joined "$root_systemd" "$M/batch"
named_systemd() { [ "$(cat /proc/"$1"/comm 2>/dev/null)" = systemd ]; }
wait_for 10 named_systemd "$root_systemd" || fail "root's process did not take the name systemd"
line=$(grep -n '^protect = comm:systemd' "$TMP/oomkitd.conf" | cut -d: -f1)
protected_in_report() { # PID: the newest report lists PID as protected by the comm rule
	[ "$(report_says "[(c['protected'], c.get('rule', '')) for c in r['candidates'] if c['pid'] == $1]")" = \
		"[(True, 'protect = comm:systemd ([oomkitd], line $line)')]" ]
}

# 1. The name: the hog calls itself systemd.
h=$(owner_run batch "$HOSTILE" -n systemd 200 1024 2000)
check "comm: the hog is named systemd" wait_for 10 named_systemd "$h"
attacked "comm:systemd" "$h" 0
check "comm: the report does not protect it" test "$(report_says \
	"[(c['protected'], c['place']) for c in r['candidates'] if c['pid'] == $h]")" = "[(False, 'none')]"
check "comm: root's process of that name lives" alive "$root_systemd"
check "comm: the report protects root's process of that name" protected_in_report "$root_systemd"

# 2. The executable, through a symlink the owner made.
as_user $OWNER ln -s "$PROTECTED" "$USER_DIR/home/mine" || fail "the owner cannot make its symlink"
h=$(owner_run batch "$USER_DIR/home/mine" 200 1024 2000)
runs_protected() { [ "$(readlink /proc/"$1"/exe 2>/dev/null)" = "$PROTECTED" ]; }
check "exe via a symlink: /proc/PID/exe names the protected executable" wait_for 10 runs_protected "$h"
attacked "exe via a symlink" "$h" 1

# 3. The executable, with LD_PRELOAD memory of the owner's.
h=$(owner_run batch env LD_PRELOAD="$PRELOAD" OOMKIT_PRELOAD_MIB=200 "$SLEEP" 1000)
runs_sleep() { [ "$(readlink /proc/"$1"/exe 2>/dev/null)" = "$SLEEP" ]; }
check "exe with LD_PRELOAD: /proc/PID/exe names $SLEEP" wait_for 10 runs_sleep "$h"
attacked "exe with LD_PRELOAD" "$h" 2
check "root's process named systemd still lives" alive "$root_systemd"

# 4. The cgroup: a root-made protected cgroup in batch, holding root's
# process and one of the owner's that root moved there; the owner cannot.
mkdir "$R/batch/rootshield" || fail "cannot make batch/rootshield"
owner_refused() { ! as_user $OWNER sh -c 'echo $$ > "$1/cgroup.procs"' sh "$1" 2>/dev/null; }
check "the owner cannot move itself into root's protected cgroup" owner_refused "$R/batch/rootshield"
sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 8' sh "$R/batch/rootshield" "$OOMKIT_HOSTILE" >/dev/null 2>&1 &
root_shielded=$!
wait_for 10 joined "$root_shielded" "$M/batch/rootshield"
as_user_bg $OWNER "$HOSTILE" 8 >/dev/null 2>&1
owner_shielded=$!
echo "$owner_shielded" > "$R/batch/rootshield/cgroup.procs" || fail "cannot move the owner's process"
wait_for 10 joined "$owner_shielded" "$M/batch/rootshield"
# The owner's own sub-cgroup, which the rule names: its cgroup.procs is the owner's.
as_user $OWNER mkdir "$R/batch/shield" || fail "the owner cannot make batch/shield"
check "batch/shield's cgroup.procs is the owner's" test "$(stat -c %u "$R/batch/shield/cgroup.procs")" = "$OWNER"
h=$(owner_run batch/shield "$HOSTILE" 200 1024 2000)
attacked "cgroup: the owner's own sub-cgroup" "$h" 3
check "cgroup: the report does not protect the hog" test "$(report_says \
	"[(c['protected'], c['place']) for c in r['candidates'] if c['pid'] == $h]")" = "[(False, 'none')]"
rule_protects() { # PID RULE: the newest report lists PID as protected by RULE of the [oomkitd] line
	[ "$(report_says "[(c['protected'], c.get('rule', '')) for c in r['candidates'] if c['pid'] == $1]")" = \
		"[(True, 'protect = $2 ([oomkitd], line $line)')]" ]
}
for p in "$root_shielded" "$owner_shielded"; do
	check "cgroup: $p in root's protected cgroup lives" alive "$p"
	check "cgroup: the report protects $p by the rule" rule_protects "$p" "cgroup:$M/batch/*shield"
done
finish
