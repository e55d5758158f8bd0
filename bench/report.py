#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""report.py RAW_DIR RESULTS_DIR FAILED: turns the sample lines of one
`make bench` run into the table (printed, and written to table.md), the raw
figures (latest.json) and the latency plot (latency.png, gnuplot).

Sample lines, written by oomkit-bench: "S BENCH SERIES VALUE", notes
"N TEXT", failures to measure "F TEXT"."""

import datetime
import json
import math
import os
import platform
import subprocess
import sys

STORM_N = (10, 100, 500)
IDLE_N = (10, 100, 1000)
DAEMON_N = (10, 100, 1000)

# label, unit, bench, oomkit series, baseline series, baseline name, goal
ROWS = [
    ("1 notify: last touch → handler entry", "µs", "notify", "oomkit", "eventfd", "bare eventfd loop", "p99 ≤ 1000"),
    ("1 notify, handlers under SCHED_FIFO", "µs", "notify", "oomkit-rt", "eventfd-rt", "bare eventfd loop",
     "p99 ≤ 1000"),
    ("2 resolve: last touch → victim gone, usage < limit/2", "ms", "resolve", "oomkit", "kernel",
     "kernel OOM killer", "ratio ≤ 1.1"),
    ("2 resolve floor: SIGKILL → victim gone, usage < limit/2, no OOM", "ms", "resolve", "exit", "kernel",
     "kernel OOM killer", ""),
]
for n in IDLE_N:
    ROWS.append((f"3 idle wakeups per 10 s, {n} memcgs", "", "idle", f"wakeups-oomkit@{n}", "wakeups-earlyoom",
                 "earlyoom", "0"))
for n in DAEMON_N:
    ROWS.append((f"3 idle wakeups per 10 s, oomkitd {n} jobs", "", "idle", f"wakeups-oomkitd@{n}",
                 "wakeups-earlyoom", "earlyoom", "0"))
for n in IDLE_N:
    ROWS.append((f"3 idle CPU per 10 s, {n} memcgs", "ms", "idle", f"cpu-oomkit@{n}", "cpu-earlyoom", "earlyoom", ""))
for n in DAEMON_N:
    ROWS.append((f"3 idle CPU per 10 s, oomkitd {n} jobs", "ms", "idle", f"cpu-oomkitd@{n}", "cpu-earlyoom",
                 "earlyoom", ""))
for kind, what in (("rss", "resident"), ("locked", "locked"), ("private", "private"), ("pss", "proportional")):
    for n in IDLE_N:
        ROWS.append((f"4 footprint {what}, {n} memcgs", "KiB", "footprint", f"{kind}-oomkit@{n}",
                     f"{kind}-earlyoom", "earlyoom", "≤ 4096 at 1000" if kind == "rss" and n == 1000 else ""))
    for n in DAEMON_N:
        ROWS.append((f"4 footprint {what}, oomkitd {n} jobs", "KiB", "footprint", f"{kind}-oomkitd@{n}",
                     f"{kind}-earlyoom", "earlyoom", "≤ 4096 at 1000" if kind == "rss" and n == 1000 else ""))
for n in STORM_N:
    ROWS.append((f"5 storm {n}: gate → all resolved", "ms", "storm", f"oomkit-all@{n}", f"kernel-all@{n}",
                 "kernel OOM killer", ""))
for n in STORM_N:
    ROWS.append((f"5 storm {n}: per event", "µs", "storm", f"oomkit-event@{n}", f"kernel-event@{n}",
                 "kernel OOM killer", "flat in N"))
for n in STORM_N:
    ROWS.append((f"5 storm {n}: each hog, last touch → exit", "ms", "storm", f"oomkit-hog@{n}", f"kernel-hog@{n}",
                 "kernel OOM killer", ""))
ROWS += [
    ("6 machine: crossing → hog dead", "ms", "machine", "oomkit", "earlyoom", "earlyoom", "ratio ≤ 0.1"),
    ("6 machine: crossing → hog stopped", "ms", "machine", "oomkit-stop", "earlyoom-stop", "earlyoom", ""),
    ("6 machine: allocated past the threshold", "MiB", "machine", "oomkit-past", "earlyoom-past", "earlyoom", ""),
    ("6 machine: runs missed (killed early, or not in 3 s)", "", "machine", "oomkit-missed", "earlyoom-missed",
     "earlyoom", ""),
]
for what, key in (("OOM → decision", "decision"), ("OOM → memory freed", "freed")):
    for n in DAEMON_N:
        ROWS.append((f"7 oomkitd {n} jobs: {what}", "ms", "daemon", f"{key}-oomkitd@{n}",
                     f"{key}-oomkitd@{DAEMON_N[0]}", f"oomkitd {DAEMON_N[0]} jobs",
                     "ratio ≤ 1.2" if key == "decision" and n == DAEMON_N[-1] else ""))
for n in DAEMON_N:
    ROWS.append((f"7 oomkitd {n} jobs: last touch → victim gone, usage < limit/2", "ms", "daemon",
                 f"resolved-oomkitd@{n}", "resolved-kernel", "kernel OOM killer", ""))
ROWS += [
    ("9 rules: OOM → decision, 100 idle processes and the hog", "ms", "rules", "decision-rules", "decision-none",
     "no rules", ""),
    ("9 rules: OOM → decision, with rules / without, paired per round", "", "rules", "ratio", "", "—", ""),
]
CHURN_N = (1000, 10000)
for what, key in (("OOM → decision", "decision"), ("last touch → the daemon reads the OOM (the kernel's reclaim)",
                                                   "event"), ("last touch → hog exit", "exit")):
    for n in CHURN_N:
        ROWS.append((f"10 churn: {n} empty sub-cgroups in the job: {what}", "ms", "churn", f"{key}-oomkitd@{n}",
                     f"{key}-oomkitd@0", "no sub-cgroups", "p99 ≤ 100" if key == "decision" and n == 10000 else ""))
ROWS += [
    ("8 systemd guest: hog start → a unit killed (emulated)", "ms", "anchor", "oomkitd-kill", "oomd-kill",
     "systemd-oomd", "ratio ≤ 0.1"),
    ("8 systemd guest: the wrong unit killed, or none (per run)", "", "anchor", "oomkitd-wrong", "oomd-wrong",
     "systemd-oomd", "0"),
    ("8 systemd guest: the high-priority unit's resident memory lost", "MiB", "anchor", "oomkitd-lost",
     "oomd-lost", "systemd-oomd", ""),
]


def load(raw):
    series, notes, failures = {}, [], []
    for name in sorted(os.listdir(raw)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(raw, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 1)
                if parts[0] == "S" and len(parts) == 2:
                    bench, key, value = parts[1].split(" ")
                    series.setdefault(f"{bench}/{key}", []).append(float(value))
                elif parts[0] == "N" and len(parts) == 2:
                    notes.append(parts[1])
                elif parts[0] == "F" and len(parts) == 2:
                    failures.append(parts[1])
    return series, notes, failures


def ranks(n):
    """The indices of n sorted samples that give the median (one or two)
    and the 99th percentile."""
    return ([n // 2] if n % 2 else [n // 2 - 1, n // 2]), min(n - 1, math.ceil(0.99 * n) - 1)


def stats_sorted(v):
    mid, p99 = ranks(len(v))
    return {"n": len(v), "median": sum(v[i] for i in mid) / len(mid), "p99": v[p99], "max": v[-1], "min": v[0]}


def stats(values):
    return stats_sorted(sorted(values)) if values else None


# A baseline that did not act within its wait: its samples are known only to
# be longer than the wait (series "<bench>/<series>-nokill" beside
# "<bench>/<series>-kill").
CENSORED = {"anchor/oomd-kill": "anchor/oomd-nokill", "anchor/oomkitd-kill": "anchor/oomkitd-nokill"}


def stats_censored(values, censored):
    """stats() of samples of which some are known only to exceed a bound:
    each counts as longer than every measured one, and a figure that falls
    on one is reported as its lower bound, listed in "above"."""
    if not censored:
        return stats(values)
    s = stats_sorted(sorted(values) + [min(censored)] * len(censored))
    mid, p99 = ranks(s["n"])
    s["censored"] = len(censored)
    s["above"] = [k for k, i in (("median", max(mid)), ("p99", p99), ("max", s["n"] - 1)) if i >= len(values)]
    return s


def fmt(x):
    if x is None:
        return "—"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def goal_met(goal, row, a, b, ratio, series):
    """'yes', 'no' or '' for a row's goal, from this run's figures."""
    if not goal or a is None:
        return ""
    if goal.startswith("p99 ≤"):
        return "yes" if a["p99"] <= float(goal.split()[-1]) else "no"
    if goal.startswith("ratio ≤"):
        return "" if ratio is None else ("yes" if ratio <= float(goal.split()[-1]) else "no")
    if goal == "0":
        return "yes" if a["max"] == 0 else "no"
    if goal.startswith("≤ 4096"):
        return "yes" if a["median"] <= 4096 else "no"
    if goal == "flat in N":
        first = stats(series.get(f"storm/oomkit-event@{STORM_N[0]}", []))
        if not first or first["median"] == 0:
            return ""
        return f"×{a['median'] / first['median']:.2f} vs N={STORM_N[0]}"
    return ""


def table(series):
    rows, lines = [], []
    head = ("| benchmark | unit | oomkit median | p99 | max | baseline | median | p99 | max | oomkit/baseline "
            "| goal | met |")
    lines.append(head)
    lines.append("|" + "---|" * 12)
    for label, unit, bench, ka, kb, bname, goal in ROWS:
        a = stats_censored(series.get(f"{bench}/{ka}", []), series.get(CENSORED.get(f"{bench}/{ka}"), []))
        b = stats_censored(series.get(f"{bench}/{kb}", []), series.get(CENSORED.get(f"{bench}/{kb}"), []))
        if a is None and b is None:
            continue
        ratio = a["median"] / b["median"] if a and b and b["median"] else None
        # A median known only as a lower bound makes the ratio a bound too.
        a_above, b_above = a and "median" in a.get("above", ()), b and "median" in b.get("above", ())
        bound = "" if ratio is None or a_above == b_above else ("< " if b_above else "> ")
        met = goal_met(goal, label, a, b, None if bound == "> " else ratio, series)
        g = lambda s, k: ("> " if k in s.get("above", ()) else "") + fmt(s[k]) if s else "—"
        lines.append(f"| {label} | {unit} | {g(a, 'median')} | {g(a, 'p99')} | {g(a, 'max')} | {bname} | "
                     f"{g(b, 'median')} | {g(b, 'p99')} | {g(b, 'max')} | {bound}{fmt(ratio)} | {goal} | {met} |")
        rows.append({"benchmark": label, "unit": unit, "oomkit_series": f"{bench}/{ka}",
                     "baseline_series": f"{bench}/{kb}", "baseline": bname, "oomkit": a, "baseline_stats": b,
                     "ratio": ratio, "ratio_bound": bound.strip(), "goal": goal, "met": met})
    return "\n".join(lines), rows


def cdf_file(path, values):
    v = sorted(values)
    with open(path, "w", encoding="utf-8") as f:
        for i, x in enumerate(v):
            f.write(f"{x} {(i + 1) / len(v)}\n")


PANELS = [
    ("1 notify: last touch → handler entry (µs)",
     [("notify/oomkit", "oomkit"), ("notify/eventfd", "bare eventfd"), ("notify/oomkit-rt", "oomkit, SCHED_FIFO"),
      ("notify/eventfd-rt", "bare eventfd, SCHED_FIFO")]),
    ("2 resolve: last touch → resolved (ms)", [("resolve/oomkit", "oomkit"), ("resolve/kernel", "kernel killer"),
                                               ("resolve/exit", "victim exit alone (floor)")]),
    ("5 storm: each hog, last touch → exit (ms)",
     [(f"storm/{s}-hog@{n}", f"{s} N={n}") for n in (10, 500) for s in ("oomkit", "kernel")]),
    ("6 machine: crossing → hog dead (ms)", [("machine/oomkit", "oomkit"), ("machine/earlyoom", "earlyoom")]),
    ("7 oomkitd: OOM → decision, and → memory freed (ms)",
     [(f"daemon/{k}-oomkitd@{n}", f"{k}, {n} jobs") for k in ("decision", "freed") for n in DAEMON_N]),
    ("8 systemd guest: hog start → a unit killed (ms, emulated)",
     [("anchor/oomkitd-kill", "oomkitd"), ("anchor/oomd-kill", "systemd-oomd")]),
]


def plot(series, results, workdir):
    script = ["set terminal pngcairo noenhanced size 1400,1500 font ',10'",
              f"set output '{os.path.join(results, 'latency.png')}'",
              "set multiplot layout 3,2 title 'oomkit vs baselines, one make bench run (cumulative distributions)'",
              "set logscale x", "set grid", "set key bottom right", "set ylabel 'fraction'", "set yrange [0:1]"]
    for i, (title, lines) in enumerate(PANELS):
        plots = []
        for j, (key, name) in enumerate(lines):
            values = [x for x in series.get(key, []) if x > 0]
            if not values:
                continue
            path = os.path.join(workdir, f"cdf-{i}-{j}.dat")
            cdf_file(path, values)
            plots.append(f"'{path}' using 1:2 with steps lw 2 title '{name}'")
        script.append(f"set title '{title}'")
        script.append("plot " + ", ".join(plots) if plots else "plot 2 notitle")
    script.append("unset multiplot")
    try:
        subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"bench: gnuplot failed: {e}", file=sys.stderr)
        return False
    return True


def loadavg(raw, name):
    """The 1, 5 and 15 minute load averages run.sh noted, or None."""
    try:
        with open(os.path.join(raw, name), encoding="utf-8") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


def main():
    raw, results, failed = sys.argv[1], sys.argv[2], sys.argv[3].split()
    series, notes, failures = load(raw)
    load_start, load_end = loadavg(raw, "load-start"), loadavg(raw, "load-end")
    load_text = ""
    if load_start and load_end:
        load_text = (f" Load average (1, 5, 15 min) {' '.join(fmt(x) for x in load_start)} at the start, "
                     f"{' '.join(fmt(x) for x in load_end)} at the end.")
    text, rows = table(series)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print()
    print(f"Measured {stamp}.{load_text}")
    print(text)
    print()
    for n in notes:
        print(f"note: {n}")
    for f in failures:
        print(f"could not measure: {f}")
    with open(os.path.join(results, "table.md"), "w", encoding="utf-8") as f:
        f.write(f"Measured {stamp}, Linux {platform.release()}, {os.cpu_count()} CPUs.{load_text}\n\n{text}\n")
    doc = {
        "generated": stamp,
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "load_end": load_end,
        "notes": notes,
        "failures": failures,
        "benchmarks_failed": failed,
        "rows": rows,
        "series": series,
    }
    with open(os.path.join(results, "latest.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
    ok = plot(series, results, raw)
    print(f"\nraw figures: {os.path.join(results, 'latest.json')}, plot: {os.path.join(results, 'latency.png')}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
