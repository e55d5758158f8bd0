#!/bin/sh
# Every C source follows the checked-in .clang-format.
#   test-format.sh SOURCE_DIR
# One clang-format for all the files: one process per file took 25 s on a
# loaded machine, near meson's 30 s timeout.
set -eu
cd "$1"
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
# shellcheck disable=SC2086 # one word per file
if out=$(clang-format --dry-run --Werror $files 2>&1); then
	echo "ok: $(echo "$files" | wc -l) files formatted"
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
