#!/bin/sh
# bench/report.py's table from fixture sample lines: a baseline that acted
# in no run, or in some, is reported as slower than its wait ("> N"), and
# the ratio as a bound ("< r"); measured figures stay as they are.
#   test-bench-report.sh SOURCE_DIR
set -eu
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
report="$1/bench/report.py"
work=$(mktemp -d /tmp/oomkit-test-bench-report.XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0
n=0
failed=0

# table NAME: runs report.py on $work/NAME/raw and prints row 8's kill line.
table() {
	mkdir -p "$work/$1/res"
	python3 "$report" "$work/$1/raw" "$work/$1/res" "" 2>/dev/null |
		grep '^| 8 systemd guest: hog start → a unit killed' || true
}

# expect NAME WANT: the row's cells from "oomkit median" to "met", | apart.
expect() {
	n=$((n + 1))
	got=$(table "$1" | cut -d'|' -f4-13 | sed 's/ *| */|/g; s/^ *//; s/ *$//')
	if [ "$got" = "$2" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: got '$got', want '$2'"
		failed=$((failed + 1))
		status=1
	fi
}

# samples NAME LINE...: the run's raw sample lines.
samples() {
	mkdir -p "$work/$1/raw"
	name=$1
	shift
	printf '%s\n' "$@" >"$work/$name/raw/anchor.txt"
}

samples none-killed "S anchor oomkitd-kill 133" "S anchor oomkitd-kill 144" "S anchor oomkitd-kill 121" \
	"S anchor oomd-nokill 140500" "S anchor oomd-nokill 140200" "S anchor oomd-nokill 140300"
expect none-killed "133|144|144|systemd-oomd|> 140200|> 140200|> 140200|< 0.001|ratio ≤ 0.1|yes"

samples one-of-three "S anchor oomkitd-kill 200" "S anchor oomkitd-kill 200" "S anchor oomkitd-kill 200" \
	"S anchor oomd-kill 37000" "S anchor oomd-nokill 140200" "S anchor oomd-nokill 140300"
expect one-of-three "200|200|200|systemd-oomd|> 140200|> 140200|> 140200|< 0.001|ratio ≤ 0.1|yes"

samples two-of-three "S anchor oomkitd-kill 200" "S anchor oomkitd-kill 200" "S anchor oomkitd-kill 200" \
	"S anchor oomd-kill 36000" "S anchor oomd-kill 40000" "S anchor oomd-nokill 140200"
expect two-of-three "200|200|200|systemd-oomd|40000|> 140200|> 140200|0.005|ratio ≤ 0.1|yes"

samples all-killed "S anchor oomkitd-kill 200" "S anchor oomkitd-kill 300" "S anchor oomkitd-kill 400" \
	"S anchor oomd-kill 2000" "S anchor oomd-kill 2500" "S anchor oomd-kill 3000"
expect all-killed "300|400|400|systemd-oomd|2500|3000|3000|0.120|ratio ≤ 0.1|no"

# oomkitd that killed nothing while systemd-oomd did: its time is only a
# lower bound, so is the ratio, and the goal is not called met.
samples oomkitd-none "S anchor oomkitd-nokill 60000" "S anchor oomd-kill 2000"
expect oomkitd-none "> 60000|> 60000|> 60000|systemd-oomd|2000|2000|2000|> 30.0|ratio ≤ 0.1|"

echo "$((n - failed)) passed, $failed failed"
exit $status
