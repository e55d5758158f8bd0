#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# guest-swap.sh - the swap benchmark's side in the systemd guest (bench/swap.sh
# boots it through tests/vm/systemd.sh --checks): the same two workloads on
# the same machine, handled in turn by each tool of $SDG_BENCH_TOOLS alone:
#
#   kernel        nothing but the kernel's OOM killer
#   oomkitd       the installed oomkitd.service with the installed
#                 oomkitd.conf (every key commented out: the built-in default)
#   earlyoom      Debian's earlyoom.service with Debian's /etc/default/earlyoom
#   systemd-oomd  Fedora's settings (its systemd-oomd-defaults package):
#                 ManagedOOMSwap=kill on -.slice, ManagedOOMMemoryPressure=kill
#                 with ManagedOOMMemoryPressureLimit=50% on user@.service, and
#                 DefaultMemoryPressureDurationSec=20s
#   oomkitd-ranked    oomkitd with the jobs ranked for memory: redis 900, the
#                 fitting service 100, the user's apps 200; memory_priority
#                 = no (the baseline of the next)
#   oomkitd-priority  the same with memory_priority = yes: while the machine
#                 stalls, redis's working set is protected (memory.low) and
#                 the lowest-priority job's cold memory reclaimed first
#                 (memory.reclaim); its phases' DATA lines add what it did
#
# Swap is $SDG_BENCH_SWAP: "file", a 512 MiB swap file, or "zram", a zram
# device of half of RAM (zram-tools' default size) compressed with lzo-rle.
# For each tool, on a machine whose swap was emptied and whose redis holds
# 30 000 keys of 1 KiB:
#
#   fits  a service needs 1.2x RAM (zram: RAM plus a quarter of the device,
#         what fits at the pages' compression), holds it 30 s and exits 0.
#         It fits in RAM + swap: killing it is a false kill.
#   leak  a user's app scope (systemd-run --user --scope in
#         user@1000.service/app.slice) allocates 1 MiB every 5 ms, without
#         end.  Measured: from its start to its death; given $SDG_BENCH_LEAK_S
#         seconds (default 300), then stopped and counted as not killed.
#
# Both phases run while a timer task (oomkit-swapprobe wake) measures how late
# it wakes and a redis client (oomkit-swapprobe redis) sends a GET every
# 100 ms.  Each phase ends in one line the host parses:
#
#   sdguest: DATA swap tool=T swap=S phase=P key=value ...
#
# Nothing here is asserted: the host prints the table.  Pages of both
# workloads are half random (OOMKIT_HOG_FILL=50), so zram stores them as it
# would real data.

here=$(dirname "$(realpath "$0")")
. "$here/guest-systemd-lib.sh"

HOG=${SDG_HELPER_OOMKIT_HOG:?}
PROBE=${SDG_HELPER_OOMKIT_SWAPPROBE:?}
SWAP=${SDG_BENCH_SWAP:-file}
TOOLS=${SDG_BENCH_TOOLS:-kernel,oomkitd,earlyoom,systemd-oomd}
LEAK_S=${SDG_BENCH_LEAK_S:-300}
FITS_HOLD_S=30
KEYS=30000
SWAPFILE=/var/tmp/bench-swap
USER_NAME="test"
OUT=/run/bench
export OOMKIT_HOG_FILL=50

redis_keys() {
	timeout 60 redis-cli DBSIZE 2>/dev/null
}

# N keys of 1 KiB each through redis-cli --pipe (the mass insertion protocol).
redis_fill() { # n
	local v
	v=$(head -c 1024 /dev/zero | tr '\0' x)
	seq 1 "$1" | awk -v v="$v" '{ k = "key:" $1; printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v }' |
		redis-cli --pipe >/dev/null
}

# redis running, with every key: restarted and filled again after a tool
# killed it.
redis_ready() {
	if [[ $(prop redis-server.service ActiveState) != active ]]; then
		systemctl reset-failed redis-server.service 2>/dev/null
		systemctl restart redis-server.service
	fi
	wait_for 60 eval 'redis-cli PING 2>/dev/null | grep -q PONG'
	redis-cli CONFIG SET save "" >/dev/null
	[[ $(redis_keys) == "$KEYS" ]] || { redis-cli FLUSHALL >/dev/null; redis_fill $KEYS; }
	note "redis: $(redis_keys) keys, $(redis-cli INFO memory | sed -n 's/^used_memory_human:\(.*\)\r$/\1/p') used"
}

stop_tools() {
	systemctl stop oomkitd.service earlyoom.service systemd-oomd.socket systemd-oomd.service 2>/dev/null
	# The installed oomkitd.conf again (oomkitd-ranked and -priority write their own).
	[[ ! -e $OOMKITD_CONF.bench ]] || mv "$OOMKITD_CONF.bench" "$OOMKITD_CONF"
	rm -rf /run/systemd/system/-.slice.d /run/systemd/system/user@.service.d /run/systemd/oomd.conf.d
	systemctl daemon-reload
}

swap_on() {
	local size
	swapoff -a 2>/dev/null
	if [[ $SWAP == zram ]]; then
		[[ -e /sys/block/zram0 ]] || { depmod -a && modprobe zram num_devices=1; } || {
			note "zram: modprobe failed: $(modprobe zram 2>&1)"
			return 1
		}
		# No udev here: the kernel's devtmpfs makes the node, a moment later.
		wait_for 30 test -b /dev/zram0 -a -e /sys/block/zram0/disksize || {
			note "zram: no device: $(ls /sys/block | tr '\n' ' '); $(grep zram /proc/modules)"
			return 1
		}
		# The device of an earlier tool: emptied through its own reset
		# file.  (zramctl --reset also removes the device, through
		# zram_control/hot_remove: the zram boot of before ran without
		# swap, its zramctl finding no zram0.)
		[[ $(cat /sys/block/zram0/disksize) == 0 ]] || echo 1 >/sys/block/zram0/reset
		size=$(($(kv /proc/meminfo MemTotal:) / 2 >> 10))
		zramctl /dev/zram0 --algorithm lzo-rle --size ${size}M && mkswap -q /dev/zram0 >/dev/null &&
			swapon -p 100 /dev/zram0 || {
			note "zram: setup failed: $(ls /sys/block | tr '\n' ' '); $(zramctl 2>&1 | tr '\n' ' ')"
			return 1
		}
	else
		[[ -f $SWAPFILE ]] || { fallocate -l 512M $SWAPFILE && chmod 600 $SWAPFILE && mkswap -q $SWAPFILE >/dev/null; } ||
			return 1
		swapon $SWAPFILE
	fi
}

# oomkitd's configuration with the jobs ranked for memory; memory_priority
# as given.
ranked_config() { # yes|no
	[[ -e $OOMKITD_CONF.bench ]] || cp "$OOMKITD_CONF" "$OOMKITD_CONF.bench"
	cat >"$OOMKITD_CONF" <<-EOF
	[oomkitd]
	machine = $CG
	memory_priority = $1

	[job redis]
	priority = 900
	cgroup = system.slice/redis-server.service

	[job batch]
	priority = 100
	cgroup = system.slice/sdg-fits.service

	[job apps]
	priority = 200
	kill = job
	cgroup = user.slice/user-*.slice/user@*.service/app.slice/*
	EOF
}

# What memory priority did in a phase (oomkitd-priority): words for the
# DATA line, from the metrics file.
prio_words() { # tool
	[[ $1 == oomkitd-priority ]] || return 0
	awk '/^oomkit_memory_priority_episodes_total / { e = $NF } END { printf "episodes=%d", e }' \
		/var/lib/oomkit/oomkit.prom 2>/dev/null
	echo " redis_low_peak_bytes=$(cat $OUT/prio-low-peak 2>/dev/null || echo 0)" \
		"reclaimed_bytes=$(cat $OUT/prio-reclaimed 2>/dev/null || echo 0)"
}

# Bytes reclaimed from the lowest-priority jobs, as the metrics say now (a
# job's series goes with its unit: read while it runs).
prio_reclaimed() {
	awk '/^oomkit_job_reclaimed_bytes_total\{/ && /sdg-fits|app.slice/ { r += $NF } END { printf "%d", r }' \
		/var/lib/oomkit/oomkit.prom 2>/dev/null
}

# The highest memory.low redis's cgroup had in a phase, and the most bytes
# reclaimed seen, kept in files.
prio_watch_start() {
	echo 0 >$OUT/prio-low-peak
	echo 0 >$OUT/prio-reclaimed
	(
		peak=0 most=0
		while :; do
			v=$(cat $CG/system.slice/redis-server.service/memory.low 2>/dev/null || echo 0)
			((v > peak)) && { peak=$v; echo $peak >$OUT/prio-low-peak; }
			v=$(prio_reclaimed)
			((${v:-0} > most)) && { most=$v; echo $most >$OUT/prio-reclaimed; }
			sleep 1
		done
	) &
	prio_watch=$!
}

prio_watch_stop() {
	[[ -z ${prio_watch:-} ]] || kill "$prio_watch" 2>/dev/null
	prio_watch=
}

tool_start() { # tool
	case $1 in
	kernel) ;;
	oomkitd-ranked | oomkitd-priority)
		ranked_config "$([[ $1 == oomkitd-priority ]] && echo yes || echo no)"
		tool_start oomkitd
		;;
	oomkitd)
		local n0
		n0=$(journal_count oomkitd.service 'oomkitd ready')
		timeout 120 systemctl start oomkitd.service && wait_journal 60 oomkitd.service 'oomkitd ready' "$n0" || {
			journal oomkitd.service | tail -n 15 | sed 's/^/sdguest:   oomkitd: /'
			return 1
		}
		journal oomkitd.service | grep -E 'machine: the cgroup v2 root' | tail -n 1 | sed 's/^/sdguest:   oomkitd: /'
		;;
	earlyoom)
		systemctl start earlyoom.service && wait_for 30 active_unit earlyoom.service
		note "earlyoom: $(grep -h '^EARLYOOM_ARGS' /etc/default/earlyoom 2>/dev/null)"
		;;
	systemd-oomd)
		mkdir -p /run/systemd/system/-.slice.d /run/systemd/system/user@.service.d /run/systemd/oomd.conf.d
		printf '[Slice]\nManagedOOMSwap=kill\n' >/run/systemd/system/-.slice.d/10-oomd-root-slice-defaults.conf
		printf '[Service]\nManagedOOMMemoryPressure=kill\nManagedOOMMemoryPressureLimit=50%%\n' \
			>/run/systemd/system/user@.service.d/10-oomd-user-service-defaults.conf
		printf '[OOM]\nDefaultMemoryPressureDurationSec=20s\n' >/run/systemd/oomd.conf.d/10-bench.conf
		systemctl daemon-reload
		systemctl start systemd-oomd.service &&
			wait_for 60 eval 'oomctl 2>/dev/null | grep -q "user@" && oomctl 2>/dev/null | grep -q "Swap Monitored CGroups:"'
		oomctl 2>/dev/null | grep -E 'Path|Limit|Duration' | sed 's/^/sdguest:   oomctl: /'
		;;
	esac
}

active_unit() { # unit
	[[ $(prop "$1" ActiveState) == active ]]
}

# The two instruments, as services the kernel's killer and earlyoom pass
# over (OOMScoreAdjust=-1000): what they measure must outlive the runs.
probes_start() {
	local p
	mkdir -p $OUT
	for p in wake redis; do
		systemctl stop bench-$p.service 2>/dev/null
		systemctl reset-failed bench-$p.service 2>/dev/null
		rm -f $OUT/$p.*
		systemd-run --quiet --unit=bench-$p.service --property=OOMScoreAdjust=-1000 "$PROBE" $p $OUT/$p
	done
	phase_n=0
}

# Ends the phase: the probes' figures of it, as key=value words, in
# $probe_words.  (Not in a command substitution: its subshell would lose
# the count of phases, and the next phase read the figures of an old one.)
phase_n=0
probe_words=
probes_phase() {
	local p
	phase_n=$((phase_n + 1))
	for p in wake redis; do
		systemctl kill --signal=SIGUSR1 --kill-whom=main bench-$p.service 2>/dev/null
	done
	probe_words=$(for p in wake redis; do
		wait_for 90 test -s $OUT/$p.$phase_n && cat $OUT/$p.$phase_n || echo "${p}_lost=1"
	done | tr '\n' ' ')
}

kernel_kills() {
	dmesg | grep -c 'oom-kill:' || true
}

# The kernel's kills since line n0 of its log: "unit(comm)" each.
kernel_victims() { # n0
	dmesg | grep 'oom-kill:' | tail -n +$(($1 + 1)) |
		sed -n 's/.*task_memcg=\([^,]*\),task=\([^,]*\),.*/\1(\2)/p' | sed 's|.*/||' | tr '\n' ' '
}

# What a tool logged about its kills in this phase.
tool_log() { # tool since
	local unit
	case $1 in
	oomkitd*) unit=oomkitd.service ;;
	earlyoom) unit=earlyoom.service ;;
	systemd-oomd) unit=systemd-oomd.service ;;
	*) return 0 ;;
	esac
	journalctl -b -u $unit -o cat --no-pager --since "$2" 2>/dev/null |
		grep -iE 'kill|sending|out of memory|stall|below|memory.low' | tail -n 6 | sed "s/^/sdguest:   $1: /"
}

# Who of the watched died in the phase: a name each, with "/kernel" when the
# kernel's killer named its cgroup.
deaths() { # kernel-victims redis0 wake0 client0 mgr0
	local out=() kv=$1
	[[ $(prop redis-server.service MainPID) == "$2" ]] && alive "$2" || out+=(redis)
	alive "$3" || out+=(wake-probe)
	alive "$4" || out+=(redis-client)
	[[ -z $5 ]] || alive "$5" || out+=(user-manager)
	echo "${out[*]}"
}

# The phases' words: victims=a,b (who died besides what the phase expects).
who() { # kernel-victims extra...
	local k=$1 v=() w
	shift
	for w in "$@"; do
		if [[ $k == *"$w"* ]]; then v+=("$w/kernel"); else v+=("$w"); fi
	done
	echo "${v[*]}" | tr ' ' ','
}

run_fits() { # tool
	local unit=sdg-fits.service mib k0 t0 since redis0 wake0 client0 result hog peak=0 a dead
	if [[ $SWAP == zram ]]; then
		mib=$(($(kv /proc/meminfo MemAvailable:) / 1024 + $(kv /proc/meminfo SwapTotal:) / 4096))
	else
		mib=$(($(kv /proc/meminfo MemTotal:) * 12 / 10 >> 10))
	fi
	k0=$(kernel_kills) since=$(date '+%F %T') t0=$(uptime_s)
	redis0=$(prop redis-server.service MainPID) wake0=$(prop bench-wake.service MainPID)
	client0=$(prop bench-redis.service MainPID)
	probes_phase # the phase starts now
	prio_watch_start
	fits_script /run/bench-fits.sh "$HOG" "$mib" $FITS_HOLD_S
	systemctl reset-failed $unit 2>/dev/null
	systemd-run --quiet --unit=$unit --property=Type=exec --setenv=OOMKIT_HOG_FILL=50 /bin/sh /run/bench-fits.sh
	for _ in $(seq 1 60); do
		hog=$(pgrep -f "^$HOG $mib " | head -n 1)
		[[ -n $hog ]] && break
		sleep 1
	done
	full_reset
	while [[ -n $hog ]] && alive "$hog"; do
		a=$(awk '/^(RssAnon|VmSwap):/ { k += $2 } END { print int(k / 1024) }' /proc/"$hog"/status 2>/dev/null)
		((${a:-0} > peak)) && peak=$a
		full_sample 30
		sleep 2
		(($(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { print (b - a > 900) }'))) && break
	done
	wait_for 120 eval '[ "$(prop $unit ActiveState)" != active ]'
	result=$(prop $unit Result)
	[[ $result == success ]] || systemctl stop $unit 2>/dev/null
	dead=()
	[[ $result == success ]] || dead+=(fits)
	# shellcheck disable=SC2046 # one word each
	dead+=($(deaths "" "$redis0" "$wake0" "$client0" ""))
	kv=$(kernel_victims "$k0")
	tool_log "$1" "$since"
	[[ -z $kv ]] || note "kernel killed: $kv"
	probes_phase
	prio_watch_stop
	data "swap tool=$1 swap=$SWAP phase=fits up0=$t0 up1=$(uptime_s) mib=$mib peak_mib=$peak result=$result" \
		"secs=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.0f", b - a }')" \
		"kernel_kills=$(($(kernel_kills) - k0)) kernel_victims=$(echo "$kv" | tr ' ' ',')" \
		"victims=$(who "$kv" "${dead[@]}") keys=$(redis_keys)" \
		"full_avg10_peak=$(pct $full_peak) full_held30=$(pct $full_held)" \
		"$probe_words" "$(prio_words "$1")"
}

run_leak() { # tool
	local scope=app-sdg-leak.scope uid mgr k0 since redis0 wake0 client0 mgr0 leak out dead kv t0
	uid=$(id -u $USER_NAME) t0=$(uptime_s)
	mgr=$CG/user.slice/user-$uid.slice/user@$uid.service
	k0=$(kernel_kills) since=$(date '+%F %T')
	redis0=$(prop redis-server.service MainPID) wake0=$(prop bench-wake.service MainPID)
	client0=$(prop bench-redis.service MainPID) mgr0=$(prop user@$uid.service MainPID)
	probes_phase
	prio_watch_start
	runuser -u $USER_NAME -- env XDG_RUNTIME_DIR=/run/user/$uid OOMKIT_HOG_FILL=50 \
		systemd-run --user --quiet --scope --collect --unit=$scope --slice=app.slice "$HOG" 4000 1024 5000 \
		</dev/null >/dev/null 2>&1 &
	wait_for 60 grep -qs . $mgr/app.slice/$scope/cgroup.procs
	leak=$(head -n 1 $mgr/app.slice/$scope/cgroup.procs 2>/dev/null)
	if [[ -z $leak ]]; then
		note "the leak did not start"
		out="error"
	else
		out=$("$PROBE" wait "$leak" "$LEAK_S")
	fi
	[[ $out == dead* ]] || kill -9 "$leak" 2>/dev/null
	wait_for 60 dead "$leak"
	kv=$(kernel_victims "$k0")
	dead=()
	[[ $out == dead* ]] && dead+=(leak)
	# shellcheck disable=SC2046 # one word each
	dead+=($(deaths "" "$redis0" "$wake0" "$client0" "$mgr0"))
	tool_log "$1" "$since"
	[[ -z $kv ]] || note "kernel killed: $kv"
	probes_phase
	prio_watch_stop
	data "swap tool=$1 swap=$SWAP phase=leak up0=$t0 up1=$(uptime_s) leak=${out// /_}" \
		"kernel_kills=$(($(kernel_kills) - k0)) kernel_victims=$(echo "$kv" | tr ' ' ',')" \
		"victims=$(who "$kv" "${dead[@]}") keys=$(redis_keys)" \
		"$probe_words" "$(prio_words "$1")"
	wait
}

check_swap_bench() {
	local tool uid
	stop_tools
	expect "redis-server runs" wait_for 60 active_unit redis-server.service
	uid=$(id -u $USER_NAME)
	expect "lingering starts the user's manager" loginctl enable-linger $USER_NAME
	expect "user@$uid.service runs" wait_for 120 active_unit user@$uid.service
	note "$(systemctl --version | head -n 1); kernel $(uname -r); $(kv /proc/meminfo MemTotal:) kB RAM;" \
		"earlyoom $(earlyoom -v 2>&1 | head -n 1); clocksource" \
		"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	probes_start
	for tool in ${TOOLS//,/ }; do
		note "--- $tool, swap $SWAP"
		stop_tools
		systemctl stop sdg-fits.service 2>/dev/null
		redis_ready
		expect "swap ($SWAP) is on" swap_on
		sync
		echo 3 >/proc/sys/vm/drop_caches
		note "$(tail -n +2 /proc/swaps)"
		expect "$tool starts" tool_start "$tool"
		for p in wake redis; do
			active_unit bench-$p.service || { note "the $p probe was gone: started again"; probes_start; }
		done
		run_fits "$tool"
		[[ $SWAP != zram ]] || note "zram mm_stat: $(cat /sys/block/zram0/mm_stat)"
		active_unit user@$uid.service || { systemctl start user@$uid.service; wait_for 60 active_unit user@$uid.service; }
		run_leak "$tool"
		[[ $SWAP != zram ]] || note "zram mm_stat: $(cat /sys/block/zram0/mm_stat)"
	done
	stop_tools
}

say "START"
run_checks "$0"
say "RESULT $checks_passed passed, $checks_failed failed"
sync
"$SDG_QEXIT" $((checks_failed > 0 ? 1 : 0))
systemctl poweroff --force --force
