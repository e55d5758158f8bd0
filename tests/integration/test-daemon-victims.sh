#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Victims a person can tell apart.  Two workers of one job share their comm
# (python3, as every worker of a virtualenv does) and differ by their command
# lines, which are long; a third has a comm of hostile bytes (a newline, an
# escape sequence, a byte that is not UTF-8).  ps gives the command line the
# rest of the terminal's width ($COLUMNS 60, 140, 300) and never cuts another
# column; explain and the report name the victim by its command line; the
# kill-newest reason says when it started in words, not clock ticks; the
# reports list cuts a long reason after a word with "..."; the log says
# every size in one format; a report whose memory was not seen freed says
# why, not "?".
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup victims

# The hog run through links: its comm is the link's name, its command line
# the link's path, as a virtualenv's python3 is a link to the real one.
ENVDIR="$TMP/root/.pyenv/versions/3.12.1/envs/queue-workers/bin"
mkdir -p "$ENVDIR" "$TMP/bad" || fail "cannot make $ENVDIR"
WORKER="$ENVDIR/python3"
ln -s "$OOMKIT_HOG" "$WORKER" || fail "cannot link the hog"
HOSTILE=$'ev\nil\e[31m\xff'
ln -s "$OOMKIT_HOG" "$TMP/bad/$HOSTILE" || fail "cannot link the hostile name"

write_config 512M "kill-lowest, kernel" 2s <<EOF2
[job web]
limit = 64M
policy = kill-newest, kernel
prefer = comm:python3

[job rep]
limit = 32M
policy = kernel
EOF2
start_daemon

# cmdline_of PID: its command line as ps shows it, arguments joined by spaces.
cmdline_of() { tr '\0' ' ' < "/proc/$1/cmdline" | sed 's/ $//'; }
# row PID FILE: the line of a table that begins with the pid.
row() { grep -E "^ *$1 " "$2"; }
# command_column PID FILE: what the ps line of PID shows after its 62 first columns.
command_column() { row "$1" "$2" | cut -c 63-; }
longest() { awk '{ if (length > n) n = length } END { print n + 0 }' "$1"; }
# shown_safely FILE...: valid UTF-8 with no escape byte, what a terminal
# shows and never obeys (one python for all: it starts slowly on a busy machine).
shown_safely() {
	python3 -c '
import sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    b.decode("utf-8")
    if b"\x1b" in b:
        sys.exit("%s holds an escape byte" % f)' "$@"
}
# fields FILE EXPR...: each python expression on the report or document "r"
# in FILE, one a line (one python for all; json_get waits for a whole report).
fields() {
	local f=$1
	shift
	json_get "$f" "'\n'.join(str(eval(e)) for e in $(python3 -c 'import sys; print(repr(sys.argv[1:]))' "$@"))"
}
exec_done() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

older=$(HOG_BIN=$WORKER spawn web 8)
check "the older worker runs as python3" wait_for 10 exec_done "$older" python3
evil=$(HOG_BIN="$TMP/bad/$HOSTILE" spawn web 4)
check "the hostile one runs under its name" wait_for 10 exec_done "$evil" "$HOSTILE"
# And one whose command line is longer than anything shows (600 bytes, an
# escape byte among them, which the daemon's reader turns into "?").
LONGARG=$(printf 'very-long-argument-%03d/' $(seq 1 25))$'\e'
bash -c 'echo $$ > "$1/cgroup.procs" && exec -a "$2" "$3" 2 1024 1000' sh "$R/web" "$LONGARG" "$OOMKIT_HOG" \
	>/dev/null 2>&1 &
long=$!
check "the long one runs" wait_for 10 exec_done "$long" "oomkit-hog"
longcmd="${LONGARG%$'\e'}? 2 1024 1000"
wait_for 10 usage_at_least web $((14 << 20)) || fail "the workers did not grow"
cmd=$(cmdline_of "$older")
check "the worker's command line is long (${#cmd} characters)" test "${#cmd}" -gt 80 -a "${#cmd}" -lt 127

# --- ps: the command takes the rest of the terminal's width.
COLUMNS=140 "$OOMKIT" ps web > "$TMP/ps140.txt"
COLUMNS=60 "$OOMKIT" ps web > "$TMP/ps60.txt"
COLUMNS=300 "$OOMKIT" ps web > "$TMP/ps300.txt"
COLUMNS=4096 "$OOMKIT" ps web > "$TMP/ps4096.txt"
cat "$TMP/ps140.txt"
check "ps at 140 columns: within 140" test "$(longest "$TMP/ps140.txt")" -le 140
check "ps at 140 columns: the command fills the 78 left" \
	test "$(command_column "$older" "$TMP/ps140.txt")" = "${cmd:0:78}"
check "ps at 300 columns: the whole command line" test "$(command_column "$older" "$TMP/ps300.txt")" = "$cmd"
check "ps at 60 columns: the command keeps 12" test "$(command_column "$older" "$TMP/ps60.txt")" = "${cmd:0:12}"
check "ps at 4096 columns: a command line of 600 bytes as far as it is read (255)" \
	test "$(command_column "$long" "$TMP/ps4096.txt")" = "${longcmd:0:255}"
check "ps at 60 columns: no other column is cut" \
	grep -Eq "^ *$older web +[0-9.]+M +[0-9.]+B? +0 +0 python3 +/" "$TMP/ps60.txt"
check "ps: the hostile name is escaped" grep -Fq 'ev\x0ail\x1b[31' "$TMP/ps300.txt"
check "ps: no escape byte, no byte that is not UTF-8 reaches the terminal" \
	shown_safely "$TMP/ps60.txt" "$TMP/ps140.txt" "$TMP/ps300.txt"

# --- explain: the would-be victim by its command line.
COLUMNS=200 "$OOMKIT" explain web > "$TMP/ex.txt" || fail "explain failed"
cat "$TMP/ex.txt"
check "explain: the ranking shows the worker's command line" grep -Eq "^ +1 +$older web .* python3 +$cmd\$" "$TMP/ex.txt"
check "explain: the victim by its command line" grep -Fxq "  victim:    $older $cmd" "$TMP/ex.txt"
check "explain: the start in words" grep -Eq "started last of the preferred candidates, [0-9.]+ (s|min [0-9]+ s) before the OOM;" "$TMP/ex.txt"
check "explain: the hostile comm is escaped" grep -Fq 'ev\x0ail\x1b[31' "$TMP/ex.txt"
"$OOMKIT" --json explain web > "$TMP/ex.json"
check "explain --json: the candidate's command line" \
	test "$(json_get "$TMP/ex.json" "[c['cmdline'] for c in r['steps'][0]['ranking'] if c['pid'] == $older][0]")" = "$cmd"

# --- The OOM: the newer worker, with the same comm, goes.
line=$(($(wc -l < "$TMP/log") + 1))
newer=$(HOG_BIN=$WORKER spawn web 100 512 1000)
check "the newer worker is killed" wait_for 20 dead "$newer"
check "the older one lives" alive "$older"
wait_for 10 has_reports 1 || fail "no report"
rep=$(latest_report)
newcmd="$WORKER 100 512 1000"
mapfile -t got < <(fields "$rep" "r['decision']['victim_cmdline']" "r['decision']['victim_comm']" \
	"sorted(c['cmdline'] for c in r['candidates'] if c['comm'] == 'python3')" "r['decision']['reason']" \
	"None if r['timings_ms']['freed'] is None else '%.3f' % r['timings_ms']['freed']" "r.get('not_freed')" \
	"[c['cmdline'] for c in r['candidates'] if c['pid'] == $long][0]")
check "report: the victim's command line" test "${got[0]}" = "$newcmd"
check "report: the victim's comm" test "${got[1]}" = python3
check "report: each candidate's command line" test "${got[2]}" = "['$newcmd', '$cmd']"
reason=${got[3]}
check "report: a long command line is cut to 127 bytes" test "${got[6]}" = "${longcmd:0:127}"
echo "reason: $reason"
check "report: the start in words, not clock ticks" grep -Eq "^process $newer started last of the preferred candidates, [0-9.]+ (s|min [0-9]+ s) before the OOM; killing process $newer \(python3, [0-9]+ (KiB|MiB)\) of job web" <<< "$reason"
check "report: no start time in ticks" test -z "$(echo "$reason" | grep 'start time')"

COLUMNS=200 "$OOMKIT" reports show 1 > "$TMP/show.txt" || fail "reports show failed"
cat "$TMP/show.txt"
check "reports show: the victim by its command line" grep -Fxq "  victim:    $newer $newcmd" "$TMP/show.txt"
check "reports show: the candidates' command lines" grep -Eq "^ *$older +web .* python3 + $cmd\$" "$TMP/show.txt"
check "reports show: the victim's row" grep -Eq "^ *$newer +web .* python3 +<- victim $newcmd\$" "$TMP/show.txt"
check "reports show: the hostile comm is escaped" grep -Fq 'ev\x0ail\x1b[31' "$TMP/show.txt"
check "reports show: nothing a terminal obeys" shown_safely "$TMP/show.txt"
# The timings say when memory was freed, or why it was not seen freed.
freed=${got[4]}
if [ "$freed" = None ]; then
	why=${got[5]}
	check "reports show: why no memory was seen freed ($why)" grep -Fq "memory not seen freed: $why" "$TMP/show.txt"
else
	check "reports show: memory freed after $freed ms" grep -Fq "memory freed after $freed ms" "$TMP/show.txt"
fi
check "reports show: never a '?' for a time" test -z "$(grep 'after ? ms' "$TMP/show.txt")"

# --- The reports list: a reason longer than its column is cut after a word.
COLUMNS=80 "$OOMKIT" reports > "$TMP/reports80.txt"
COLUMNS=250 "$OOMKIT" reports > "$TMP/reports250.txt"
cat "$TMP/reports80.txt" "$TMP/reports250.txt"
# cut_after_word SHOWN FULL: SHOWN is FULL, or a prefix of it that ends a
# word (the next character of FULL is a space or punctuation) then "...".
cut_after_word() {
	local shown=$1 full=$2 head
	[ "$shown" = "$full" ] && return 0
	head=${shown%...}
	[ "$head" != "$shown" ] && [ -n "$head" ] && [ "${full:0:${#head}}" = "$head" ] &&
		case "${full:${#head}:1}" in " " | , | ";" | :) true ;; *) false ;; esac
}
shown80=$(row 1 "$TMP/reports80.txt" | cut -c 51-)
shown250=$(row 1 "$TMP/reports250.txt" | cut -c 51-)
check "reports at 80 columns: the reason is cut ($shown80)" test "${shown80: -3}" = "..."
check "reports at 80 columns: after a whole word" cut_after_word "$shown80" "$reason"
check "reports at 80 columns: within 80" test "$(longest "$TMP/reports80.txt")" -le 80
check "reports at 250 columns: as the index keeps it, after a whole word ($shown250)" \
	cut_after_word "$shown250" "$reason"
check "reports at 250 columns: longer than at 80" test "${#shown250}" -gt "${#shown80}"

# --- A report whose OOM oomkitd left to the kernel says so.
hog=$(spawn rep 100 512 1000)
check "rep: the kernel kills its hog" wait_for 20 dead "$hog"
wait_for 10 has_reports 2 || fail "no second report"
rep2=$(latest_report)
mapfile -t got < <(fields "$rep2" "r['timings_ms']['freed']" "r['not_freed']")
check "rep: no time for freed memory" test "${got[0]}" = None
check "rep: and why" test "${got[1]}" = "oomkitd freed none: the kernel OOM killer frees it"
COLUMNS=200 "$OOMKIT" reports show 2 > "$TMP/show2.txt"
cat "$TMP/show2.txt"
check "rep: reports show says why" grep -q "memory not seen freed: oomkitd freed none: the kernel OOM" "$TMP/show2.txt"

# --- The log: sizes in one format (KiB below 10 MiB, else MiB), none in
# the config's syntax (64M) or another unit.
tail -n +"$line" "$TMP/log" > "$TMP/event.log"
cat "$TMP/event.log"
check "log: the OOM's line gives the victim's size in MiB or KiB" \
	grep -Eq "web: OOM: kill: .*killing process $newer \(python3, [0-9]+ (KiB|MiB)\)" "$TMP/event.log"
check "log: no size in another format" \
	test -z "$(grep -Eo '\b[0-9]+(\.[0-9]+)? ?([KMGT]|[KMGT]B|bytes)\b' "$TMP/log" | head -n 3)"
check "log: no escape byte reaches it" test "$(grep -c $'\e' "$TMP/log")" = 0
finish
