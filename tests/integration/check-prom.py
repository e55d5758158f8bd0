#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-prom.py FILE: a metrics file oomkitd wrote holds to the Prometheus
text format and its naming conventions (prometheus.io/docs/practices/naming):

- it parses (the Prometheus project's Python client, python3-prometheus-client),
  every family with its HELP and TYPE, no series twice;
- counters end in _total, histograms and gauges of a quantity in a base unit
  (_seconds, _bytes), and no name carries another unit (_ms, _kib, ...);
- no label is one Prometheus sets on every scraped sample (job, instance);
- a histogram's buckets are cumulative, end at +Inf, and +Inf is its count.

Prints one line per problem and exits 1 if there is any."""

import re
import sys

from prometheus_client.parser import text_string_to_metric_families

OTHER_UNITS = re.compile(r"_(ms|us|ns|msec|usec|milliseconds|microseconds|minutes|hours|kib|mib|gib|kb|mb|gb|"
                         r"kilobytes|megabytes|percent)(_|$)")
TARGET_LABELS = {"job", "instance"}


def check_histogram(fam, problems):
    series = {}
    for s in fam.samples:
        key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
        series.setdefault(key, {"buckets": [], "count": None})
        if s.name.endswith("_bucket"):
            series[key]["buckets"].append((s.labels["le"], s.value))
        elif s.name.endswith("_count"):
            series[key]["count"] = s.value
    for key, h in series.items():
        b = h["buckets"]
        if not b or b[-1][0] != "+Inf":
            problems.append(f"{fam.name}{dict(key)}: the last bucket is not le=\"+Inf\"")
            continue
        bounds = [float(le) for le, _ in b]
        if bounds != sorted(bounds) or any(x > y for (_, x), (_, y) in zip(b, b[1:])):
            problems.append(f"{fam.name}{dict(key)}: buckets not cumulative in increasing le")
        if h["count"] != b[-1][1]:
            problems.append(f"{fam.name}{dict(key)}: _count {h['count']} is not the +Inf bucket {b[-1][1]}")


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    problems, seen, n = [], set(), 0
    helps = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    types = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as e:
        print(f"FAIL: {sys.argv[1]} does not parse: {e}")
        return 1
    for fam in families:
        n += 1
        # The parser names a counter's family without its _total.
        shown = fam.name + ("_total" if fam.type == "counter" else "")
        if shown not in helps or shown not in types:
            problems.append(f"{shown}: no HELP or TYPE line")
        if not fam.name.startswith("oomkit_"):
            problems.append(f"{shown}: not in the oomkit_ namespace")
        if OTHER_UNITS.search(fam.name):
            problems.append(f"{shown}: a unit other than seconds or bytes")
        if fam.type == "histogram":
            if not re.search(r"_(seconds|bytes)$", fam.name):
                problems.append(f"{shown}: a histogram not in seconds or bytes")
            check_histogram(fam, problems)
        for s in fam.samples:
            if fam.type == "counter" and not s.name.endswith("_total"):
                problems.append(f"{s.name}: a counter's sample without _total")
            clash = TARGET_LABELS & set(s.labels)
            if clash:
                problems.append(f"{s.name}{s.labels}: label {', '.join(sorted(clash))} is Prometheus's own")
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen:
                problems.append(f"{s.name}{s.labels}: the same series twice")
            seen.add(key)
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(f"ok: {n} families, {len(seen)} series, each as Prometheus names them")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
