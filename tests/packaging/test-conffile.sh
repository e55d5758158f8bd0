#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The package's /etc/oomkit/oomkitd.conf (debian/oomkitd.conf) names every key
# that oomkitd.conf(5) documents, each commented out with a value, in its
# section; as shipped it is a valid file that configures nothing, and with
# every key uncommented it is still valid (so each value shown is one the
# daemon accepts).
#   test-conffile.sh OOMKITD CONFFILE MANPAGE
set -eu
oomkitd=$1 conf=$2 man=$3
tmp=$(mktemp -d /tmp/oomkit-conffile-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# Keys of the man page: the .B/.BR word(s) after each .TP, by section.
awk '
	/^\.SH / { sec = ($2 == "[oomkitd]") ? "oomkitd" : ($2 == "[job") ? "job" : "" ; next }
	/^\.TP/ { tp = 1; next }
	tp && sec != "" && /^\.BR? / {
		for (i = 2; i <= NF; i++) if ($i ~ /^[a-z_]+$/) print sec, $i
	}
	{ tp = 0 }
' "$man" | sort -u >"$tmp/documented"
[ -s "$tmp/documented" ] || fail "no keys found in $man"

# Keys of the file: ";key = value" lines, by the section they follow.
awk '
	/^\[oomkitd\]/ { sec = "oomkitd"; next }
	/^;\[job / { sec = "job"; next }
	/^;[a-z_]+ = ./ { sub(/^;/, ""); print sec, $1 }
' "$conf" | sort -u >"$tmp/shipped"

while read -r sec key; do
	grep -qx "$sec $key" "$tmp/shipped" || fail "oomkitd.conf(5) documents $key in [$sec]; $conf has no ';$key = ...' there"
done <"$tmp/documented"
while read -r sec key; do
	grep -qx "$sec $key" "$tmp/documented" || fail "$conf shows $key in [$sec], which oomkitd.conf(5) does not document"
done <"$tmp/shipped"
if grep -Ev '^(;.*|\[oomkitd\]|)$' "$conf" >"$tmp/active"; then
	fail "$conf sets something as shipped: $(cat "$tmp/active")"
fi

out=$("$oomkitd" --check --config "$conf" 2>&1) || fail "as shipped, --check says: $out"
case $out in *"ok, 0 jobs"*) ;; *) fail "as shipped it should configure no job: $out" ;; esac
sed -E 's/^;(\[job |[a-z_]+ = )/\1/' "$conf" >"$tmp/uncommented.conf"
out=$("$oomkitd" --check --config "$tmp/uncommented.conf" 2>&1) || fail "uncommented, --check says: $out"

[ $status = 0 ] && echo "ok: $(wc -l <"$tmp/documented") documented keys, each commented in $(basename "$conf") with a value --check accepts"
exit $status
