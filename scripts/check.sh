#!/bin/sh
# Runs every test tier and prints one closing line "check: N passed, N failed, N skipped".
#   check.sh BUILD ASAN_BUILD FUZZ_BUILD
# Tier 1: everything in BUILD (unit, integration on real memcgs, examples, the qemu guest tier).
# Tier 2: unit and integration tests again under ASan + UBSan.
# Tier 3: each fuzz target for a bounded time, while tier 2 runs.
# The systemd guests (suite systemd) run beside tiers 1 and 2, see below.
set -u
build=$1 asan=$2 fuzz=$3
status=0
export OOMKIT_REQUIRE_KERNEL="${OOMKIT_REQUIRE_KERNEL:-0}"

# The systemd guests (boots of Debian under qemu: the systemd checks, swap
# and zram, and integration-v2, the integration tests on cgroup v2; about
# half of tier 1's time) run in a meson of their own beside the rest: the integration tests
# run one at a time and mostly wait on the kernel, and they hold with two
# busy CPUs beside them, which is what qemu is.  Its own log base,
# so the two do not write one testlog; everything is built already (make check).
sd_pid=
if [ -n "$(meson test -C "$build" --no-rebuild --list --suite systemd 2>/dev/null)" ]; then
	meson test -C "$build" --no-rebuild --print-errorlogs --suite systemd --logbase systemd \
		>/tmp/oomkit-check-$$.systemd.log 2>&1 &
	sd_pid=$!
fi

meson test -C "$build" --print-errorlogs --num-processes 2 --no-suite systemd || status=1
cp "$build/meson-logs/testlog.json" /tmp/oomkit-check-$$.plain.json 2>/dev/null

# Tier 3 runs beside tier 2: the sanitizer tier's tests run one at a time and
# mostly wait on the kernel, a fuzz target keeps one core busy, and on two
# cores the one fills what the other leaves.  Each target still has its own
# SECONDS; what the fuzzers print is shown once tier 2 is done.
fuzz_pid=
if [ -d "$fuzz/tests/fuzz" ]; then
	sh tests/fuzz/run.sh "$fuzz/tests/fuzz" "${OOMKIT_FUZZ_SECONDS:-10}" >/tmp/oomkit-check-$$.fuzz.log 2>&1 &
	fuzz_pid=$!
fi

ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C "$asan" --print-errorlogs --num-processes 2 --suite unit --suite integration || status=1
cp "$asan/meson-logs/testlog.json" /tmp/oomkit-check-$$.asan.json 2>/dev/null

fuzz_pass=0 fuzz_fail=0
if [ -n "$fuzz_pid" ]; then
	if wait "$fuzz_pid"; then fuzz_pass=1; else fuzz_fail=1; status=1; fi
	cat /tmp/oomkit-check-$$.fuzz.log
fi

logs="/tmp/oomkit-check-$$.plain.json /tmp/oomkit-check-$$.asan.json"
if [ -n "$sd_pid" ]; then
	wait "$sd_pid" || status=1
	cat /tmp/oomkit-check-$$.systemd.log
	cp "$build/meson-logs/systemd.json" /tmp/oomkit-check-$$.systemd.json 2>/dev/null
	logs="$logs /tmp/oomkit-check-$$.systemd.json"
fi

# The closing lines: what failed, by tier and name (a log's tail shows them
# whatever scrolled by), then the counts.
python3 - "$fuzz_pass" "$fuzz_fail" $logs <<'PY'
import json, sys
passed = failed = skipped = 0
names = []
for path in sys.argv[3:]:
    tier = "asan" if ".asan." in path else "systemd" if ".systemd." in path else "build"
    try:
        lines = open(path).read().splitlines()
    except OSError:
        failed += 1
        names.append(f"{tier}: no test log")
        continue
    for line in lines:
        t = json.loads(line)
        r = t.get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
            names.append(f"{tier}: {t.get('name', '?')} ({r})")
passed += int(sys.argv[1]); failed += int(sys.argv[2])
if int(sys.argv[2]):
    names.append("fuzz: a target failed (see above)")
for n in names:
    print(f"check: FAILED {n}")
print(f"check: {passed} passed, {failed} failed, {skipped} skipped")
PY
rm -f /tmp/oomkit-check-$$.*.json /tmp/oomkit-check-$$.systemd.log
exit $status
