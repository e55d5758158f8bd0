#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every man page renders without a groff warning: lintian fails the package
# on one (groff-message), and this says so without building the package.
#   test-manpages.sh SOURCE_DIR
set -eu
command -v man >/dev/null || { echo "SKIP: no man"; exit 77; }
status=0 n=0
for m in "$1"/man/*.[1-8]; do
	n=$((n + 1))
	out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$m" 2>&1 >/dev/null) || true
	[ -z "$out" ] || { echo "FAIL: ${m#"$1"/}: $out"; status=1; }
done
[ $status = 0 ] && echo "ok: $n man pages render without a warning"
exit $status
