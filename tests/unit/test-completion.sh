#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# oomkit's bash completion, sourced in bash: what COMPREPLY holds for a
# command line.  Verbs and options need no daemon; the jobs and report IDs
# come from the daemon's answers, here those of a stand-in oomkit that
# prints what oomkit --json status and oomkit reports print (and hostile
# names, which must not be offered).
#   test-completion.sh SOURCE_ROOT OOMKIT
set -u
src=$1 oomkit=$2
status=0
tmp=$(mktemp -d /tmp/oomkit-completion.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
export OOMKIT_SOCKET=$tmp/no-daemon.sock

# shellcheck source=/dev/null
source "$src/cli/completion/oomkit.bash" || { echo "FAIL: the completion does not source"; exit 1; }
complete -p oomkit > /dev/null || { echo "FAIL: no completion registered for oomkit"; exit 1; }

# expect WANT WORDS...: completes the last word of WORDS.
expect()
{
	local want=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_oomkit
	local got
	got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ')
	got=${got% }
	if [ "$got" = "$want" ]; then
		echo "ok: '${*:2}' -> '$got'"
	else
		echo "FAIL: '${*:2}': wanted '$want', got '$got'"
		status=1
	fi
}

# The real program, with no daemon: verbs and options only.
expect "status" "$oomkit" st
expect "reports run" "$oomkit" r
expect "explain help prompt ps reports run status top" "$oomkit" ""
expect "--help --json --socket --version" "$oomkit" --
expect "--json" "$oomkit" status --j
expect "--interval --iterations" "$oomkit" top --i
expect "--once" "$oomkit" prompt --o
expect "explain" "$oomkit" help e
expect "" "$oomkit" help status ""
expect "show" "$oomkit" reports ""
expect "status" "$oomkit" --socket /x st
expect "" "$oomkit" ps ""
expect "" "$oomkit" reports show ""
# The verbs are the ones oomkit's own list names.
listed=$("$oomkit" help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | LC_ALL=C sort | tr '\n' ' ')
expect "${listed% }" "$oomkit" ""

# A stand-in that answers as the daemon would, and says which socket it was asked on.
cat > "$tmp/oomkit" <<'STUB'
#!/bin/sh
[ "$1" = --socket ] && { echo "$2" > "${0%/*}/socket-used"; shift 2; }
case "$*" in
"--json status") printf '%s\n' '{"machine":{"cgroup":"/m","last_action":"\"name\":\"fake\""},"jobs":[{"name":"web","instance":null},{"name":"db","instance":null},{"name":"batch","instance":"b-1.service"},{"name":"batch","instance":"b-2.service"},{"name":"x;rm -rf ~","instance":null},{"name":"$(touch pwned)","instance":null},{"name":"`touch pwned`","instance":null}]}' ;;
reports) printf '%s\n' '    ID TIME           SCOPE      ACTION    VICTIM REASON' \
	'    12 12-05 10:00:01 web        kill       4242 largest' '    13 12-05 10:00:02 batch      kill       4243 x' \
	'                      [b-1.service]' ;;
*) exit 3 ;;
esac
STUB
chmod +x "$tmp/oomkit"
cd "$tmp" || exit 1
expect "batch db web" "$tmp/oomkit" ps ""
expect "db" "$tmp/oomkit" explain d
expect "batch db web" "$tmp/oomkit" run --job ""
if [ -e "$tmp/pwned" ]; then
	echo "FAIL: a job name from the daemon was run as a command"
	status=1
fi
expect "12 13" "$tmp/oomkit" reports show ""
expect "13" "$tmp/oomkit" reports show 13
expect "web" "$tmp/oomkit" --socket "$tmp/other.sock" ps w
if [ "$(cat "$tmp/socket-used" 2>/dev/null)" = "$tmp/other.sock" ]; then
	echo "ok: the daemon is asked on the socket the command line names"
else
	echo "FAIL: the daemon was not asked on --socket's path"
	status=1
fi
# After "--" in run, the command to run: a program on $PATH.
PATH=$tmp:$PATH expect "oomkit" "$tmp/oomkit" run --job web -- oomki
exit $status
