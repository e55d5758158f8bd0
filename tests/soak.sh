#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# soak.sh [BUILD]: random OOMs across 50 memcgs for OOMKIT_SOAK_SECONDS
# (default 600), all handled by one long-running liboomkit program
# (tests/helpers/soak-handler.c), whose fd count and RSS -- and its
# guardian's -- are sampled every few seconds.  Fails if either grew beyond a
# small bound, if any OOM was not handled by the handler (the kernel killer,
# which steps in after the delay, killed something) or if a kill failed.
# Not part of make check: `make soak`.
#
# Each round starts 1-4 hogs in distinct random memcgs of 16 MiB, each
# wanting 20-40 MiB, and waits for them: each one is an OOM the handler must
# resolve by killing it.
set -eu

build=${1:-build}
seconds=${OOMKIT_SOAK_SECONDS:-600}
count=50
limit_mib=16
delay_ms=10000
sample_every=5
fd_slack=2          # a sample may catch the handler with a file open mid-event
rss_slack_kib=1024
root=/sys/fs/cgroup/memory
hog=$build/tests/helpers/oomkit-hog
handler=$build/tests/helpers/oomkit-soak-handler

if [ "$(id -u)" != 0 ] || [ ! -w "$root/cgroup.event_control" ]; then
	echo "soak: SKIP: needs root and the cgroup v1 memory controller at $root" >&2
	exit 77
fi
if [ ! -x "$hog" ] || [ ! -x "$handler" ]; then
	echo "soak: $hog or $handler missing: build first (ninja -C $build)" >&2
	exit 1
fi

parent=oomkit-test-soak-$$
work=$(mktemp -d /tmp/oomkit-soak.XXXXXX)
hpid=

# Kills everything in the soak's memcgs (their kernel killers given back
# first, so nothing stays blocked) and removes them.
cleanup() {
	set +e
	if [ -n "$hpid" ] && kill -0 "$hpid" 2>/dev/null; then
		kill -TERM "$hpid"
		i=0
		while kill -0 "$hpid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$hpid" 2>/dev/null
	fi
	if [ -d "$root/$parent" ]; then
		for d in "$root/$parent"/*/; do
			[ -d "$d" ] && echo 0 > "$d/memory.oom_control"
		done
		i=0
		while [ $i -lt 100 ]; do
			left=$(cat "$root/$parent"/*/cgroup.procs "$root/$parent/cgroup.procs" 2>/dev/null)
			[ -z "$left" ] && break
			kill -KILL $left 2>/dev/null
			sleep 0.05
			i=$((i + 1))
		done
		for d in "$root/$parent"/*/; do
			[ -d "$d" ] && rmdir "$d"
		done
		rmdir "$root/$parent"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rand() {
	od -An -N2 -tu2 /dev/urandom | tr -d ' \n'
}

fds() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

mkdir "$root/$parent"
echo $(((count * limit_mib + 128) * 1024 * 1024)) > "$root/$parent/memory.limit_in_bytes"
i=0
while [ $i -lt $count ]; do
	mkdir "$root/$parent/$i"
	echo $((limit_mib * 1024 * 1024)) > "$root/$parent/$i/memory.limit_in_bytes"
	i=$((i + 1))
done

"$handler" "$parent" "$count" "$delay_ms" > "$work/handler.log" 2>&1 &
hpid=$!
i=0
while ! grep -q '^ready ' "$work/handler.log" 2>/dev/null; do
	if [ $i -ge 100 ] || ! kill -0 "$hpid" 2>/dev/null; then
		echo "soak: the handler did not start:" >&2
		cat "$work/handler.log" >&2
		exit 1
	fi
	sleep 0.1
	i=$((i + 1))
done
guardian=$(sed -n 's/^ready //p' "$work/handler.log")

# One round: 1-4 hogs in distinct memcgs, waited for.
round() {
	n=$(($(rand) % 4 + 1))
	chosen=" "
	pids=
	j=0
	while [ $j -lt $n ]; do
		cg=$(($(rand) % count))
		case "$chosen" in *" $cg "*) continue ;; esac
		chosen="$chosen$cg "
		mib=$(($(rand) % 21 + 20))
		sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3"' sh "$root/$parent/$cg" "$hog" "$mib" &
		pids="$pids $!"
		j=$((j + 1))
	done
	launched=$((launched + n))
	for p in $pids; do
		wait "$p" 2>/dev/null || true
	done
}

launched=0
start=$(date +%s)
end=$((start + seconds))
# The first sample after the first round: the handler's paths have all run once.
round
echo "$(($(date +%s) - start)) $(fds $hpid) $(rss_kib $hpid) $(fds $guardian) $(rss_kib $guardian)" > "$work/samples"
next=$(($(date +%s) + sample_every))
while [ "$(date +%s)" -lt $end ]; do
	round
	if [ "$(date +%s)" -ge $next ]; then
		echo "$(($(date +%s) - start)) $(fds $hpid) $(rss_kib $hpid) $(fds $guardian) $(rss_kib $guardian)" >> "$work/samples"
		next=$((next + sample_every))
	fi
done
elapsed=$(($(date +%s) - start))
echo "$elapsed $(fds $hpid) $(rss_kib $hpid) $(fds $guardian) $(rss_kib $guardian)" >> "$work/samples"

kill -TERM "$hpid"
wait "$hpid" || true
hpid=
handled=$(grep -c '^oom ' "$work/handler.log" || true)
failed=$(sed -n 's/^handled [0-9]* failed //p' "$work/handler.log")
kernel_kills=0
for d in "$root/$parent"/*/; do
	k=$(awk '$1 == "oom_kill" { print $2 }' "$d/memory.oom_control")
	kernel_kills=$((kernel_kills + ${k:-0}))
done

set -- $(head -n 1 "$work/samples")
fd0=$2 rss0=$3 gfd0=$4 grss0=$5
set -- $(tail -n 1 "$work/samples")
fd1=$2 rss1=$3 gfd1=$4 grss1=$5
max_fd=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$work/samples")
max_rss=$(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$work/samples")
samples=$(wc -l < "$work/samples")

echo "soak: $handled OOMs handled in $elapsed s; fds first/last $fd0/$fd1; RSS first/last $rss0/$rss1 KiB"
echo "soak: $launched hogs started, $kernel_kills killed by the kernel, ${failed:-?} failed kills;" \
	"$samples samples, max fds $max_fd, max RSS $max_rss KiB;" \
	"guardian fds $gfd0/$gfd1, RSS $grss0/$grss1 KiB"

status=0
if [ "$handled" -ne "$launched" ] || [ "$kernel_kills" -ne 0 ] || [ "${failed:-1}" -ne 0 ]; then
	echo "soak: FAIL: not every OOM was handled by the handler" >&2
	status=1
fi
if [ "$fd1" -gt $((fd0 + fd_slack)) ] || [ "$gfd1" -gt $((gfd0 + fd_slack)) ]; then
	echo "soak: FAIL: the fd count grew" >&2
	status=1
fi
if [ "$rss1" -gt $((rss0 + rss_slack_kib)) ] || [ "$grss1" -gt $((grss0 + rss_slack_kib)) ]; then
	echo "soak: FAIL: RSS grew" >&2
	status=1
fi
exit $status
