#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A preset of examples/ (the desktop's, the server's), as oomkitd --check
# reads it: every line accepted, nothing refused as "not acted on yet".  Its
# machine is the root of a cgroup v2 hierarchy; on a host whose memory
# controller is on cgroup v1, --check refuses that one line (as it does the
# Kubernetes preset's), so the preset is also checked with a v1 machine path
# in its place, where the whole file must pass with its JOBS jobs.
#   test-preset.sh OOMKITD SOURCE_ROOT NAME.conf JOBS
set -u
oomkitd=$1 name=$3 jobs=$4
preset=$2/examples/$name
status=0
tmp=$(mktemp -d /tmp/oomkit-preset.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# On a cgroup v1 host, exactly one error: the machine line's.
line=$(grep -n '^machine = ' "$preset" | cut -d: -f1)
v1_only="$preset:$line: [oomkitd] machine: '/sys/fs/cgroup' is not below the memory cgroup mount /sys/fs/cgroup/memory"
out=$("$oomkitd" --check --config "$preset" 2>&1)
rc=$?
case "$rc:$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" in
0:*) echo "ok: oomkitd --check accepts examples/$name: $out" ;;
*:cgroup2fs) printf 'FAIL: oomkitd --check on examples/%s:\n%s\n' "$name" "$out"; status=1 ;;
*) if [ "$out" = "$v1_only" ]; then
	echo "ok: the machine line alone refused: this host's memory controller is on cgroup v1"
   else
	printf 'FAIL: oomkitd --check on examples/%s:\n%s\n' "$name" "$out"
	status=1
   fi ;;
esac

# Every other line, with a machine this host's --check accepts.
sed 's|^machine = .*|machine = /sys/fs/cgroup/memory/oomkit-preset-check|' "$preset" > "$tmp/$name"
grep -q '^machine = /sys/fs/cgroup/memory/oomkit-preset-check$' "$tmp/$name" ||
	{ echo "FAIL: examples/$name has no machine line to replace"; status=1; }
out=$("$oomkitd" --check --config "$tmp/$name" 2>&1)
if [ $? = 0 ] && [ "$(echo "$out" | head -n 1)" = "$tmp/$name: ok, $jobs jobs" ]; then
	echo "ok: every other line of examples/$name: $out"
else
	printf 'FAIL: oomkitd --check on examples/%s (machine replaced):\n%s\n' "$name" "$out"
	status=1
fi
exit $status
