#!/bin/sh
# Hostile input through the sub-commands: every read command (list of each kind, dashboard by
# each dimension, show, trail, trace, check) in every format over the rows of
# tests/data/hostile.sql, in the model's tables and in the VARBINARY/LONGBLOB variant. No
# crash, no exit code beyond "not found", every output safe for a terminal
# (tests/lib/termsafe.pl: valid UTF-8, no C0/C1 control, no bidi override; ESC, BEL and the
# 8-bit CSI above all), JSON output valid, nothing written. Then the console without a
# terminal: TERM=dumb, no TERM, stdout not a tty: it refuses clearly (exit 2) and the
# sub-commands still work.
set -u
evtop=${EVTOP:?}
src=${EVTOP_SRCDIR:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
now='2026-06-01 12:00:00'
. "$(dirname "$0")/../lib/tap.sh"

sql <"$src/tests/data/variant-schema.sql" || { echo "cannot load the variant schema"; exit 99; }
{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/hostile.sql"; } | sql >/dev/null ||
	{ echo "cannot load tests/data/hostile.sql"; exit 99; }
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"|" "$cnf" >"$dir/pinned.cnf"
state() {
	sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event, hostile_outbox_event,
	  hostile_message_event, evtop_audit EXTENDED; SELECT COUNT(*) FROM evtop_audit"
}
before=$(state)
ev() { "$evtop" --defaults-file="$dir/pinned.cnf" "$@"; }

# Is FILE one valid JSON document? Perl's JSON::PP (no depth limit that matters: a payload
# 100 levels deep sits inside the row's object), else the server's JSON_VALID, which stops at
# 32 levels and so cannot judge the deep payloads' rows.
json_ok() {
	if perl -MJSON::PP -e 1 2>/dev/null; then
		perl -MJSON::PP -e 'local $/; open(my $f, "<:raw", $ARGV[0]) or exit 2;
			JSON::PP->new->utf8->max_depth(100000)->decode(<$f>); exit 0' "$1" 2>/dev/null
		return
	fi
	grep -q -e DEEP31 -e DEEP100 "$1" && return 0
	v=$(sed "s/'/''/g; s/\\\\/\\\\\\\\/g" "$1" | tr '\n' ' ' |
		{ printf "SELECT JSON_VALID('"; cat; printf "')"; } |
		sql --max-allowed-packet=64M --default-character-set=utf8mb4 2>/dev/null)
	[ "$v" = 1 ]
}

variant="--outbox-table hostile_outbox_event --message-table hostile_message_event"
i=0
unsafe=0
crashed=0
badjson=0
for tables in model variant; do
	[ $tables = variant ] && vt=$variant || vt=""
	for t in outbox message; do
		for fmt in table json csv; do
			while read -r cmd; do
				[ -n "$cmd" ] || continue
				i=$((i + 1))
				# shellcheck disable=SC2086
				eval "set -- $cmd"
				# shellcheck disable=SC2086
				ev "$@" $vt --table $t --format $fmt >"$dir/out.$i" 2>"$dir/err.$i"
				rc=$?
				# 0 = rows, 1 = not found / check warning, 2 = critical: anything else is
				# a failure here (3 = unknown or no database, >= 128 a crash).
				if [ $rc -gt 2 ]; then
					crashed=$((crashed + 1))
					echo "# $tables $t $fmt: evtop $cmd exited $rc: $(head -c 300 "$dir/err.$i")"
				fi
				if ! perl "$src/tests/lib/termsafe.pl" "$dir/out.$i" "$dir/err.$i" >"$dir/why.$i"; then
					unsafe=$((unsafe + 1))
					echo "# $tables $t $fmt: evtop $cmd: $(cat "$dir/why.$i")"
				fi
				if [ $fmt = json ] && [ -s "$dir/out.$i" ] && [ $rc -le 1 ] &&
					! json_ok "$dir/out.$i"; then
					badjson=$((badjson + 1))
					echo "# $tables $t json: evtop $cmd: not valid JSON"
				fi
			done <<'CMDS'
list failed --limit 1000
list pending --limit 1000
list stuck
list processing
list cancelled
list high-retry --high-retry 1
list failed --reason 超时
list failed --reason PWNED
dashboard
dashboard --by topic
dashboard --by source
dashboard --by biz_type
dashboard --by channel
show HX-NULLS HX-1MB HX-DEEP31 HX-中文-🚀-é NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN
show VX-RAWESC VX-DEEP100 VX-1MB-LINES VX-1MB-ONE-LINE VX-NULLS
trail ORDER O-1MB
trace trace-中文
CMDS
		done
	done
	# The monitoring plugin over both tables: 1 = WARNING (failed > 0), its one line safe.
	# shellcheck disable=SC2086
	ev check --warning 'failed > 0' --critical 'stuck > 100' --by event_type $vt >"$dir/chk" 2>&1
	rc=$?
	[ $rc -eq 1 ] && perl "$src/tests/lib/termsafe.pl" "$dir/chk" >/dev/null &&
		ok "$tables: check says WARNING, safely" ||
		not_ok "$tables: check says WARNING, safely (exit $rc: $(head -c 300 "$dir/chk"))"
done
[ $crashed -eq 0 ] && ok "$i runs: none crashed or failed" || not_ok "$i runs: $crashed crashed or failed"
[ $unsafe -eq 0 ] && ok "$i runs: every output safe for a terminal" || not_ok "$i runs: $unsafe outputs not safe for a terminal"
[ $badjson -eq 0 ] && ok "every JSON output is valid JSON" || not_ok "$badjson JSON outputs are not valid JSON"

# A few exact expectations: ids at the ends of the range, control characters as pictures in a
# table and as escapes in JSON, invalid bytes as U+FFFD, the whole 1000-character reason.
ev list failed --table outbox --reason PWNED --limit 1 >"$dir/t" 2>&1
grep -q '␛\[2J␛\[H␛\]0;PWNED␇' "$dir/t" && ok "a table shows ESC and BEL as ␛ and ␇" ||
	not_ok "a table shows ESC and BEL as ␛ and ␇"
ev list failed --table outbox --event-no HX-NULLS --format json >"$dir/j" 2>&1
grep -q '"id":"18446744073709551615"' "$dir/j" && ok "id 2^64-1 kept exactly" || not_ok "id 2^64-1 kept exactly"
ev list failed --table outbox --reason PWNED --limit 1 --format json >"$dir/j" 2>&1
grep -q '"id":"0"' "$dir/j" && ok "id 0 listed" || not_ok "id 0 listed"
grep -q 'u001b\[2J' "$dir/j" && grep -q 'u202e' "$dir/j" && grep -q 'u009b' "$dir/j" &&
	ok "JSON escapes ESC, U+009B and U+202E" || not_ok "JSON escapes ESC, U+009B and U+202E"
# shellcheck disable=SC2086
ev list failed $variant --table outbox --reason PWNED --limit 1 >"$dir/t" 2>&1
grep -q '�' "$dir/t" && ok "invalid UTF-8 shown as U+FFFD" || not_ok "invalid UTF-8 shown as U+FFFD"
ev show 'HX-中文-🚀-é' --format json >"$dir/j" 2>&1
[ "$(grep -o 'TAIL尾巴-END' "$dir/j" | wc -l)" = 2 ] && ok "both 1000-character fail_reasons whole" ||
	not_ok "both 1000-character fail_reasons whole"
ev dashboard --table outbox --format csv >"$dir/c" 2>&1
[ "$(grep -c '^outbox,' "$dir/c")" -ge 3006 ] && ok "the dashboard lists 3006 groups" ||
	not_ok "the dashboard lists 3006 groups ($(grep -c '^outbox,' "$dir/c"))"

# Hostile arguments: the messages that quote them are safe too.
esc=$(printf 'X\033]0;PWNED\007\302\233')
unsafe=0
for args in "show $esc" "list failed --event-type $esc" "list failed --filter bogus$esc=1" \
	"check --warning pend${esc}ing>1" "--outbox-table $esc list failed" "list $esc" \
	"trail $esc $esc" "trace $esc" "$esc" "--bogus$esc" "--screen $esc" "--script $esc" \
	"--log-sql $dir/no/$esc" "list failed --log-sql $dir/no/$esc"; do
	# shellcheck disable=SC2086
	ev $args >"$dir/o" 2>"$dir/e"
	rc=$?
	if [ $rc -ge 4 ] || ! perl "$src/tests/lib/termsafe.pl" "$dir/o" "$dir/e" >"$dir/why"; then
		unsafe=$((unsafe + 1))
		echo "# evtop $args: exit $rc, $(cat "$dir/why")"
	fi
done
[ $unsafe -eq 0 ] && ok "hostile arguments are quoted safely in every message" ||
	not_ok "hostile arguments are quoted safely in every message ($unsafe not)"

# The console needs a terminal: without one it refuses clearly, and the sub-commands work.
TERM=dumb "$evtop" --defaults-file="$dir/pinned.cnf" </dev/null >"$dir/o" 2>"$dir/e"
rc=$?
[ $rc -eq 2 ] && grep -q 'needs a terminal (TERM is dumb)' "$dir/e" &&
	ok "TERM=dumb: the console refuses (exit 2) and says why" ||
	not_ok "TERM=dumb: the console refuses (exit 2) and says why (exit $rc: $(cat "$dir/e"))"
env -u TERM "$evtop" --defaults-file="$dir/pinned.cnf" </dev/null >"$dir/o" 2>"$dir/e"
rc=$?
[ $rc -eq 2 ] && grep -q 'TERM is unset' "$dir/e" &&
	ok "no TERM: the console refuses (exit 2) and says why" ||
	not_ok "no TERM: the console refuses (exit 2) and says why (exit $rc: $(cat "$dir/e"))"
TERM=xterm-256color "$evtop" --defaults-file="$dir/pinned.cnf" </dev/null >"$dir/o" 2>"$dir/e"
rc=$?
[ $rc -eq 2 ] && grep -q 'needs a terminal on stdin and stdout' "$dir/e" &&
	ok "stdout not a tty: the console refuses (exit 2) and says why" ||
	not_ok "stdout not a tty: the console refuses (exit 2) and says why (exit $rc: $(cat "$dir/e"))"
if perl "$src/tests/lib/termsafe.pl" "$dir/o" "$dir/e" >/dev/null && [ ! -s "$dir/o" ]; then
	ok "... and writes nothing to stdout (no escape sequence of curses)"
else
	not_ok "... and writes nothing to stdout (no escape sequence of curses)"
fi
for term in dumb unset; do
	if [ $term = unset ]; then
		env -u TERM "$evtop" --defaults-file="$dir/pinned.cnf" list failed --table outbox >"$dir/o" 2>"$dir/e"
	else
		TERM=$term "$evtop" --defaults-file="$dir/pinned.cnf" list failed --table outbox >"$dir/o" 2>"$dir/e"
	fi
	rc=$?
	[ $rc -eq 0 ] && grep -q 'HX-NULLS' "$dir/o" && ok "TERM $term: the sub-commands work" ||
		not_ok "TERM $term: the sub-commands work (exit $rc)"
done

after=$(state)
[ "$before" = "$after" ] && ok "nothing was written (every table's checksum and the audit unchanged)" ||
	not_ok "nothing was written: before $before, after $after"

tap_done
