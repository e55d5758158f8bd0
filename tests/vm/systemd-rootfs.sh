#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# systemd-rootfs.sh - builds the userland of the systemd guest: Debian with
# systemd as PID 1, from the Debian packages of the apt sources this host is
# configured with, set up for a fast headless boot under emulation.
#
#   systemd-rootfs.sh DIR SUITE SOURCES_FILE... -- PACKAGE...
#
# DIR must not exist; it is made by mmdebstrap (as root) and then staged.
# systemd.sh caches DIR under the build directory, keyed by a hash of this
# file, the package list and the apt sources, so editing the recipe below or
# the package list is what rebuilds it.  Nothing of oomkit goes in here: the
# project is installed into a copy of DIR on every run.

set -euo pipefail

dir=$1 suite=$2
shift 2
sources=()
while (($#)) && [[ $1 != -- ]]; do
	sources+=("$1")
	shift
done
shift
(($# > 0)) || { echo "systemd-rootfs.sh: no packages" >&2; exit 2; }
packages=$(IFS=,; echo "$*")

# Documentation and translations are a third of a minimal system and nothing
# in the guest reads them.
mmdebstrap --variant=essential --include="$packages" \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	"$suite" "$dir" "${sources[@]}"

r=$dir
echo sdguest >"$r/etc/hostname"
echo '127.0.1.1 sdguest' >>"$r/etc/hosts"
# The kernel mounts the root read-write (rw on its command line); an empty
# fstab leaves systemd nothing to wait for, and there is no udev to wait on.
: >"$r/etc/fstab"
# A machine-id makes this an installed system, not a first boot (which would
# run systemd-firstboot and preset every unit).
rm -f "$r/etc/machine-id"
chroot "$r" systemd-machine-id-setup >/dev/null
# A user for the tests that need one (user sessions, delegated jobs).
chroot "$r" useradd -m -u 1000 -s /bin/bash test

mkdir -p "$r/etc/systemd/journald.conf.d"
cat >"$r/etc/systemd/journald.conf.d/sdguest.conf" <<'EOF'
# The guest runs from a throw-away disk: keep the journal in memory.
[Journal]
Storage=volatile
RuntimeMaxUse=16M
EOF

# Nothing logs in, and nothing periodic may run in the middle of a test.
for unit in getty.target getty@tty1.service serial-getty@ttyS0.service systemd-firstboot.service \
	fstrim.timer dpkg-db-backup.timer e2scrub_all.timer systemd-pstore.service remote-fs.target; do
	rm -f "$r"/etc/systemd/system/*.wants/"$unit"
	ln -sf /dev/null "$r/etc/systemd/system/$unit"
done
