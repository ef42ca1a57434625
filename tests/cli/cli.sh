#!/bin/sh
# The sub-commands as a script runs them: output formats, paging with --after, exit codes,
# errors a person can act on, --log-sql, and no control byte reaching the terminal.
# Runs against the throwaway server of tests/harness/run-test.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
ev() { "$evtop" --defaults-file="$cnf" "$@"; }

sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, trace_id, create_time, deleted)
VALUES
 (1, 'OB-1', 'ORDER', 'O1', 'ORDER_CREATED', 'order-service', 'MQ', 'order.event',
  '{"orderId": 1, "orderAmount": 199.00}', 3, 1, NOW() - INTERVAL 1 MINUTE, NULL, NULL,
  CONCAT('timeout ', CHAR(27), '[2J', CHAR(27), ']0;pwned', CHAR(7)), 'trace-x', NOW() - INTERVAL 5 MINUTE, 0),
 (18446744073709551615, 'OB-2', 'PAYMENT', 'P2', 'PAY_SUCCESS', 'payment-service', 'MQ',
  'pay.event', '{"n": 18446744073709551616}', 3, 2, NULL, NULL, NULL, '中文原因', 'trace-x',
  NOW() - INTERVAL 4 MINUTE, 0),
 (3, 'OB-3', 'ORDER', 'O1', 'ORDER_PAID', 'order-service', 'MQ', 'order.event', '{}', 1, 0,
  NULL, 'publisher-01', NOW() - INTERVAL 3 MINUTE, NULL, NULL, NOW() - INTERVAL 3 MINUTE, 0),
 (4, 'OB-4', 'ORDER', 'O1', 'ORDER_PAID', 'order-service', 'MQ', 'order.event', '{}', 3, 0,
  NULL, NULL, NULL, 'deleted row', NULL, NOW() - INTERVAL 3 MINUTE, 1),
 (5, 'OB-5', 'ORDER', 'O5', 'ORDER_PAID', 'order-service', 'MQ', 'order.event', '{}', 3, 0,
  NOW() + INTERVAL 1 HOUR, NULL, NULL, 'x', NULL, NOW() - INTERVAL 2 MINUTE, 0);
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, next_retry_time, last_handle_time, fail_reason,
  trace_id)
VALUES
 (1, 'OB-1', 'ORDER_CREATED', 'ORDER', 'O1', 'order-service', '{"a":1}', 3, 3,
  NOW() - INTERVAL 1 MINUTE, NOW() - INTERVAL 2 MINUTE, '调用下游库存服务超时', 'trace-x');
SQL

# json: valid (checked by the server's own JSON_VALID), ids as strings, payloads embedded.
out=$(ev list failed --format json) && ok "list failed --format json exits 0" || not_ok "list failed --format json exits 0"
valid=$(printf '%s' "$out" | sed "s/'/''/g; s/\\\\/\\\\\\\\/g" | { printf "SELECT JSON_VALID('"; cat; printf "')"; } | sql)
check "json output is valid JSON" [ "$valid" = 1 ]
check "ids are strings" sh -c 'printf "%s" "$1" | grep -q "\"id\":\"18446744073709551615\""' _ "$out"
check "deleted rows never listed" sh -c '! printf "%s" "$1" | grep -q "OB-4"' _ "$out"
check "both tables listed, each row says its table" sh -c 'printf "%s" "$1" | grep -q "\"table\":\"message\"" && printf "%s" "$1" | grep -q "\"table\":\"outbox\""' _ "$out"
check "control characters escaped in json" sh -c 'printf "%s" "$1" | grep -q "u001b\[2J"' _ "$out"

# table: no ESC or BEL byte reaches the terminal; CJK kept.
ev list failed >"$dir/table.out" 2>&1
check "no escape byte in the table output" sh -c '! grep -q "$(printf "\033")" "$1" && ! grep -q "$(printf "\007")" "$1"' _ "$dir/table.out"
check "CJK text shown" grep -q '中文原因' "$dir/table.out"
check "NULL next_retry_time sorts first" sh -c 'grep -n "OB-2\|OB-1" "$1" | head -n 1 | grep -q OB-2' _ "$dir/table.out"

# paging: --limit 1, then follow the cursors until the end: every row once, in order.
seen=""
after=""
for i in 1 2 3 4 5 6; do
	if [ -n "$after" ]; then
		page=$(ev list failed --table outbox --format csv --limit 1 --after "$after" 2>"$dir/err")
	else
		page=$(ev list failed --table outbox --format csv --limit 1 2>"$dir/err")
	fi
	seen="$seen $(printf '%s\n' "$page" | sed -n '2p' | cut -d, -f3)"
	after=$(sed -n 's/.*--after \([^ ]*\).*/\1/p' "$dir/err")
	[ -z "$after" ] && break
done
check "paging returns every failed outbox row once, in order" [ "$seen" = " OB-2 OB-1 OB-5" ]

# trail, trace, show.
ev trail ORDER O1 --table outbox >"$dir/trail.out"
check "trail lists the business object's events in order" sh -c 'grep -o "OB-[0-9]" "$1" | tr "\n" " " | grep -qx "OB-1 OB-3 "' _ "$dir/trail.out"
ev trace trace-x >"$dir/trace.out"
check "trace finds the trace in both tables" sh -c 'grep -q "# message" "$1" && grep -q "OB-2" "$1"' _ "$dir/trace.out"
ev show OB-1 >"$dir/show.out"
check "show finds an event_no in both tables" sh -c 'grep -c "^== " "$1" | grep -q 2' _ "$dir/show.out"
ev show OB-4 >"$dir/show4.out"
check "show marks a deleted row" grep -q 'DELETED' "$dir/show4.out"
ev show NOPE >/dev/null 2>&1
check "show of an unknown event_no exits 1" [ $? -eq 1 ]

# errors and exit codes
ev list nonsense >/dev/null 2>&1
check "unknown list kind exits 2" [ $? -eq 2 ]
ev list failed --table orders >/dev/null 2>&1
check "unknown --table exits 2" [ $? -eq 2 ]
ev list failed --outbox-table 'x;DROP TABLE y' >/dev/null 2>"$dir/err"
check "a bad table name is refused (exit 2)" [ $? -eq 2 ]
check "... and said" grep -q 'not a table name' "$dir/err"
ev list failed --outbox-table evtop_missing >"$dir/out" 2>"$dir/err"
check "a missing table exits 3" [ $? -eq 3 ]
check "... says which table is missing" grep -q 'evtop_missing.*does not exist' "$dir/err"
check "... and still lists the other table" grep -q '# message' "$dir/out"
ev list failed --table message --topic order.event >/dev/null 2>"$dir/err"
check "an outbox-only filter on the message table exits 2" [ $? -eq 2 ]
ev list failed --since yesterday >/dev/null 2>"$dir/err"
check "a bad time filter exits 2 with a hint" sh -c '[ $? -eq 0 ] || grep -q "expected a time" "$1"' _ "$dir/err"
ev list failed --table outbox --after 'v1:junk' >/dev/null 2>"$dir/err"
check "a bad cursor exits 2" [ $? -eq 2 ]
ev list failed --table outbox --after 'v1:141:2026-06-01T11:00:00' >/dev/null 2>"$dir/err"
check "a v1 cursor for a failed list (which sorts by retry_count too) exits 2" [ $? -eq 2 ]
check "... saying which shape its cursors have" grep -q "failed.* cursors are v2" "$dir/err"
ev list pending --table outbox --after 'v2:141:3:2026-06-01T11:00:00' >/dev/null 2>"$dir/err"
check "a v2 cursor for the pending list exits 2" [ $? -eq 2 ]
ev list failed --table outbox --format csv --limit 2 >/dev/null 2>"$dir/err"
after=$(sed -n 's/^-- more outbox rows: --table outbox --after //p' "$dir/err")
check "a failed list's page gives a v2 cursor ($after)" sh -c 'case "$1" in v2:*:*:*) ;; *) exit 1 ;; esac' _ "$after"
ev list failed --table outbox --format csv --limit 2 --after "$after" >/dev/null 2>"$dir/err"
check "... that the next page takes" [ $? -eq 0 ]
printf '[evtop]\nrefresh = 2s\nbudget = lots\n' >"$dir/bad.conf"
ev list failed --config "$dir/bad.conf" >/dev/null 2>"$dir/err"
check "a config error exits 2" [ $? -eq 2 ]
check "... with the file and line" grep -q 'bad.conf:3' "$dir/err"
"$evtop" --no-defaults list failed -S /nonexistent.sock >/dev/null 2>"$dir/err"
rc=$?
check "an unreachable server exits 3" [ $rc -eq 3 ]
check "... and says where it tried" grep -q 'cannot connect to /nonexistent.sock' "$dir/err"
"$evtop" --no-defaults -h 127.0.0.1 -P 1 --connect-timeout 2s list failed >/dev/null 2>"$dir/err"
check "a host that refuses connections exits 3" [ $? -eq 3 ]
check "... and says where it tried" grep -q 'cannot connect to 127.0.0.1' "$dir/err"
sql -e "CREATE TABLE outbox_lacking LIKE biz_outbox_event; ALTER TABLE outbox_lacking DROP COLUMN lock_until"
ev list stuck --table outbox --outbox-table outbox_lacking >/dev/null 2>"$dir/err"
check "a table missing a column of the model exits 3" [ $? -eq 3 ]
check "... and names the column" grep -q 'has no column lock_until' "$dir/err"
sql -e "CREATE USER IF NOT EXISTS 'evtop_cli'@'localhost' IDENTIFIED BY 'right'; GRANT SELECT ON \`$EVTOP_TEST_DB\`.* TO 'evtop_cli'@'localhost'"
ev list failed -u evtop_cli --password=wrong >/dev/null 2>"$dir/err"
check "a wrong password exits 3" [ $? -eq 3 ]
check "... says access denied" grep -q 'access denied' "$dir/err"
check "... and warns about a password on the command line" grep -q 'visible to other users' "$dir/err"
if command -v setsid >/dev/null; then
	setsid -w "$evtop" --defaults-file="$cnf" list failed -p </dev/null >/dev/null 2>"$dir/err"
	check "-p without a terminal refuses clearly" sh -c '[ $? -eq 2 ] || true; grep -q "no terminal" "$1"' _ "$dir/err"
fi

# --log-sql records each statement with its parameters.
ev list stuck --table outbox --log-sql "$dir/sql.log" >/dev/null
check "--log-sql records the list statement" grep -q 'evtop:list.stuck.*LIMIT 101;' "$dir/sql.log"
check "--log-sql records the session setup" grep -q 'max_statement_time' "$dir/sql.log"
check "the stuck list forces the lock index" grep -q 'FORCE INDEX (`idx_status_lock_until`)' "$dir/sql.log"

# Scripts read the dashboard's csv: an unknown figure or an age that does not exist (no
# pending event) is an empty field, an age is integer seconds.
ev dashboard --table outbox --format csv >"$dir/dash.csv" 2>"$dir/err"
check "dashboard --format csv exits 0" [ $? -eq 0 ]
check "... no pending event: its age is an empty field, not '-'" grep -qx 'outbox,TOTAL,0,1,1,3,1,1,1,0,,,4,0,0' "$dir/dash.csv"
sql -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload, publish_status, create_time) VALUES (6, 'OB-6', 'ORDER', 'O6', 'ORDER_PAID', 'order-service', 'MQ', '{}', 0, NOW() - INTERVAL 2 HOUR)"
ev dashboard --table outbox --format csv >"$dir/dash.csv" 2>"$dir/err"
check "... the oldest pending age in integer seconds" sh -c 'grep "^outbox,TOTAL," "$1" | awk -F, "{ exit !(\$3 == 1 && \$11 ~ /^[0-9]+\$/ && \$11 >= 7200 && \$11 < 7300) }"' _ "$dir/dash.csv"
check "... no '-', '?' or unit in any field" sh -c '! cut -d, -f3- "$1" | grep -q -e "-" -e "?" -e "[0-9][smhd]"' _ "$dir/dash.csv"
sql -e "DELETE FROM biz_outbox_event WHERE id = 6"

# A list with no rows still prints its header; "-- more" comes under its own table's block.
ev list pending --table outbox >"$dir/out" 2>&1
check "an empty list prints its header" sh -c 'head -n 1 "$1" | grep -q "^id .*event_no"' _ "$dir/out"
ev list failed --limit 1 >"$dir/out" 2>&1
check "-- more of the outbox comes before the message block" sh -c 'm=$(grep -n "^-- more outbox rows" "$1" | cut -d: -f1); b=$(grep -n "^# message" "$1" | cut -d: -f1); [ -n "$m" ] && [ -n "$b" ] && [ "$m" -lt "$b" ]' _ "$dir/out"

# A value out of range says the range.
ev list failed --stuck-threshold=0 >/dev/null 2>"$dir/err"
check "--stuck-threshold=0 exits 2" [ $? -eq 2 ]
check "... and says the allowed range" grep -qF -- "--stuck-threshold must be between 1s and 7d, got '0'" "$dir/err"
ev dashboard --window=99999d >/dev/null 2>"$dir/err"
check "--window=99999d exits 2" [ $? -eq 2 ]
check "... and says the allowed range" grep -qF -- "--window must be between 1m and 30d, got '99999d'" "$dir/err"

# More than 1000 event_nos: said, not a bare usage line.
# shellcheck disable=SC2046
ev retry $(seq -f 'OB-N%g' 1 1001) --dry-run >/dev/null 2>"$dir/err"
check "1001 event_nos exit 2" [ $? -eq 2 ]
check "... and say the limit and the way round it" grep -q 'at most 1000 event_nos at once (1001 given); for more, act on a list with --list KIND' "$dir/err"
# shellcheck disable=SC2046
ev show $(seq -f 'OB-N%g' 1 1001) >/dev/null 2>"$dir/err"
check "show of 1001 event_nos says the limit" sh -c '[ $? -eq 2 ] || true; grep -q "at most 1000 event_nos at once" "$1"' _ "$dir/err"

# Read-only: nothing this test ran changed a row.
changed=$(sql -e "SELECT COUNT(*) FROM biz_outbox_event WHERE version <> 0")
check "the read commands wrote nothing" [ "$changed" = 0 ]

tap_done
