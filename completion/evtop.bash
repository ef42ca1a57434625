# bash completion for evtop                                   -*- shell-script -*-
# Installed as `evtop` in bash-completion's completions directory (doc/cli.md, "Shell
# completion"). The words are asked of evtop itself at completion time (evtop
# --completion-words, evtop --list-sources), so they are those of the evtop on PATH.

_evtop_words()
{
	command evtop --completion-words "$@" 2>/dev/null
}

# The sources of the config file the command line names (--config), else the default one.
_evtop_sources()
{
	local i config=
	for ((i = 1; i < ${#words[@]}; i++)); do
		case ${words[i]} in
		--config=*) config=${words[i]#--config=} ;;
		--config)
			if [[ ${words[i + 1]-} == = ]]; then
				config=${words[i + 2]-}
			else
				config=${words[i + 1]-}
			fi
			;;
		esac
	done
	[[ $config == "~/"* ]] && config=$HOME/${config#"~/"}
	if [[ -n $config ]]; then
		command evtop --list-sources --config "$config" 2>/dev/null
	else
		command evtop --list-sources 2>/dev/null
	fi
}

# Is word $1 in the newline-separated list $2?
_evtop_in()
{
	[[ $'\n'$2$'\n' == *$'\n'"$1"$'\n'* ]]
}

_evtop()
{
	local cur prev words cword split=false
	if declare -F _init_completion >/dev/null; then
		_init_completion -s || return
	else
		# Without bash-completion: the words as bash split them, --opt=value by hand.
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]-}
		if [[ $cur == = ]]; then
			cur=
		elif [[ $prev == = ]]; then
			prev=${COMP_WORDS[COMP_CWORD - 2]-}
		elif [[ $cur == --*=* ]]; then
			prev=${cur%%=*}
			cur=${cur#*=}
		fi
		[[ $prev == --*=* ]] && prev=
	fi

	# The command: the first word that is neither an option nor an option's value, as evtop
	# finds it (with the shared options; a command's own come after it).
	local values command= at=0 i w
	values=$(_evtop_words value-options)
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		case $w in
		--) break ;;
		--*=* | =) ;;
		-*)
			_evtop_in "$w" "$values" && [[ ${words[i + 1]-} != = ]] && ((i++))
			;;
		*)
			if [[ ${words[i - 1]-} != = ]]; then
				command=$w at=$i
				break
			fi
			;;
		esac
	done

	[[ -n $command ]] && values=$(_evtop_words value-options "$command")

	# An option's value.
	if [[ $prev == -* ]] && _evtop_in "$prev" "$values"; then
		local list=
		case $prev in
		--table) list=$(_evtop_words tables) ;;
		--format) list=$(_evtop_words formats) ;;
		--by) list=$(_evtop_words dimensions) ;;
		--list) list=$(_evtop_words kinds "$command") ;;
		--source)
			# NAME[,NAME...]: complete the last name
			local done= left= s
			[[ $cur == *,* ]] && done=${cur%,*},
			for s in $(_evtop_sources); do
				[[ ,$done == *,"$s",* ]] || left+="$s "
			done
			COMPREPLY=($(compgen -P "$done" -W "$left" -- "${cur##*,}"))
			return
			;;
		--warning | --critical)
			# an expression: complete the figure name being typed
			local head=${cur%"${cur##*[!A-Za-z0-9_]}"}
			COMPREPLY=($(compgen -P "$head" -W "$(_evtop_words figures)" -- "${cur#"$head"}"))
			return
			;;
		*)
			if _evtop_in "$prev" "$(_evtop_words file-options)"; then
				if declare -F _filedir >/dev/null; then
					_filedir
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
			fi
			return
			;;
		esac
		COMPREPLY=($(compgen -W "$list" -- "$cur"))
		return
	fi

	if [[ $cur == -* ]]; then
		# --opt= for an option that needs a value, as bash-completion does
		local opts= o
		for o in $(_evtop_words options "$command"); do
			_evtop_in "$o" "$values" && o+==
			opts+="$o "
		done
		((cword == 1)) && opts+=$(_evtop_words first-options)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi

	if [[ -z $command ]]; then
		COMPREPLY=($(compgen -W "$(_evtop_words commands)" -- "$cur"))
		return
	fi
	# evtop list KIND: the kind is the one argument after the command
	if [[ $command == list ]]; then
		local nargs=0
		for ((i = at + 1; i < cword; i++)); do
			w=${words[i]}
			case $w in
			--*=* | =) ;;
			-*) _evtop_in "$w" "$values" && [[ ${words[i + 1]-} != = ]] && ((i++)) ;;
			*) [[ ${words[i - 1]-} != = ]] && ((nargs++)) ;;
			esac
		done
		((nargs == 0)) && COMPREPLY=($(compgen -W "$(_evtop_words kinds)" -- "$cur"))
	fi
}
complete -F _evtop evtop
