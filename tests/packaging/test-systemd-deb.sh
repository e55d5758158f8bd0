#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Debian packages in the systemd guest: the packages of this tree
# (scripts/deb.sh into DEB_DIR, the directory test-deb.sh builds in: built
# once for both tests), and for the upgrade the same packages with a higher
# version, then boots tests/vm/systemd.sh with --debs and the checks of
# guest-deb.sh.
#   test-systemd-deb.sh SOURCE_DIR OUT_DIR BUILD_DIR QEXIT HOG DEB_DIR
set -euo pipefail
src=$1 out=$2 build=$3 qexit=$4 hog=$5 debdir=$6
mkdir -p "$out"
t0=$EPOCHREALTIME
OOMKIT_DEB_REUSE=1 DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" sh "$src/scripts/deb.sh" "$debdir" >"$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; echo "FAIL: the package build failed"; exit 1; }
echo "packages in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s:" \
	"$(sed -n 's/^deb.sh: //p' "$out/build.log")"
rm -rf "$out/debs" && mkdir -p "$out/debs/upgrade"
cp "$debdir"/liboomkit0_*.deb "$debdir"/oomkit_*.deb "$out/debs/"
# The upgrade's packages: the same files under a higher version, as a rebuild
# from the same tree would make them (the maintainer scripts apt runs, old
# prerm and new postinst, are the package's own).  Repacked rather than
# built a second time: the build takes minutes on this machine.
for deb in "$out"/debs/*.deb; do
	dir=$out/debs/repack
	rm -rf "$dir"
	dpkg-deb -R "$deb" "$dir"
	sed -i 's/^Version: .*/&+upgrade1/' "$dir/DEBIAN/control"
	dpkg-deb -b -Zxz "$dir" "$out/debs/upgrade/" >/dev/null
	rm -rf "$dir"
done
echo "upgrade packages: $(cd "$out/debs/upgrade" && ls)"
# The guest's root file system is the one the systemd test caches: the same
# package list, so the same programs' libraries (the D-Bus helper's too,
# where the build has one), or each test would build its own in turn.
helper=()
[[ -x $build/helpers/oomkitd-systemd ]] && helper=(--libs-of "$build/helpers/oomkitd-systemd")
exec bash "$src/tests/vm/systemd.sh" --build "$build" --log "$out/console.log" --qexit "$qexit" --with "$hog" \
	--libs-of "$build/daemon/oomkitd" --libs-of "$build/cli/oomkit" "${helper[@]}" \
	--debs "$out/debs" --checks "$src/tests/packaging/guest-deb.sh" --timeout 900
