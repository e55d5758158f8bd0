#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the Debian packages (dpkg-buildpackage -us -uc -b) from a clean copy
# of the source tree, so that no build directory or cache of the developer's
# reaches the package, and leaves the .deb, .changes and .buildinfo files in
# OUTDIR (the copy is OUTDIR/src).
#   deb.sh OUTDIR
# OOMKIT_DEB_VERSION=0.1.0-2 builds that version instead of the changelog's
# (a changelog entry is added to the copy): the upgrade test needs a package
# newer than the installed one.  DEB_BUILD_OPTIONS is passed on (nocheck).
# OOMKIT_DEB_REUSE=1 keeps the packages already in OUTDIR when they were built
# from the same files with the same options and tools (the test suite builds
# once for test-deb.sh and test-systemd-deb.sh); concurrent calls on one
# OUTDIR take turns.
set -eu
out=$1
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
exec 9>"$out/.lock"
flock 9
tree=$out/src/oomkit
rm -rf "$out/src"
mkdir -p "$tree"

# What a clean checkout holds, with the developer's edits and new files:
# tracked and untracked files, less the ignored (build*/, caches) and the
# deleted.  Outside git, everything but the build directories.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(
		cd "$src"
		git ls-files --deleted >"$out/src/deleted"
		git ls-files --cached --others --exclude-standard | sort -u | grep -vxFf "$out/src/deleted" |
			tar -cf - --no-recursion -T -
	) | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude='./build*' --exclude='./tests/vm/cache' -cf - . | tar -C "$tree" -xf -
fi

# What the packages are made of: every file's path, mode and content, the
# options and the versions of the tools that build them.
key=$(
	cd "$tree"
	find . -type f -printf '%m %p\n' | LC_ALL=C sort
	find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
	echo "${OOMKIT_DEB_VERSION:-} ${DEB_BUILD_OPTIONS:-}"
	dpkg-query -W dpkg-dev debhelper meson gcc 2>/dev/null
)
key=$(printf '%s\n' "$key" | sha256sum | cut -c1-16)
if [ "${OOMKIT_DEB_REUSE:-0}" = 1 ] && [ "$(cat "$out/tree.key" 2>/dev/null)" = "$key" ] &&
	ls "$out"/*.changes >/dev/null 2>&1; then
	echo "deb.sh: the packages in $out are of this tree ($key): not built again"
	rm -rf "$out/src"
	ls "$out"/*.deb
	exit 0
fi
rm -f "$out/tree.key" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo

if [ -n "${OOMKIT_DEB_VERSION:-}" ]; then
	{
		printf 'oomkit (%s) unstable; urgency=medium\n\n' "$OOMKIT_DEB_VERSION"
		printf '  * Rebuilt as %s.\n\n' "$OOMKIT_DEB_VERSION"
		printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$tree/debian/control")" "$(date -R)"
		cat "$tree/debian/changelog"
	} >"$tree/debian/changelog.new"
	mv "$tree/debian/changelog.new" "$tree/debian/changelog"
fi

cd "$tree"
dpkg-buildpackage -us -uc -b
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out"/
echo "$key" >"$out/tree.key"
ls "$out"/*.deb
