#!/bin/sh
# Shell completion: completion/evtop.bash under bash with bash-completion (and without it),
# completion/_evtop under zsh's compinit driven through a pseudo-terminal, both asking the
# built evtop (an `evtop` on PATH) for their words; `evtop --completion-words` and `evtop
# --list-sources` on their own; and the words against what people read — every option of
# every --help is completable and every completable option is in a --help (or documented as
# not shown there, in doc/cli.md), the kinds are evtop list --help's, the figures doc/check.md's.
# No server, no terminal. Without bash-completion or zsh it skips, and fails where every test
# is required (EVTOP_REQUIRE_DB=1 or CI=true).
set -u
evtop=${EVTOP:?}
src=${EVTOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/tests/lib/tap.sh"

bash_completion=/usr/share/bash-completion/bash_completion
missing=""
[ -r "$bash_completion" ] || missing="$missing bash-completion"
command -v bash >/dev/null || missing="$missing bash"
command -v zsh >/dev/null || missing="$missing zsh"
if [ -n "$missing" ]; then
	if [ "${EVTOP_REQUIRE_DB:-}" = 1 ] || [ "${CI:-}" = true ]; then
		echo "completion: missing:$missing (install bash-completion zsh; required here)"
		exit 1
	fi
	echo "completion: missing:$missing: skipping"
	exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/evtop-complete.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin" "$dir/home" "$dir/xdg"
# The scripts call `evtop`: this one, whatever the PATH held before.
printf '#!/bin/sh\nexec "%s" "$@"\n' "$evtop" >"$dir/bin/evtop"
chmod 755 "$dir/bin/evtop"
PATH=$dir/bin:$PATH
HOME=$dir/home
XDG_CONFIG_HOME=$dir/xdg
export PATH HOME XDG_CONFIG_HOME
printf '[source orders]\nhost = db1\n\n[source stock]\nhost = db2\n' >"$dir/two.conf"
chmod 600 "$dir/two.conf"
compdir=$src/completion

# words WHAT [COMMAND]: evtop's answer, sorted, on one line.
words() { "$evtop" --completion-words "$@" </dev/null | LC_ALL=C sort | tr '\n' ' '; }
sorted() { LC_ALL=C sort | tr '\n' ' '; }
# same DESCRIPTION GOT WANT: the two word lists are equal (as sets).
same() {
	g=$(printf '%s\n' $2 | LC_ALL=C sort -u | tr '\n' ' ')
	w=$(printf '%s\n' $3 | LC_ALL=C sort -u | tr '\n' ' ')
	if [ "$g" = "$w" ]; then
		ok "$1"
	else
		not_ok "$1"
		echo "#   got:  $g"
		echo "#   want: $w"
	fi
}

# --- evtop --completion-words and --list-sources -------------------------------------------
same "commands are evtop --help's" "$(words commands)" \
	"$("$evtop" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z]*\).*/\1/p')"
lh=$("$evtop" list --help)
same "kinds are evtop list --help's" "$(words kinds)" \
	"$(echo "$lh" | sed -n '/^Kinds:/,/^$/p' | sed -n 's/^  \([a-z-]*\) .*/\1/p')"
same "tables are --help's --table=..." "$(words tables)" \
	"$(echo "$lh" | sed -n 's/.*--table=\([a-z|]*\).*/\1/p' | head -1 | tr '|' ' ')"
same "formats are --help's --format=..." "$(words formats)" \
	"$(echo "$lh" | sed -n 's/.*--format=\([a-z|]*\).*/\1/p' | head -1 | tr '|' ' ')"
same "dimensions are --help's --by=..." "$(words dimensions)" \
	"$(echo "$lh" | sed -n 's/.*--by=\([a-z_|]*\).*/\1/p' | head -1 | tr '|' ' ')"
same "figures are doc/check.md's" "$(words figures)" \
	"$(sed -n '/^## Figures/,/^## /p' "$src/doc/check.md" | sed -n 's/^| `\([a-z_]*\)` |.*/\1/p')"
same "retry --list takes the failed lists" "$(words kinds retry)" \
	"failed failed-due failed-waiting failed-noretry failed-exhausted high-retry"
same "recover --list takes stuck" "$(words kinds recover)" "stuck"
same "first-options are --version and -V" "$(words first-options)" "--version -V"

# Every option of a command's --help (and evtop --help's) is one it completes, and every
# option it completes is in one of the --help texts or doc/cli.md's list of the options that
# --help does not show.
hidden=$(sed -n 's/^Not shown by --help: \(.*\)/\1/p' "$src/doc/cli.md" | grep -o -- '--[a-z][a-z-]*')
[ -n "$hidden" ] || not_ok "doc/cli.md lists the options --help does not show"
all_help=$("$evtop" --help | grep -o -- '--[a-z][a-z-]*')
all_opts=""
for cmd in $("$evtop" --completion-words commands); do
	h=$("$evtop" "$cmd" --help </dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
	all_help="$all_help $h"
	o=$(words options "$cmd")
	all_opts="$all_opts $o"
	bad=""
	for x in $h; do
		case " $o $(words first-options) " in *" $x "*) ;; *) bad="$bad $x" ;; esac
	done
	check "every option of evtop $cmd --help completes for $cmd${bad:+ (not:$bad)}" [ -z "$bad" ]
done
bad=""
for x in $(printf '%s\n' $all_opts $(words options) | sort -u); do
	case " $(echo $all_help) $(echo $hidden) " in *" $x "*) ;; *) bad="$bad $x" ;; esac
done
check "every completable option is in a --help or doc/cli.md${bad:+ (not:$bad)}" [ -z "$bad" ]
bad=""
for x in $(words file-options) $(words value-options); do
	case "$x" in
	--*) case " $(words options) " in *" $x "*) ;; *) bad="$bad $x" ;; esac ;;
	-?) case " -h -P -S -u -D " in *" $x "*) ;; *) bad="$bad $x" ;; esac ;;
	*) bad="$bad $x" ;;
	esac
done
check "file-options and value-options are options${bad:+ (not:$bad)}" [ -z "$bad" ]
"$evtop" --completion-words no-such-set >/dev/null 2>&1
check "an unknown word set exits 2" [ $? -eq 2 ]

out=$("$evtop" --list-sources --config "$dir/two.conf" </dev/null 2>&1)
same "--list-sources --config FILE: its sources" "$out" "orders stock"
out=$("$evtop" --list-sources --config="$dir/two.conf" </dev/null 2>&1)
same "--list-sources --config=FILE too" "$out" "orders stock"
mkdir "$dir/xdg/evtop"
cp "$dir/two.conf" "$dir/xdg/evtop/config"
out=$("$evtop" --list-sources </dev/null 2>&1)
same "--list-sources: the default config's sources" "$out" "orders stock"
rm "$dir/xdg/evtop/config"
out=$("$evtop" --list-sources </dev/null 2>&1)
same "--list-sources without a config file: the implicit source" "$out" "default"
for bad in missing syntax control mode; do
	f=$dir/$bad.conf
	case $bad in
	missing) ;;
	syntax) printf '[source orders]\nhost = db1\n[source\n' >"$f" ;;
	control) printf '[source or\033[2Jders]\nhost = db1\n' >"$f" ;;
	mode) cp "$dir/two.conf" "$f" && chmod 666 "$f" ;;
	esac
	[ -e "$f" ] && [ $bad != mode ] && chmod 600 "$f"
	out=$("$evtop" --list-sources --config "$f" </dev/null 2>&1)
	rc=$?
	check "--list-sources, $bad config: nothing printed, exit 0 (got $rc: $out)" \
		[ "$rc:$out" = 0: ]
done

# --- bash ------------------------------------------------------------------------------------
# bcomp BASH_COMPLETION LINE: what bash offers at the end of LINE, sorted, on one line.
bcomp() {
	timeout 60 bash --norc --noprofile "$src/tests/lib/complete.bash" "$1" \
		"$compdir/evtop.bash" "$2" </dev/null 2>"$dir/bash.err" | sorted
}
out=$(timeout 60 bash --norc --noprofile "$src/tests/lib/complete.bash" "$bash_completion" \
	"$compdir/evtop.bash" 2>&1)
check "bash: complete -p evtop ($out)" [ "$out" = "complete -F _evtop evtop" ]
for bc in "$bash_completion" none; do
	with="with bash-completion"
	[ "$bc" = none ] && with="without bash-completion"
	same "bash $with: evtop li<TAB>" "$(bcomp "$bc" 'evtop li')" "list"
	same "bash $with: evtop list <TAB>" "$(bcomp "$bc" 'evtop list ')" "$(words kinds)"
	same "bash $with: evtop --table outbox list <TAB>" \
		"$(bcomp "$bc" 'evtop --table outbox list ')" "$(words kinds)"
	same "bash $with: evtop list --table <TAB>" "$(bcomp "$bc" 'evtop list --table ')" \
		"outbox message"
	same "bash $with: evtop --table=<TAB>" "$(bcomp "$bc" 'evtop --table=')" "outbox message"
	same "bash $with: evtop list --format <TAB>" "$(bcomp "$bc" 'evtop list --format ')" \
		"table json csv"
	same "bash $with: evtop check --warning <TAB>" "$(bcomp "$bc" 'evtop check --warning ')" \
		"$(words figures)"
	same "bash $with: evtop check --critical outbox.exh<TAB>" \
		"$(bcomp "$bc" 'evtop check --critical outbox.exh')" "outbox.exhausted"
	same "bash $with: evtop --source <TAB> (--config)" \
		"$(bcomp "$bc" "evtop --config $dir/two.conf --source ")" "orders stock"
	same "bash $with: evtop list --source=orders,<TAB> (--config=)" \
		"$(bcomp "$bc" "evtop --config=$dir/two.conf list --source=orders,")" "orders,stock"
	same "bash $with: evtop list --form<TAB>" "$(bcomp "$bc" 'evtop list --form')" "--format="
	same "bash $with: evtop list --fo<TAB>" "$(bcomp "$bc" 'evtop list --fo')" \
		"--format= --force"
	same "bash $with: evtop --ver<TAB> (first argument)" "$(bcomp "$bc" 'evtop --ver')" \
		"--version"
	same "bash $with: evtop list --ver<TAB> (nothing)" "$(bcomp "$bc" 'evtop list --ver')" ""
	same "bash $with: evtop retry --list <TAB>" "$(bcomp "$bc" 'evtop retry --list ')" \
		"$(words kinds retry)"
	same "bash $with: evtop --by <TAB>" "$(bcomp "$bc" 'evtop --by ')" "$(words dimensions)"
	same "bash $with: evtop --config DIR/tw<TAB> (a file)" \
		"$(bcomp "$bc" "evtop --config $dir/tw")" "$dir/two.conf"
	same "bash $with: evtop -S DIR/tw<TAB> (a file)" "$(bcomp "$bc" "evtop -S $dir/tw")" \
		"$dir/two.conf"
	same "bash $with: evtop --limit <TAB> (nothing)" "$(bcomp "$bc" 'evtop --limit ')" ""
	same "bash $with: evtop list failed <TAB> (nothing)" "$(bcomp "$bc" 'evtop list failed ')" ""
	out=$(bcomp "$bc" 'evtop --')
	same "bash $with: evtop --<TAB>: every option, --opt= where it takes a value" "$out" \
		"$(for o in $(words options); do
			case " $(words value-options) " in *" $o "*) echo "$o=" ;; *) echo "$o" ;; esac
		done) --version"
	check "bash $with: no error output ($(head -c 200 "$dir/bash.err"))" [ ! -s "$dir/bash.err" ]
done

# --- zsh -------------------------------------------------------------------------------------
# zcomp LINE: what zsh offers at the end of LINE, sorted, on one line.
zcomp() {
	timeout 60 zsh -f "$src/tests/lib/complete.zsh" "$compdir" "$1" </dev/null 2>"$dir/zsh.err" | sorted
}
same "zsh: evtop li<TAB>" "$(zcomp 'evtop li')" "list"
same "zsh: evtop <TAB>" "$(zcomp 'evtop ')" "$(words commands)"
same "zsh: evtop list <TAB>" "$(zcomp 'evtop list ')" "$(words kinds)"
same "zsh: evtop --table outbox list <TAB>" "$(zcomp 'evtop --table outbox list ')" \
	"$(words kinds)"
same "zsh: evtop list --table <TAB>" "$(zcomp 'evtop list --table ')" "outbox message"
same "zsh: evtop --table=<TAB>" "$(zcomp 'evtop --table=')" "--table=outbox --table=message"
same "zsh: evtop list --format <TAB>" "$(zcomp 'evtop list --format ')" "table json csv"
same "zsh: evtop check --warning <TAB>" "$(zcomp 'evtop check --warning ')" "$(words figures)"
same "zsh: evtop check --critical outbox.exh<TAB>" \
	"$(zcomp 'evtop check --critical outbox.exh')" "outbox.exhausted"
same "zsh: evtop --source <TAB> (--config)" "$(zcomp "evtop --config $dir/two.conf --source ")" \
	"orders stock"
same "zsh: evtop list --form<TAB>" "$(zcomp 'evtop list --form')" "--format"
same "zsh: evtop list --fo<TAB>" "$(zcomp 'evtop list --fo')" "--format --force"
same "zsh: evtop --ver<TAB> (first argument)" "$(zcomp 'evtop --ver')" "--version"
same "zsh: evtop retry --list <TAB>" "$(zcomp 'evtop retry --list ')" "$(words kinds retry)"
same "zsh: evtop --by <TAB>" "$(zcomp 'evtop --by ')" "$(words dimensions)"
same "zsh: evtop --config DIR/tw<TAB> (a file)" "$(zcomp "evtop --config $dir/tw")" "$dir/two.conf"
same "zsh: evtop -S DIR/tw<TAB> (a file)" "$(zcomp "evtop -S $dir/tw")" "$dir/two.conf"
same "zsh: evtop --<TAB>: every option" "$(zcomp 'evtop --')" "$(words options) --version"
check "zsh: no error output ($(head -c 200 "$dir/zsh.err"))" [ ! -s "$dir/zsh.err" ]
tap_done
