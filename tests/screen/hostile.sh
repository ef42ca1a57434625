#!/bin/sh
# Hostile input in the console: every script of tests/screen/hostile-scripts/ (dashboard,
# lists, the detail pane, the VARBINARY/LONGBLOB variant tables) runs at 80x24, 20x6 (the smallest
# usable terminal) and 300x100 over the rows of tests/data/hostile.sql. Each run must end
# normally, every screen must be safe for a terminal (tests/lib/termsafe.pl: valid UTF-8, no
# C0/C1 control, no bidi override) with no "^[" either (what curses itself prints for a raw
# ESC handed to it: evtop must have replaced it before), the escape sequences must be shown
# as text (␛), and nothing may be written to the database. The screens are not compared with
# expected files: the properties are the test, so the console's layout may change freely.
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

# Everything evtop could write: the rows (CHECKSUM TABLE covers every column) and the audit.
state() {
	sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event, hostile_outbox_event,
	  hostile_message_event, evtop_audit EXTENDED; SELECT COUNT(*) FROM evtop_audit"
}
before=$(state)

run() { # run SCRIPT SIZE
	script=$1
	size=$2
	name=$(basename "$script" .keys)-$size
	out=$dir/out/$name
	mkdir -p "$out"
	args=$(sed -n 's/^# args: *//p' "$script" | head -n 1)
	# At 20x6 the keys run at 80x24 (the same path through the screens) and each screen is
	# taken after a resize to 20x6.
	if [ "$size" = 20x6 ]; then
		sed "s|^screen \(.*\)|resize 20 6\nscreen $out/\1\nresize 80 24|" "$script"
	else
		sed "s|^screen \(.*\)|screen $out/\1|" "$script"
	fi >"$dir/$name.keys"
	[ "$size" = 20x6 ] && size=80x24
	# shellcheck disable=SC2086
	(cd "$dir" && LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME="$dir/state" \
		timeout 300 "$evtop" --defaults-file="$dir/pinned.cnf" --script "$dir/$name.keys" \
		--screen "$size" $args </dev/null >"$dir/$name.stdout" 2>"$dir/$name.stderr")
	rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$name: evtop exited $rc: $(head -c 300 "$dir/$name.stderr")"
		return
	fi
	ok "$name runs"
	shots=$(ls "$out" | wc -l)
	want=$(grep -c '^!\{0,1\}screen ' "$script")
	[ "$shots" -eq "$want" ] && ok "$name: $want screens" || not_ok "$name: $shots screens of $want"
	if bad=$(perl "$src/tests/lib/termsafe.pl" "$out"/* "$dir/$name.stdout" "$dir/$name.stderr"); then
		ok "$name: every screen safe for a terminal"
	else
		not_ok "$name: a screen is not safe for a terminal: $bad"
	fi
	if grep -l -F '^[' "$out"/* >"$dir/caret" 2>/dev/null; then
		not_ok "$name: a raw ESC reached curses (^[ on $(tr '\n' ' ' <"$dir/caret"))"
	else
		ok "$name: no raw ESC reached curses"
	fi
}

# has NAME TEXT...: the screen NAME (of the 80x24 or 300x100 runs) shows each TEXT
has() {
	shot=$1
	shift
	for text in "$@"; do
		if grep -q -F -- "$text" "$dir/out/$shot"; then
			ok "$shot shows '$text'"
		else
			not_ok "$shot shows '$text'"
			sed 's/^/# /' "$dir/out/$shot"
		fi
	done
}

for s in "$src"/tests/screen/hostile-scripts/*.keys; do
	for size in 80x24 20x6 300x100; do
		run "$s" "$size"
	done
done

# What the screens must show: the escape sequences as pictures, invalid bytes as U+FFFD,
# a payload that is not JSON as stored, the ends of the big payloads, the last of 3000 groups.
has dashboard-300x100/start 'HOSTILE␛]0;PWNED␇␛[6n' 'TOTAL (3006 groups)'
has dashboard-80x24/last-group 'TYPE_3000␛]0;PWNED␇'
has dashboard-300x100/last-group-list 'HX-T3000'
has detail-300x100/hostile-top '␛[2J␛[H␛]0;PWNED␇␛[31;5mRED␛[0m' 'gpj.exe␍␊␉␈␀␡END'
has detail-300x100/hostile-search 'PWNED'
# A NUL inside a value does not end it in a list either.
has lists-300x100/failed-reversed '␈␀␡END'
has detail-300x100/nulls 'NULL'
has detail-300x100/identifiers-64 'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'
has detail-300x100/cjk "调用下游超时🚀e$(printf '\314\201')"
# The whole 1000-character reason is searched (it was cut at 1000 bytes, mid-character).
if grep -q 'not found' "$dir/out/detail-300x100/cjk-search-tail"; then
	not_ok "the end of a 1000-character CJK fail_reason is found"
else
	ok "the end of a 1000-character CJK fail_reason is found"
fi
has detail-300x100/megabyte-end ']'
has detail-300x100/megabyte-search 'SKU-13999'
has variant-300x100/bad-event '�' 'not valid JSON'
has variant-300x100/raw-escapes-payload '␛[2J␛]0;PWNED␇'
has variant-300x100/deep100 '[…] 1 item'
has variant-300x100/deep100-unfolded-end '"deep"'
has variant-300x100/megabyte-lines-end 'line ␛[31m� 中文 �'
has variant-300x100/megabyte-one-line-end '↪'

after=$(state)
if [ "$before" = "$after" ]; then
	ok "nothing was written (every table's checksum and the audit unchanged)"
else
	not_ok "nothing was written: before $before, after $after"
fi
if [ -e "$dir/state/evtop/audit.jsonl" ]; then not_ok "no local audit record"; else ok "no local audit record"; fi

tap_done
