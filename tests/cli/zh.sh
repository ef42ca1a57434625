#!/bin/sh
# The Chinese interface and scripts: whatever the language, what programs parse is the same
# bytes — every sub-command's --format json and csv, `evtop check`'s plugin line (and its
# json), the metrics, --log-sql — while what people read (the table format, --help, errors)
# is in Chinese under zh_CN.UTF-8. LC_NUMERIC, LC_TIME and LC_COLLATE stay "C" whatever the
# environment says. Runs against the throwaway server of tests/harness/run-test.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$src/tests/lib/tap.sh"
. "$src/tests/lib/zh.sh"
zh_setup "$dir/zh"
now='2026-06-01 12:00:00'
{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/seed.sql"; } | sql || { echo "cannot load the seed"; exit 99; }
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"|" "$cnf" >"$dir/pinned.cnf"
XDG_CONFIG_HOME=$dir/xdg
XDG_STATE_HOME=$dir/state
export XDG_CONFIG_HOME XDG_STATE_HOME
# run LANG NAME ARGS...: evtop's stdout, stderr and exit code under LANG into $dir/LANG.NAME.*
run() {
	l=$1
	nm=$2
	shift 2
	LANG=$l LC_ALL= LC_NUMERIC=$l LC_TIME=$l LC_COLLATE=$l "$evtop" --defaults-file="$dir/pinned.cnf" "$@" \
		>"$dir/$l.$nm.out" 2>"$dir/$l.$nm.err" </dev/null
	echo $? >"$dir/$l.$nm.rc"
}
# same NAME ARGS...: the same bytes and exit code in C.UTF-8 and zh_CN.UTF-8.
same() {
	nm=$1
	shift
	run C.UTF-8 "$nm" "$@"
	run "$ZH_LANG" "$nm" "$@"
	# Timings differ from one run to the next in either language: masked.
	for mf in "$dir/C.UTF-8.$nm.out" "$dir/$ZH_LANG.$nm.out"; do
		sed -i -e 's/"query_ms": *[0-9.e+-]*/"query_ms":N/g' -e 's/^\(evtop_[a-z_]*seconds[a-z_]*\({[^}]*}\)\{0,1\}\) .*/\1 N/' \
			-e 's/^\(evtop_[a-z_]*timestamp[a-z_]*\({[^}]*}\)\{0,1\}\) .*/\1 N/' "$mf"
	done
	if cmp -s "$dir/C.UTF-8.$nm.out" "$dir/$ZH_LANG.$nm.out" && cmp -s "$dir/C.UTF-8.$nm.rc" "$dir/$ZH_LANG.$nm.rc"; then
		ok "$* is the same in either language ($(wc -c <"$dir/C.UTF-8.$nm.out") bytes, exit $(cat "$dir/C.UTF-8.$nm.rc"))"
	else
		not_ok "$* differs between C.UTF-8 and $ZH_LANG:"
		diff "$dir/C.UTF-8.$nm.out" "$dir/$ZH_LANG.$nm.out" | head -n 20 | sed 's/^/# /'
	fi
}
# chinese NAME ARGS...: under zh_CN.UTF-8 the output (stdout and stderr) has Chinese in it and
# differs from the English.
chinese() {
	nm=$1
	shift
	run C.UTF-8 "$nm" "$@"
	run "$ZH_LANG" "$nm" "$@"
	if cat "$dir/$ZH_LANG.$nm.out" "$dir/$ZH_LANG.$nm.err" | perl -CSD -e 'while (<STDIN>) { exit 0 if /\p{Han}/ } exit 1'; then han=yes; else han=no; fi
	if [ $han = yes ] && [ "$(cat "$dir/C.UTF-8.$nm.out" "$dir/C.UTF-8.$nm.err")" != "$(cat "$dir/$ZH_LANG.$nm.out" "$dir/$ZH_LANG.$nm.err")" ]; then
		ok "$* speaks Chinese under $ZH_LANG"
	else
		not_ok "$* is not in Chinese under $ZH_LANG:"
		head -n 5 "$dir/$ZH_LANG.$nm.out" "$dir/$ZH_LANG.$nm.err" | sed 's/^/# /'
	fi
}

for f in json csv; do
	same dash-$f dashboard --format $f
	same dashby-$f dashboard --table outbox --by topic --format $f
	same list-$f list failed --format $f
	same listm-$f list pending --table message --format $f
	same show-$f show OB-0101 --format $f
	same trace-$f trace trace-202605130001 --format $f
	same audit-$f audit --format $f
	same doctor-$f doctor --format $f
	same retry-$f retry --dry-run OB-0101 --format $f
	same bad-$f list nosuchlist --format $f
done
same check check --warning 'stuck > 0' --critical 'exhausted > 100'
same check-json check --warning 'stuck > 0' --format json
same check-bad check --warning 'no_such_figure > 1'
same metrics metrics --once
same log-sql dashboard --format json --log-sql "$dir/sql.log"

chinese help --help
chinese list-help list --help
chinese dash-table dashboard
chinese list-table list failed
chinese doctor-table doctor
chinese bad-option list --no-such-option

# Numbers and times never follow the language: the table's figures are the C locale's.
run "$ZH_LANG" num dashboard
if grep -q '[0-9],[0-9][0-9][0-9]' "$dir/$ZH_LANG.num.out"; then
	not_ok "numbers carry no thousands separator of a locale"
else
	ok "numbers carry no thousands separator of a locale"
fi
tap_done
