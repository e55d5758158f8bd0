#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Metrics follow events, not a clock: the file is written at start, after an
# OOM and after a reload, while an idle daemon (and its guardian) keep every
# timer disarmed, so nothing can wake them.  metrics_interval arms a timer
# that rewrites the file on its own, and a reload back to 0 disarms it.
# The names and labels follow Prometheus's conventions (docs/deploy.md,
# "Metrics"): kills by job and policy in one family, latency histograms, the
# OOMs held right now, instances labelled by cgroup, every value escaped.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup metrics

# An instance whose cgroup name its owner chose: a quote and a backslash (the
# kernel refuses a newline in a cgroup's name).
ODD='q"b\s'
cg_mkdir "$R" "$R/ext" "$R/ext/$ODD" || fail "cannot make the test's cgroups"
# The delay gives a prompt (half of it) long enough to be seen on a busy machine.
write_config 256M "report, kill-lowest, kernel" 20s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel

[job held]
priority = 500
limit = 32M
policy = prompt, kill-largest, kernel

[job odd]
cgroup = $M/ext/*
EOF2
cp "$TMP/oomkitd.conf" "$TMP/base.conf"
PROM="$TMP/oomkit.prom"

has_metric() { grep -qxF -- "$1" "$PROM" 2>/dev/null; }
count_metric() { grep -cF -- "$1" "$PROM"; }
buckets() { sed -n 's/^oomkit_freed_seconds_bucket{le="\([^"]*\)"}.*/\1/p' "$PROM" | tr '\n' ' '; }

inode_changed() { [ "$(stat -c %i "$PROM" 2>/dev/null)" != "$1" ]; }

start_daemon
check "metrics are written at start" has_metric "oomkit_job_limit_bytes{name=\"web\"} $((32 << 20))"
check "metrics at start count no OOM" has_metric 'oomkit_oom_events_total{name="web"} 0'
check "nor kills, for each policy of the job's and the machine's chains" \
	test "$(count_metric 'oomkit_kills_total{name="web",policy=')" = 2
check "an instance is labelled by its cgroup, escaped" \
	has_metric 'oomkit_oom_events_total{name="odd",cgroup="'"$M"'/ext/q\"b\\s"} 0'
check "shed successes have a counter" has_metric 'oomkit_shed_successes_total{name="web"} 0'
check "nothing is held" has_metric 'oomkit_holds_in_progress 0'
check "the histograms' buckets go from 1 ms to 10 s" \
	test "$(buckets)" = '0.001 0.002 0.005 0.01 0.02 0.05 0.1 0.2 0.5 1 2 5 10 +Inf '
# The guardian by name: the daemon has other children (the hook runner).
GPID=$(pgrep -P "$DPID" -x oomkit-guardian)
check "the guardian is running" test -n "$GPID"
check "idle: the daemon's timers are disarmed" disarmed "$DPID"
check "idle: the guardian's timers are disarmed" disarmed "$GPID"
for child in $(cat "/proc/$DPID/task/$DPID/children"); do
	[ "$child" = "$GPID" ] && continue
	check "idle: no timer armed in the daemon's child $(cat "/proc/$child/comm")" eval "! armed $child"
done

# An OOM in web: the file follows at once, with no timer.
a=$(spawn web 64)
check "the OOM is handled" wait_for 20 dead "$a"
check "metrics count the OOM" wait_for 10 has_metric 'oomkit_oom_events_total{name="web"} 1'
check "metrics count the kill, in its job, by its policy" \
	wait_for 10 has_metric 'oomkit_kills_total{name="web",policy="kill-largest"} 1'
check "and no other" has_metric 'oomkit_kills_total{name="web",policy="kill-lowest"} 0'
check "the decision is in its histogram" wait_for 10 has_metric 'oomkit_decision_seconds_count 1'
check "counted up to +Inf" has_metric 'oomkit_decision_seconds_bucket{le="+Inf"} 1'
check "and the memory freed in its own" wait_for 10 has_metric 'oomkit_freed_seconds_count 1'
# The kill has landed (its freed time is counted): nothing is left to wake
# the daemon, not even the victim's exit deadline (the delay, 20 s ahead),
# which goes with the victim.  What may still be armed is due within
# moments (the library's 10 ms looks at the memcg leaving OOM).
far_timer() { timers_of "$1" | tr -d '(,' | awk '$1 >= 6 { found = 1 } END { exit !found }'; }
check "no timer is left for the victim's exit deadline" eval "! far_timer $DPID"
check "after the OOM the timers are disarmed again" wait_for 10 disarmed "$DPID"

# An OOM held while a prompt client that never answers is asked: one hold,
# until the question's deadline lets the chain go on.
mkfifo "$TMP/answers"
"$OOMKIT" prompt --once < "$TMP/answers" > "$TMP/prompt.out" 2>&1 &
T_HELPERS="${T_HELPERS:-} $!"
exec {fd}> "$TMP/answers"
wait_for 10 grep -q "waiting for OOMs" "$TMP/prompt.out" || fail "the prompt client did not connect"
b=$(spawn held 64 512 1000)
check "the daemon asks about the hog" wait_for 20 grep -q "kill $b" "$TMP/prompt.out"
check "the OOM is held" wait_for 10 has_metric 'oomkit_holds_in_progress 1'
check "the chain goes on after the deadline" wait_for 30 dead "$b"
check "and holds nothing then" wait_for 10 has_metric 'oomkit_holds_in_progress 0'
check "the kill counts for the step after the prompt" \
	wait_for 10 has_metric 'oomkit_kills_total{name="held",policy="kill-largest"} 1'
exec {fd}>&-
# Debian's python3 has python3-prometheus-client; one of the user's own (pyenv) may not.
py=/usr/bin/python3
[ -x $py ] || py=python3
check "the file holds to Prometheus's text format and naming" $py "$(dirname "$0")/check-prom.py" "$PROM"

# A reload with metrics_interval: a new job appears in the file, and the file
# is then rewritten by the timer alone, usage figures with it.
sed 's|^metrics = .*|&\nmetrics_interval = 1s|' "$TMP/base.conf" > "$TMP/oomkitd.conf"
printf '\n[job extra]\nlimit = 16M\n' >> "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a reload rewrites the metrics" wait_for 10 has_metric "oomkit_job_limit_bytes{name=\"extra\"} $((16 << 20))"
check "metrics_interval arms a timer" wait_for 10 armed "$DPID"
ino=$(stat -c %i "$PROM")
check "metrics_interval rewrites the file with no event" wait_for 10 inode_changed "$ino"
c=$(spawn extra 8)
wait_for 10 usage_at_least extra $((8 << 20)) || fail "extra did not reach 8M"
usage_in_file() { [ "$(sed -n 's/^oomkit_job_usage_bytes{name="extra"} //p' "$PROM")" -ge $((8 << 20)) ] 2>/dev/null; }
check "metrics_interval keeps the usage current" wait_for 10 usage_in_file
kill -9 "$c"

# Back to the default: events only, and the timer goes quiet.
cp "$TMP/base.conf" "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a reload to metrics_interval 0 rewrites the metrics" wait_for 10 eval '! grep -q "name=\"extra\"" "$PROM"'
check "metrics_interval 0 disarms the timer" wait_for 10 disarmed "$DPID"
finish
