#!/bin/sh
# `evtop dashboard` and `evtop check` as cron and a monitoring system run them: formats,
# lower bounds, exit codes 0/1/2/3, syntax errors with their column, an unreachable server.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
ev() { "$evtop" --defaults-file="$cnf" "$@"; }
code() { # code EXPECTED DESCRIPTION ARGS...: the exit code of evtop check
	want=$1
	d=$2
	shift 2
	ev check "$@" >"$dir/out" 2>&1
	got=$?
	if [ "$got" = "$want" ]; then ok "$d (exit $want)"; else not_ok "$d: exit $got, want $want: $(cat "$dir/out")"; fi
}

sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  max_retry_count, next_retry_time, locked_by, lock_until, create_time)
VALUES
 (1, 'O1', 'ORDER', '1', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 1, 0, 5, NULL, 'p-1',
  NOW() - INTERVAL 5 MINUTE, NOW() - INTERVAL 10 MINUTE),
 (2, 'O2', 'ORDER', '2', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 3, 5, 5, NULL, NULL, NULL,
  NOW() - INTERVAL 10 MINUTE),
 (3, 'O3', 'ORDER', '3', 'PAY_SUCCESS', 's', 'MQ', 't', '{}', 0, 0, 5, NULL, NULL, NULL,
  NOW() - INTERVAL 20 MINUTE),
 (4, 'O4', 'ORDER', '4', 'PAY_SUCCESS', 's', 'MQ', 't', '{}', 0, 0, 5, NULL, NULL, NULL,
  NOW() - INTERVAL 20 MINUTE);
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, create_time)
VALUES (1, 'M1', 'ORDER_CREATED', 'ORDER', '1', 's', '{}', 0, 0, 3, NOW() - INTERVAL 1 MINUTE);
SQL

# dashboard
ev dashboard --format json >"$dir/dash.json"
check "dashboard --format json exits 0" [ $? -eq 0 ]
valid=$(sed "s/'/''/g; s/\\\\/\\\\\\\\/g" "$dir/dash.json" | { printf "SELECT JSON_VALID('"; cat; printf "')"; } | sql)
check "dashboard json is valid JSON" [ "$valid" = 1 ]
check "dashboard json has the outbox totals" grep -q '"table":"outbox".*"total":{"pending":2,"processing":1,"stuck":1,"failed":1' "$dir/dash.json"
ev dashboard --table outbox --by event_type >"$dir/dash.txt"
check "dashboard table has a TOTAL row" grep -q '^outbox  TOTAL' "$dir/dash.txt"
check "dashboard names its window" grep -q 'created in the last 1h00m (create_time)' "$dir/dash.txt"
ev dashboard --by colour >/dev/null 2>&1
check "a bad --by exits 2" [ $? -eq 2 ]
ev dashboard --table message --by topic >/dev/null 2>&1
check "topic on the message table exits 2" [ $? -eq 2 ]

# check: operators, precedence, three-valued logic
code 0 "nothing fires" --warning 'exhausted > 5' --critical 'stuck > 3'
code 1 "warning fires" --warning 'stuck > 0' --critical 'stuck > 3'
code 2 "critical fires" --warning 'stuck > 0' --critical 'outbox.exhausted >= 1'
code 2 "and/or precedence: a or b and c = a or (b and c)" --critical 'stuck == 1 or pending > 100 and failed > 100'
code 0 "not binds tighter than and" --critical 'not stuck > 0 and pending > 0'
code 1 "!= and <" --warning 'pending != 4 and message.pending < 2'
code 2 "a group of a table" --critical 'outbox.pending[PAY_SUCCESS] == 2'
code 0 "an absent group counts 0" --critical 'outbox.pending[NO_SUCH_TYPE] > 0'
code 2 "durations are seconds" --critical 'oldest_pending_age > 15m and oldest_pending_age < 1h'
code 3 "a syntax error is UNKNOWN" --critical 'stuck >'
check "... and gives the column" grep -q 'column 8' "$dir/out"
code 3 "an unknown figure is UNKNOWN" --warning 'stuk > 0'
check "... and suggests the name" grep -q "did you mean 'stuck'" "$dir/out"
code 3 "no expression is UNKNOWN" --format json
ev check --no-defaults -S /nonexistent.sock --critical 'stuck > 0' >"$dir/out" 2>&1
check "an unreachable server is UNKNOWN (exit 3)" [ $? -eq 3 ]
check "... with a plugin line" grep -q '^EVTOP UNKNOWN - cannot connect' "$dir/out"
ev check --outbox-table evtop_missing --critical 'outbox.stuck > 0' >"$dir/out" 2>&1
check "a missing table makes its figures unknown (exit 3)" [ $? -eq 3 ]
ev check --outbox-table evtop_missing --critical 'message.pending > 0' >"$dir/out" 2>&1
check "... while the other table still answers (exit 2)" [ $? -eq 2 ]
# --table: a figure with no table is that table's alone, not unknown for the table not read.
code 2 "--table outbox: failed is the outbox's" --table outbox --critical 'failed > 0'
code 1 "--table outbox: a warning on its own" --table outbox --warning 'failed > 0'
code 0 "--table outbox: pending leaves the message table out (2, not 3)" --table outbox --critical 'pending > 2'
code 2 "--table message: pending is the message table's" --table message --critical 'pending == 1 and failed == 0'
code 3 "--table outbox with message.pending named is a usage error" --table outbox --critical 'message.pending > 0'
check "... that says which table" grep -q '^EVTOP UNKNOWN - --critical names the message table, which --table outbox leaves out' "$dir/out"
ev check --warning 'stuck > 0' --format json >"$dir/out"
check "json output names the status" grep -q '"status":"WARNING","code":1' "$dir/out"
ev check --critical 'pending > 0' >"$dir/out"
check "the plugin line has perfdata" grep -q '^EVTOP CRITICAL - critical: pending=3 | outbox_pending=2' "$dir/out"

tap_done
