#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/architecture.md against the code: every module of common/, daemon/
and helpers/ has one row in a table whose last column is "depends on", and
that column names exactly the modules its .c and .h include (as the include
line writes them, without ".h": "base/log", "common/value", and "lib/json"
for lib/json.h; the public oomkit.h and system headers are not listed).
  test-architecture.py SOURCE_DIR           check; each mismatch names docs/architecture.md:LINE
  test-architecture.py SOURCE_DIR --print   each module's includes, as a row's column would say them
"""
import os
import re
import sys

FOLDERS = ("common", "daemon", "helpers")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    """{module: [files]}: "daemon/oom/chain" for daemon/oom/chain.{c,h}."""
    found = {}
    for top in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    path = os.path.relpath(os.path.join(dirpath, name), root)
                    found.setdefault(path[:-2], []).append(path)
    return found


def include_name(root, including, header):
    """What a row calls an included header, or None for one it does not list."""
    if header == "oomkit.h":
        return None  # the public API: every module may use the library
    if header == "json.h":
        return "lib/json"
    for base in ("", "daemon"):
        if os.path.isfile(os.path.join(root, base, header)):
            return header[:-2]
    if os.path.isfile(os.path.join(root, os.path.dirname(including), header)):
        return header[:-2]  # a bare name beside the file: said as written
    raise SystemExit(f"{including}: includes \"{header}\", found nowhere in the tree")


def includes(root, module, files):
    """The modules a module's files include (its own header left out)."""
    said = set()
    own = module.split("/", 1)[1] if module.startswith("daemon/") else module
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for header in INCLUDE.findall(f.read()):
                name = include_name(root, path, header)
                if name and name not in (own, module):
                    said.add(name)
    return said


ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|.*\|\s*([^|]*?)\s*\|\s*$")


def rows(page):
    """{module: (line, the modules its row names)} from every table with a "depends on" column."""
    out, in_table = {}, False
    for n, line in enumerate(page.splitlines(), 1):
        if not line.startswith("|"):
            in_table = False
            continue
        if re.match(r"^\|.*\|\s*depends on\s*\|\s*$", line):
            in_table = True
            continue
        m = ROW.match(line) if in_table else None
        if not m:
            continue
        cell = m.group(2)
        names = set() if cell in ("—", "-", "") else {x.strip().strip("`") for x in cell.split(",")}
        path = re.sub(r"\.(\{c,h\}|c|h)$", "", m.group(1))
        if path in out:
            raise SystemExit(f"docs/architecture.md:{n}: a second row for {m.group(1)}")
        out[path] = (n, names)
    return out


def main():
    root = sys.argv[1]
    mods = modules(root)
    if "--print" in sys.argv[2:]:
        for module in sorted(mods):
            print(f"{module}: {', '.join(sorted(includes(root, module, mods[module]))) or '—'}")
        return 0
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        table = rows(f.read())
    if not table or not mods:
        print("FAIL: no module or no row found: a check of nothing passes whatever the page says")
        return 1
    bad = 0
    for module in sorted(mods):
        if module not in table:
            print(f"docs/architecture.md: no row for {module} ({', '.join(sorted(mods[module]))})")
            bad += 1
            continue
        line, said = table[module]
        real = includes(root, module, mods[module])
        for name in sorted(real - said):
            print(f"docs/architecture.md:{line}: {module} includes {name}.h, which its row does not name")
            bad += 1
        for name in sorted(said - real):
            print(f"docs/architecture.md:{line}: {module}'s row names {name}, which it does not include")
            bad += 1
    for module in sorted(set(table) - set(mods)):
        if module.split("/", 1)[0] in FOLDERS:
            print(f"docs/architecture.md:{table[module][0]}: a row for {module}, which is not in the tree")
            bad += 1
    if bad:
        return 1
    print(f"ok: {len(mods)} modules, each row's \"depends on\" is what its includes say")
    return 0


if __name__ == "__main__":
    sys.exit(main())
