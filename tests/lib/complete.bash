# Complete one command line with completion/evtop.bash, as bash does at a TAB at its end, and
# print COMPREPLY one a line (tests/completion.sh):
#   bash --norc --noprofile tests/lib/complete.bash BASH_COMPLETION SCRIPT 'evtop list '
# BASH_COMPLETION is bash-completion's own bash_completion, sourced first as an interactive
# shell does ("none": without it, for the script's fallback); SCRIPT is completion/evtop.bash.
# With only two arguments, prints `complete -p evtop`.
bash_completion=$1
script=$2
if [[ $bash_completion != none ]]; then
	# bash_completion sets nothing up in a shell that is not interactive unless asked to
	BASH_COMPLETION_VERSINFO=${BASH_COMPLETION_VERSINFO-}
	. "$bash_completion" || exit 2
	declare -F _init_completion >/dev/null || exit 2
fi
. "$script" || exit 2
if [[ $# -eq 2 ]]; then
	complete -p evtop
	exit
fi
COMP_LINE=$3
COMP_POINT=${#COMP_LINE}
# The words as readline splits them: at blanks, and around the characters of
# COMP_WORDBREAKS that the lines of the test use (=).
COMP_WORDS=()
read -ra blank_words <<<"$COMP_LINE"
for w in "${blank_words[@]}"; do
	while [[ $w == *=* ]]; do
		[[ -n ${w%%=*} ]] && COMP_WORDS+=("${w%%=*}")
		COMP_WORDS+=("=")
		w=${w#*=}
	done
	[[ -n $w ]] && COMP_WORDS+=("$w")
done
[[ $COMP_LINE == *[[:blank:]] || ${COMP_WORDS[-1]} == = ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
_evtop evtop "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
