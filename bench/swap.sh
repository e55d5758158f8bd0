#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# swap.sh - the swap benchmark (`make bench-swap`): oomkitd's default
# configuration against the kernel's OOM killer alone, earlyoom (Debian's
# defaults) and systemd-oomd (Fedora's settings), on one emulated machine
# with the same workloads: a job that fits in RAM + swap (it must live) and a
# runaway leak in a user's app scope (it must die, soon), while redis serves
# and a timer task measures how late it wakes.  bench/guest-swap.sh says
# what runs in the guest; this script boots it (tests/vm/systemd.sh) and
# prints the table, in markdown, with the machine, kernel and date.
#
#   swap.sh [--build DIR] [--runs N] [--swap file,zram] [--tools LIST]
#           [--boot-per-tool] [--leak-s S] [--out DIR] [--table-only]
#
#   --build DIR      the meson build (default build); needs its tests and
#                    benchmarks (the hog, qexit, oomkit-swapprobe)
#   --runs N         boots per configuration (default 2)
#   --swap LIST      file (a 512 MiB swap file), zram (half of RAM), or both
#   --tools LIST     kernel,oomkitd,earlyoom,systemd-oomd (the default);
#                    oomkitd-ranked,oomkitd-priority: memory priority off
#                    and on, the jobs ranked for memory (guest-swap.sh)
#   --boot-per-tool  a boot for each tool; by default one boot runs every
#                    tool in turn (swap emptied, caches dropped, redis whole
#                    again in between), in an order that rotates by run
#   --leak-s S       how long a leak is given before it counts as not killed
#                    (default 300)
#   --out DIR        console logs and the DATA lines (default
#                    BUILD/bench/swap-results); the table goes to stdout and
#                    DIR/table.md
#   --table-only     boot nothing: print the table of the console logs
#                    already in DIR (of an interrupted run, for instance)
#
# The guest's root file system is kept in BUILD/bench/swap-guest (the test
# tier's own is not touched: this one also holds earlyoom).  Guest times are
# emulated (qemu TCG, 2 vCPUs, 512 MiB): they say how the tools compare on
# one machine, not how long anything takes on real hardware.  Nothing here is
# asserted; the exit status is non-zero only when a boot could not be had.

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=build runs=2 swaps=file,zram tools=kernel,oomkitd,earlyoom,systemd-oomd per_tool=0 leak_s=300 out= table_only=0

usage() {
	sed -n '/^#   swap.sh/,/^#   --out/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

while (($#)); do
	case $1 in
	--build) build=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--swap) swaps=${2:?}; shift 2 ;;
	--tools) tools=${2:?}; shift 2 ;;
	--boot-per-tool) per_tool=1; shift ;;
	--leak-s) leak_s=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--table-only) table_only=1; shift ;;
	*) usage ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ && $leak_s =~ ^[1-9][0-9]*$ ]] || usage
[[ ,$swaps, =~ ^(,(file|zram))+,$ ]] || { echo "swap.sh: --swap takes file, zram or file,zram" >&2; exit 2; }
[[ ,$tools, =~ ^(,(kernel|oomkitd|earlyoom|systemd-oomd|oomkitd-ranked|oomkitd-priority))+,$ ]] ||
	{ echo "swap.sh: --tools takes kernel, oomkitd, earlyoom, systemd-oomd, oomkitd-ranked, oomkitd-priority (a comma list)" >&2; exit 2; }
out=${out:-$build/bench/swap-results}
for f in tests/vm/qexit tests/vm/oomkit-hog bench/oomkit-swapprobe daemon/oomkitd cli/oomkit; do
	[[ -x $build/$f ]] || { echo "swap.sh: $build/$f is missing: build with tests and benchmarks on" >&2; exit 1; }
done
mkdir -p "$out"
data=$out/data.txt

helper=()
[[ -x $build/helpers/oomkitd-systemd ]] && helper=(--libs-of "$build/helpers/oomkitd-systemd")

# boot RUN SWAP TOOLS: one guest; its DATA lines go to $data, prefixed with
# the run.
boot() {
	local run=$1 swap=$2 list=$3 log rc=0 t0=$SECONDS n
	log=$out/console-$swap-run$run-${list//,/-}.log
	n=$(tr ',' '\n' <<<"$list" | wc -l)
	echo "swap.sh: run $run, swap $swap: $list" >&2
	bash "$here/../tests/vm/systemd.sh" --build "$build" --qexit "$build/tests/vm/qexit" \
		--cache "$build/bench/swap-guest" --packages earlyoom --checks "$here/guest-swap.sh" \
		--with "$build/tests/vm/oomkit-hog" --with "$build/bench/oomkit-swapprobe" \
		--libs-of "$build/daemon/oomkitd" --libs-of "$build/cli/oomkit" "${helper[@]}" \
		--env "SDG_BENCH_SWAP=$swap" --env "SDG_BENCH_TOOLS=$list" --env "SDG_BENCH_LEAK_S=$leak_s" \
		--timeout $((900 + n * (1200 + leak_s))) --log "$log" >"$out/boot.out" 2>"$out/boot.err" || rc=$?
	grep -q 'sdguest: DATA swap ' "$log" 2>/dev/null || { tail -n 5 "$out/boot.err" >&2; }
	grep -E 'sdguest: +(systemd|earlyoom|oomkitd|systemd-oomd|oomctl|kernel killed|zram|not ok)' "$log" |
		sed "s/^/  /" >&2 || true
	echo "swap.sh: boot took $((SECONDS - t0)) s (systemd.sh exit $rc)" >&2
	((rc != 77)) || exit 77
	return 0
}

# The tools of a run, rotated by the run so that no tool always goes first.
rotated() { # run
	local a
	IFS=, read -ra a <<<"$tools"
	local k=$((($1 - 1) % ${#a[@]}))
	echo "${a[*]:k} ${a[*]:0:k}" | xargs | tr ' ' ','
}

if ((!table_only)); then
	rm -f "$out"/console-*.log
	for run in $(seq 1 "$runs"); do
		for swap in ${swaps//,/ }; do
			if ((per_tool)); then
				for t in ${tools//,/ }; do boot "$run" "$swap" "$t"; done
			else
				boot "$run" "$swap" "$(rotated "$run")"
			fi
		done
	done
fi

# The DATA lines of every console log, each with its run (of the log's name).
for log in "$out"/console-*.log; do
	[[ -e $log ]] || continue
	run=${log##*-run}
	sed -n "s/.*sdguest: DATA swap /run=${run%%-*} /p" "$log"
done >"$data"

python3 - "$data" "$tools" "$swaps" "$leak_s" "$(uname -m)" "$(nproc)" \
	"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
	"$(grep -m1 -o 'systemd [0-9]*[^;]*; kernel [^;]*' "$out"/console-*.log 2>/dev/null | head -n 1 | sed 's/^[^:]*://')" \
	"$(date -u -r "$(ls -t "$out"/console-*.log | tail -n 1)" '+%Y-%m-%d %H:%M')–$(date -u '+%H:%M UTC')" "$(cut -d' ' -f1-3 /proc/loadavg)" <<-'PY' | tee "$out/table.md"
	import sys
	from collections import defaultdict
	path, tools, swaps, leak_s, arch, ncpu, cpu, guest, date, load = sys.argv[1:]
	rows = defaultdict(lambda: defaultdict(list))  # (swap, tool) -> run -> phases
	for line in open(path):
	    kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
	    rows[(kv.get("swap"), kv.get("tool"))][kv["run"]].append(kv)

	def num(s, default=None):
	    try:
	        return float(s)
	    except (TypeError, ValueError):
	        return default

	def fmt(v, unit=""):
	    if v is None:
	        return "?"
	    return f"{v:.1f}{unit}" if v < 100 else f"{v:.0f}{unit}"

	print(f"Measured {date} on {cpu or arch} ({ncpu} cores, load {load} at the end), "
	      f"guest: qemu TCG, 2 vCPUs, 512 MiB, {guest or 'Debian systemd'}, cgroup v2.")
	print()
	for swap in swaps.split(","):
	    title = "512 MiB swap file" if swap == "file" else "zram, half of RAM, lzo-rle"
	    print(f"**{title}**")
	    print()
	    print("| tool | false kills (of runs) | leak killed after (s) | worst wake-up delay (s) "
	          "| seconds frozen | redis p99 (ms) | redis keys kept | who was killed |")
	    print("|---|---|---|---|---|---|---|---|")
	    for tool in tools.split(","):
	        per = rows.get((swap, tool), {})
	        fits = [p for r in sorted(per) for p in per[r] if p.get("phase") == "fits"]
	        leak, wake, frozen, p99, keys, who = [], [], [], [], [], []
	        for r in sorted(per):
	            ph = per[r]
	            for p in ph:
	                if p.get("phase") == "leak":
	                    l = p.get("leak", "")
	                    leak.append(l.split("=")[1] if l.startswith("dead") else f">{leak_s}" if l.startswith("alive")
	                                else "did not start" if l == "error" else "?")
	            w = [num(p.get("worst_ms")) for p in ph]
	            wake.append(fmt(max(w) / 1000 if None not in w else None))
	            fr = [num(p.get("frozen_s")) for p in ph]
	            frozen.append(fmt(sum(fr) if None not in fr else None))
	            q = [num(p.get("p99_ms")) for p in ph]
	            p99.append(fmt(max(q) if None not in q else None))
	            k = [int(p["keys"]) if p.get("keys", "").isdigit() else 0 for p in ph]
	            keys.append(str(min(k)))
	            v = []
	            for p in ph:
	                for x in filter(None, p.get("victims", "").split(",")):
	                    name, _, by = x.partition("/")
	                    where = "" if name in ("leak", "fits") else f" in the {p['phase']} phase"
	                    v.append(f"{name} by {by or tool}{where}")
	                for x in filter(None, p.get("kernel_victims", "").split(",")):
	                    if not any(n in x for n in ("fits", "leak", "redis")):
	                        v.append(f"{x} by kernel in the {p['phase']} phase")
	            who.append("; ".join(v) or "-")
	        if not per:
	            print(f"| {tool} | not measured | | | | | | |")
	            continue
	        false = sum(1 for p in fits if p.get("result") != "success")
	        j = " / ".join
	        print(f"| {tool} | {false} of {len(fits)} | {j(leak)} | {j(wake)} | {j(frozen)} | {j(p99)} | "
	              f"{j(keys)} of 30000 | {' / '.join(who)} |")
	    print()
	print("One figure per run, separated by /.  Worst wake-up delay, seconds frozen (the sum of the "
	      "wake-ups 1 s or more late, of a task that sleeps 100 ms) and redis p99 (from each GET's due "
	      "time, one every 100 ms) are over both phases of a run: the fitting job, then the leak.")
	PY
