#!/bin/sh
# test-format.sh outside a git checkout, as in the package build's clean copy
# of the tree: it finds the same C files as git lists (none of the build
# directories' generated ones), fails on a file that is not formatted, and
# fails when it finds no C file at all.
#   test-format-copy.sh SOURCE_DIR
set -eu
src=$1
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src" && pwd -P)" ] ||
	{ echo "SKIP: $src is not a git checkout to copy from"; exit 77; }
tmp=$(mktemp -d /tmp/oomkit-format.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
test=$src/tests/unit/test-format.sh

n=$(git -C "$src" ls-files '*.c' '*.h' | wc -l)
mkdir "$tmp/tree" "$tmp/empty"
(cd "$src" && git ls-files -z | xargs -0 tar -cf - --no-recursion) | tar -C "$tmp/tree" -xf -
# What a package build leaves beside the sources: debhelper's meson build,
# another build directory, debian/tmp; each holds an unformatted file.
for d in obj-x86_64-linux-gnu/meson-private mybuild/meson-private debian/tmp/usr/include; do
	mkdir -p "$tmp/tree/$d"
	printf 'int  unformatted ;\n' >"$tmp/tree/$d/../generated.h"
done

out=$(sh "$test" "$tmp/tree" 2>&1) || fail "the copy as it is: $out"
[ "$out" = "ok: $n files formatted (listed by find (no git checkout here))" ] ||
	fail "expected the $n files git lists, found: $out"
printf 'int  unformatted ;\n' >>"$tmp/tree/lib/proc.c"
if out=$(sh "$test" "$tmp/tree" 2>&1); then
	fail "an unformatted lib/proc.c passed: $out"
else
	[ "$out" = "not formatted: lib/proc.c (run clang-format -i lib/proc.c)" ] || fail "unformatted lib/proc.c: $out"
fi
if out=$(sh "$test" "$tmp/empty" 2>&1); then
	fail "no C file at all passed: $out"
else
	case $out in "FAIL: no C file found in "*) ;; *) fail "no C file at all: $out" ;; esac
fi
[ $status = 0 ] && echo "ok: outside git, the same $n files, an unformatted one fails, none at all fails"
exit $status
