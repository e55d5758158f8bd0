#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages in the systemd guest: builds them twice from this tree
# (scripts/deb.sh; the second time as a higher version, for the upgrade),
# then boots tests/vm/systemd.sh with --debs and the checks of guest-deb.sh.
#   test-systemd-deb.sh SOURCE_DIR OUT_DIR BUILD_DIR QEXIT HOG
set -euo pipefail
src=$1 out=$2 build=$3 qexit=$4 hog=$5
mkdir -p "$out"
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
for v in "$version" "${version}+upgrade1"; do
	dir=$out/debs
	[[ $v == "$version" ]] || dir=$out/debs/upgrade
	t0=$EPOCHREALTIME
	OOMKIT_DEB_VERSION=$([[ $v == "$version" ]] || echo "$v") DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		sh "$src/scripts/deb.sh" "$out/build" >"$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log"; echo "FAIL: the package build of $v failed"; exit 1; }
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$out"/build/liboomkit0_*.deb "$out"/build/oomkit_*.deb "$dir/"
	echo "built $v in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
done
rm -rf "$out/build"
# The guest's root file system is the one the systemd test caches (the same
# package list): built once for both.
exec bash "$src/tests/vm/systemd.sh" --build "$build" --log "$out/console.log" --qexit "$qexit" --with "$hog" \
	--libs-of "$build/daemon/oomkitd" --libs-of "$build/cli/oomkit" \
	--debs "$out/debs" --checks "$src/tests/packaging/guest-deb.sh" --timeout 900
