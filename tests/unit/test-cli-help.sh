#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# oomkit's help, without a daemon: "oomkit help" and "oomkit --help" print
# the list of commands; "oomkit help CMD" and "oomkit CMD --help" print that
# command's usage and what it does, for every command the list names; an
# unknown command is an error that names it, with exit 2.
#   test-cli-help.sh OOMKIT
set -u
oomkit=$1
status=0
tmp=$(mktemp -d /tmp/oomkit-help.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
export OOMKIT_SOCKET=$tmp/no-daemon.sock

fail() { echo "FAIL: $*"; status=1; }

# run NAME ARGS...: stdout in $tmp/out, stderr in $tmp/err, exit code in $rc.
run() { "$oomkit" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?; }

run help
cp "$tmp/out" "$tmp/global"
if [ $rc = 0 ] && [ ! -s "$tmp/err" ] && head -1 "$tmp/out" | grep -q '^usage: oomkit .*COMMAND'; then
	echo "ok: oomkit help prints the global usage"
else
	fail "oomkit help: exit $rc, $(head -1 "$tmp/out") $(cat "$tmp/err")"
fi
run --help
cmp -s "$tmp/out" "$tmp/global" && [ $rc = 0 ] || fail "oomkit --help differs from oomkit help"

# The commands the global usage lists: the first word of its indented lines.
verbs=$(sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' "$tmp/global")
[ "$(echo "$verbs" | wc -w)" -ge 7 ] || fail "the global usage lists only: $verbs"
for v in $verbs; do
	run help "$v"
	cp "$tmp/out" "$tmp/help-$v"
	if [ $rc = 0 ] && [ ! -s "$tmp/err" ] && [ "$(sed -n 2p "$tmp/out" | cut -d' ' -f1-3)" = "usage: oomkit $v" ] &&
		head -1 "$tmp/out" | grep -q "^oomkit $v: ." && [ "$(wc -l < "$tmp/out")" -ge 4 ]; then
		echo "ok: oomkit help $v: $(head -1 "$tmp/out")"
	else
		fail "oomkit help $v: exit $rc: $(cat "$tmp/out" "$tmp/err")"
	fi
	run "$v" --help
	if [ $rc = 0 ] && cmp -s "$tmp/out" "$tmp/help-$v"; then
		echo "ok: oomkit $v --help is oomkit help $v"
	else
		fail "oomkit $v --help: exit $rc: $(cat "$tmp/out" "$tmp/err")"
	fi
done
# Each command's own text, not one text for all.
cmp -s "$tmp/help-status" "$tmp/help-run" && fail "help status and help run print the same"
grep -q -- '--job NAME' "$tmp/help-run" || fail "help run does not show --job NAME"
grep -q -- '--json' "$tmp/help-status" || fail "help status does not show --json"

# An unknown command: an error naming it, nothing on stdout, exit 2.
for args in "help nosuchverb" "nosuchverb --help"; do
	# shellcheck disable=SC2086
	run $args
	if [ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q "^oomkit: unknown command 'nosuchverb'$" "$tmp/err"; then
		echo "ok: oomkit $args: $(head -1 "$tmp/err")"
	else
		fail "oomkit $args: exit $rc, stdout $(cat "$tmp/out"), stderr $(cat "$tmp/err")"
	fi
done
run help status extra
[ $rc = 2 ] || fail "oomkit help status extra: exit $rc, not 2"
exit $status
