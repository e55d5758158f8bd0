#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make deb`'s packages, built the same way (scripts/deb.sh, from a clean
# copy of the tree; the unit tests are left out with nocheck, since the test
# suite runs them itself): lintian finds no error and no warning, each
# package holds what it should, the configuration is a conffile, the
# library's symbols file and shlibs are in liboomkit0, the unit is enabled
# and started by the maintainer scripts, and the extracted -dev package
# builds a program with pkg-config that runs against the extracted library.
#   test-deb.sh SOURCE_DIR OUT_DIR
set -eu
src=$1 out=$2
command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null && command -v dh >/dev/null ||
	{
		echo "dpkg-dev, debhelper or lintian missing (make bootstrap installs them)"
		[ "${OOMKIT_REQUIRE_KERNEL:-0}" = 1 ] && exit 1
		exit 77
	}
status=0
fail() { echo "FAIL: $*"; status=1; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# The packages are built once per tree for this test and test-systemd-deb.sh
# (OOMKIT_DEB_REUSE: the same OUT_DIR, the same options).
start=$(date +%s)
OOMKIT_DEB_REUSE=1 DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" sh "$src/scripts/deb.sh" "$out" >"$out.log" 2>&1 ||
	{ tail -n 40 "$out.log"; echo "FAIL: the package build failed (log: $out.log)"; exit 1; }
echo "built in $(($(date +%s) - start)) s: $(sed -n 's/^deb.sh: //p' "$out.log")"
for p in liboomkit0 liboomkit-dev oomkit oomkit-agent; do
	[ -f "$(ls "$out"/${p}_*.deb 2>/dev/null | head -n 1)" ] || fail "no $p package"
done
[ $status = 0 ] || exit 1

# lintian: errors and warnings fail (overrides in debian/*.lintian-overrides,
# each with its reason); the rest is printed.
lintian --fail-on error,warning --display-info "$out"/oomkit_*.changes >"$out/lintian.txt" 2>&1 ||
	fail "lintian: $(grep -E '^(E|W):' "$out/lintian.txt" || cat "$out/lintian.txt")"
grep -E "^[EWIPX]:" "$out/lintian.txt" | sed 's/^/lintian: /' || true

has() { # PACKAGE PATH...
	deb=$(ls "$out"/"$1"_*.deb | head -n 1)
	shift
	dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' >"$out/contents"
	for f in "$@"; do
		grep -qx "$f" "$out/contents" || fail "$(basename "$deb") has no $f"
	done
}
has liboomkit0 "usr/lib/$ma/liboomkit.so.0" "usr/lib/$ma/liboomkit.so.0.1.0" "usr/lib/$ma/oomkit/oomkit-guardian"
grep -q '\.h$\|\.a$\|/bin/' "$out/contents" && fail "liboomkit0 holds more than the library: $(cat "$out/contents")"
has liboomkit-dev usr/include/oomkit.h "usr/lib/$ma/liboomkit.a" "usr/lib/$ma/liboomkit.so" \
	"usr/lib/$ma/pkgconfig/oomkit.pc" usr/share/man/man3/oomkit.3.gz \
	usr/share/doc/liboomkit-dev/examples/kill-newest.c usr/share/doc/liboomkit-dev/examples/grow-or-kill.c
has oomkit usr/sbin/oomkitd usr/bin/oomkit "usr/lib/$ma/oomkit/oomkit-hook-runner" lib/systemd/system/oomkitd.service etc/oomkit/oomkitd.conf \
	"usr/lib/$ma/oomkit/oomkitd-systemd" usr/share/man/man1/oomkit.1.gz usr/share/man/man5/oomkitd.conf.5.gz usr/share/man/man8/oomkitd.8.gz \
	usr/share/bash-completion/completions/oomkit \
	usr/share/doc/oomkit/README.Debian usr/share/doc/oomkit/examples/server.conf \
	usr/share/doc/oomkit/examples/desktop.conf usr/share/doc/oomkit/examples/kubernetes-node.conf
grep -q 'liboomkit\.so' "$out/contents" && fail "the oomkit package holds the library"
grep -q 'agent' "$out/contents" && fail "the oomkit package holds the desktop agent: $(grep agent "$out/contents")"
has oomkit-agent usr/bin/oomkit-agent usr/lib/systemd/user/oomkit-agent.service \
	etc/xdg/autostart/oomkit-agent.desktop usr/share/man/man1/oomkit-agent.1.gz

ctl=$out/control
rm -rf "$ctl" && mkdir -p "$ctl"
dpkg-deb -e "$out"/liboomkit0_*.deb "$ctl/lib"
dpkg-deb -e "$out"/oomkit_*.deb "$ctl/oomkit"
grep -q '^ oomkit_new@Base ' "$ctl/lib/symbols" || fail "liboomkit0 has no symbols file with oomkit_new"
grep -q '^liboomkit 0 liboomkit0' "$ctl/lib/shlibs" || fail "liboomkit0's shlibs: $(cat "$ctl/lib/shlibs" 2>/dev/null)"
grep -qx '/etc/oomkit/oomkitd.conf' "$ctl/oomkit/conffiles" || fail "/etc/oomkit/oomkitd.conf is not a conffile"
grep -q 'deb-systemd-helper.*enable.*oomkitd.service\|deb-systemd-helper unmask' "$ctl/oomkit/postinst" ||
	fail "postinst does not enable oomkitd.service"
grep -q 'deb-systemd-invoke.*restart.*oomkitd.service\|_dh_action=restart' "$ctl/oomkit/postinst" ||
	fail "postinst does not (re)start oomkitd.service after an upgrade"
grep -q 'rm -rf /var/lib/oomkit' "$ctl/oomkit/postrm" || fail "postrm purge keeps /var/lib/oomkit"
dpkg-deb -e "$out"/oomkit-agent_*.deb "$ctl/agent"
grep -q 'deb-systemd-helper --user .*enable.*oomkit-agent.service' "$ctl/agent/postinst" ||
	fail "oomkit-agent's postinst does not enable its user unit: $(cat "$ctl/agent/postinst" 2>/dev/null)"
grep -q 'deb-systemd-helper --user purge.*oomkit-agent.service' "$ctl/agent/postrm" ||
	fail "oomkit-agent's postrm does not forget its user unit on purge"
depends=$(dpkg-deb -f "$out"/oomkit_*.deb Depends)
printf '%s\n' "$depends" | grep -q 'liboomkit0 (>= 0\.1\.0)' || fail "oomkit does not depend on liboomkit0: $depends"
# A server or a Kubernetes node installs oomkit without a desktop stack.
printf '%s\n' "$depends" | grep -q 'glib\|gtk\|notify' && fail "oomkit depends on desktop libraries: $depends"

# The -dev and library packages, unpacked, build and run a program.
root=$out/root
rm -rf "$root"
for p in liboomkit0 liboomkit-dev oomkit; do dpkg-deb -x "$(ls "$out"/${p}_*.deb | head -n 1)" "$root"; done
PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$ma/pkgconfig \
	sh -c 'cc -o "$1/kill-newest" "$2/examples/kill-newest.c" $(pkg-config --cflags --libs oomkit)' sh "$out" "$src" ||
	fail "examples/kill-newest.c does not build against liboomkit-dev"
set +e
LD_LIBRARY_PATH=$root/usr/lib/$ma "$out/kill-newest" >/dev/null 2>&1
rc=$?
set -e
[ $rc = 2 ] || fail "kill-newest against the packaged library exited $rc, expected its usage error 2"
LD_LIBRARY_PATH=$root/usr/lib/$ma "$root/usr/sbin/oomkitd" --check --config "$root/etc/oomkit/oomkitd.conf" >/dev/null ||
	fail "the packaged oomkitd rejects the packaged configuration"
# The presets and the README, as the source has them (uncompressed, to be
# copied to /etc/oomkit/oomkitd.conf); the README names each preset.
for f in server.conf desktop.conf kubernetes-node.conf; do
	cmp -s "$src/examples/$f" "$root/usr/share/doc/oomkit/examples/$f" ||
		fail "/usr/share/doc/oomkit/examples/$f is not examples/$f"
	grep -q "^ *$f " "$root/usr/share/doc/oomkit/README.Debian" || fail "README.Debian does not name $f"
done

[ $status = 0 ] && echo "ok: 4 packages, lintian clean of errors and warnings, contents, conffile, symbols, a program built with liboomkit-dev, the presets and README under /usr/share/doc"
exit $status
