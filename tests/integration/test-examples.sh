#!/bin/sh
# Runs each example handler against a real memcg and checks what it says it
# does: kill-newest kills the newest process and the long-running one lives;
# grow-or-kill raises the limit while it may and then kills the largest.
#   test-examples.sh HOG KILL_NEWEST GROW_OR_KILL
set -u
hog=$1 kill_newest=$2 grow_or_kill=$3
root=/sys/fs/cgroup/memory
parent=oomkit-test-examples-$$
fail=0

if [ "$(id -u)" != 0 ] || [ ! -w $root/cgroup.event_control ]; then
	if [ "${OOMKIT_REQUIRE_KERNEL:-0}" = 1 ]; then echo "FAIL: needs root and memcg v1 at $root"; exit 1; fi
	echo "SKIP: needs root and memcg v1 at $root"; exit 77
fi

cleanup() {
	for cg in $(find $root/$parent -depth -type d 2>/dev/null); do
		echo 0 > "$cg/memory.oom_control" 2>/dev/null
		for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	for cg in $(find $root/$parent -depth -type d 2>/dev/null); do
		i=0; while ! rmdir "$cg" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	done
}
trap cleanup EXIT INT TERM

check() { # check DESCRIPTION CONDITION...
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}
key() { awk -v k="$2" '$1 == k {print $2}' "$root/$1/memory.oom_control"; }
wait_for() { # wait_for SECONDS CONDITION...: polls a real condition, fails after SECONDS
	t=$(( $1 * 20 )); shift
	while ! "$@"; do t=$((t - 1)); [ $t -le 0 ] && return 1; sleep 0.05; done
}
usage_at_least() { [ "$(cat $root/$1/memory.usage_in_bytes)" -ge "$2" ]; }
taken_over() { [ "$(key "$1" oom_kill_disable)" = 1 ]; }
start_in() { # start_in CGROUP ARGS...: starts the hog in CGROUP, pid in $started
	cg=$1; shift
	sh -c "echo \$\$ > $root/$cg/cgroup.procs && exec $hog $*" &
	started=$!
}

mkdir $root/$parent
echo 512M > $root/$parent/memory.limit_in_bytes

# kill-newest: an old 24 MiB process, then a newer one that wants 96 MiB in a 64 MiB memcg.
cg=$parent/newest
mkdir $root/$cg && echo 64M > $root/$cg/memory.limit_in_bytes
start_in $cg 24; old=$started
wait_for 10 usage_at_least $cg $((24 << 20))
timeout 60 "$kill_newest" $cg 5000 1 > /tmp/oomkit-ex-$$.out 2>&1 &
handler=$!
wait_for 10 taken_over $cg
start_in $cg 96; new=$started
wait $handler; status=$?
cat /tmp/oomkit-ex-$$.out
check "kill-newest exited 0" [ $status = 0 ]
check "kill-newest killed the newest process" grep -q "decision: kill pid $new " /tmp/oomkit-ex-$$.out
check "the newest process is gone" sh -c "! kill -0 $new 2>/dev/null || grep -q '^State:.*Z' /proc/$new/status"
check "the old process lives" kill -0 $old
check "the kernel killed nothing" [ "$(key $cg oom_kill)" = 0 ]
check "the memcg left OOM" [ "$(key $cg under_oom)" = 0 ]
check "the kernel killer is back after exit" [ "$(key $cg oom_kill_disable)" = 0 ]

# grow-or-kill: 32 MiB memcg, grow by 32 MiB up to 64 MiB, then kill the largest.
cg=$parent/grow
mkdir $root/$cg && echo 32M > $root/$cg/memory.limit_in_bytes
timeout 60 "$grow_or_kill" $cg 32 64 2 > /tmp/oomkit-ex-$$.out 2>&1 &
handler=$!
wait_for 10 taken_over $cg
start_in $cg 8; small=$started
wait_for 10 usage_at_least $cg $((8 << 20))
start_in $cg 200; big=$started
wait $handler; status=$?
cat /tmp/oomkit-ex-$$.out
check "grow-or-kill exited 0" [ $status = 0 ]
check "the limit was raised to 64 MiB" [ "$(cat $root/$cg/memory.limit_in_bytes)" = $((64 << 20)) ]
check "then the largest process was killed" grep -q "decision: kill pid $big " /tmp/oomkit-ex-$$.out
check "the small process lives" kill -0 $small
check "the kernel killed nothing" [ "$(key $cg oom_kill)" = 0 ]
rm -f /tmp/oomkit-ex-$$.out
[ $fail = 0 ] && echo "examples: all checks passed"
exit $fail
