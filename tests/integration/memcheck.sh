#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# memcheck.sh VALGRIND PROBE [--pidfd] PROGRAM [ARGS...]
#
# Runs PROGRAM under valgrind memcheck and fails on any invalid access, use
# of uninitialised memory or definite leak.  With --pidfd, PROGRAM needs the
# pidfd system calls (liboomkit's guardian and its kills do): if this
# valgrind does not know them (PROBE, run under it, says so), the run is
# skipped with the reason, since every such call would fail with ENOSYS.
set -eu

valgrind=$1
probe=$2
shift 2
if [ "${1:-}" = --pidfd ]; then
	shift
	if ! "$valgrind" -q --tool=none "$probe"; then
		echo "SKIP: $("$valgrind" --version) does not know pidfd_open(2), which $(basename "$1") needs" >&2
		exit 77
	fi
fi
exec "$valgrind" --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --trace-children=no "$@"
