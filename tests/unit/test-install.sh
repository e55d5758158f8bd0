#!/bin/sh
# make install's result is usable: installs into a DESTDIR, then builds a
# program against the installed header and oomkit.pc and runs it.
#   test-install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
dest=$(mktemp -d /tmp/oomkit-install-XXXXXX)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
pc=$(find "$dest" -name oomkit.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: no oomkit.pc installed"; exit 1; }
[ -f "$dest$prefix/include/oomkit.h" ] || { echo "FAIL: no oomkit.h under $prefix/include"; exit 1; }
# oomkit's bash completion, where bash-completion looks under this prefix.
if [ -f "$build/cli/oomkit" ]; then
	[ -f "$dest$prefix/share/bash-completion/completions/oomkit" ] ||
		{ echo "FAIL: no bash completion under $prefix/share/bash-completion/completions"; exit 1; }
fi
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
cflags=$(pkg-config --cflags oomkit) libs=$(pkg-config --libs oomkit)
cc -o "$dest/kill-newest" "$src/examples/kill-newest.c" $cflags $libs
libdir=$(dirname "$(find "$dest" -name 'liboomkit.so' | head -n 1)")
LD_LIBRARY_PATH=$libdir "$dest/kill-newest" 2>/dev/null && { echo "FAIL: ran without arguments"; exit 1; }
# Usage error (exit 2) proves it linked and started against the installed library.
set +e; LD_LIBRARY_PATH=$libdir "$dest/kill-newest" >/dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || { echo "FAIL: installed example exited $rc, expected the usage error 2"; exit 1; }
echo "ok: installed into DESTDIR, built and ran a program with pkg-config oomkit"
