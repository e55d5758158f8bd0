#!/bin/sh
# Every C source follows the checked-in .clang-format.
#   test-format.sh SOURCE_DIR
# One clang-format for all the files: one process per file took 25 s on a
# loaded machine, near meson's 30 s timeout.
# In a git checkout the files are git's (tracked ones); anywhere else (the
# package build's clean copy, an unpacked release) every .c and .h below
# SOURCE_DIR but in a build directory: meson's (any name: it has
# meson-private/), debhelper's (obj-*, debian/) and the guests' caches.  No
# file found is a failure: a check of nothing passes whatever the sources say.
set -eu
cd "$1"
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	how="git ls-files"
	files=$(git ls-files '*.c' '*.h')
else
	how="find (no git checkout here)"
	# shellcheck disable=SC2046 # one word per build directory
	files=$(find . \( -name .git -o -name 'build*' -o -name 'obj-*' -o -path ./debian -o -path ./tests/vm/cache \
		-o -name node_modules $(find . -name meson-private -type d | sed 's|/meson-private$||; s|^|-o -path |') \) \
		-prune -o -type f -name '*.[ch]' -print | sed 's|^\./||' | LC_ALL=C sort)
fi
if [ -z "$files" ]; then
	echo "FAIL: no C file found in $1 by $how"
	exit 1
fi
n=$(echo "$files" | wc -l)
# shellcheck disable=SC2086 # one word per file
if out=$(clang-format --dry-run --Werror $files 2>&1); then
	echo "ok: $n files formatted (listed by $how)"
	exit 0
fi
# Its messages begin "FILE:LINE:COL: error: ..."; anything else is said as is.
bad=$(echo "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [ -z "$bad" ]; then
	echo "$out"
	exit 1
fi
for f in $bad; do
	echo "not formatted: $f (run clang-format -i $f)"
done
exit 1
