#!/bin/sh
# evtop retry / cancel / recover as a runbook runs them: --dry-run writes nothing and prints
# the exact statement; without a terminal and without --yes nothing is done; --yes applies
# (the row, the evtop_audit row and the audit file say so); an event_no in both tables is
# ambiguous; refusals, skips and exit codes; the confirmation on a terminal.
# Runs against the throwaway server of tests/harness/run-test, evtop's clock pinned.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"

# evtop's sessions read [evtop]: pin their NOW() there.
now='2026-06-01 12:00:00'
pinned=$dir/pinned.cnf
sed "/^\[evtop\]/a init-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"" "$cnf" >"$pinned"
chmod 600 "$pinned"
XDG_STATE_HOME=$dir/state
export XDG_STATE_HOME
audit=$XDG_STATE_HOME/evtop/audit.jsonl
ev() { "$evtop" --defaults-file="$pinned" "$@"; }
row() { sql -e "SELECT CONCAT_WS(' ', $2) FROM $1 WHERE event_no = '$3'"; }

# Each table's newest row is less than an hour old at the pinned NOW(): no time zone mismatch
# is suspected (the newest rows a whole hour behind would be; see the end).
sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
VALUES
 (1, 'OB-1', 'ORDER', 'O1', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 5, 5,
  '2026-06-01 11:00:00', NULL, NULL, 'mq timeout', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (2, 'BOTH-1', 'ORDER', 'O2', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 1, 5,
  NULL, NULL, NULL, 'x', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (3, 'OB-PAY', 'PAYMENT', 'P3', 'PAY_SUCCESS', 'pay-service', 'MQ', '{}', 3, 1, 5,
  NULL, NULL, NULL, 'x', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (4, 'OB-STUCK', 'ORDER', 'O4', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 1, 0, 5,
  NULL, 'publisher-01', '2026-06-01 11:58:00', NULL, 3, '2026-06-01 10:00:00', '2026-06-01 11:56:00'),
 (5, 'OB-LOCKED', 'ORDER', 'O5', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 1, 0, 5,
  NULL, 'publisher-02', '2026-06-01 12:05:00', NULL, 3, '2026-06-01 11:59:00', '2026-06-01 11:59:00'),
 (6, 'OB-CANC', 'ORDER', 'O6', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 4, 0, 5,
  NULL, NULL, NULL, 'closed', 1, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (7, 'OB-PEND', 'ORDER', 'O7', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 0, 0, 5,
  NULL, NULL, NULL, NULL, 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00');
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time,
  last_handle_time, version, create_time, update_time)
VALUES
 (1, 'BOTH-1', 'ORDER_CREATED', 'ORDER', 'O2', 'order-service', '{}', 3, 1, 3, NULL,
  '2026-06-01 11:00:00', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (2, 'MS-STUCK', 'ORDER_CREATED', 'ORDER', 'O9', 'order-service', '{}', 1, 0, 3, NULL,
  '2026-06-01 11:40:00', 1, '2026-06-01 11:40:00', '2026-06-01 11:40:00');
SQL
state() { sql -e "SELECT GROUP_CONCAT(CONCAT(id, ':', publish_status, ':', version) ORDER BY id) FROM biz_outbox_event; SELECT GROUP_CONCAT(CONCAT(id, ':', event_status, ':', version) ORDER BY id) FROM biz_message_event; SELECT COUNT(*) FROM evtop_audit"; }
initial=$(state)

# --dry-run: the exact statement and what would change, and nothing written anywhere.
ev retry OB-1 --now --dry-run >"$dir/out" 2>&1
check "--dry-run exits 0" [ $? -eq 0 ]
check "--dry-run prints the exact statement" grep -qF 'statement: /* evtop:action.retry_now */ UPDATE `biz_outbox_event` SET publish_status = 0, next_retry_time = NULL, max_retry_count = GREATEST(max_retry_count, retry_count + 1), version = version + 1, update_time = NOW() WHERE id = 1 AND deleted = 0 AND version = 0 AND publish_status = 3;' "$dir/out"
check "--dry-run shows what would change" grep -qF 'change:    publish_status 3 (failed) -> 0 (pending), next_retry_time 2026-06-01 11:00:00 -> NULL, max_retry_count 5 -> 6, version 0 -> 1' "$dir/out"
check "--dry-run says an exhausted event gets one more attempt" grep -q 'exactly one more attempt' "$dir/out"
check "--dry-run says nothing was written" grep -q 'dry-run: nothing was written' "$dir/out"
check "--dry-run writes nothing to the tables" [ "$(state)" = "$initial" ]
check "--dry-run writes no audit file" [ ! -e "$audit" ]
ev cancel OB-PEND --reason '客户取消 it' --dry-run >"$dir/out" 2>&1
check "--dry-run of cancel shows the fail_reason written" grep -qF "fail_reason = '业务已关闭，取消事件发布：客户取消 it', locked_by = NULL, lock_until = NULL" "$dir/out"

# No terminal, no --yes: refused, nothing done.
ev retry OB-1 --now </dev/null >"$dir/out" 2>"$dir/err"
check "no terminal and no --yes exits 1" [ $? -eq 1 ]
check "... and says why" grep -q 'no terminal to confirm on; add --yes' "$dir/err"
check "... and writes nothing" [ "$(state)" = "$initial" ]

# --yes applies.
ev retry OB-1 --now --yes --operator INC-42 --reason 'MQ is back' </dev/null >"$dir/out" 2>&1
check "retry --now --yes exits 0" [ $? -eq 0 ]
check "... says applied with the row as now" grep -q '^applied  outbox OB-1 id=1 retry_now: now publish_status 0 (pending), retry_count 5, max_retry_count 6, next_retry_time NULL, version 1' "$dir/out"
check "... the row is what the SET leaves" [ "$(row biz_outbox_event 'publish_status, retry_count, max_retry_count, IFNULL(next_retry_time, "NULL"), version, update_time, fail_reason' OB-1)" = "0 5 6 NULL 1 $now mq timeout" ]
check "... the audit row is there" [ "$(sql -e "SELECT CONCAT_WS(' ', action, before_status, before_version, after_status, operator, reason, result) FROM evtop_audit WHERE event_no = 'OB-1'")" = "retry_now 3 0 0 INC-42 MQ is back applied" ]
check "... the audit file has the intent and the result" [ "$(wc -l <"$audit")" -eq 2 ]
check "... the result line" grep -q '"event_no":"OB-1","action":"retry_now","before":{"status":3,"retry_count":5,"max_retry_count":5,"next_retry_time":"2026-06-01 11:00:00","version":0},"after_status":0,"reason":"MQ is back","result":"applied","error":null}' "$audit"
check "... the audit file is private" [ "$(stat -c %a "$audit")" = 600 ] && [ "$(stat -c %a "$XDG_STATE_HOME/evtop")" = 700 ]

# The same again: the row is pending now, so the guard refuses before any SQL.
ev retry OB-1 --now --yes </dev/null >"$dir/out" 2>&1
check "retrying a pending event exits 1" [ $? -eq 1 ]
check "... refused, saying the status by name" grep -q 'refused  outbox OB-1 id=1 retry_now: cannot retry now event OB-1: it is pending (0, 待发布)' "$dir/out"

# An event_no in both tables.
ev retry BOTH-1 --yes </dev/null >"$dir/out" 2>&1
check "an event_no in both tables exits 1" [ $? -eq 1 ]
check "... refused as ambiguous" grep -q 'ambiguous: this event_no is in both tables (outbox id 2, message id 1); choose one with --table' "$dir/out"
ev retry BOTH-1 --yes --table message --delay 2m </dev/null >"$dir/out" 2>&1
check "... with --table it applies (scheduled)" [ $? -eq 0 ]
check "... next_retry_time = NOW() + 2 minutes, still failed" [ "$(row biz_message_event 'event_status, next_retry_time, version' BOTH-1)" = "3 2026-06-01 12:02:00 1" ]
check "... the outbox row is untouched" [ "$(row biz_outbox_event 'publish_status, version' BOTH-1)" = "3 0" ]

# Protected types.
ev retry OB-PAY --yes </dev/null >"$dir/out" 2>&1
check "a protected type without --include-protected exits 1" [ $? -eq 1 ]
check "... refused, saying the token" grep -q 'protected type (event_type PAY_SUCCESS, aggregate_type PAYMENT: token PAY)' "$dir/out"
ev retry OB-PAY --yes --include-protected </dev/null >/dev/null 2>&1
check "... with --include-protected it applies" [ $? -eq 0 ]

# Cancel: the reason is required; cancelled is final.
ev cancel OB-PEND --yes </dev/null >/dev/null 2>"$dir/err"
check "cancel without --reason exits 2" [ $? -eq 2 ]
check "... and says so" grep -q 'cancel needs --reason' "$dir/err"
ev cancel OB-PEND --yes --reason '客户取消' </dev/null >/dev/null 2>&1
check "cancel --reason applies" [ $? -eq 0 ]
check "... fail_reason is the model's text and the reason" [ "$(row biz_outbox_event 'publish_status, fail_reason' OB-PEND)" = "4 业务已关闭，取消事件发布：客户取消" ]
ev cancel OB-CANC --yes --reason again </dev/null >"$dir/out" 2>&1
check "cancelling a cancelled event exits 1" [ $? -eq 1 ]
check "... cancelled is final" grep -q 'cancelled is final' "$dir/out"

# Recover: expired lock applied; lock still held skipped (the WHERE's NOW()); message opt-in.
ev recover OB-STUCK OB-LOCKED --yes </dev/null >"$dir/out" 2>&1
check "recover of one stuck and one held event exits 1" [ $? -eq 1 ]
check "... the stuck one is applied" grep -q '^applied  outbox OB-STUCK id=4 recover: now publish_status 3 (failed), retry_count 1' "$dir/out"
check "... the held one is skipped, with the reason and the row as now" grep -q '^skipped  outbox OB-LOCKED id=5 recover: its lock has not expired: lock_until 2026-06-01 12:05:00 is not yet past (server time 2026-06-01 12:00:00).*; now publish_status 1 (publishing), retry_count 0, max_retry_count 5, next_retry_time NULL, version 3' "$dir/out"
check "... the recovered row" [ "$(row biz_outbox_event 'publish_status, retry_count, next_retry_time, fail_reason, IFNULL(locked_by, "NULL"), IFNULL(lock_until, "NULL"), version' OB-STUCK)" = "3 1 2026-06-01 12:01:00 发布器锁定超时，等待重新发布 NULL NULL 4" ]
check "... the held row is unchanged" [ "$(row biz_outbox_event 'publish_status, locked_by, version' OB-LOCKED)" = "1 publisher-02 3" ]
check "... the skip is in the audit file" grep -q '"event_no":"OB-LOCKED".*"result":"skipped","error":"its lock has not expired' "$audit"
ev recover MS-STUCK --yes </dev/null >"$dir/out" 2>&1
check "message recover without the switch exits 1" [ $? -eq 1 ]
check "... and says it is not enabled" grep -q 'recover on the message table is not enabled' "$dir/out"
ev recover MS-STUCK --yes --enable-message-recover --reason 'consumer died' </dev/null >"$dir/out" 2>&1
check "... with --enable-message-recover it applies" [ $? -eq 0 ]
check "... with the message table's text" [ "$(row biz_message_event 'event_status, fail_reason' MS-STUCK)" = "3 消费者处理超时，等待重新处理：consumer died" ]

# Read-only, by flag and by account.
before=$(state)
ev retry OB-CANC --yes --read-only </dev/null >/dev/null 2>"$dir/err"
check "--read-only exits 1" [ $? -eq 1 ]
check "... and says read-only" grep -q 'refused: read-only' "$dir/err"
ev retry OB-CANC BOTH-1 --table outbox --dry-run --read-only >"$dir/out" 2>&1
check "--dry-run with --read-only exits 1 (it would not be applied)" [ $? -eq 1 ]
check "... and shows the statement with the read-only reason" sh -c 'grep -q "read-only: --read-only" "$1" && grep -q "statement: /\* evtop:action.retry_schedule \*/ UPDATE" "$1" && grep -q "0 would be applied, 2 would not" "$1"' _ "$dir/out"
check "... and writes nothing" [ "$(state)" = "$before" ]
sql -e "DROP USER IF EXISTS 'evtop_watch'@'localhost'; CREATE USER 'evtop_watch'@'localhost' IDENTIFIED BY 'pw'; GRANT SELECT ON \`$EVTOP_TEST_DB\`.* TO 'evtop_watch'@'localhost'"
sql -e "UPDATE biz_outbox_event SET publish_status = 3 WHERE id = 2"
before=$(state)
ev retry BOTH-1 --table outbox --yes -u evtop_watch --password=pw </dev/null >"$dir/out" 2>&1
check "a SELECT-only account exits 1" [ $? -eq 1 ]
check "... refused as read-only, saying why" grep -q 'read-only: the account evtop_watch@localhost may not write biz_outbox_event' "$dir/out"
check "... and writes nothing" [ "$(state)" = "$before" ]
ev retry OB-PAY --table outbox --yes -u evtop_watch --password=pw </dev/null >"$dir/out" 2>&1
check "a SELECT-only account retrying a protected event exits 1" [ $? -eq 1 ]
check "... told it is read-only, not to add --include-protected" sh -c 'grep -q "retry_schedule: read-only: the account evtop_watch@localhost may not write" "$1" && ! grep -q "include-protected" "$1"' _ "$dir/out"
check "... and writes nothing" [ "$(state)" = "$before" ]

# An audit file that cannot be written: refused before anything.
XDG_STATE_HOME=/proc/evtop-nowhere ev retry BOTH-1 --table outbox --yes </dev/null >/dev/null 2>"$dir/err"
check "an unwritable audit file exits 1" [ $? -eq 1 ]
check "... and says so" grep -q 'refused: cannot create the audit directory' "$dir/err"
check "... and writes nothing" [ "$(state)" = "$before" ]

# Usage and connection errors.
ev retry >/dev/null 2>&1
check "no event_no exits 2" [ $? -eq 2 ]
ev cancel OB-1 --now --reason x --yes >/dev/null 2>&1
check "--now on cancel exits 2" [ $? -eq 2 ]
ev retry OB-1 --now --delay 1m --yes >/dev/null 2>&1
check "--now with --delay exits 2" [ $? -eq 2 ]
ev retry OB-1 --event-type X --yes >/dev/null 2>&1
check "a filter exits 2" [ $? -eq 2 ]
ev cancel OB-1 --reason >/dev/null 2>&1
check "--reason without a value exits 2" [ $? -eq 2 ]
"$evtop" --no-defaults retry OB-1 --yes -S /nonexistent.sock </dev/null >/dev/null 2>"$dir/err"
check "an unreachable server exits 3" [ $? -eq 3 ]
ev retry --help >"$dir/out" 2>&1
check "retry --help exits 0 and explains --now" sh -c '[ $? -eq 0 ] || exit 1; grep -q -- "--now makes it pending" "$1"' _ "$dir/out"

# On a terminal without --yes: the row, the change, the statement, and "Apply? [y/N]".
if command -v script >/dev/null 2>&1; then
	sql -e "UPDATE biz_outbox_event SET publish_status = 3, version = 5 WHERE id = 7"
	printf 'INC-9\n\n' | script -qec "\"$evtop\" --defaults-file=\"$pinned\" retry OB-PEND" /dev/null >"$dir/tty" 2>&1
	check "on a terminal it asks for the operator, shows the statement and asks" sh -c 'grep -q "Operator or ticket id" "$1" && grep -q "statement: /\* evtop:action.retry_schedule \*/" "$1" && grep -q "Apply? \[y/N\]" "$1"' _ "$dir/tty"
	check "... Enter is No" grep -q 'declined outbox OB-PEND id=7 retry_schedule: not applied' "$dir/tty"
	check "... and nothing changed" [ "$(row biz_outbox_event 'publish_status, version' OB-PEND)" = "3 5" ]
	printf 'INC-9\ny\n' | script -qec "\"$evtop\" --defaults-file=\"$pinned\" retry OB-PEND" /dev/null >"$dir/tty" 2>&1
	check "... y applies" grep -q 'applied  outbox OB-PEND id=7 retry_schedule: now publish_status 3 (failed)' "$dir/tty"
	check "... with the operator asked for" [ "$(sql -e "SELECT operator FROM evtop_audit WHERE event_no = 'OB-PEND' AND action = 'retry_schedule'")" = "INC-9" ]
else
	echo "# script(1) not found: the terminal confirmation is not checked"
fi

# Every recorded status change is one the model allows.
bad=$(sql -e "SELECT COUNT(*) FROM evtop_audit WHERE NOT ((action IN ('retry_now') AND before_status = 3 AND after_status = 0) OR (action = 'retry_schedule' AND before_status = 3 AND after_status = 3) OR (action = 'cancel' AND before_status IN (0, 3) AND after_status = 4) OR (action = 'recover' AND before_status = 1 AND after_status = 3))")
check "every audited change is a transition of the model" [ "$bad" = 0 ]

# A time zone mismatch suspected (the newest write 3 h ahead of the session's NOW()): writes
# wait, and say why; with the applications' zone they go through.
sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  fail_reason, version, create_time, update_time)
VALUES
 (90, 'OB-TZ', 'ORDER', 'O90', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 1, 5, 'x', 0,
  '2026-06-01 14:55:00', '2026-06-01 15:00:00');
SQL
before=$(state)
ev retry OB-TZ --now --yes >"$dir/out" 2>&1
rc=$?
check "a suspected zone mismatch refuses the write (exit $rc)" [ $rc -ne 0 ]
check "... and says why: $(head -c 300 "$dir/out")" grep -qF "time zone mismatch suspected on biz_outbox_event: its newest row (event_no OB-TZ, id 90, create_time 2026-06-01 14:55:00) is 2h55m ahead of NOW() (2026-06-01 12:00:00, session zone UTC+00:00); the applications seem to write UTC+03:00 time: --time-zone=+03:00" "$dir/out"
check "... nothing written" [ "$(state)" = "$before" ]
ev --time-zone=+03:00 retry OB-TZ --now --yes >"$dir/out" 2>&1
rc=$?
check "in the applications' zone the write applies (exit $rc): $(head -c 300 "$dir/out")" \
	[ $rc -eq 0 -a "$(row biz_outbox_event 'publish_status, version' OB-TZ)" = "0 1" ]
sql -e "DELETE FROM biz_outbox_event WHERE id = 90; DELETE FROM evtop_audit WHERE event_id = 90"

# The other direction (#25 item 1): the applications write UTC, the session reads at +08:00,
# so their newest rows are 8 h behind NOW() and every live lock looks expired. Nothing is
# written, in any form, until the zone is right or the operator says --clock-ok.
sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
VALUES
 (91, 'OB-LIVE', 'ORDER', 'O91', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 1, 0, 5,
  NULL, 'publisher-03', '2026-06-01 12:05:00', NULL, 1, '2026-06-01 11:53:00', '2026-06-01 11:59:00'),
 (92, 'OB-UTC-FAIL', 'ORDER', 'O92', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 1, 5,
  '2026-06-01 12:30:00', NULL, NULL, 'mq timeout', 2, '2026-06-01 11:54:00', '2026-06-01 11:58:00');
SQL
before=$(state)
tz8() { ev --time-zone=+08:00 "$@"; }
why_behind='time zone mismatch suspected on biz_outbox_event: its newest row (event_no OB-LOCKED, id 5, create_time 2026-06-01 11:59:00) is 8h01m behind NOW() (2026-06-01 20:00:00, session zone UTC+08:00); the applications seem to write UTC+00:00 time: --time-zone=+00:00'
tz8 recover OB-LIVE --yes </dev/null >"$dir/out" 2>&1
rc=$?
check "8 h behind: recover on an unexpired lock is refused (exit $rc)" [ $rc -eq 1 ]
check "... saying which row, how far and the zone that fixes it: $(head -c 400 "$dir/out")" grep -qF "refused  outbox OB-LIVE id=91 recover: $why_behind" "$dir/out"
check "... and the row is unchanged" [ "$(state)" = "$before" ]
tz8 recover OB-LIVE --dry-run </dev/null >"$dir/out" 2>&1
check "... --dry-run says it would be refused, as the real run is" grep -q '^  verdict:   would be refused (clock)' "$dir/out"
check "... and counts it as not applied" grep -qF 'dry-run: nothing was written (0 would be applied, 1 would not)' "$dir/out"
tz8 retry OB-UTC-FAIL --now --yes </dev/null >"$dir/out" 2>&1
check "... a retry is refused too (exit $?)" grep -qF "refused  outbox OB-UTC-FAIL id=92 retry_now: $why_behind" "$dir/out"
tz8 recover --list stuck --table outbox --yes </dev/null >"$dir/out" 2>&1
rc=$?
check "... bulk recover --list stuck is refused (exit $rc): $(head -c 300 "$dir/out")" [ $rc -eq 1 ]
check "... with the reason" grep -qF "evtop: refused: $why_behind" "$dir/out"
check "... and changes nothing" [ "$(state)" = "$before" ]
tz8 recover --list stuck --table outbox --dry-run </dev/null >"$dir/out" 2>&1
check "... its --dry-run says the real run would be refused" grep -qF 'the real run would be refused (0 would be applied)' "$dir/out"
tz8 check --critical 'outbox.stuck > 0' >"$dir/out" 2>&1
rc=$?
check "... evtop check answers UNKNOWN (exit $rc): $(head -c 300 "$dir/out")" [ $rc -eq 3 ]
# The message table's newest row (11:40) is 8h20m behind: suspected too, and named first.
why_behind_msg='time zone mismatch suspected on biz_message_event: its newest row (event_no MS-STUCK, id 2, create_time 2026-06-01 11:40:00) is 8h20m behind NOW() (2026-06-01 20:00:00, session zone UTC+08:00); the applications seem to write UTC+00:00 time: --time-zone=+00:00'
check "... with the reason in the plugin line" grep -qF "EVTOP UNKNOWN - clock suspect: $why_behind_msg" "$dir/out"
tz8 check --critical 'outbox.stuck > 0' --format json >"$dir/out" 2>&1
check "... its JSON says UNKNOWN and why" grep -qF "{\"status\":\"UNKNOWN\",\"code\":3," "$dir/out"
check "... with clock_suspect" grep -qF "\"clock_suspect\":\"$why_behind_msg" "$dir/out"
tz8 check --critical 'outbox.stuck > 0' --clock-ok >"$dir/out" 2>&1
rc=$?
check "... --clock-ok: the expressions are judged again (exit $rc): $(head -c 200 "$dir/out")" [ $rc -eq 2 ]
check "... and the line says the clock was taken as right" grep -qF '(clock suspect, taken as right: --clock-ok)' "$dir/out"
tz8 dashboard --format json >"$dir/out" 2>"$dir/err"
check "... the dashboard's JSON marks the clock-dependent figures suspect" grep -qF "\"clock_suspect\":{\"reason\":\"$why_behind" "$dir/out"
check "... and the table form says so" sh -c "tz() { \"$evtop\" --defaults-file=\"$pinned\" --time-zone=+08:00 \"\$@\"; }; tz dashboard --table outbox 2>&1 >/dev/null | grep -qF 'CLOCK SUSPECT: stuck, failed_due'"
ev dashboard --format json >"$dir/out" 2>&1
check "in the applications' zone nothing is suspect" grep -qF '"clock_suspect":null' "$dir/out"
ev check --critical 'outbox.stuck > 0' >"$dir/out" 2>&1
check "... and check judges the figures (exit $?)" grep -q '^EVTOP OK' "$dir/out"

# --dry-run evaluates the UPDATE's own WHERE on the server: the lock of OB-LIVE has not
# expired at the applications' NOW(), and the dry run says so, as the real run does.
ev recover OB-LIVE --dry-run </dev/null >"$dir/out" 2>&1
check "--dry-run of recover on a live lock: would be skipped" grep -qF 'verdict:   would be skipped: its WHERE matches no row now: its lock has not expired: lock_until 2026-06-01 12:05:00 is not yet past' "$dir/out"
check "... 0 would be applied" grep -qF 'dry-run: nothing was written (0 would be applied, 1 would not)' "$dir/out"
ev recover OB-LIVE --yes </dev/null >"$dir/out" 2>&1
check "... and the real run skips it (exit $?)" grep -q '^skipped  outbox OB-LIVE id=91 recover: its lock has not expired' "$dir/out"
check "... unchanged" [ "$(state)" = "$before" ]
ev retry OB-UTC-FAIL --now --dry-run </dev/null >"$dir/out" 2>&1
check "--dry-run of a retry whose guard holds: would be applied" grep -qF 'verdict:   would be applied' "$dir/out"

# --clock-ok: the operator knows the zone is right; the write goes through, audited.
lines=$(wc -l <"$audit")
tz8 retry OB-UTC-FAIL --now --yes --clock-ok --operator INC-8 </dev/null >"$dir/out" 2>&1
rc=$?
check "--clock-ok lets the write through (exit $rc): $(head -c 300 "$dir/out")" [ $rc -eq 0 -a "$(row biz_outbox_event 'publish_status, version' OB-UTC-FAIL)" = "0 3" ]
check "... the audit file records the clock-ok first" sh -c "tail -n +$((lines + 1)) '$audit' | head -1 | grep -q '\"action\":\"clock-ok\".*\"reason\":\"--clock-ok\".*\"clock_suspect\":\"time zone mismatch suspected'"
sql -e "DELETE FROM biz_outbox_event WHERE id IN (91, 92); DELETE FROM evtop_audit WHERE event_id IN (91, 92)"

tap_done
