#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Faults of the report directory never stop the handling of an OOM: the
# directory full (a 16 KiB tmpfs, filled), made read-only while the daemon
# runs, a link to elsewhere from the start, and replaced by such a link while
# the daemon runs.  Each time the hog is killed and the memcg leaves OOM, the
# daemon logs why there is no report, no partial report is left, and nothing
# is written through a link (its target stays empty).  The tmpfs is unmounted
# on any exit.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup reports
command -v mountpoint >/dev/null || skip "mountpoint (util-linux) is missing"

MNT="$TMP/reports"
unmount_reports() {
	while mountpoint -q "$MNT"; do
		umount -l "$MNT" || break
	done
}
cleanup_reports() {
	local rc=$?
	unmount_reports
	(exit $rc)
	cleanup
}
trap cleanup_reports EXIT

write_config 512M "report, kill-lowest, kernel" 10s <<EOF2
[job j]
limit = 32M
policy = kill-largest, kernel
EOF2

released() { cg_out_of_oom "$R/j"; }
logged_since() { # LINE PATTERN
	tail -n +"$1" "$TMP/log" | grep -q "$2"
}
no_json_in() { # DIR: no report file of any kind, nor a partial one
	[ -z "$(find "$1" -name 'oom-*' 2>/dev/null)" ]
}
empty_dir() { [ -d "$1" ] && [ -z "$(ls -A "$1")" ]; }

# oom_is_resolved WHAT LINE: a hog in the job is killed by the daemon.
oom_is_resolved() {
	local hog
	hog=$(spawn j 64 512 1000)
	check "$1: the hog is killed" wait_for 20 dead "$hog"
	check "$1: the memcg leaves OOM" wait_for 10 released
	# The daemon logs the kill after the hog is gone: wait for the line.
	check "$1: by the daemon" wait_for 10 logged_since "$2" "j: killed $hog\$"
}

# stop_checked: the daemon stops cleanly (exit 0), whatever happened to its reports.
stop_checked() {
	kill -TERM "$DPID"
	wait "$DPID"
	local rc=$?
	DPID=
	check "$1: the daemon exits 0 on SIGTERM" test "$rc" = 0
}

line_now() { echo $(($(cat "$TMP/log" 2>/dev/null | wc -l) + 1)); }

# 1. Full: 16 KiB of tmpfs, filled before the OOM.
mkdir -p "$MNT"
mount -t tmpfs -o size=16k,mode=0750 oomkit-test-reports "$MNT" || fail "cannot mount a tmpfs"
line=$(line_now)
start_daemon
dd if=/dev/zero of="$MNT/filler" bs=4k count=64 2>/dev/null
[ "$(df --output=avail -B1 "$MNT" | tail -n 1 | tr -d ' ')" = 0 ] || fail "the tmpfs is not full"
oom_is_resolved full "$line"
check "full: the failure is logged" logged_since "$line" "report $MNT/oom-[0-9]*-j.json: cannot be written: No space left on device; removed"
check "full: no partial report is left" no_json_in "$MNT"
check "full: reports lists nothing" test "$("$OOMKIT" reports | wc -l)" = 1
stop_checked full

# 2. Read-only, from a remount while the daemon runs.
rm -f "$MNT/filler"
line=$(line_now)
start_daemon
mount -o remount,ro "$MNT" || fail "cannot remount the tmpfs read-only"
oom_is_resolved read-only "$line"
check "read-only: the failure is logged" logged_since "$line" "j: no report: Read-only file system"
check "read-only: nothing was written" no_json_in "$MNT"
stop_checked read-only
unmount_reports
mountpoint -q "$MNT" && fail "the tmpfs is still mounted"

# 3. A link to elsewhere from the start: never followed.
mkdir "$TMP/elsewhere"
rmdir "$MNT"
ln -s "$TMP/elsewhere" "$MNT"
line=$(line_now)
start_daemon
check "link at start: logged" logged_since "$line" "report directory $MNT is a symbolic link: not followed"
oom_is_resolved "link at start" "$line"
check "link at start: no report for the OOM is logged" logged_since "$line" "j: no report:"
check "link at start: nothing was written through the link" empty_dir "$TMP/elsewhere"
stop_checked "link at start"

# 4. Replaced by a link while the daemon runs: nothing goes through the link,
# nor into the moved directory where nobody would look.
rm "$MNT"
mkdir "$MNT"
line=$(line_now)
start_daemon
mv "$MNT" "$TMP/moved"
ln -s "$TMP/elsewhere" "$MNT"
oom_is_resolved "replaced" "$line"
check "replaced: logged" logged_since "$line" "report directory $MNT was moved or replaced since it was opened"
check "replaced: nothing was written through the link" empty_dir "$TMP/elsewhere"
check "replaced: nothing was written into the moved directory" no_json_in "$TMP/moved"
stop_checked replaced

# And a good directory again: a report, whole.
rm "$MNT"
mv "$TMP/moved" "$MNT"
line=$(line_now)
start_daemon
oom_is_resolved "directory back" "$line"
check "directory back: a report is written" wait_for 10 has_reports 1
whole() { json_get "$(latest_report)" "r['outcome']" >/dev/null; }
check "directory back: the report is whole" whole
stop_checked "directory back"
finish
