#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A job's owner makes its hog the session leader (setsid()) in a
# kill = largest-leaf job, which spares the session leader and the shell.
# Sparing is for the shell beside its build: when the spared process is
# what holds the job's memory (its only candidate, or by far its largest),
# the job still pays with it, and the machine's choice never moves to
# root's web process.  Variants: the hog alone, and in a nested sub-cgroup
# of the owner's beside a small decoy; and the spare still holds for a
# small session leader beside a large process.
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/hostile-lib.sh"
hostile_setup hostile-setsid
hostile_start "" "kill = largest-leaf"
leads_session() { # PID: its session is its own
	local s
	s=$(cat /proc/"$1"/stat 2>/dev/null) || return 1
	s=${s##*) }
	[ "$(echo "$s" | cut -d' ' -f4)" = "$1" ]
}

# 1. The hog alone in its job, leading its session.
h=$(owner_run batch "$HOSTILE" -s 200 1024 2000)
check "alone: the hog leads its session" wait_for 10 leads_session "$h"
attacked "alone" "$h" 0
check "alone: the report says the leader is not spared" test "$(report_says \
	"'the session leader is not spared' in r['decision']['reason']")" = True

# 2. In a sub-cgroup two levels down, beside a decoy in the job's top.
as_user $OWNER mkdir -p "$R/batch/a/b" || fail "the owner cannot make its sub-cgroups"
decoy=$(owner_run batch "$HOSTILE" 8)
wait_for 10 usage_at_least batch $((8 << 20)) || fail "the decoy did not reach 8M"
h=$(owner_run batch/a/b "$HOSTILE" -s 200 1024 2000)
check "nested: the hog leads its session" wait_for 10 leads_session "$h"
attacked "nested, beside a decoy" "$h" 1
check "nested: the decoy lives" alive "$decoy"
check "nested: the report says the leader is not spared" test "$(report_says \
	"'the session leader is not spared' in r['decision']['reason']")" = True
kill -9 "$decoy"
wait_for 10 gone "$decoy" || fail "the decoy did not go"

# 3. A small session leader beside a large process: spared, the large one goes.
leader=$(owner_run batch "$HOSTILE" -s 16)
wait_for 10 usage_at_least batch $((16 << 20)) || fail "the leader did not reach 16M"
check "spared: the small process leads its session" leads_session "$leader"
h=$(owner_run batch/a "$HOSTILE" 200 1024 2000)
attacked "spared leader" "$h" 2
check "spared: the small session leader lives" alive "$leader"
check "spared: the report says why it was not chosen" test "$(report_says \
	"[c.get('excluded') for c in r['candidates'] if c['pid'] == $leader]")" = \
	"['the session leader (kill = largest-leaf)']"
finish
