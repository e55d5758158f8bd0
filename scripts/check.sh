#!/bin/sh
# Runs every test tier and prints one closing line "check: N passed, N failed, N skipped".
#   check.sh BUILD ASAN_BUILD FUZZ_BUILD
# Tier 1: everything in BUILD (unit, integration on real memcgs, examples, the qemu guest tier).
# Tier 2: unit and integration tests again under ASan + UBSan.
# Tier 3: each fuzz target for a bounded time, while tier 2 runs.
set -u
build=$1 asan=$2 fuzz=$3
status=0
export OOMKIT_REQUIRE_KERNEL="${OOMKIT_REQUIRE_KERNEL:-0}"

meson test -C "$build" --print-errorlogs --num-processes 2 || status=1
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

python3 - /tmp/oomkit-check-$$.plain.json /tmp/oomkit-check-$$.asan.json "$fuzz_pass" "$fuzz_fail" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:3]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
passed += int(sys.argv[3]); failed += int(sys.argv[4])
print(f"check: {passed} passed, {failed} failed, {skipped} skipped")
PY
rm -f /tmp/oomkit-check-$$.*.json
exit $status
