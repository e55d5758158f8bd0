#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Metrics follow events, not a clock: the file is written at start, after an
# OOM and after a reload, while an idle daemon (and its guardian) keep every
# timer disarmed, so nothing can wake them.  metrics_interval arms a timer
# that rewrites the file on its own, and a reload back to 0 disarms it.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
setup metrics

write_config 256M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel
EOF2
cp "$TMP/oomkitd.conf" "$TMP/base.conf"
PROM="$TMP/oomkit.prom"

has_metric() { grep -qx "$1" "$PROM" 2>/dev/null; }

inode_changed() { [ "$(stat -c %i "$PROM" 2>/dev/null)" != "$1" ]; }

start_daemon
check "metrics are written at start" has_metric "oomkit_job_limit_bytes{name=\"web\"} $((32 << 20))"
check "metrics at start count no OOM" has_metric 'oomkit_oom_events_total{scope="web"} 0'
GPID=$(cut -d' ' -f1 "/proc/$DPID/task/$DPID/children")
check "the guardian is running" test -n "$GPID"
check "idle: the daemon's timers are disarmed" disarmed "$DPID"
check "idle: the guardian's timers are disarmed" disarmed "$GPID"

# An OOM in web: the file follows at once, with no timer.
a=$(spawn web 64)
check "the OOM is handled" wait_for 20 dead "$a"
check "metrics count the OOM" wait_for 10 has_metric 'oomkit_oom_events_total{scope="web"} 1'
check "metrics count the kill" wait_for 10 has_metric 'oomkit_job_kills_total{name="web"} 1'
check "metrics count the policy" has_metric 'oomkit_kills_total{policy="kill-largest"} 1'
check "after the OOM the timers are disarmed again" wait_for 10 disarmed "$DPID"

# A reload with metrics_interval: a new job appears in the file, and the file
# is then rewritten by the timer alone, usage figures with it.
sed 's|^metrics = .*|&\nmetrics_interval = 1s|' "$TMP/base.conf" > "$TMP/oomkitd.conf"
printf '\n[job extra]\nlimit = 16M\n' >> "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a reload rewrites the metrics" wait_for 10 has_metric "oomkit_job_limit_bytes{name=\"extra\"} $((16 << 20))"
check "metrics_interval arms a timer" armed "$DPID"
ino=$(stat -c %i "$PROM")
check "metrics_interval rewrites the file with no event" wait_for 10 inode_changed "$ino"
b=$(spawn extra 8)
wait_for 10 usage_at_least extra $((8 << 20)) || fail "extra did not reach 8M"
usage_in_file() { [ "$(sed -n 's/^oomkit_job_usage_bytes{name="extra"} //p' "$PROM")" -ge $((8 << 20)) ] 2>/dev/null; }
check "metrics_interval keeps the usage current" wait_for 10 usage_in_file
kill -9 "$b"

# Back to the default: events only, and the timer goes quiet.
cp "$TMP/base.conf" "$TMP/oomkitd.conf"
kill -HUP "$DPID"
check "a reload to metrics_interval 0 rewrites the metrics" wait_for 10 eval '! grep -q "name=\"extra\"" "$PROM"'
check "metrics_interval 0 disarms the timer" wait_for 10 disarmed "$DPID"
finish
