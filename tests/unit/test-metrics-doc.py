#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""test-metrics-doc.py SRCDIR: docs/deploy.md's table of metrics against the
names daemon/report/metrics.c exports.

Every exported metric has a row and every row an exported metric; each row's
"tested by" column names at least one test, and every test it names exists
and reads that metric, so the table cannot claim a test that does not look.
Prints one line per problem and exits 1 if there is any."""

import os
import re
import sys

TEST_DIRS = ("tests/integration", "tests/packaging", "tests/vm")


def exported(src):
    with open(os.path.join(src, "daemon/report/metrics.c"), encoding="utf-8") as f:
        return set(re.findall(r'"(oomkit_[a-z_]+)"', f.read()))


def rows(src):
    """(line number, metric, tested-by text) of each table row naming a metric."""
    out = []
    with open(os.path.join(src, "docs/deploy.md"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"\| `(oomkit_[a-z_]+)(\{[a-z_,]*\})?` \|", line)
            if m:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                out.append((n, m.group(1), cells[-1] if len(cells) >= 4 else ""))
    return out


def test_text(src, name):
    for d in TEST_DIRS:
        path = os.path.join(src, d, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return f.read()
    return None


def main():
    src = sys.argv[1]
    names = exported(src)
    problems, documented = [], set()
    if not names:
        problems.append("daemon/report/metrics.c: no oomkit_ metric found")
    for n, metric, tested in rows(src):
        where = f"docs/deploy.md:{n}: {metric}"
        documented.add(metric)
        if metric not in names:
            problems.append(f"{where}: not a metric daemon/report/metrics.c exports")
        tests = re.findall(r"`((?:test|guest)-[a-z0-9-]+\.sh)`", tested)
        if not tests:
            problems.append(f"{where}: no test in its \"tested by\" column")
        for t in tests:
            text = test_text(src, t)
            if text is None:
                problems.append(f"{where}: {t} is not in {' or '.join(TEST_DIRS)}")
            elif metric not in text:
                problems.append(f"{where}: {t} does not read it")
    for metric in sorted(names - documented):
        problems.append(f"daemon/report/metrics.c: {metric} has no row in docs/deploy.md's table of metrics")
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(f"ok: {len(names)} metrics, each with a row and a test that reads it")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
