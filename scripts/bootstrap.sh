#!/bin/sh
# Installs the Debian packages named as arguments that are not installed yet.
# Runs `apt-get update` once first, as a fresh machine needs.
set -eu
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "bootstrap: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "bootstrap: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# Another installer (unattended-upgrades on a fresh machine) may hold dpkg's
# lock for a while: wait for it rather than fail the build.
apt-get -o DPkg::Lock::Timeout=600 update -q
# shellcheck disable=SC2086
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
