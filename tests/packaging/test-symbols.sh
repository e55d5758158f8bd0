#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# debian/liboomkit0.symbols names exactly what liboomkit.so exports, for the
# SONAME the library has: dpkg-gensymbols -c4 fails the package build
# otherwise, and this says so without building the package.
#   test-symbols.sh LIBOOMKIT_SO SYMBOLS_FILE
set -eu
lib=$1 symbols=$2
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "D" || $2 == "B" || $2 == "R" {print $3}' | sort -u)
listed=$(sed -n 's/^ \([A-Za-z0-9_]*\)@Base .*/\1/p' "$symbols" | sort -u)
status=0
head -n 1 "$symbols" | grep -q "^$soname liboomkit0 " ||
	{ echo "FAIL: $symbols starts with '$(head -n 1 "$symbols")', the library's SONAME is $soname"; status=1; }
for f in $exported; do
	printf '%s\n' "$listed" | grep -qx "$f" ||
		{ echo "FAIL: $f is exported but not in $symbols: add ' $f@Base <first version with it>'"; status=1; }
done
for f in $listed; do
	printf '%s\n' "$exported" | grep -qx "$f" ||
		{ echo "FAIL: $f is in $symbols but no longer exported (an ABI break: bump the SONAME)"; status=1; }
done
[ $status = 0 ] && echo "ok: $(printf '%s\n' "$listed" | wc -l) symbols of $soname listed in $(basename "$symbols"), as exported"
exit $status
