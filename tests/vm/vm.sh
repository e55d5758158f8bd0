#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# vm.sh - boots a small Linux guest under qemu software emulation and runs
# oomkit's test programs inside it, one after another.
#
#   vm.sh [OPTIONS] -- PROGRAM [ARGS...] [-- PROGRAM [ARGS...]]...
#   vm.sh --fetch-kernel   prints the guest kernel's path (fetched once, as
#                          below) for other guest tiers, and exits
#
#   --mode v2|v1     cgroup layout of the guest (default v2):
#                      v2: cgroup2 at /sys/fs/cgroup with +memory in subtree_control,
#                          every v1 controller disabled (cgroup_no_v1=all);
#                      v1: like this project's machines: v1 memory and freezer at
#                          /sys/fs/cgroup/{memory,freezer}, cgroup2 without the memory
#                          controller at /sys/fs/cgroup/unified.
#   --mem SIZE       guest RAM, qemu syntax (default 512M)
#   --timeout S      seconds before qemu is killed (default 300)
#   --smp N          guest CPUs (default 1)
#   --with FILE      also copy FILE (a helper such as the hog) to the guest's /bin
#   --env NAME=VAL   export NAME=VAL to every program in the guest
#   --append ARGS    extra kernel command line
#   --qexit PATH     the qexit helper (default: $OOMKIT_VM_QEXIT)
#   --log FILE       also write the guest console to FILE
#
# Each PROGRAM is copied to /bin in the guest (static is best; a dynamically
# linked one brings its shared libraries along) and run there as root with
# OOMKIT_REQUIRE_KERNEL=1 (the guest is made for these tests, so a missing
# kernel feature there is a failure), OOMKIT_VM=1 and OOMKIT_VM_MODE=v1|v2.  Programs report like meson tests: 0 pass, 77 skip,
# anything else fail.
#
# The guest console goes to stderr, the summary with the timings to stdout.
# Exit status: 0 every program passed (or some skipped), 77 all skipped or
# the guest cannot be run here (no qemu, no kernel), 1 anything else.  With
# OOMKIT_REQUIRE_KERNEL=1 every skip is a failure.
#
# The kernel is Debian's cloud kernel, the smallest and fastest to boot under
# emulation: "apt-get download" fetches it once into the cache directory
# ($OOMKIT_VM_CACHE, default tests/vm/cache next to this script) and only
# vmlinuz is kept; nothing is installed.  $OOMKIT_VM_KERNEL names another image.
# The initramfs is busybox-static plus the programs, built afresh each run.
#
#   vm.sh --fetch-modules  prints a directory holding lib/modules/VERSION/ with
#                          the few modules of that kernel the systemd guest
#                          loads (zram and what it needs), fetched once
#                          from the same package

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=vm.sh

mode=v2
mem=512M
timeout_s=300
smp=1
append=
qexit=${OOMKIT_VM_QEXIT:-}
logfile=
withs=()
envs=()
programs=()     # host paths of the programs, in run order
commands=()     # one quoted guest command line per program
tmp=

say() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

fail() {
	say "FAIL: $*"
	exit 1
}

# The guest cannot run on this host: skip, unless the caller requires the kernel tests.
skip() {
	if [[ ${OOMKIT_REQUIRE_KERNEL:-} == 1 ]]; then
		say "FAIL (OOMKIT_REQUIRE_KERNEL=1): $*"
		exit 1
	fi
	say "SKIP: $*"
	exit 77
}

usage() {
	sed -n '/^#   vm.sh/,/^#   --log/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 1
}

# Single-quotes a word for the guest's /bin/sh.
shquote() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

is_static() {
	# A dynamically linked ELF has a PT_INTERP program header naming its loader.
	! LC_ALL=C readelf -lW "$1" 2>/dev/null | grep -q 'INTERP'
}

check_program() { # what path
	[[ -f $2 && -x $2 ]] || fail "$1 $2: not an executable file"
	is_static "$2" && return
	! LC_ALL=C ldd "$2" | grep 'not found' >&2 || fail "$1 $2: shared libraries not found"
}

# Copies the shared libraries of a dynamically linked program, so that host
# test binaries (cmocka has no static library in Debian) run in the guest
# unchanged: the loader to the path the program names, the rest to /lib,
# which the init puts in LD_LIBRARY_PATH because the guest has no ld.so.cache.
copy_libs() { # root program
	local interp lib
	interp=$(LC_ALL=C readelf -lW "$2" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	mkdir -p "$1/lib" "$1$(dirname "$interp")"
	cp -L "$interp" "$1$interp"
	for lib in $(LC_ALL=C ldd "$2" | grep -o '=> /[^ ]*' | cut -c4-); do
		cp -L "$lib" "$1/lib/"
	done
}

add_command() { # words...
	local path=$1 base line
	shift
	check_program program "$path"
	base=$(basename "$path")
	for p in "${programs[@]}" "${withs[@]}"; do
		if [[ $(basename "$p") == "$base" && $(realpath "$p") != $(realpath "$path") ]]; then
			fail "two different files named $base"
		fi
	done
	programs+=("$path")
	line=$(shquote "/bin/$base")
	for a in "$@"; do
		line+=" $(shquote "$a")"
	done
	commands+=("$line")
}

parse_args() {
	while (($#)); do
		case $1 in
		--mode) mode=${2:?}; shift 2 ;;
		--mem) mem=${2:?}; shift 2 ;;
		--timeout) timeout_s=${2:?}; shift 2 ;;
		--smp) smp=${2:?}; shift 2 ;;
		--with) withs+=("${2:?}"); shift 2 ;;
		--env) envs+=("${2:?}"); shift 2 ;;
		--append) append=${2?}; shift 2 ;;
		--qexit) qexit=${2:?}; shift 2 ;;
		--log) logfile=${2:?}; shift 2 ;;
		--) break ;;
		*) usage ;;
		esac
	done
	[[ $mode == v1 || $mode == v2 ]] || fail "--mode must be v1 or v2, not '$mode'"
	[[ $timeout_s =~ ^[0-9]+$ ]] || fail "--timeout takes whole seconds"
	(($# >= 2)) || usage
	local words=()
	shift
	for a in "$@" --; do
		if [[ $a == -- ]]; then
			((${#words[@]})) || fail "empty command between two --"
			add_command "${words[@]}"
			words=()
		else
			words+=("$a")
		fi
	done
	for e in "${envs[@]}"; do
		[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || fail "--env takes NAME=VALUE, not '$e'"
	done
}

check_host() {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
	busybox=${OOMKIT_VM_BUSYBOX:-/bin/busybox}
	if [[ ! -x $busybox ]] || ! is_static "$busybox"; then
		skip "no static busybox at $busybox (apt-get install busybox-static)"
	fi
	for t in cpio gzip readelf timeout flock apt-get dpkg-deb; do
		command -v "$t" >/dev/null || skip "$t not found (apt-get install cpio gzip binutils coreutils util-linux)"
	done
	[[ -n $qexit ]] || fail "no qexit helper: pass --qexit PATH or set OOMKIT_VM_QEXIT (meson builds tests/vm/qexit)"
	check_program qexit "$qexit"
	for w in "${withs[@]}"; do
		check_program --with "$w"
	done
}

# Stale package lists name versions the mirror no longer has: on failure, as
# root, refresh them once and try again.
apt_download() { # dir package
	# apt's _apt sandbox user cannot write to a mktemp directory; it is a download, not an install.
	(cd "$1" && apt-get download -q -o APT::Sandbox::User=root "$2") >&2 && return
	[[ $(id -u) == 0 ]] || return 1
	say "apt-get download $2 failed; refreshing the package lists once"
	apt-get update -q >&2 || return 1
	(cd "$1" && apt-get download -q -o APT::Sandbox::User=root "$2") >&2
}

# Downloads the cloud kernel package named by the linux-image-cloud-amd64
# metapackage's dependency (it pins one versioned linux-image-*-cloud-amd64)
# and keeps only its vmlinuz.  Prints the image's path.
fetch_kernel() {
	local cache=${OOMKIT_VM_CACHE:-$here/cache} dl dep pkg
	if [[ -n ${OOMKIT_VM_KERNEL:-} ]]; then
		[[ -r $OOMKIT_VM_KERNEL ]] || skip "OOMKIT_VM_KERNEL=$OOMKIT_VM_KERNEL is not readable"
		echo "$OOMKIT_VM_KERNEL"
		return
	fi
	mkdir -p "$cache" || skip "cannot create the kernel cache $cache"
	exec {lock}>"$cache/.lock"
	flock "$lock"
	if [[ ! -r $cache/vmlinuz ]]; then
		rm -rf "$cache"/download.* # left by an interrupted fetch
		dl=$(mktemp -d "$cache/download.XXXXXX")
		say "fetching the guest kernel into $cache (once)"
		apt_download "$dl" linux-image-cloud-amd64 ||
			skip "apt-get download linux-image-cloud-amd64 failed (no network, or run apt-get update)"
		dep=$(dpkg-deb -f "$dl"/linux-image-cloud-amd64_*.deb Depends)
		pkg=$(grep -o 'linux-image-[^ ,]*-cloud-amd64' <<<"$dep" | head -n 1)
		[[ -n $pkg ]] || skip "linux-image-cloud-amd64 depends on no kernel image ($dep)"
		# Pin the exact version the metapackage names, if it names one.
		if [[ $dep =~ $pkg\ \(=\ ([^\)]*)\) ]]; then
			pkg+="=${BASH_REMATCH[1]}"
		fi
		apt_download "$dl" "$pkg" || skip "apt-get download $pkg failed"
		dpkg-deb -x "$dl/${pkg%%=*}"_*.deb "$dl/root" || skip "dpkg-deb cannot unpack ${pkg%%=*}"
		local img
		img=$(find "$dl/root/boot" -name 'vmlinuz-*' | head -n 1)
		[[ -n $img ]] || skip "${pkg%%=*} has no /boot/vmlinuz-*"
		cp "$img" "$cache/" && ln -sfn "$(basename "$img")" "$cache/vmlinuz"
		rm -rf "$dl"
	fi
	flock -u "$lock"
	echo "$cache/vmlinuz"
}

# The modules the systemd guest loads: zram (the cloud kernel builds it as a
# module) with its allocator and its default compressor.
guest_modules=(drivers/block/zram/zram.ko mm/zsmalloc.ko crypto/lzo-rle.ko)

# Fetches the package of the kernel fetch_kernel keeps (its version is in
# the image's name) once more and keeps guest_modules of it.  Prints the
# directory.
fetch_modules() {
	local cache=${OOMKIT_VM_CACHE:-$here/cache} kernel ver dl m out
	kernel=$(fetch_kernel)
	ver=$(basename "$(realpath "$kernel")")
	ver=${ver#vmlinuz-}
	out=$cache/modules-$ver
	exec {lock}>"$cache/.lock"
	flock "$lock"
	if [[ ! -d $out ]]; then
		rm -rf "$cache"/download.*
		dl=$(mktemp -d "$cache/download.XXXXXX")
		say "fetching the guest kernel's modules into $out (once)"
		apt_download "$dl" "linux-image-$ver" || skip "apt-get download linux-image-$ver failed"
		dpkg-deb -x "$dl/linux-image-${ver}"_*.deb "$dl/root" || skip "dpkg-deb cannot unpack linux-image-$ver"
		for m in "${guest_modules[@]}"; do
			[[ -r $dl/root/lib/modules/$ver/kernel/$m ]] || skip "linux-image-$ver has no $m"
			install -D -m 644 "$dl/root/lib/modules/$ver/kernel/$m" "$dl/out/lib/modules/$ver/kernel/$m"
		done
		mv "$dl/out" "$out"
		rm -rf "$dl"
	fi
	flock -u "$lock"
	echo "$out"
}

# One newc cpio entry without data (a device node or the trailer).
newc_entry() { # name mode rdev_major rdev_minor
	local name=$1 namesize=$((${#1} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		0 "$2" 0 0 1 0 0 0 0 "$3" "$4" "$namesize" 0
	printf '%s\0' "$name"
	head -c $(((4 - (110 + namesize) % 4) % 4)) /dev/zero
}

# The kernel opens /dev/console for init's stdio before anything can mount
# devtmpfs, so the initramfs must hold that node.  mknod would need root; a
# second archive written here does not (the kernel unpacks concatenated
# archives in order).
console_archive() {
	newc_entry dev/console $((0020600)) 5 1
	newc_entry 'TRAILER!!!' 0 0 0
}

write_init() {
	local init=$1 e c
	{
		cat <<-EOF
		#!/bin/sh
		# Generated by tests/vm/vm.sh: sets the guest up, runs the programs, and
		# reports through isa-debug-exit (0 pass, 1 fail, 77 skip).
		export PATH=/bin LD_LIBRARY_PATH=/lib OOMKIT_REQUIRE_KERNEL=1 OOMKIT_VM=1 OOMKIT_VM_MODE=$mode
		EOF
		for e in "${envs[@]}"; do
			printf 'export %s=%s\n' "${e%%=*}" "$(shquote "${e#*=}")"
		done
		cat <<-'EOF'
		mode=$OOMKIT_VM_MODE
		say() { echo "oomkit-vm: $*"; }
		uptime_s() { read -r up idle < /proc/uptime; echo "$up"; }
		finish() {
			say "RESULT $1"
			qexit "$2"
			say "qexit did not end qemu; powering off"
			poweroff -f
		}
		kernel_log() {
			say "kernel log since init:"
			# From init on; all of it if OOM reports pushed that line out of the buffer.
			dmesg | awk '{ l[NR] = $0 } /Run \/init as init process/ { s = NR }
				END { for (i = s + 1; i <= NR; i++) print l[i] }' | tail -n 80
		}
		broken() {
			say "guest setup failed: $*"
			kernel_log
			finish fail 1
		}

		mount -t proc proc /proc || broken "mount proc"
		mount -t sysfs sysfs /sys || broken "mount sysfs"
		mount -t devtmpfs devtmpfs /dev || broken "mount devtmpfs"
		mount -t tmpfs tmpfs /tmp || broken "mount tmpfs on /tmp"
		say "init started $(uptime_s) s after kernel start: kernel $(uname -r)," \
			"$(awk '/^MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo), mode $mode"

		if [ "$mode" = v2 ]; then
			mount -t cgroup2 cgroup2 /sys/fs/cgroup || broken "mount cgroup2"
			echo +memory > /sys/fs/cgroup/cgroup.subtree_control || broken "enable +memory"
		else
			cg=/sys/fs/cgroup
			mount -t tmpfs -o mode=0755 cgroup $cg || broken "mount tmpfs on $cg"
			mkdir $cg/memory $cg/freezer $cg/unified
			mount -t cgroup -o memory memory $cg/memory || broken "mount v1 memory"
			mount -t cgroup -o freezer freezer $cg/freezer || broken "mount v1 freezer"
			mount -t cgroup2 cgroup2 $cg/unified || broken "mount cgroup2 at $cg/unified"
		fi
		[ -r /proc/pressure/memory ] || broken "no /proc/pressure/memory (psi=1 not honoured?)"

		passed=0 failed=0 skipped=0
		run() {
			t0=$(uptime_s)
			say "RUN $*"
			"$@" < /dev/null
			rc=$?
			t=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.2f", b - a }')
			case $rc in
			0) passed=$((passed + 1)); verdict=PASS ;;
			77) skipped=$((skipped + 1)); verdict=SKIP ;;
			*) failed=$((failed + 1)); verdict=FAIL ;;
			esac
			say "$verdict $* (exit $rc, $t s)"
		}
		say "tests start $(uptime_s) s after kernel start"
		EOF
		for c in "${commands[@]}"; do
			printf 'run %s\n' "$c"
		done
		cat <<-'EOF'
		if [ $failed -gt 0 ]; then
			kernel_log
			finish "fail ($passed passed, $failed failed, $skipped skipped)" 1
		elif [ $passed -eq 0 ]; then
			finish "skip ($skipped skipped)" 77
		fi
		finish "pass ($passed passed, $skipped skipped)" 0
		EOF
	} >"$init"
	chmod 755 "$init"
}

build_initramfs() { # out
	local root=$tmp/root a f
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,var/tmp}
	cp "$busybox" "$root/bin/busybox"
	# Relative links: "busybox --install -s" would point them at the host's path.
	for a in $("$busybox" --list); do
		[[ $a == busybox ]] || ln -s busybox "$root/bin/$a"
	done
	for f in "$qexit" "${programs[@]}" "${withs[@]}"; do
		a=$root/bin/$(basename "$f")
		if [[ -L $a ]]; then
			fail "$f: its name is taken by a busybox applet the guest init needs"
		fi
		[[ -e $a ]] && continue # the same program, run twice
		cp "$f" "$a"
		is_static "$f" || copy_libs "$root" "$f"
	done
	write_init "$root/init"
	{
		(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet)
		console_archive
	} | gzip -1 >"$1"
}

# Runs qemu with the serial console on a pipe; each line goes to stderr (and the
# log) stamped with seconds since qemu started.  Sets qemu_rc, result_line,
# init_at (host seconds until init's first line) and the test lines.
boot() { # kernel initramfs
	local cmdline="console=ttyS0 quiet panic=-1 psi=1 log_buf_len=1M $append" line t0 now us
	[[ $mode == v2 ]] && cmdline+=" cgroup_no_v1=all"
	result_line='' init_at='' verdicts=()
	t0=${EPOCHREALTIME/./}
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		# The firmware clears the screen; keep the log readable.
		while [[ $line =~ $'\e'(c|\[[0-9\;?]*[A-Za-z]) ]]; do
			line=${line/"${BASH_REMATCH[0]}"/}
		done
		now=${EPOCHREALTIME/./}
		us=$((now - t0))
		printf -v line '[%3d.%03d] %s' $((us / 1000000)) $((us / 1000 % 1000)) "$line"
		printf '%s\n' "$line" >&2
		[[ -n $logfile ]] && printf '%s\n' "$line" >>"$logfile"
		case $line in
		*'oomkit-vm: init started'*) [[ -n $init_at ]] || init_at=$(printf '%d.%02d' $((us / 1000000)) $((us / 10000 % 100))) ;;
		*'oomkit-vm: RESULT '*) result_line=${line#*RESULT } ;;
		*'oomkit-vm: PASS '* | *'oomkit-vm: FAIL '* | *'oomkit-vm: SKIP '*) verdicts+=("${line#*oomkit-vm: }") ;;
		esac
	done < <(
		timeout -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -M pc -cpu qemu64 -smp "$smp" -m "$mem" \
			-nographic -nodefaults -no-reboot -serial stdio \
			-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
			-kernel "$1" -initrd "$2" -append "$cmdline" </dev/null 2>&1
	)
	qemu_rc=0
	wait $! || qemu_rc=$?
	now=${EPOCHREALTIME/./}
	us=$((now - t0))
	total=$(printf '%d.%02d' $((us / 1000000)) $((us / 10000 % 100)))
}

# qemu exits with (code << 1) | 1 when the guest writes code to isa-debug-exit.
verdict() {
	local v
	for v in "${verdicts[@]}"; do
		echo "$prog:   $v"
	done
	echo "$prog: mode $mode, $mem: init after ${init_at:-?} s, total ${total} s (qemu start to exit)"
	case $qemu_rc in
	1 | 3 | 155)
		# qemu also exits 1 when it cannot start, so believe only a reported result.
		[[ -n $result_line ]] || fail "qemu exited $qemu_rc before the guest reported a result"
		case $qemu_rc in
		1) echo "$prog: PASS ${result_line#pass }"; exit 0 ;;
		3) fail "$result_line" ;;
		155) skip "every program in the guest skipped" ;;
		esac
		;;
	124 | 137) fail "guest did not finish within $timeout_s s (--timeout)" ;;
	0) fail "guest stopped without reporting (kernel panic or init died; see the console above)" ;;
	*) fail "qemu exited $qemu_rc (see the console above)" ;;
	esac
}

main() {
	if [[ ${1:-} == --fetch-kernel ]]; then
		fetch_kernel
		return
	fi
	if [[ ${1:-} == --fetch-modules ]]; then
		fetch_modules
		return
	fi
	parse_args "$@"
	check_host
	local kernel
	kernel=$(fetch_kernel)
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/oomkit-vm.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	build_initramfs "$tmp/initramfs.gz"
	[[ -z $logfile ]] || : >"$logfile"
	say "booting $(basename "$(realpath "$kernel")"), mode $mode, $mem, ${#programs[@]} program(s)"
	boot "$kernel" "$tmp/initramfs.gz"
	verdict
}

main "$@"
