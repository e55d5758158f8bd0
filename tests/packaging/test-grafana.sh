#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# deploy/grafana/oomkit.json names only what oomkitd exports: a live daemon
# (daemon-lib.sh: a private machine memcg, two jobs and a job of patterns
# with one instance, as on a systemd host) handles an OOM, so that every
# family of its metrics file has samples, and check-grafana.mjs holds
# the dashboard's JSON, its PromQL and every metric and label its queries use
# against that file.  The PromQL grammar is an npm package, installed once
# into OUT_DIR.
#   test-grafana.sh SOURCE_DIR OUT_DIR     (OOMKITD, OOMKIT, OOMKIT_HOG from meson)
src=$1 out=$2
. "$src/tests/integration/daemon-lib.sh"
require_kernel
mkdir -p "$out"

pkgs="@prometheus-io/lezer-promql@0.315.0 @lezer/lr@1.4.12 @lezer/highlight@1.2.1"
stamp="$out/npm/node_modules/.oomkit-$(echo "$pkgs" | tr ' @/' '_-_')"
if ! [ -f "$stamp" ]; then
	rm -rf "$out/npm" && mkdir -p "$out/npm"
	# shellcheck disable=SC2086
	command -v npm >/dev/null &&
		timeout 300 npm install --prefix "$out/npm" --no-save --no-audit --no-fund --loglevel=error $pkgs \
			>"$out/npm.log" 2>&1 && touch "$stamp" ||
		{ cat "$out/npm.log" 2>/dev/null; skip "npm could not install $pkgs"; }
fi

setup grafana
mkdir "$R" "$R/units" "$R/units/app-1.service" || fail "cannot make the test's cgroups"
write_config 256M "report, kill-lowest, kernel" 2s <<EOF2
[job web]
priority = 900
limit = 32M
policy = kill-largest, kernel

[job batch]
priority = 100
limit = 64M
limit_max = 96M
policy = grow, kill-largest, kernel

[job apps]
priority = 500
cgroup = $M/units/app-*.service
limit = 32M
EOF2
PROM="$TMP/oomkit.prom"
has_metric() { grep -qx "$1" "$PROM" 2>/dev/null; }

start_daemon
a=$(spawn web 64)
check "the OOM in web is handled" wait_for 20 dead "$a"
check "the metrics file counts the kill" wait_for 10 has_metric 'oomkit_kills_total{name="web",policy="kill-largest"} 1'
check "the metrics file counts the memory freed" wait_for 10 grep -q '^oomkit_freed_seconds_count [1-9]' "$PROM"
check "and labels the instance by its cgroup" grep -q "^oomkit_job_usage_bytes{name=\"apps\",cgroup=\"$M/units/app-1.service\"} " "$PROM"
cp "$PROM" "$out/oomkit.prom"
check "the dashboard uses only what the daemon exports" \
	node "$src/tests/packaging/check-grafana.mjs" "$src/deploy/grafana/oomkit.json" "$out/oomkit.prom" \
	"$out/npm/node_modules"
finish
