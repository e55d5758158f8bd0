#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# --version on each program: its own name and the project's version, on
# stdout, exit 0, nothing on stderr; the same option inside --help's text.
#   test-version.sh VERSION NAME PATH [NAME PATH...]
set -u
version=$1
shift
status=0
tmp=$(mktemp -d /tmp/oomkit-version.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

while [ $# -ge 2 ]; do
	name=$1 prog=$2
	shift 2
	"$prog" --version > "$tmp/out" 2> "$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	if [ $rc = 0 ] && [ "$out" = "$name $version" ] && [ ! -s "$tmp/err" ]; then
		echo "ok: $name --version: $out"
	else
		echo "FAIL: $name --version: exit $rc, stdout '$out', stderr '$(cat "$tmp/err")'"
		status=1
	fi
	if "$prog" --help 2>&1 | grep -q -- '--version'; then
		echo "ok: $name --help names --version"
	else
		echo "FAIL: $name --help does not name --version"
		status=1
	fi
done
exit $status
