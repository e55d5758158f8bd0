#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# systemd.sh - the systemd guest tier: boots Debian with systemd as PID 1 on
# the unified cgroup hierarchy under qemu software emulation, with this build
# of oomkit installed the way an admin installs it, and runs the checks of
# guest-systemd.sh in it as a service, in one boot.
#
#   systemd.sh --build DIR --qexit PATH [OPTIONS]
#
#   --build DIR      the meson build installed into the guest (meson install
#                    --destdir into the staged root: the unit, the daemon, the
#                    command line and the library at the build's prefix)
#   --cache DIR      where the root file system, the disk image and the last
#                    console log are kept (default DIR/tests/vm/systemd)
#   --qexit PATH     the qexit helper (tests/vm/qexit), ends qemu with a status
#   --with FILE      also copy FILE (a helper such as the hog) to the guest's
#                    /opt/oomkit-test/bin
#   --data FILE      also copy FILE (a configuration the checks use, such as
#                    examples/kubernetes-node.conf) to /opt/oomkit-test
#   --libs-of FILE   the guest gets the Debian packages of FILE's shared
#                    libraries (the daemon's libinih, libseccomp, ...)
#   --only NAMES     run only these checks (comma list of guest-systemd.sh's
#                    check names; default all)
#   --skip NAMES     run all checks but these (a comma list)
#   --checks FILE    run the check functions of FILE instead of guest-systemd.sh
#                    (it sources guest-systemd-lib.sh from its own directory)
#   --debs DIR       install nothing with meson: the guest gets the .deb files
#                    of DIR (and of its subdirectories) in $SDG_DEBS, for the
#                    checks to install with apt as an admin would
#   --env NAME=VAL   also set NAME=VAL in the checks' environment (the
#                    benchmark's settings, for instance)
#   --packages LIST  also put these Debian packages (a comma list) into the
#                    root file system (a benchmark's peers, such as earlyoom);
#                    give such a run a --cache of its own, or the test tier's
#                    root file system is built again
#   --mem SIZE       guest RAM (default 512M)
#   --smp N          guest CPUs (default 2)
#   --timeout S      seconds before qemu is killed (default 1500: a boot takes
#                    2-3 minutes on a quiet 2-core machine, 7 on a loaded one)
#   --log FILE       also write the console to FILE (default CACHE/console.log)
#
# The root file system is built with mmdebstrap from the apt sources this
# host uses (systemd-rootfs.sh) once, and again only when its recipe, its
# package list or the apt sources change; every run copies it, installs the
# project and the checks into the copy and makes an ext4 image of it
# (mkfs.ext4 -d: no loop mount).  The disk is opened snapshot=on, so the
# image is never written.  The kernel is the one vm.sh fetches (Debian's
# cloud kernel; NVMe is built into it, so the disk is an NVMe drive).
#
# The guest prints "sdguest: PASS NAME" or "sdguest: FAIL NAME" once per
# check and ends qemu through isa-debug-exit: 0 when every check passed.
# Exit status: 0 pass, 1 any failure, 77 the guest cannot be had here (no
# qemu, mmdebstrap, root or network), a failure instead with
# OOMKIT_REQUIRE_KERNEL=1.  Timings go to stdout, the console to stderr.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=systemd.sh

# What the guest runs on besides the project's own dependencies: systemd as
# PID 1 with D-Bus and logind (user sessions), and systemd-oomd for the
# baseline it is compared with; apt, with which the packaging checks
# (--debs) install the project's .deb files; redis-server, a real service
# that holds data, for the whole-machine checks.
# kmod loads the kernel's zram module (check_machine_zram).
base_packages=(systemd systemd-sysv dbus dbus-user-session libpam-systemd systemd-oomd procps
	util-linux login passwd apt redis-server openssh-server kmod)

build= cache= qexit= only= skip_checks= logfile= debs=
checks=$here/guest-systemd.sh
mem=512M smp=2 timeout_s=1500
withs=() libs_of=() datas=() envs=() extra_packages=()

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

fail() {
	say "FAIL: $*"
	exit 1
}

skip() {
	if [[ ${OOMKIT_REQUIRE_KERNEL:-} == 1 ]]; then
		say "FAIL (OOMKIT_REQUIRE_KERNEL=1): $*"
		exit 1
	fi
	say "SKIP: $*"
	exit 77
}

usage() {
	sed -n '/^#   systemd.sh/,/^#   --log/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

parse_args() {
	while (($#)); do
		case $1 in
		--build) build=${2:?}; shift 2 ;;
		--cache) cache=${2:?}; shift 2 ;;
		--qexit) qexit=${2:?}; shift 2 ;;
		--with) withs+=("${2:?}"); shift 2 ;;
		--libs-of) libs_of+=("${2:?}"); shift 2 ;;
		--data) datas+=("${2:?}"); shift 2 ;;
		--only) only=${2:?}; shift 2 ;;
		--skip) skip_checks=${2:?}; shift 2 ;;
		--checks) checks=${2:?}; shift 2 ;;
		--debs) debs=${2:?}; shift 2 ;;
		--env) envs+=("${2:?}"); shift 2 ;;
		--packages)
			[[ ${2:?} =~ ^[a-z0-9][a-z0-9.+-]*(,[a-z0-9][a-z0-9.+-]*)*$ ]] ||
				fail "--packages $2: takes Debian package names separated by commas"
			IFS=, read -ra extra_packages <<<"$2"
			shift 2
			;;
		--mem) mem=${2:?}; shift 2 ;;
		--smp) smp=${2:?}; shift 2 ;;
		--timeout) timeout_s=${2:?}; shift 2 ;;
		--log) logfile=${2:?}; shift 2 ;;
		*) usage ;;
		esac
	done
	[[ -n $build && -n $qexit ]] || usage
	[[ -f $build/build.ninja ]] || fail "--build $build: not a meson build directory"
	[[ $timeout_s =~ ^[0-9]+$ ]] || fail "--timeout takes whole seconds"
	[[ $only =~ ^[a-z0-9_,]*$ ]] || fail "--only takes check names separated by commas"
	[[ $skip_checks =~ ^[a-z0-9_,]*$ ]] || fail "--skip takes check names separated by commas"
	local e
	for e in "${envs[@]}"; do
		[[ $e =~ ^SDG_[A-Z0-9_]+=[A-Za-z0-9_.%,/:-]*$ ]] ||
			fail "--env $e: takes SDG_NAME=VALUE, the value of letters, digits and _.%,/:-"
	done
	[[ -f $checks ]] || fail "--checks $checks: no such file"
	[[ -z $debs ]] || compgen -G "$debs/*.deb" >/dev/null || fail "--debs $debs: no .deb file there"
	cache=${cache:-$build/tests/vm/systemd}
	logfile=${logfile:-$cache/console.log}
}

check_host() {
	[[ $(id -u) == 0 ]] || skip "needs root (mmdebstrap builds the guest's root file system in a chroot)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
	command -v mmdebstrap >/dev/null || skip "mmdebstrap not found (apt-get install mmdebstrap)"
	command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not found (apt-get install e2fsprogs)"
	for t in meson python3 ldconfig dpkg-query timeout flock sha256sum; do
		command -v "$t" >/dev/null || skip "$t not found"
	done
	for f in "$qexit" "${withs[@]}" "${libs_of[@]}"; do
		[[ -f $f && -x $f ]] || fail "$f: not an executable file"
	done
}

now() {
	echo "${EPOCHREALTIME}"
}

since() { # start
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# The Debian packages that hold the shared libraries of the given programs,
# found through the host's dpkg database, so that the guest can run the
# binaries this build made.  Libraries of the build itself (liboomkit) are
# installed with the project and are not looked up.
runtime_packages() {
	local f lib pkg
	for f in "${libs_of[@]}"; do
		for lib in $(LC_ALL=C ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'); do
			[[ $(realpath "$lib") == "$(realpath "$build")"/* ]] && continue
			pkg=$(dpkg-query -S "$(realpath "$lib")" 2>/dev/null || dpkg-query -S "$lib" 2>/dev/null) ||
				fail "$f needs $lib, which no Debian package installed here provides"
			echo "${pkg%%:*}"
		done
	done
}

apt_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[[ -s $f ]] && echo "$f"
	done
	return 0
}

# Prints the path of the cached root file system, building it first if no
# cache matches the recipe, the package list and the apt sources.
rootfs() {
	local suite packages sources key dir t0
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	mapfile -t packages < <({ printf '%s\n' "${base_packages[@]}" "${extra_packages[@]}"; runtime_packages; } |
		LC_ALL=C sort -u)
	mapfile -t sources < <(apt_sources)
	((${#sources[@]})) || skip "no apt sources configured in /etc/apt"
	key=$({ cat "$here/systemd-rootfs.sh"; echo "$suite ${packages[*]}"; cat "${sources[@]}"; } |
		sha256sum | cut -c1-16)
	dir=$cache/rootfs-$key
	if [[ ! -x $dir/lib/systemd/systemd ]]; then
		say "building the guest's root file system (once per package list): ${packages[*]}"
		rm -rf "$cache"/rootfs-* "$cache"/building
		t0=$(now)
		bash "$here/systemd-rootfs.sh" "$cache/building" "$suite" "${sources[@]}" -- "${packages[@]}" \
			>"$cache/rootfs.log" 2>&1 || {
			tail -n 20 "$cache/rootfs.log" >&2
			skip "mmdebstrap could not build the root file system (see $cache/rootfs.log; no network?)"
		}
		mv "$cache/building" "$dir"
		echo "$prog: root file system built in $(since "$t0") s ($(du -sh "$dir" | cut -f1))"
	fi
	echo "$dir" >"$cache/rootfs.path"
}

# Where meson installs the files of the build that the checks need, as
# NAME=PATH lines for the guest's environment file.
installed_paths() {
	python3 - "$build" <<-'PY'
	import json, os, subprocess, sys
	out = subprocess.run(["meson", "introspect", "--installed", sys.argv[1]], check=True,
	                     capture_output=True, text=True).stdout
	wanted = {"oomkitd": "OOMKITD", "oomkit": "OOMKIT", "oomkitd.conf": "OOMKITD_CONF",
	          "oomkitd.service": "OOMKIT_UNIT"}
	found = {}
	for dst in json.loads(out).values():
	    # The bash completion of oomkit is named after the command it completes.
	    if "/bash-completion/" in dst:
	        continue
	    name = wanted.get(os.path.basename(dst))
	    if name:
	        found.setdefault(name, []).append(dst)
	for base, name in wanted.items():
	    if len(found.get(name, [])) != 1:
	        sys.exit(f"{base}: installed {len(found.get(name, []))} times")
	    print(f"{name}={found[name][0]}")
	PY
}

# A copy of the root file system with the project installed as an admin would
# (meson install, then ldconfig for the new library), the checks and their
# helpers under /opt/oomkit-test, and a service that runs them once the
# system is up.
stage() { # rootfs stage modules
	local s=$2 t=/opt/oomkit-test f
	rm -rf "$s"
	cp -a "$1" "$s"
	# The kernel's modules the checks load, where modprobe looks for them
	# (depmod runs in the guest: the host may have no kmod).
	cp -a "$3/lib/modules" "$s/lib/"
	if [[ -z $debs ]]; then
		meson install -C "$build" --no-rebuild --quiet --destdir "$(realpath "$s")" >"$cache/install.log" 2>&1 ||
			{ cat "$cache/install.log" >&2; fail "meson install into the guest failed"; }
		ldconfig -r "$s"
	else
		mkdir -p "$s$t/debs"
		(cd "$debs" && find . -name '*.deb' -print0 | cpio -0pdm --quiet "$(realpath "$s")$t/debs")
	fi
	mkdir -p "$s$t/bin"
	install -m 755 "$qexit" "${withs[@]}" "$s$t/bin/"
	install -m 644 "$here/guest-systemd-lib.sh" "$s$t/"
	((${#datas[@]} == 0)) || install -m 644 "${datas[@]}" "$s$t/"
	install -m 755 "$checks" "$s$t/"
	{
		if [[ -z $debs ]]; then
			installed_paths || fail "the build does not install what the checks need"
		else
			printf '%s\n' OOMKITD=/usr/sbin/oomkitd OOMKIT=/usr/bin/oomkit OOMKITD_CONF=/etc/oomkit/oomkitd.conf \
				OOMKIT_UNIT=/lib/systemd/system/oomkitd.service "SDG_DEBS=$t/debs"
		fi
		echo "SDG_ONLY=$only"
		echo "SDG_SKIP=$skip_checks"
		printf '%s\n' "${envs[@]}"
		echo "SDG_QEXIT=$t/bin/$(basename "$qexit")"
		for f in "${withs[@]}"; do
			echo "SDG_HELPER_$(basename "$f" | tr 'a-z-' 'A-Z_')=$t/bin/$(basename "$f")"
		done
	} >"$s$t/env"
	cat >"$s/etc/systemd/system/oomkit-checks.service" <<-EOF
	[Unit]
	Description=oomkit systemd guest checks
	After=multi-user.target
	[Service]
	Type=exec
	EnvironmentFile=$t/env
	ExecStart=$t/$(basename "$checks")
	StandardOutput=tty
	StandardError=tty
	TTYPath=/dev/ttyS0
	[Install]
	WantedBy=multi-user.target
	EOF
	ln -sf ../oomkit-checks.service "$s/etc/systemd/system/multi-user.target.wants/oomkit-checks.service"
}

image() { # stage image
	rm -f "$2"
	# 2 GiB apparent, sparse: room for the checks' reports and journal, and
	# check_machine_swap's swap file.
	mkfs.ext4 -q -F -L root -d "$1" "$2" 2G
}

# Runs qemu with the console on a pipe, each line to stderr and the log,
# stamped with seconds since qemu started.  Sets qemu_rc, result, verdicts
# and the moments the checks started and ended; and hung, the guest
# kernel's line, if it reported a soft lockup or an RCU stall before the
# checks began (qemu is stopped then: see main).
boot() { # kernel image
	local cmdline line t0 us
	cmdline="console=ttyS0 root=/dev/nvme0n1 rootfstype=ext4 rw panic=-1 psi=1 quiet"
	# audit=1: seccomp logs the calls a filter refuses (audit type 1326).
	cmdline+=" systemd.unified_cgroup_hierarchy=1 systemd.show_status=error audit=1"
	result='' verdicts=() checks_at='' done_at='' hung=''
	: >"$logfile"
	t0=${EPOCHREALTIME/./}
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		while [[ $line =~ $'\e'(c|\[[0-9\;?]*[A-Za-z]) ]]; do
			line=${line/"${BASH_REMATCH[0]}"/}
		done
		us=$((${EPOCHREALTIME/./} - t0))
		printf -v line '[%3d.%03d] %s' $((us / 1000000)) $((us / 1000 % 1000)) "$line"
		printf '%s\n' "$line" >&2
		printf '%s\n' "$line" >>"$logfile"
		case $line in
		*'sdguest: START'*) checks_at=$((us / 100000)) ;;
		*'sdguest: RESULT '*) result=${line#*RESULT }; done_at=$((us / 100000)) ;;
		*'sdguest: PASS '* | *'sdguest: FAIL '*) verdicts+=("${line#*sdguest: }") ;;
		*'soft lockup - CPU#'* | *'self-detected stall on CPU'* | *'rcu_preempt detected stalls'*)
			# $! is the process substitution's: timeout passes the TERM to qemu.
			if [[ -z $checks_at && -z $hung ]]; then
				hung=${line#*] }
				kill -TERM $! 2>/dev/null
			fi
			;;
		esac
	done < <(
		timeout -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -M pc -cpu qemu64 -smp "$smp" -m "$mem" \
			-nographic -nodefaults -no-reboot -serial stdio \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-drive file="$2",if=none,id=root,format=raw,snapshot=on -device nvme,drive=root,serial=root \
			-kernel "$1" -append "$cmdline" </dev/null 2>&1
	)
	qemu_rc=0
	wait $! || qemu_rc=$?
	total=$(((${EPOCHREALTIME/./} - t0) / 100000))
}

tenths() {
	[[ -n $1 ]] && printf '%d.%d' $(($1 / 10)) $(($1 % 10)) || echo '?'
}

verdict() {
	local v failed=0
	for v in "${verdicts[@]}"; do
		echo "$prog:   $v"
		[[ $v == FAIL* ]] && failed=$((failed + 1))
	done
	echo "$prog: $mem, $smp CPUs: checks start $(tenths "$checks_at") s, end $(tenths "$done_at") s," \
		"qemu $(tenths "$total") s; console in $logfile"
	[[ -z $hung ]] || fail "the guest's boot hung before the checks began, twice: $hung"
	case $qemu_rc in
	1 | 3)
		# qemu also exits 1 when it cannot start: believe only a reported result.
		[[ -n $result ]] || fail "qemu exited $qemu_rc before the guest reported a result"
		((${#verdicts[@]})) || fail "the guest ran no check"
		[[ $qemu_rc == 1 && $failed == 0 ]] || fail "$result"
		echo "$prog: PASS $result"
		;;
	124 | 137) fail "the guest did not finish within $timeout_s s (--timeout)" ;;
	0) fail "the guest stopped without reporting (see the console above)" ;;
	*) fail "qemu exited $qemu_rc (see the console above)" ;;
	esac
}

main() {
	local kernel modules dir t0 rc=0
	parse_args "$@"
	check_host
	kernel=$(bash "$here/vm.sh" --fetch-kernel) || rc=$?
	((rc == 0)) || exit "$rc"
	modules=$(bash "$here/vm.sh" --fetch-modules) || rc=$?
	((rc == 0)) || exit "$rc"
	mkdir -p "$cache"
	exec {lock}>"$cache/.lock"
	flock "$lock"
	rootfs
	dir=$(cat "$cache/rootfs.path")
	t0=$(now)
	stage "$dir" "$cache/stage" "$modules"
	image "$cache/stage" "$cache/root.img"
	rm -rf "$cache/stage"
	echo "$prog: staged and imaged in $(since "$t0") s"
	boot "$kernel" "$cache/root.img"
	# Seen once on this host (2026-12-05, a quiet clean-clone run): the
	# emulated guest's kernel stuck in a soft lockup 29 s into its boot,
	# in dbus-daemon, until the timeout.  Nothing of oomkit runs before the
	# checks begin (oomkit-checks.service starts them), so such a boot is
	# the emulator's: it is stopped at the first report and booted once more
	# from the same image (snapshot=on: nothing of the first boot is kept).
	if [[ -n $hung ]]; then
		echo "$prog: the guest's boot hung before the checks began ($hung); booting it again"
		boot "$kernel" "$cache/root.img"
	fi
	verdict
}

main "$@"
