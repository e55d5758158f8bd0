#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# shed through a shed_command with a real client nobody here
# wrote: Debian's redis-server is the job, on a private unix socket and its
# own directory, started by this test in the job's memcg (cgroup v1, the
# kernel killer held off).  It fills its cache database until the job is at
# its limit and redis sleeps in the kernel; the shed lends the job headroom
# and runs the hook, `redis-cli FLUSHDB` on the cache database then `MEMORY
# PURGE`.  Then:
#   - redis survives, and its other database keeps every key;
#   - the OOM is resolved with no kill (the kernel's or the daemon's), and
#     the report says how much came back and how the hook ended.
. "$(dirname "$0")/daemon-lib.sh"
require_kernel
command -v redis-server >/dev/null || skip "redis-server is missing (Debian's redis-server package)"
command -v redis-cli >/dev/null || skip "redis-cli is missing (Debian's redis-tools package)"
[ -x "${OOMKIT_HOOK_RUNNER:-}" ] || { echo "FAIL: \$OOMKIT_HOOK_RUNNER is not an executable" >&2; exit 1; }
setup redis

LIMIT_MIB=128
RD="$TMP/redis"
mkdir -m 700 "$RD"
SOCKET="$RD/redis.sock"
cli="$(command -v redis-cli)"

# The hook: two commands, the second only if the first worked.  redis-cli
# talks to redis over its socket; nothing else.
cat > "$TMP/shed-cache" <<EOF2
#!/bin/sh
"$cli" -s "$SOCKET" -n 1 FLUSHDB && "$cli" -s "$SOCKET" MEMORY PURGE
EOF2
chmod 755 "$TMP/shed-cache"
write_config 1G "report, kill-lowest, kernel" 5s <<EOF2
[job cache]
limit = ${LIMIT_MIB}M
policy = shed, kill-largest, kernel
shed_command = $TMP/shed-cache
shed_wait = 2s
EOF2
start_daemon

usage() { cat "$R/cache/$USAGE_FILE"; }
rcli() { timeout 10 "$cli" -s "$SOCKET" "$@"; }

# redis as this test's own process, in the job: no port, its own directory,
# nothing saved.
sh -c 'echo $$ > "$1/cgroup.procs" && exec redis-server --port 0 --unixsocket "$2" --unixsocketperm 700 \
	--dir "$3" --save "" --appendonly no --daemonize no' sh "$R/cache" "$SOCKET" "$RD" >"$RD/log" 2>&1 &
redis=$!
check "redis runs in the job" wait_for 10 test -S "$SOCKET"
check "redis is in the job's memcg" in_memcg "$redis" "$M/cache"

# Database 0 holds what must stay; database 1 is the cache.
for i in $(seq 1 1000); do echo "SET keep:$i value-$i"; done | rcli -n 0 >/dev/null
check "1000 keys to keep" test "$(rcli -n 0 DBSIZE)" = 1000

# The cache, 1 MiB a key, up to 8 MiB below the limit, one key at a time...
n=0
while [ "$(usage)" -lt $(((LIMIT_MIB - 8) << 20)) ] && [ $n -lt 400 ]; do
	n=$((n + 1))
	rcli -n 1 SETRANGE "cache:$n" 1048575 x >/dev/null || break
done
before_oom=$(usage)
check "the cache filled the job to $((before_oom >> 20)) MiB with $n keys" test "$before_oom" -ge $(((LIMIT_MIB - 8) << 20))
check "no OOM yet" cg_out_of_oom "$R/cache"
# ...then 12 more at once: past the limit by a few MiB, less than the shed
# lends (an eighth of the limit), so that redis can finish them and serve the
# hook.  redis sleeps in the kernel at the limit until then.
for i in $(seq $((n + 1)) $((n + 12))); do echo "SETRANGE cache:$i 1048575 x"; done |
	timeout 30 "$cli" -s "$SOCKET" -n 1 >"$TMP/filler.out" 2>&1 &
filler=$!

reports_of() { ls "$TMP/reports"/oom-*-cache.json 2>/dev/null | sort; }
has_report() { [ -n "$(reports_of)" ]; }
outcome_has() { json_get "$1" "r['outcome']" | grep -q -- "$2"; }
not_under_oom() { cg_out_of_oom "$R/cache"; }
limit_is() { [ "$(cat "$R/cache/$LIMIT_FILE")" = "$1" ]; }

check "the job's OOM is reported" wait_for 20 has_report
rep=$(reports_of | head -n 1)
check "the decision is shed" test "$(json_get "$rep" "r['decision']['action']")" = shed
check "the report says resolved by shedding" wait_for 15 outcome_has "$rep" "resolved by shedding"
check "its shed object says resolved" test "$(json_get "$rep" "r['shed']['resolved']")" = True
freed=$(json_get "$rep" "r['shed']['freed_bytes']")
check "it says how much came back: $((freed >> 20)) MiB of a $n+12 MiB cache" test "$freed" -ge $(((n * 3 / 4) << 20))
check "the report records the shed_command" test "$(json_get "$rep" "r['hooks'][0]['hook']")" = shed_command
check "which exited 0" test "$(json_get "$rep" "r['hooks'][0]['ended']") $(json_get "$rep" "r['hooks'][0]['exit_status']")" = "exited 0"
check "the job was lent headroom" test "$(json_get "$rep" "r['shed']['lent_bytes']")" -gt 0
check "the OOM is resolved" wait_for 10 not_under_oom
check "the filler finished" wait_for 30 sh -c "! kill -0 $filler 2>/dev/null"
check "redis survived" alive "$redis"
# The filler's last keys may have come after the FLUSHDB: those stay.
check "the cache filled before the OOM is gone" test "$(rcli -n 1 EXISTS $(seq -f 'cache:%g' 1 "$n"))" = 0
check "at most the filler's last 12 keys are left ($(rcli -n 1 DBSIZE))" test "$(rcli -n 1 DBSIZE)" -le 12
check "the other database kept its 1000 keys" test "$(rcli -n 0 DBSIZE)" = 1000
check "and their values" test "$(rcli -n 0 GET keep:777)" = value-777
check "redis is small again: $(($(usage) >> 20)) MiB" test "$(usage)" -lt $((32 << 20))
check "the kernel killed nothing" test "$(cg_kills "$R/cache")" = 0
check "the daemon killed nothing: one report, the shed's" test "$(reports_of | wc -l)" = 1
check "the headroom is taken back" wait_for 20 limit_is $((LIMIT_MIB << 20))
check "the log says what came back" grep -q "cache: resolved by shedding: .* came back" "$TMP/log"
echo "figures: cache $((n + 12)) MiB in $((n + 12)) keys; usage at the OOM $((before_oom >> 20)) MiB+; came back $((freed >> 20)) MiB"
check "the daemon is alive" kill -0 "$DPID"
rcli SHUTDOWN NOSAVE >/dev/null 2>&1
wait "$redis" 2>/dev/null
stop_daemon
echo "$T_PASSED passed, $T_FAILED failed"
