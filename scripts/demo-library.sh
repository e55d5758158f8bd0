#!/bin/sh
# The library demo: a memcg with three processes, the newest of which grows
# until the memcg is out of memory.  The kernel would kill the largest; the
# kill-newest example handler (examples/kill-newest.c) kills the newest and
# the long-running one survives.
#   demo-library.sh BUILD_DIR
set -eu
build=${1:-build}
root=/sys/fs/cgroup/memory
cg=oomkit-demo-$$
hog=$build/tests/helpers/oomkit-hog
handler=$build/examples/kill-newest
[ -x "$hog" ] && [ -x "$handler" ] || { echo "demo: build first (make demo does)" >&2; exit 1; }
[ -w $root/cgroup.event_control ] || { echo "demo: needs root and the cgroup v1 memory controller at $root" >&2; exit 1; }

pids=""
cleanup() {
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
	echo 0 > $root/$cg/memory.oom_control 2>/dev/null || true
	for p in $(cat $root/$cg/cgroup.procs 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
	for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir $root/$cg 2>/dev/null && break; sleep 0.1; done
}
trap cleanup EXIT INT TERM

start_in() { # start_in NAME MIB: a hog that allocates MIB MiB (1 MiB every 20 ms) in the memcg
	sh -c "echo \$\$ > $root/$cg/cgroup.procs && exec $hog $2 1024 20000" &
	eval "$1=$!"
	pids="$pids $!"
}

mkdir $root/$cg
echo 96M > $root/$cg/memory.limit_in_bytes
echo "== memcg $cg, limit 96 MiB"
start_in web 48;    sleep 1.2
echo "   web       pid $web: the long-running server, 48 MiB (the largest)"
start_in worker 16; sleep 0.5
echo "   worker    pid $worker: 16 MiB"

echo "== the handler takes over the memcg's OOM (kernel killer held off for 2 s)"
timeout 30 "$handler" $cg 2000 1 &
hpid=$!
pids="$pids $hpid"
while [ "$(cat $root/$cg/memory.oom_control | awk '/oom_kill_disable/{print $2}')" != 1 ]; do sleep 0.05; done

start_in player 64
echo "   player    pid $player: started last, wants 64 MiB"
wait $hpid || true

sleep 0.2
echo "== outcome"
for n in web worker player; do
	eval p=\$$n
	if kill -0 "$p" 2>/dev/null; then echo "   $n (pid $p): alive"; else echo "   $n (pid $p): killed"; fi
done
echo "   memcg usage $(($(cat $root/$cg/memory.usage_in_bytes) / 1048576)) MiB of 96 MiB;" \
	"$(awk '/under_oom/{print ($2 ? "still" : "no longer")}' $root/$cg/memory.oom_control) under OOM;" \
	"kernel OOM kills: $(awk '/oom_kill /{print $2}' $root/$cg/memory.oom_control)"
kill -0 "$web" 2>/dev/null && ! kill -0 "$player" 2>/dev/null
