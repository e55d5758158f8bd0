#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whether a prompt step is taken is decided for the OOM at hand:
# who could answer is asked of the question just prepared (its scope's
# owner, its candidates), never of the one before.  A desktop has no root
# terminal listening, only the user's agent: once whether anyone could
# answer was read before the question was prepared, and the first OOM of a
# job its user owns, all of whose processes were root's, went on without
# asking (found in the systemd guest, check_agent_unit).
#  1. a fresh daemon, an owner's listener alone: the first OOM of its job
#     (root's processes) asks it; no answer, the chain goes on;
#  2. the next OOM, of a job nobody owns: the listener it does not concern
#     does not make the prompt step taken; the chain goes on at once.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
require_user_tools
command -v python3 >/dev/null || skip "python3 is missing"
setup prompt-owner
chmod 755 "$TMP"
client=$(user_copy "$(dirname "$0")/control-client.py") || exit

write_config 512M "report, prompt, kill-largest, kernel" 4s <<EOF
[job desk]
priority = 500
limit = 48M
owner = $USER_A
policy = report, prompt, kill-largest, kernel

[job other]
priority = 500
limit = 48M
policy = report, prompt, kill-largest, kernel
EOF
start_daemon
as_user_bg $USER_A python3 "$client" listen "$SOCK" 1 "$TMP/stop" > "$TMP/listen" 2>&1
listener=$!
wait_for 10 grep -q "^listening 1 refused 0" "$TMP/listen" || fail "the owner's listener did not connect: $(cat "$TMP/listen")"
report() { ls "$TMP/reports"/oom-"$(printf %08u "$1")"-*.json 2>/dev/null; }

# 1. The first OOM since the start, of the owner's job.
small=$(spawn desk 8)
wait_for 10 usage_at_least desk $((8 << 20)) || fail "desk: the small process did not grow"
big=$(spawn desk 96 512 2000)
check "1: the owner is asked about its job, though no candidate is its own" wait_for 20 grep -q "^asked 1$" "$TMP/listen"
check "1: no answer: the chain kills the largest" wait_for 30 dead "$big"
check "1: the small process lives" alive "$small"
check "1: the report: asked, no answer" test "$(json_get "$(report 1)" "r['prompt_answer']")" = none
kill -9 "$small" 2>/dev/null

# 2. Then an OOM of a job nobody owns: nobody it concerns listens.
small=$(spawn other 8)
wait_for 10 usage_at_least other $((8 << 20)) || fail "other: the small process did not grow"
big=$(spawn other 96 512 2000)
check "2: the chain kills the largest" wait_for 30 dead "$big"
check "2: the small process lives" alive "$small"
wait_for 10 has_reports 3 || fail "no report of other's OOM"
rep=$(ls "$TMP/reports"/oom-*-other.json | tail -n 1)
check "2: the prompt step was not taken: nobody it concerns listens" \
	test "$(json_get "$rep" "r['decision']['not_applied']")" = "prompt: nobody is connected to answer"
check "2: the owner's listener was not asked" test "$(grep -c "^asked" "$TMP/listen")" = 1
kill -9 "$small" 2>/dev/null
touch "$TMP/stop"
wait "$listener"
finish
