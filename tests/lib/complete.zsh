# Drive zsh's completion of one command line, as a person pressing TAB would, and print the
# matches it offers, one a line (tests/completion.sh):
#   zsh -f tests/lib/complete.zsh FPATH_DIR 'evtop list '
# An interactive `zsh -f` runs in a pseudo-terminal (zsh/zpty, as zsh's own completion tests
# do) with compinit and FPATH_DIR in $fpath; compadd is wrapped to print every match it is
# given that fits the word being completed, between two marker lines, and TAB is sent after
# the line. Exits 2 when the shell does not answer as expected.
zmodload zsh/zpty || exit 2
dir=$1
line=$2
# The interactive shell's own files go to a throwaway ZDOTDIR.
export ZDOTDIR=$(mktemp -d "${TMPDIR:-/tmp}/evtop-zsh.XXXXXX") || exit 2
trap 'zpty -d c 2>/dev/null; rm -rf $ZDOTDIR' EXIT
cat >$ZDOTDIR/init.zsh <<EOF
PS1= PS2= RPS1=
unsetopt zle_bracketed_paste 2>/dev/null
fpath=(${(q)dir} \$fpath)
autoload -U compinit && compinit -u -d $ZDOTDIR/zcompdump
bindkey '^I' complete-word
bindkey '^M' undefined-key
bindkey '^J' undefined-key
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
evtop_mark() { print -r -- '<<mark>>' }
compprefuncs=(evtop_mark)
comppostfuncs=(evtop_mark exit)
compadd() {
  # a caller collecting matches for itself (-O, -A, -D) is not offering them
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then
    builtin compadd "\$@"
    return
  fi
  local -a evtop_hits
  local -A evtop_p
  builtin compadd -A evtop_hits "\$@"
  zparseopts -E -A evtop_p P: p: S: s:
  local h
  for h in \$evtop_hits; do
    print -r -- "<<hit>>\$IPREFIX\${evtop_p[-P]}\${evtop_p[-p]}\$h"
  done
  builtin compadd "\$@"
}
print -r -- '<<ready>>'
EOF
zpty c "zsh -f -i"
zpty -w c "source ${(q)ZDOTDIR}/init.zsh"
# Blocking reads, a line at a time: the caller's timeout bounds them.
ready=0
while zpty -r c out; do
  [[ $out == '<<ready>>'* ]] && { ready=1; break }
done
(( ready )) || exit 2
zpty -n -w c "$line"$'\t'
marks=0
typeset -a hits
while (( marks < 2 )) && zpty -r c out; do
  out=${out//$'\r'/}
  out=${out%$'\n'}
  [[ -n ${EVTOP_ZSH_DEBUG-} ]] && print -r -- "raw: ${(q+)out}" >&2
  [[ $out == *'<<mark>>'* ]] && (( marks++ ))
  [[ $out == *'<<hit>>'* ]] && hits+=("${out#*<<hit>>}")
done
(( marks == 2 )) || exit 2
print -rl -- ${(u)hits}
