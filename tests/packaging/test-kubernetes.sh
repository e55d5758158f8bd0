#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# deploy/kubernetes/oomkitd.yaml: every field oomkitd relies on
# (check-kubernetes.py), a schema check of every document against the
# Kubernetes API (check-kubernetes.mjs, with the npm packages
# kubernetes-models and kubernetes-types, installed once into OUT_DIR), and
# the preset it carries, examples/kubernetes-node.conf, accepted by
# oomkitd --check.  kubectl --dry-run=client cannot stand in for the schema
# check: it fetches the schema from a cluster's API server.
#   test-kubernetes.sh SOURCE_DIR OUT_DIR OOMKITD
set -eu
src=$1 out=$2 oomkitd=$3
mkdir -p "$out"
status=0
required() { [ "${OOMKIT_REQUIRE_KERNEL:-0}" = 1 ]; }

python3 "$src/tests/packaging/check-kubernetes.py" "$src/deploy/kubernetes/oomkitd.yaml" \
	"$src/examples/kubernetes-node.conf" "$src/debian/oomkitd.conf" "$src/daemon/base/privs.c" "$out/docs.json" ||
	status=1

# Pinned: kubernetes-types 1.30 knows every field used (appArmorProfile is 1.30's).
pkgs="kubernetes-models@5.1.0 kubernetes-types@1.30.0 typescript@5.9.3"
if ! [ -f "$out/npm/node_modules/.oomkit-$(echo "$pkgs" | tr ' @/' '_-_')" ]; then
	rm -rf "$out/npm" && mkdir -p "$out/npm"
	# shellcheck disable=SC2086
	if command -v npm >/dev/null &&
		timeout 300 npm install --prefix "$out/npm" --no-save --no-audit --no-fund --loglevel=error $pkgs \
			>"$out/npm.log" 2>&1; then
		touch "$out/npm/node_modules/.oomkit-$(echo "$pkgs" | tr ' @/' '_-_')"
	else
		cat "$out/npm.log" 2>/dev/null
		echo "no schema check: npm could not install $pkgs"
		required && status=1
	fi
fi
if [ -d "$out/npm/node_modules/kubernetes-models" ]; then
	node "$src/tests/packaging/check-kubernetes.mjs" "$out/docs.json" "$out/npm/node_modules" || status=1
fi

# The preset's machine is the root of a node's cgroup v2 hierarchy; on a host
# whose memory controller is on cgroup v1 --check refuses that one line
# (it is not below this host's memory mount), and every other line is still
# checked.
if check=$("$oomkitd" --check --config "$src/examples/kubernetes-node.conf" 2>&1); then
	echo "ok: oomkitd --check accepts examples/kubernetes-node.conf: $check"
else
	others=$(printf '%s\n' "$check" | grep -v '\[oomkitd\] machine: .* is not below the memory cgroup mount' || true)
	if [ -n "$others" ] || [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		printf 'FAIL: oomkitd --check on examples/kubernetes-node.conf:\n%s\n' "$check"
		status=1
	else
		echo "machine not checked: this host's memory controller is on cgroup v1; no other error in the preset"
	fi
fi
exit $status
