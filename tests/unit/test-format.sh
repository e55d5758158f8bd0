#!/bin/sh
# Every C source follows the checked-in .clang-format.
#   test-format.sh SOURCE_DIR
set -eu
cd "$1"
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
bad=0
for f in $files; do
	clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "not formatted: $f (run clang-format -i $f)"; bad=1; }
done
[ $bad = 0 ] && echo "ok: $(echo "$files" | wc -l) files formatted"
exit $bad
