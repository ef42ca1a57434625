#!/bin/sh
# evtop retry / cancel / recover --list KIND: the bulk form, as a runbook runs it. --dry-run
# prints the count, the protected rows and the statement and writes nothing; without a
# terminal and without --yes nothing is done; --yes applies in batches and ends with the tally
# (the rows, the evtop_audit rows and the audit file agree); the retry schedule is spread at
# --rate; protected rows are skipped unless --include-protected (or, on a terminal, their count
# typed); usage errors and exit codes.
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

# Outbox: 30 failed rows due since 11:00 (ids 10, 20, 30 are PAY_SUCCESS: protected), two stuck
# behind an expired lock, one whose lock still holds. Message table: 3 exhausted failures, 2
# with retries left, one stuck for 20 minutes. Each table's newest row is less than an hour
# old at the pinned NOW(), or a time zone mismatch would be suspected and every write refused.
values=""
i=1
while [ $i -le 30 ]; do
	type=ORDER_CREATED
	agg=ORDER
	[ $((i % 10)) -eq 0 ] && type=PAY_SUCCESS && agg=PAYMENT
	values="$values${values:+,}($i, 'OB-$i', '$agg', 'A$i', '$type', 'svc', 'MQ', '{}', 3, 1, 5, '2026-06-01 11:00:00' + INTERVAL $i SECOND, NULL, NULL, 'mq timeout', 1, '2026-06-01 10:00:00', '2026-06-01 11:00:00')"
	i=$((i + 1))
done
sql <<SQL
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
VALUES $values,
 (40, 'OB-40', 'ORDER', 'A40', 'ORDER_CREATED', 'svc', 'MQ', '{}', 1, 0, 5, NULL,
  'publisher-01', '2026-06-01 11:58:00', NULL, 2, '2026-06-01 10:00:00', '2026-06-01 11:56:00'),
 (41, 'OB-41', 'ORDER', 'A41', 'ORDER_CREATED', 'svc', 'MQ', '{}', 1, 0, 5, NULL,
  'publisher-01', '2026-06-01 11:59:00', NULL, 2, '2026-06-01 10:00:00', '2026-06-01 11:57:00'),
 (42, 'OB-42', 'ORDER', 'A42', 'ORDER_CREATED', 'svc', 'MQ', '{}', 1, 0, 5, NULL,
  'publisher-02', '2026-06-01 12:05:00', NULL, 2, '2026-06-01 11:59:00', '2026-06-01 11:59:00');
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time,
  last_handle_time, fail_reason, version, create_time, update_time)
VALUES
 (1, 'M-1', 'ORDER_CREATED', 'ORDER', 'B1', 'svc', '{}', 3, 3, 3, '2026-06-01 11:10:00', NULL, 'x', 4, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (2, 'M-2', 'ORDER_CREATED', 'ORDER', 'B2', 'svc', '{}', 3, 3, 3, '2026-06-01 11:20:00', NULL, 'x', 4, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (3, 'M-3', 'REFUND_DONE', 'REFUND', 'B3', 'svc', '{}', 3, 3, 3, '2026-06-01 11:30:00', NULL, 'x', 4, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (4, 'M-4', 'ORDER_CREATED', 'ORDER', 'B4', 'svc', '{}', 3, 1, 3, '2026-06-01 11:40:00', NULL, 'x', 2, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (5, 'M-5', 'ORDER_CREATED', 'ORDER', 'B5', 'svc', '{}', 3, 1, 3, '2026-06-01 11:50:00', NULL, 'x', 2, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (6, 'M-6', 'ORDER_CREATED', 'ORDER', 'B6', 'svc', '{}', 1, 0, 3, NULL, '2026-06-01 11:40:00', NULL, 1, '2026-06-01 11:40:00', '2026-06-01 11:40:00');
SQL
state() { sql -e "SELECT GROUP_CONCAT(CONCAT(id, ':', publish_status, ':', version) ORDER BY id) FROM biz_outbox_event; SELECT GROUP_CONCAT(CONCAT(id, ':', event_status, ':', version) ORDER BY id) FROM biz_message_event; SELECT COUNT(*) FROM evtop_audit"; }
initial=$(state)

# --dry-run: the count, the protected rows, the statement; nothing written anywhere.
ev retry --list failed-due --table outbox --dry-run >"$dir/out" 2>&1
check "--dry-run exits 0" [ $? -eq 0 ]
check "... names the action, the table and the list" grep -qF 'would retry_schedule on biz_outbox_event: list failed-due' "$dir/out"
check "... prints the count of the snapshot" grep -qF 'counted:    30 events (a snapshot of their id and version)' "$dir/out"
check "... prints the protected rows, by token" grep -qF 'protected:  3 (PAY 3), left alone; --include-protected acts on them too' "$dir/out"
check "... prints what it acts on, in batches" grep -qF 'to act on:  27 events, in 1 batch of at most 100, 100 ms apart' "$dir/out"
check "... prints the schedule spread at the default rate" grep -qF 'schedule:   next_retry_time = NOW() + 0 .. 2 s, at most 10 events due per second' "$dir/out"
check "... prints the statement with its placeholders" grep -qF 'statement:  /* evtop:action.retry_schedule */ UPDATE `biz_outbox_event` SET next_retry_time = NOW() + INTERVAL ? SECOND, max_retry_count = GREATEST(max_retry_count, retry_count + 1), version = version + 1, update_time = NOW() WHERE id = ? AND deleted = 0 AND version = ? AND publish_status = 3;' "$dir/out"
check "... and the first one with its parameters" grep -qF 'first:      /* evtop:action.retry_schedule */ UPDATE `biz_outbox_event` SET next_retry_time = NOW() + INTERVAL 0 SECOND, max_retry_count = GREATEST(max_retry_count, retry_count + 1), version = version + 1, update_time = NOW() WHERE id = 1 AND deleted = 0 AND version = 1 AND publish_status = 3;' "$dir/out"
check "... and what it changes" grep -qF 'change:     publish_status stays 3 (failed), next_retry_time 2026-06-01 11:00:01 -> NOW() + 0 s' "$dir/out"
check "... says nothing was written" grep -qF 'dry-run: nothing was written' "$dir/out"
check "... its verdict is each row's guarded WHERE, counted on the server" grep -qF 'verdict:    27 would be applied, 0 would be skipped (each row'"'"'s guarded WHERE, counted on the server now)' "$dir/out"
check "... writes nothing to the tables" [ "$(state)" = "$initial" ]
check "... writes no audit file" [ ! -e "$audit" ]
ev retry --list failed-due --table outbox --dry-run --format json >"$dir/out" 2>&1
check "--dry-run --format json" sh -c 'grep -q "\"counted\": 30" "$1" && grep -q "\"protected\": 3" "$1" && grep -q "\"to_act_on\": 27" "$1" && grep -q "\"dry_run\": true" "$1"' _ "$dir/out"
check "... with the server's verdict" sh -c 'grep -q "\"would_apply\": 27" "$1" && grep -q "\"would_skip\": 0" "$1"' _ "$dir/out"

# The filters of evtop list.
ev retry --list failed --table outbox --event-type PAY_SUCCESS --dry-run >"$dir/out" 2>&1
check "a filter: --event-type" sh -c 'grep -qF "list failed, event_type=\"PAY_SUCCESS\"" "$1" && grep -qF "counted:    3 events" "$1" && grep -qF "to act on:  0 events" "$1"' _ "$dir/out"
ev retry --list failed --table outbox --filter 'event_type=ORDER_CREATED reason~timeout' --dry-run >"$dir/out" 2>&1
check "a filter: --filter expression" sh -c 'grep -qF "counted:    27 events" "$1" && grep -qF "protected:  0" "$1"' _ "$dir/out"
ev cancel --list pending --table outbox --reason x --dry-run >"$dir/out" 2>&1
rc=$?
check "an empty list: exit 0, nothing to act on" sh -c '[ "$1" -eq 0 ] || exit 1; shift; grep -qF "counted:    0 events" "$1"' _ "$rc" "$dir/out"

# No terminal, no --yes: refused, nothing done.
ev retry --list failed --table outbox </dev/null >"$dir/out" 2>"$dir/err"
check "no terminal and no --yes exits 1" [ $? -eq 1 ]
check "... and says why" grep -q 'no terminal to confirm on; add --yes' "$dir/err"
check "... and writes nothing" [ "$(state)" = "$initial" ]

# --yes: the schedule at --rate 5, in batches of 10; protected rows left.
ev retry --list failed-due --table outbox --yes --rate 5 --batch-size 10 --pause 0 --operator OPS-1 --reason 'MQ is back' </dev/null >"$dir/out" 2>"$dir/err"
check "retry --list --yes exits 0" [ $? -eq 0 ]
check "... ends with the tally" grep -q '^bulk .* retry_schedule on biz_outbox_event: applied 27, skipped 0 (changed meanwhile), failed 0; 3 protected and 0 refused not touched; 0 not attempted; 3 batches in ' "$dir/out"
check "... no progress on stderr without a terminal" [ ! -s "$dir/err" ]
check "... the rows: still failed, one more version" [ "$(sql -e "SELECT COUNT(*) FROM biz_outbox_event WHERE id <= 30 AND publish_status = 3 AND version = 2 AND update_time = '$now'")" = 27 ]
check "... spread: 5 due per second from NOW()" [ "$(sql -e "SELECT GROUP_CONCAT(c ORDER BY t) FROM (SELECT next_retry_time t, COUNT(*) c FROM biz_outbox_event WHERE id <= 30 AND version = 2 GROUP BY 1) d")" = "5,5,5,5,5,2" ]
check "... the first at NOW(), the last 5 s later" [ "$(sql -e "SELECT CONCAT(MIN(next_retry_time), ' ', MAX(next_retry_time)) FROM biz_outbox_event WHERE id <= 30 AND version = 2")" = "2026-06-01 12:00:00 2026-06-01 12:00:05" ]
check "... oldest failure first" [ "$(sql -e "SELECT next_retry_time FROM biz_outbox_event WHERE id = 1")" = "2026-06-01 12:00:00" ]
check "... protected rows untouched" [ "$(sql -e "SELECT GROUP_CONCAT(version) FROM biz_outbox_event WHERE event_type = 'PAY_SUCCESS'")" = "1,1,1" ]
check "... an evtop_audit row per change" [ "$(sql -e "SELECT COUNT(*), MIN(operator), MIN(reason), MIN(after_status) FROM evtop_audit WHERE action = 'retry_schedule'")" = "27	OPS-1	MQ is back	3" ]
check "... the audit file: an intent line per batch" [ "$(grep -c '"result":"intent".*"bulk":' "$audit")" = 3 ]
check "... and a result line per row" [ "$(grep -c '"result":"applied".*"bulk":.*"batch":' "$audit")" = 27 ]
check "... the intent lines list each row's id, version and delay" grep -q '"rows":\[{"id":"1","event_no":"OB-1","status":3,"version":1,"delay_s":0},' "$audit"

ev retry --list failed --table outbox --event-type PAY_SUCCESS --dry-run --include-protected >"$dir/out" 2>&1
check "--include-protected: the count and that they are included, not 'left alone: 0'" sh -c 'grep -qF "protected:  3 (PAY 3), all included" "$1" && ! grep -q "left alone" "$1"' _ "$dir/out"
ev retry --list failed --table outbox --event-type PAY_SUCCESS --yes --include-protected </dev/null >"$dir/out" 2>&1
rc=$?
check "--include-protected acts on them" sh -c '[ "$1" -eq 0 ] || exit 1; shift; grep -q "applied 3, skipped 0" "$1"' _ "$rc" "$dir/out"

# Retry now: pending again, at most --rate a second (batches of one).
ev retry --list failed --table outbox --now --yes --rate 20 --event-no OB-1 </dev/null >"$dir/out" 2>&1
rc=$?
check "retry --now --list" sh -c '[ "$1" -eq 0 ] || exit 1; shift; grep -q "retry_now on biz_outbox_event: applied 1," "$1"' _ "$rc" "$dir/out"
check "... the row is pending" [ "$(sql -e "SELECT publish_status FROM biz_outbox_event WHERE id = 1")" = 0 ]

# Cancel: needs a reason; the JSON tally.
ev cancel --list failed-exhausted --table message --yes </dev/null >/dev/null 2>"$dir/err"
check "cancel --list without --reason exits 2" [ $? -eq 2 ]
ev cancel --list failed-exhausted --table message --reason '超时关闭' --yes --format json </dev/null >"$dir/out" 2>&1
check "cancel --list --format json exits 0" [ $? -eq 0 ]
check "... the JSON tally" sh -c 'grep -q "\"applied\": 2," "$1" && grep -q "\"protected\": 1," "$1" && grep -q "\"failed\": 0," "$1" && grep -q "\"not_attempted\": 0," "$1" && grep -q "\"bulk\": \"" "$1"' _ "$dir/out"
check "... the rows cancelled with the model's text and the reason" [ "$(sql -e "SELECT GROUP_CONCAT(id ORDER BY id) FROM biz_message_event WHERE event_status = 4 AND fail_reason = '业务已关闭，取消事件处理：超时关闭'")" = "1,2" ]
check "... the protected refund untouched" [ "$(sql -e "SELECT event_status FROM biz_message_event WHERE id = 3")" = 3 ]

# Recover: the expired locks, not the one still held (not in the stuck list). The dry run says
# what the run then does.
ev recover --list stuck --table outbox --dry-run </dev/null >"$dir/out" 2>&1
check "recover --list stuck --dry-run: 2 would be applied" grep -qF 'verdict:    2 would be applied, 0 would be skipped' "$dir/out"
ev recover --list stuck --table outbox --yes </dev/null >"$dir/out" 2>&1
check "recover --list stuck exits 0" [ $? -eq 0 ]
check "... applied 2" grep -q 'recover on biz_outbox_event: applied 2, skipped 0' "$dir/out"
check "... the rows recovered, the held one not" [ "$(sql -e "SELECT GROUP_CONCAT(CONCAT(id, ':', publish_status) ORDER BY id) FROM biz_outbox_event WHERE id >= 40")" = "40:3,41:3,42:1" ]
ev recover --list stuck --table message --yes </dev/null >"$dir/out" 2>"$dir/err"
check "recover on the message table without the switch exits 1" [ $? -eq 1 ]
check "... and says it is not enabled" grep -q 'refused: recover on the message table is not enabled' "$dir/err"
ev recover --list stuck --table message --yes --enable-message-recover </dev/null >"$dir/out" 2>&1
rc=$?
check "... with --enable-message-recover it applies" sh -c '[ "$1" -eq 0 ] || exit 1; shift; grep -q "applied 1," "$1"' _ "$rc" "$dir/out"

# Read-only.
before=$(state)
ev cancel --list failed --table outbox --reason x --dry-run --read-only >"$dir/out" 2>&1
check "--dry-run with --read-only exits 1" [ $? -eq 1 ]
check "... and says read-only" grep -qF 'read-only:  --read-only' "$dir/out"
ev cancel --list failed --table outbox --reason x --yes --read-only </dev/null >"$dir/out" 2>"$dir/err"
check "--read-only --yes exits 1" [ $? -eq 1 ]
check "... refused" grep -q 'refused: read-only' "$dir/err"
check "... and writes nothing" [ "$(state)" = "$before" ]

# Usage errors.
ev retry --list failed --yes </dev/null >/dev/null 2>"$dir/err"
rc=$?
check "--list without --table exits 2" sh -c '[ "$1" -eq 2 ] || exit 1; shift; grep -q "add --table" "$1"' _ "$rc" "$dir/err"
ev retry --list stuck --table outbox --yes </dev/null >/dev/null 2>"$dir/err"
rc=$?
check "a list the action does not start from exits 2" sh -c '[ "$1" -eq 2 ] || exit 1; shift; grep -q "retry acts on the lists failed, failed-due" "$1"' _ "$rc" "$dir/err"
ev retry --list nonsense --table outbox </dev/null >/dev/null 2>&1
check "an unknown list exits 2" [ $? -eq 2 ]
ev retry OB-2 --list failed --table outbox </dev/null >/dev/null 2>&1
check "EVENT_NOs and --list together exit 2" [ $? -eq 2 ]
ev retry --list failed --table outbox --batch-size 0 </dev/null >/dev/null 2>&1
check "--batch-size 0 exits 2" [ $? -eq 2 ]
ev retry --list failed --table outbox --rate 0 </dev/null >/dev/null 2>&1
check "--rate 0 exits 2" [ $? -eq 2 ]
ev retry --list failed --table outbox --pause forever </dev/null >/dev/null 2>&1
check "--pause forever exits 2" [ $? -eq 2 ]
ev retry OB-2 --batch-size 10 </dev/null >/dev/null 2>"$dir/err"
rc=$?
check "--batch-size without --list exits 2" sh -c '[ "$1" -eq 2 ] || exit 1; shift; grep -q "add --list KIND" "$1"' _ "$rc" "$dir/err"
ev retry OB-2 --event-type X </dev/null >/dev/null 2>"$dir/err"
rc=$?
check "a filter without --list exits 2, pointing at --list" sh -c '[ "$1" -eq 2 ] || exit 1; shift; grep -q "only with --list" "$1"' _ "$rc" "$dir/err"
ev retry --list >/dev/null 2>&1
check "--list without a value exits 2" [ $? -eq 2 ]
"$evtop" --no-defaults retry --list failed --table outbox --yes -S /nonexistent.sock </dev/null >/dev/null 2>&1
check "an unreachable server exits 3" [ $? -eq 3 ]
ev retry --help >"$dir/out" 2>&1
rc=$?
check "retry --help explains --list and --rate" sh -c '[ "$1" -eq 0 ] || exit 1; shift; grep -q -- "--list=KIND" "$1" && grep -q -- "--rate=N" "$1"' _ "$rc" "$dir/out"

# On a terminal without --yes: the plan, the protected count to type, "Apply? [y/N]".
if command -v script >/dev/null 2>&1; then
	before=$(state)
	printf 'OPS-2\n\nn\n' | script -qec "\"$evtop\" --defaults-file=\"$pinned\" cancel --list failed --table outbox --reason 'closed'" /dev/null >"$dir/tty" 2>&1
	check "on a terminal it shows the plan and asks" sh -c 'grep -q "about to cancel on biz_outbox_event: list failed" "$1" && grep -q "statement:  /\* evtop:action.cancel \*/" "$1" && grep -q "Apply cancel to 28 events in 1 batch? \[y/N\]" "$1"' _ "$dir/tty"
	check "... asks for the protected rows' count" grep -q 'of protected types (PAY 3) will be left untouched. To act on them too, type 3' "$dir/tty"
	check "... n is No: nothing written" sh -c 'grep -q "declined: nothing was written" "$1"' _ "$dir/tty"
	check "... and nothing changed" [ "$(state)" = "$before" ]
	printf 'OPS-2\n3\ny\n' | script -qec "\"$evtop\" --defaults-file=\"$pinned\" cancel --list failed --table outbox --reason 'closed'" /dev/null >"$dir/tty" 2>&1
	check "... typing the count includes them" grep -q 'protected:  included: now 31 events to act on' "$dir/tty"
	check "... y applies, with progress on the terminal" sh -c 'grep -q "31/31 applied 31 skipped 0 failed 0" "$1" && grep -q "cancel on biz_outbox_event: applied 31," "$1"' _ "$dir/tty"
	check "... with the operator asked for" [ "$(sql -e "SELECT COUNT(*) FROM evtop_audit WHERE action = 'cancel' AND operator = 'OPS-2' AND event_no LIKE 'OB-%'")" = 31 ]
else
	echo "# script(1) not found: the terminal confirmation is not checked"
fi

# --- Ctrl-C: the run stops after the batch under way; a second one ends it at once ------------
# 40 more failed rows (ids 100-139), one a batch, 300 ms apart: about 12 s if left alone.
# (timeout --foreground passes evtop the one signal sent to it; without --foreground it signals
# its process group as well, and evtop would see two.)
values=""
i=100
while [ $i -le 139 ]; do
	values="$values${values:+,}($i, 'OB-$i', 'ORDER', 'A$i', 'ORDER_CREATED', 'svc', 'MQ', '{}', 3, 1, 5, '2026-06-01 11:00:00', NULL, NULL, 'mq timeout', 1, '2026-06-01 10:00:00', '2026-06-01 11:00:00')"
	i=$((i + 1))
done
sql -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
  VALUES $values" || exit 99
moved() { sql -e "SELECT COUNT(*) FROM biz_outbox_event WHERE id BETWEEN 100 AND 139 AND version > 1"; }
timeout --foreground 120 "$evtop" --defaults-file="$pinned" retry --list failed-due --table outbox --yes --batch-size 1 --pause 300ms </dev/null >"$dir/out" 2>"$dir/err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
n=$(moved)
applied=$(sed -n 's/.*: applied \([0-9]*\),.*/\1/p' "$dir/out")
check "Ctrl-C: exit 1, stopped after a batch, the rest not attempted ($n of 40 done)" \
	sh -c "[ $rc -eq 1 ] && grep -q 'stopped after batch [0-9]* (interrupted): the rest was not attempted' '$dir/out' && [ $n -gt 0 ] && [ $n -lt 40 ] && [ '$applied' = $n ]" ||
	sed 's/^/# /' "$dir/out" "$dir/err"
check "... no batch was cut short (no error, nothing in doubt)" sh -c "! grep -qi 'lost\|in doubt\|error' '$dir/out' '$dir/err'"

# A statement under way is not interrupted by the first Ctrl-C: with the remaining rows locked
# by another session, the run waits on the lock; the first Ctrl-C leaves it waiting, the
# second ends the process (as SIGINT does), and its open transaction writes nothing.
before=$(moved)
"$client" --defaults-file="$cnf" -N -B -e "BEGIN; SELECT COUNT(*) FROM biz_outbox_event WHERE id BETWEEN 100 AND 139 FOR UPDATE; DO SLEEP(6); ROLLBACK" >/dev/null 2>&1 &
holder=$!
sleep 1
timeout --foreground 120 "$evtop" --defaults-file="$pinned" retry --list failed-due --table outbox --yes --batch-size 1 --pause 0 </dev/null >"$dir/out" 2>"$dir/err" &
pid=$!
sleep 1.5
kill -INT $pid
sleep 1
kill -0 $pid 2>/dev/null
alive=$?
kill -INT $pid
wait $pid
rc=$?
wait $holder
check "... the first Ctrl-C leaves a statement waiting on a lock alone" [ $alive -eq 0 ]
check "... the second ends the process as SIGINT does (exit $rc)" [ $rc -eq 130 ]
check "... and its transaction wrote nothing" [ "$(moved)" = "$before" ]

# Every audited change is a transition of the model; the audit file and the table agree.
bad=$(sql -e "SELECT COUNT(*) FROM evtop_audit WHERE NOT ((action IN ('retry_now') AND before_status = 3 AND after_status = 0) OR (action = 'retry_schedule' AND before_status = 3 AND after_status = 3) OR (action = 'cancel' AND before_status IN (0, 3) AND after_status = 4) OR (action = 'recover' AND before_status = 1 AND after_status = 3))")
check "every audited change is a transition of the model" [ "$bad" = 0 ]
check "the audit file's applied lines = the evtop_audit rows" [ "$(grep -c '"result":"applied"' "$audit")" = "$(sql -e 'SELECT COUNT(*) FROM evtop_audit')" ]

tap_done
