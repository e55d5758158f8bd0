#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The rules in a question to a person (oomkit prompt): a protected process
# is not offered, and an answer naming it is refused; the preferred come
# first and the avoided last, each marked with the rule that placed it.
# Two prompt clients are asked the same question: one answers with the
# protected process, the other with an offered one, which alone dies.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup promptrules

cp "$OOMKIT_HOG" "$TMP/prefhog"
cp "$OOMKIT_HOG" "$TMP/avoidhog"
cp "$OOMKIT_HOG" "$TMP/keephog"

# A long delay: the prompt waits half of it for the answers.
write_config 1G "report, kill-lowest, kernel" 12s <<EOF2
[job ask]
limit = 64M
policy = prompt, kill-largest, kernel
prefer = comm:prefhog
avoid = comm:avoidhog
protect = comm:keephog
EOF2
start_daemon
rss_at_least() { [ "$(awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0)" -ge "$2" ]; }

mkfifo "$TMP/answers1" "$TMP/answers2"
"$OOMKIT" prompt --once < "$TMP/answers1" > "$TMP/p1.out" 2>&1 &
p1=$!
"$OOMKIT" prompt --once < "$TMP/answers2" > "$TMP/p2.out" 2>&1 &
p2=$!
exec 3> "$TMP/answers1" 4> "$TMP/answers2"
wait_for 10 grep -q "waiting for OOMs" "$TMP/p1.out" || fail "prompt 1 did not connect"
wait_for 10 grep -q "waiting for OOMs" "$TMP/p2.out" || fail "prompt 2 did not connect"

# Started in an order the rules must undo: the avoided first, the preferred last.
v=$(HOG_BIN="$TMP/avoidhog" spawn ask 8)
k=$(HOG_BIN="$TMP/keephog" spawn ask 8)
a=$(spawn ask 8)
f=$(HOG_BIN="$TMP/prefhog" spawn ask 8)
for p in "$v" "$k" "$a" "$f"; do wait_for 10 rss_at_least "$p" $((8 << 10)) || fail "$p did not grow"; done
# The OOM: itself a candidate, placed by no rule.  It wants more than the
# job has left beside the four, less than it has once the answer frees one
# of them (a), so the OOM asked about is the only one: left plus half of
# a's memory, less what a hog holds beyond what it touches (a's resident
# above its 8 MiB: the program, and in a sanitizer build its runtime).
# (When it wanted 64 MiB it went on growing after the answer, and a second
# OOM, the prompts gone, killed the preferred by the chain: seen beside two
# busy CPUs, where the checks below came after that.)
rss_a=$(awk '/^VmRSS/ {print $2}' "/proc/$a/status")
left=$((($(cat "$R/ask/$LIMIT_FILE") - $(cat "$R/ask/$USAGE_FILE")) >> 10))
want=$(((left - (rss_a - (8 << 10)) + rss_a / 2) >> 10))
x=$(spawn ask "$want" 512 2000)
check "the question is asked" wait_for 30 grep -q "^answer:" "$TMP/p1.out"
wait_for 10 grep -q "^answer:" "$TMP/p2.out" || fail "prompt 2 was not asked"
cat "$TMP/p1.out"
# kill lines in the order shown: PIDs.
order=$(sed -n 's/^  kill \([0-9]*\) .*/\1/p' "$TMP/p1.out" | tr '\n' ' ')
check "the protected process is not offered" sh -c "! grep -q '^  kill $k ' '$TMP/p1.out'"
check "preferred first, avoided last" test "${order%% *}" = "$f" -a "$(echo $order | awk '{print $NF}')" = "$v"
check "... and every other candidate between" \
	test "$(echo $order | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "$(printf '%s\n' "$f" "$v" "$a" "$x" | sort -n | tr '\n' ' ')"
# marked PID PLACE RULE: PID's line ends with PLACE, the next one names RULE.
marked() { grep -A1 "^  kill $1 .*  $2\$" "$TMP/p1.out" | tail -n 1 | grep -qxF "            by $3"; }
# (The lines are those of the file write_config writes.)
check "the preferred is marked, with its rule" marked "$f" prefer "prefer = comm:prefhog (line 14)"
check "the avoided is marked, with its rule" marked "$v" avoid "avoid = comm:avoidhog (line 15)"
check "a process no rule placed is not marked" grep -q "^  kill $a .*oomkit-hog$" "$TMP/p1.out"
check "both clients are shown the same" \
	test "$(grep '^  ' "$TMP/p1.out")" = "$(grep '^  ' "$TMP/p2.out")"

echo "kill $k" >&3
check "killing the protected process is refused" wait_for 10 grep -q "refused: $k is not one of the candidates" "$TMP/p1.out"
check "... and it lives" alive "$k"
echo "kill $a" >&4
check "an offered process, answered, is killed" wait_for 20 dead "$a"
check "the protected lives" alive "$k"
check "the preferred lives (a person chose)" alive "$f"
check "the process that ran out lives, its memory found" wait_for 20 rss_at_least "$x" $((want << 10))
check "... and the preferred still lives" alive "$f"
exec 3>&- 4>&-
wait "$p1" "$p2"
kill -9 "$v" "$k" "$f" "$x" 2>/dev/null
finish
