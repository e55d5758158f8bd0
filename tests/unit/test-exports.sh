#!/bin/sh
# liboomkit.so exports exactly the public API: every function the header
# declares, and nothing that is not oomkit_*.
#   test-exports.sh LIBOOMKIT_SO HEADER
set -eu
lib=$1 header=$2
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sort)
# Functions defined static inline in the header live in the caller, not in the library.
inline=$(grep -o 'static inline [^(]*\boomkit_[a-z0-9_]*(' "$header" | grep -o 'oomkit_[a-z0-9_]*($' | tr -d '(' | sort -u)
declared=$(grep -o '\boomkit_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u | grep -vxF "$inline")
stray=$(printf '%s\n' "$exported" | grep -v '^oomkit_' || true)
missing=$(printf '%s\n' "$declared" | while read -r f; do printf '%s\n' "$exported" | grep -qx "$f" || echo "$f"; done)
extra=$(printf '%s\n' "$exported" | grep '^oomkit_' | while read -r f; do printf '%s\n' "$declared" | grep -qx "$f" || echo "$f"; done)
status=0
inlined_exported=$(printf '%s\n' "$inline" | while read -r f; do printf '%s\n' "$exported" | grep -qx "$f" && echo "$f"; done || true)
[ -z "$inlined_exported" ] || { echo "FAIL: static inline in the header but exported too: $inlined_exported"; status=1; }
[ -z "$stray" ] || { echo "FAIL: exported but not oomkit_*: $stray"; status=1; }
[ -z "$missing" ] || { echo "FAIL: declared in the header but not exported: $missing"; status=1; }
[ -z "$extra" ] || { echo "FAIL: exported but not declared in the header: $extra"; status=1; }
[ $status = 0 ] && echo "ok: $(printf '%s\n' "$exported" | wc -l) symbols exported, all declared in oomkit.h"
exit $status
