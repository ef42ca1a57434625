#!/bin/sh
# Faults while the console is open, each a scripted run (tests/screen/fault-scripts/*.keys)
# against the harness's own server, which the scripts kill, restart, stop and resume
# (tests/screen/fault-scripts/lib.sh): the server killed while a list pages and restarted; a
# network stall longer than the read timeout; a lock wait timeout on a guarded update; the server
# killed while a guarded update is in flight; the server killed during a bulk action, in a
# batch's UPDATE and at a batch's COMMIT, then restarted; the statement time limit hit on the
# dashboard's tiles; the table dropped (its figures leave the screen); the account's privileges
# revoked. For each: the run ends normally (the console stayed up and kept answering keys), the
# screens say what happened and mark the data stale, the console recovers when the server
# does, and no write is reported done that the database did not make (the scripts check the
# rows and the audit themselves, or save them for the checks here).
# Every data set is the seed's, loaded anew before each script, with the clock pinned.
set -u
evtop=${EVTOP:?}
src=${EVTOP_SRCDIR:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
db=${EVTOP_TEST_DB:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
now='2026-06-01 12:00:00'
. "$(dirname "$0")/../lib/tap.sh"

if [ ! -f "$dir/../mariadbd.pid" ]; then
	echo "faults.sh: needs the harness's own server (not EVTOP_TEST_SOCKET): skipping"
	exit 77
fi

sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"|" "$cnf" >"$dir/pinned.cnf"
# Short timeouts keep the stall short; small pages make a list page; an operator id set here
# spares the prompt.
cat >"$dir/faults.conf" <<CONF
[evtop]
read_timeout = 2s
connect_timeout = 1s
page_size = 5
operator = INC-FAULT
CONF
# For the lock wait: the server's innodb_lock_wait_timeout (5 s, set by evtop) must come
# before the client's read timeout, so the default read_timeout (15 s) here.
cat >"$dir/action.conf" <<CONF
[evtop]
page_size = 5
operator = INC-FAULT
CONF
# The account of revoke.keys: SELECT on the two tables only (table privileges take effect on
# open connections at once; database ones only at the next USE).
sql -e "CREATE USER IF NOT EXISTS 'evtop_fault'@'localhost' IDENTIFIED BY 'fault-pw';
  GRANT SELECT ON \`$db\`.biz_outbox_event TO 'evtop_fault'@'localhost';
  GRANT SELECT ON \`$db\`.biz_message_event TO 'evtop_fault'@'localhost'" || exit 99

reset_data() {
	sql -e "DROP TABLE IF EXISTS kept_message_event; TRUNCATE biz_outbox_event;
	  TRUNCATE biz_message_event; TRUNCATE evtop_audit" &&
		{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/seed.sql"; } | sql
}

run() { # run SCRIPT: the scripted console; its screens in $dir/out/NAME
	script=$1
	name=$(basename "$script" .keys)
	out=$dir/out/$name
	mkdir -p "$out"
	reset_data || { not_ok "$name: cannot load the seed"; return; }
	size=$(sed -n 's/^# size: *//p' "$script" | head -n 1)
	args=$(sed -n 's/^# args: *//p' "$script" | head -n 1 | sed "s|@DIR@|$dir|g")
	sed "s|^\(!\{0,1\}\)screen \(.*\)|\1screen $out/\2|" "$script" >"$dir/$name.keys"
	rm -rf "$dir/state-$name"
	# shellcheck disable=SC2086
	(cd "$dir" && LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME="$dir/state-$name" \
		timeout 300 "$evtop" --defaults-file="$dir/pinned.cnf" --script "$dir/$name.keys" \
		--screen "${size:-120x30}" $args </dev/null >"$dir/$name.stdout" 2>"$dir/$name.stderr")
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name: the console stays up through it (the script ran to its end)"
	else
		not_ok "$name: evtop exited $rc: $(tail -c 400 "$dir/$name.stderr")"
	fi
	# The harness stops its server by the pid file: make sure one runs for the next script.
	if ! "$client" --defaults-file="$cnf" -e 'SELECT 1' >/dev/null 2>&1; then
		kill -CONT "$(cat "$dir/../mariadbd.pid" 2>/dev/null)" 2>/dev/null
		sh "$src/tests/harness/server.sh" start "$dir/.." >/dev/null 2>&1
	fi
}

# shows NAME/SHOT TEXT: the screen shows TEXT; lacks NAME/SHOT TEXT: it does not.
shows() {
	if grep -q -F -- "$2" "$dir/out/$1"; then
		ok "$1 shows '$2'"
	else
		not_ok "$1 shows '$2'"
		sed 's/^/# /' "$dir/out/$1" 2>/dev/null
	fi
}
lacks() {
	if grep -q -F -- "$2" "$dir/out/$1" 2>/dev/null; then
		not_ok "$1 does not show '$2'"
		sed 's/^/# /' "$dir/out/$1"
	else
		ok "$1 does not show '$2'"
	fi
}

# FAULTS_ONLY=NAME runs one script (its checks below then fail for the others).
for s in "$src"/tests/screen/fault-scripts/${FAULTS_ONLY:-*}.keys; do
	run "$s"
done

# The server killed while a list pages, then restarted.
shows restart/list-next-page-failed 'OB-'
# The failed page turn leaves the page it could not leave: its rows, its number.
shows restart/list-next-page-failed 'page 1 '
shows restart/list-stale 'reconnecting · rw masked · STALE since 12:00:00 (data 2s old)'
shows restart/dashboard-stale 'reconnecting · rw masked · STALE since 12:00:00'
shows restart/keys-still-work '▶ message'
lacks restart/dashboard-recovered 'STALE'
shows restart/dashboard-recovered 'TOTAL'
shows restart/list-recovered 'OB-'
shows restart/list-next-page 'page 2'
# Killed and restarted with a 30 s refresh: reconnect attempts under 5 s apart, the status
# line STALE (with the data's age) while lost and connected again at once after the restart.
shows reconnect/live 'evtop · connected · rw'
shows reconnect/lost 'reconnecting · rw masked · STALE since 12:00:00 (data 30s old)'
shows reconnect/still-lost 'reconnecting · rw masked · STALE since 12:00:00 (data 45s old)'
shows reconnect/reconnected 'evtop · connected · rw'
lacks reconnect/reconnected 'STALE'
shows reconnect/reconnected-by-c-r 'evtop · connected · rw'
# A stall longer than the read timeout.
shows stall/stalled 'STALE since'
shows stall/stalled-keys-work '▶ message'
shows stall/still-stalled 'STALE since'
lacks stall/resumed-again 'STALE'
# A lock wait timeout on a guarded update, then the same update applied.
lacks lock-wait/lock-wait-failed 'applied'
shows lock-wait/lock-wait-failed 'fail'
shows lock-wait/applied-after-unlock 'applied'
# A write typed as a ':' command while one applies: refused, no prompt, no confirmation.
shows lock-wait/command-while-applying 'an action is being applied; wait for its result'
lacks lock-wait/command-while-applying 'reason for the cancel'
# Killed while the update waits.
lacks kill-during-action/killed-mid-action 'applied'
lacks kill-during-action/after-restart 'applied'
# The statement time limit on the outbox tiles.
total() { grep "^TOTAL" "$dir/out/$1" | head -n 1; }
case "$(total tile-timeout/timed-out)" in
*' ? '*) ok "tile-timeout: the outbox TOTAL shows ? for the counts cut by the time limit" ;;
*) not_ok "tile-timeout: the outbox TOTAL shows ? for the counts cut by the time limit" ;;
esac
shows tile-timeout/timed-out 'timeout'
case "$(total tile-timeout/recovered)" in
*' ? '*) not_ok "tile-timeout: the TOTAL is whole again after the lock" ;;
*) ok "tile-timeout: the TOTAL is whole again after the lock" ;;
esac
# The message table dropped, then back: the figures read before the drop leave the screen
# (the message TOTAL of the seed is 14 pending, 9 processing; the outbox's 13, 11 stays).
shows drop-table/list-of-dropped "doesn't exist"
shows drop-table/dropped "biz_message_event"
shows drop-table/dropped "doesn't exist"
shows drop-table/dropped "its figures of 2026-06-01 12:00:00 are no longer shown"
lacks drop-table/dropped "TOTAL                   14     9"
lacks drop-table/dropped "ORDER_CREATED            8     3     1"
shows drop-table/dropped "TOTAL                   13    11"
shows drop-table/enter-on-dropped "no list behind this column"
lacks drop-table/restored "doesn't exist"
lacks drop-table/restored "no longer shown"
shows drop-table/restored "TOTAL                   14     9     5    25    10     7     4     4"
# Read in full on its return (nothing carried over from before the drop): the backlog, and no
# rates yet (the mirror of the table read anew has one refresh: —), OPER = STUCK + EXHST.
shows drop-table/restored "ORDER_CREATED            8     3     1    14     7     4     3     0 19d02h      —     1      —"
shows drop-table/restored-again "TOTAL                   14     9     5    25"
# The privileges revoked, then granted again: each table's last figures kept, marked stale.
shows revoke/revoked 'denied'
shows revoke/revoked '▶ outbox (biz_outbox_event) · STALE since 2026-06-01 12:00:00'
shows revoke/revoked '  message (biz_message_event) · STALE since 2026-06-01 12:00:00'
lacks revoke/granted-again 'denied'
lacks revoke/granted-again 'STALE'

# The server killed during a bulk action, then restarted: what the console's tally, the audit
# file and the evtop_audit table say was applied is exactly what the restarted database holds
# (the scripts saved its changed rows in $dir/NAME.db-changed, evtop_audit's applied rows in
# NAME.db-audit, the audit file in NAME.audit).
ids_with() { # ids_with NAME RESULT: the ids of the audit file's result lines RESULT, sorted
	grep "\"result\":\"$2\"" "$dir/$1.audit" 2>/dev/null | sed 's/.*"id":"\([0-9]*\)".*/\1/' | sort -n
}
bulk_facts() { # bulk_facts NAME SHOT
	name=$1
	shot=$2
	ids_with "$name" applied >"$dir/$name.applied"
	ids_with "$name" failed >"$dir/$name.failed"
	napplied=$(wc -l <"$dir/$name.applied")
	if [ -s "$dir/$name.db-changed" ] && cmp -s "$dir/$name.applied" "$dir/$name.db-changed"; then
		ok "$name: the rows the audit file says applied ($napplied) are the rows the database changed"
	else
		not_ok "$name: the rows the audit file says applied are the rows the database changed"
		diff "$dir/$name.applied" "$dir/$name.db-changed" | head -n 20 | sed 's/^/# /'
	fi
	if cmp -s "$dir/$name.applied" "$dir/$name.db-audit"; then
		ok "$name: ... and the evtop_audit table's applied rows"
	else
		not_ok "$name: ... and the evtop_audit table's applied rows"
		diff "$dir/$name.applied" "$dir/$name.db-audit" | head -n 20 | sed 's/^/# /'
	fi
	shows "$name/$shot" "BULK_TEST: applied $(wc -l <"$dir/$name.db-changed"), "
	if [ -s "$dir/$name.failed" ] && [ -z "$(comm -12 "$dir/$name.failed" "$dir/$name.db-changed")" ]; then
		ok "$name: no row reported failed was changed"
	else
		not_ok "$name: no row reported failed was changed"
	fi
	lacks "$name/list-after-restart" 'STALE'
	shows "$name/list-after-restart" 'BULK-0'
}
# Killed while an UPDATE of the run waits for row 700150: the batches before it applied, that
# one rolled back (its row failed, the others not attempted), the next could not start.
bulk_facts bulk-kill killed
shows bulk-kill/killed 'failed 1; 0 protected'
shows bulk-kill/killed 'stopped because: batch'
shows bulk-kill/killed 'could not start'
shows bulk-kill/killed 'BULK-0150                failed        connection lost'
shows bulk-kill/killed 'rolled back, so nothing of it was changed'
shows bulk-kill/killed '                not attempted'
# A row not attempted has no result line: the applied ones and row 700150 have.
if [ "$(grep -c '"result":"\(applied\|skipped\|failed\)"' "$dir/bulk-kill.audit")" -eq $(($(wc -l <"$dir/bulk-kill.db-changed") + 1)) ]; then
	ok "bulk-kill: the audit file has a result line for the rows attempted only"
else
	not_ok "bulk-kill: the audit file has a result line for the rows attempted only"
fi
shows bulk-kill/results-after-restart 'stopped because: batch'
case "$(tr '\n' ' ' <"$dir/bulk-kill.failed")/$(cat "$dir/bulk-kill.row-700150" 2>/dev/null)" in
'700150 /3/0') ok "bulk-kill: row 700150 alone failed, and the database did not change it" ;;
*) not_ok "bulk-kill: row 700150 alone failed, and the database did not change it: $(cat "$dir/bulk-kill.failed" "$dir/bulk-kill.row-700150" 2>/dev/null | tr '\n' ' ')" ;;
esac
if [ "$(head -n 1 "$dir/bulk-kill.db-changed")" = 700001 ] &&
	[ "$(tail -n 1 "$dir/bulk-kill.db-changed")" -lt 700150 ] &&
	[ "$(wc -l <"$dir/bulk-kill.db-changed")" -eq $(($(tail -n 1 "$dir/bulk-kill.db-changed") - 700000)) ]; then
	ok "bulk-kill: the rows applied are the whole batches before the one killed"
else
	not_ok "bulk-kill: the rows applied are the whole batches before the one killed"
fi
# Killed at the COMMIT of the batch holding row 700150: that batch re-read once the server
# was back, found not committed (so failed, not retried), and the rest of the run applied.
bulk_facts bulk-kill-commit results
# (the screen wraps the message after "NOT committe")
shows bulk-kill-commit/results 'failed        the connection was lost during COMMIT; re-read from the server: the change was NOT'
shows bulk-kill-commit/results '0 not attempted'
lacks bulk-kill-commit/results 'IN DOUBT'
lacks bulk-kill-commit/results 'stopped because'
first=$(head -n 1 "$dir/bulk-kill-commit.failed")
last=$(tail -n 1 "$dir/bulk-kill-commit.failed")
nfailed=$(wc -l <"$dir/bulk-kill-commit.failed")
if [ "$last" = 700150 ] && [ "$nfailed" -eq $((last - first + 1)) ] &&
	[ $((nfailed + $(wc -l <"$dir/bulk-kill-commit.applied"))) -eq 300 ]; then
	ok "bulk-kill-commit: the batch killed at its COMMIT failed whole ($first..$last); every other row applied"
else
	not_ok "bulk-kill-commit: the batch killed at its COMMIT failed whole; every other row applied ($first..$last, $nfailed)"
fi

# FAULTS_KEEP=DIR keeps the screens for a look.
[ -n "${FAULTS_KEEP:-}" ] && cp -r "$dir/out/." "$FAULTS_KEEP/"
tap_done
