# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for oomkit(1): its commands and options; the jobs and the
# report IDs are asked of the daemon (oomkit --json status, oomkit reports),
# through the socket the command line names, and left out when it does not
# answer.  Installed as .../bash-completion/completions/oomkit.

# The words the daemon names that may be offered: job names are
# configuration names; anything else is dropped rather than put on a
# command line, or expanded by compgen -W, which would run a "$(...)".
_oomkit_safe_words()
{
	grep -E '^[A-Za-z0-9._@:+-]+$'
}

# _oomkit_jobs PROG [--socket PATH]: the daemon's jobs, or nothing.
_oomkit_jobs()
{
	"$@" --json status 2>/dev/null | grep -o '"name":"[^"\\]*"' | sed 's/^"name":"//; s/"$//' |
		_oomkit_safe_words | sort -u
}

# _oomkit_reports PROG [--socket PATH]: the IDs of the reports, or nothing.
_oomkit_reports()
{
	"$@" reports 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }'
}

# _oomkit_reply COMPGEN-ARGS...: COMPREPLY, one candidate a line (a file
# name with blanks or '*' stays one candidate, unexpanded).
_oomkit_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

_oomkit()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	local verbs="status ps run reports top prompt explain help"
	local prog=${COMP_WORDS[0]} verb='' socket=() args=() i w dashdash=''

	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	# The verb, the socket and the arguments before the word completed.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ -n "$dashdash" ]; then
			args+=("$w")
			continue
		fi
		case $w in
		--socket | --job | --iterations | --interval)
			[ "$w" = --socket ] && socket=(--socket "${COMP_WORDS[i + 1]}")
			((i++)) ;;
		--) dashdash=1 ;;
		-*) ;;
		*) if [ -z "$verb" ]; then verb=$w; else args+=("$w"); fi ;;
		esac
	done
	COMPREPLY=()
	case $prev in
	--socket)
		compopt -o filenames 2>/dev/null
		_oomkit_reply -f -- "$cur"
		return ;;
	--job)
		_oomkit_reply -W "$(_oomkit_jobs "$prog" "${socket[@]}")" -- "$cur"
		return ;;
	--iterations | --interval)
		return ;;
	esac
	# After "--" in run: the command to run.
	if [ -n "$dashdash" ]; then
		if [ "$prev" = -- ]; then
			_oomkit_reply -c -- "$cur"
		else
			compopt -o filenames 2>/dev/null
			_oomkit_reply -f -- "$cur"
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		local opts="--socket --help"
		case $verb in
		"") opts+=" --json --version" ;;
		status | ps | explain) opts+=" --json" ;;
		reports) opts+=" --json" ;;
		run) opts+=" --job --" ;;
		top) opts+=" --iterations --interval" ;;
		prompt) opts+=" --once" ;;
		esac
		_oomkit_reply -W "$opts" -- "$cur"
		return
	fi
	case $verb in
	"") _oomkit_reply -W "$verbs" -- "$cur" ;;
	help) [ ${#args[@]} -eq 0 ] && _oomkit_reply -W "$verbs" -- "$cur" ;;
	ps | explain)
		[ ${#args[@]} -eq 0 ] && _oomkit_reply -W "$(_oomkit_jobs "$prog" "${socket[@]}")" -- "$cur" ;;
	reports)
		if [ ${#args[@]} -eq 0 ]; then
			_oomkit_reply -W "show" -- "$cur"
		elif [ ${#args[@]} -eq 1 ] && [ "${args[0]}" = show ]; then
			_oomkit_reply -W "$(_oomkit_reports "$prog" "${socket[@]}")" -- "$cur"
		fi ;;
	esac
}
complete -F _oomkit oomkit
