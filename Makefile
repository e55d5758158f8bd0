# oomkit: `make demo` runs the demo on the real kernel, `make check` every test,
# `make bench` the benchmarks.  Each first installs any missing Debian package
# it needs: `make demo` only the build's, the others the tests' too.
PREFIX ?= /usr/local
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
DEB_BUILD ?= build-deb
# What building oomkit and running the demo need, as Debian packages
# (cmocka: the demo's hog is one of the test helpers).
BUILD_DEPS := meson ninja-build pkg-config gcc libcmocka-dev libinih-dev libcap-ng-dev libseccomp-dev libsystemd-dev
# Besides, everything the tests (including the qemu guest tiers and the
# fuzzers), the benchmarks and the packages need.
TEST_DEPS := musl-tools clang clang-format libclang-rt-14-dev \
	python3 qemu-system-x86 busybox-static cpio gzip mmdebstrap e2fsprogs gnuplot-nox earlyoom valgrind \
	debhelper dpkg-dev lintian man-db git python3-yaml python3-prometheus-client nodejs \
	libglib2.0-dev xvfb dbus-daemon dbus-bin dunst imagemagick fonts-dejavu-core redis-server redis-tools \
	libgtk-4-dev openbox xdotool x11-utils xfce4-notifyd
DEB_DEPS := $(BUILD_DEPS) $(TEST_DEPS)
# What the demo runs: the daemon, its hook runner, guardian and systemd
# helper (where libsystemd is found), the command line, the hog.
DEMO_TARGETS := daemon/oomkitd helpers/oomkit-hook-runner lib/oomkit-guardian cli/oomkit tests/helpers/oomkit-hog

.PHONY: all bootstrap bootstrap-build build asan fuzz-build check demo demo-library bench install clean fuzz soak deb bench-swap

all: build

bootstrap:
	@sh scripts/bootstrap.sh $(DEB_DEPS)

bootstrap-build:
	@sh scripts/bootstrap.sh $(BUILD_DEPS)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --prefix=$(PREFIX)

build: bootstrap $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Db_sanitize=address,undefined -Db_lundef=false -Dbench=false

asan: bootstrap $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=true -Dtests=disabled -Dbench=false

fuzz-build: bootstrap $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)

check: build asan fuzz-build
	sh scripts/check.sh $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD)/tests/fuzz 600

# Only what the demo needs: the build's packages and the demo's programs.
demo: bootstrap-build $(BUILD)/build.ninja
	ninja -C $(BUILD) $(DEMO_TARGETS) $$(ninja -C $(BUILD) -t targets all | sed -n 's|^\(helpers/oomkitd-systemd\):.*|\1|p')
	sh scripts/demo.sh $(BUILD)

demo-library: build
	sh scripts/demo-library.sh $(BUILD)

bench: build
	sh bench/run.sh $(BUILD)

# The swap benchmark (bench/swap.sh): oomkitd, the kernel alone, earlyoom and
# systemd-oomd in emulated guests with a swap file and with zram; it takes
# hours, so `make bench` leaves it out.  SWAP_ARGS="--runs 1 --swap file" to
# shorten it.
bench-swap: build
	bash bench/swap.sh --build $(BUILD) $(SWAP_ARGS)

soak: build
	sh tests/soak.sh $(BUILD)

install: build
	DESTDIR=$(DESTDIR) meson install -C $(BUILD)

# The Debian packages (debian/), built from a clean copy of the tree into
# $(DEB_BUILD), then checked by lintian.
deb: bootstrap
	sh scripts/deb.sh $(DEB_BUILD)
	lintian --fail-on error,warning $(DEB_BUILD)/oomkit_*.changes

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(DEB_BUILD)
