#!/bin/sh
# `evtop doctor` against the test server: the model's schema (all good, the recommended indexes
# as INFO), with sql/recommended-indexes.sql (no recommendation left), then each in a fresh
# database: an index dropped, a column missing, a wrong type, a table missing, a collation, a
# SELECT-only account, an account that cannot see a table, data written eight hours off the
# session's zone, a server that cannot be reached. Each finding is checked for its level, its
# message and its fix — and the fix is run, after which doctor is satisfied again.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
# Databases and an account of this run's own (the harness may use a shared server).
pfx=${EVTOP_TEST_DB:-evt_doctor}
ro="evt_ro_$$"

# A fresh database with the model's schema and the audit table, as the harness loads them.
fresh() {
	db=$1
	sql -e "DROP DATABASE IF EXISTS \`$db\`; CREATE DATABASE \`$db\`" &&
		sql -D "$db" <"$src/sql/mariadb/schema.sql" &&
		sql -D "$db" <"$src/sql/mariadb/audit.sql"
}
# doctor ARGS...: run doctor on $db into $dir/out, its exit code in $code.
doctor() {
	"$evtop" --defaults-file="$cnf" -D "$db" doctor "$@" >"$dir/out" 2>"$dir/err"
	code=$?
}
expect() { # expect CODE DESCRIPTION
	if [ "$code" = "$1" ]; then ok "$2 (exit $1)"; else
		not_ok "$2: exit $code, want $1"
		sed 's/^/# /' "$dir/out" "$dir/err"
	fi
}
has() { # has DESCRIPTION FIXED-STRING: a line of the output contains it
	if grep -qF -- "$2" "$dir/out"; then ok "$1"; else
		not_ok "$1: no line with: $2"
		sed 's/^/# /' "$dir/out"
	fi
}
hasnt() {
	if grep -qF -- "$2" "$dir/out"; then
		not_ok "$1: a line has: $2"
		grep -F -- "$2" "$dir/out" | sed 's/^/# /'
	else ok "$1"; fi
}
# The fix printed under the first finding whose line contains $1 (continuation lines joined).
fix_of() {
	awk -v pat="$1" '
		!found && index($0, pat) { found = 1; next }
		found && /^      fix:    / { sub(/^      fix:    /, ""); print; infix = 1; next }
		found && infix && /^              / { sub(/^              /, ""); print; next }
		found && (infix || /^  [A-Z]/) { exit }
	' "$dir/out"
}
# Run the fix of the finding whose line contains $1 in $db, as root.
apply_fix() {
	fix_of "$1" >"$dir/fix.sql"
	if [ -s "$dir/fix.sql" ] && sql -D "$db" <"$dir/fix.sql"; then ok "the fix of '$1' runs"; else
		not_ok "the fix of '$1' runs: $(cat "$dir/fix.sql")"
	fi
}

# --- the model's schema: all good; the recommended indexes are INFO ----------------------------
fresh ${pfx}_model
doctor
expect 0 "the model's schema is all good"
has "the summary says so" "0 WARN, 0 FAIL: all good (exit 0)"
has "a column summary per table" "OK    27 of the model's 27 columns present with its types and nullability"
has "no retention configured: INFO with the setting" "INFO  retention: none configured for biz_outbox_event"
has "an index summary per table" "OK    7 of the model's 7 indexes present, by columns"
has "the MariaDB collation is the model's equivalent" "OK    collation utf8mb4_unicode_ci (equivalent to the model's utf8mb4_0900_ai_ci)"
has "the server's flavour and version" "OK    MariaDB 10."
has "the statement time limit in effect" "OK    statement time limit max_statement_time = 5000 ms on evtop's sessions"
has "the server accepts writes" "OK    the server accepts writes (@@read_only = 0)"
has "root may compensate" "OK    compensate: UPDATE on the action columns of biz_outbox_event"
has "root may read the replica status" "OK    replica lag readable (this server is not a replica)"
has "a recommendation with what it speeds up" "INFO  recommended index (event_status, update_time): the high-retry list, read in index order without a sort"
has "... the queries that would use it, from the query table" "impact: without it, slower, through another index and a bounded sort: the high-retry list (through \`idx_status_retry_time\`)"
has "... and its size estimate" "bytes per row (an estimate:"
has "... and its statement" "fix:    ALTER TABLE \`biz_outbox_event\` ADD KEY \`idx_evtop_status_topic\` (\`publish_status\`, \`topic\`)"
has "an empty table cannot tell the time zone" "INFO  time zone not checked on biz_outbox_event: the table has no rows"
doctor --statement-timeout=3s
has "the time limit doctor reports is the one evtop set" "max_statement_time = 3000 ms"
doctor --format csv
expect 2 "--format csv is a usage error"

# --- with the recommended indexes: nothing left to recommend ----------------------------------
sql -D "$db" <"$src/sql/recommended-indexes.sql"
sql -D "$db" -e "ANALYZE TABLE biz_outbox_event, biz_message_event" >/dev/null
doctor
expect 0 "with sql/recommended-indexes.sql, all good"
hasnt "no recommendation is left" "INFO  recommended"
has "each recommended index is named" "OK    recommended index (publish_status, topic) present as \`idx_evtop_status_topic\`"
has "... the message table's too" "OK    recommended index (event_status, last_handle_time) present as \`idx_evtop_status_handle\`"

# --- an index dropped: the lists it serves will not run -----------------------------------------
fresh ${pfx}_index
sql -D "$db" -e "ALTER TABLE biz_outbox_event DROP INDEX idx_status_lock_until"
doctor
expect 1 "an index dropped is a warning"
has "... named by its columns and the model's name" "WARN  no index on (publish_status, lock_until) (the model's idx_status_lock_until)"
has "... with the lists that will not run" "impact: will not run (n/a: evtop never scans): the stuck list, the processing list"
has "... and its fix" "fix:    ALTER TABLE \`biz_outbox_event\` ADD KEY \`idx_status_lock_until\` (\`publish_status\`, \`lock_until\`)"
apply_fix "no index on (publish_status, lock_until)"
doctor
expect 0 "after its fix, all good"

# An index under another name, or a longer one, serves all the same.
sql -D "$db" -e "ALTER TABLE biz_message_event DROP INDEX idx_biz_type_biz_id, ADD KEY my_obj (biz_type, biz_id, create_time), RENAME INDEX idx_trace_id TO trace"
doctor
expect 0 "indexes are found by columns, whatever their names"
has "... and the names are said" "idx_biz_type_biz_id served by \`my_obj\`, idx_trace_id as \`trace\`"

# The status index: the backlog lists and counts will not run.
sql -D "$db" -e "ALTER TABLE biz_message_event DROP INDEX idx_status_retry_time"
doctor
expect 1 "the status index dropped is a warning"
has "... with everything it serves" "impact: will not run (n/a: evtop never scans): the failed list, the failed-due list, the failed-waiting list, the failed-noretry list, the failed-exhausted list, the stuck list, the processing list, the pending list, the high-retry list, the dashboard's pending, processing/stuck and failed counts"

# --- a column missing: evtop refuses the table ---------------------------------------------------
fresh ${pfx}_column
sql -D "$db" -e "ALTER TABLE biz_message_event DROP COLUMN remark"
doctor
expect 2 "a column missing makes the table unusable"
has "... named with the model's definition" "FAIL  column remark is missing (the model: remark VARCHAR(500) DEFAULT NULL)"
has "... with what it breaks" "impact: evtop refuses the table: its lists, dashboard and show read every column of the model"
has "... and its fix" "fix:    ALTER TABLE \`biz_message_event\` ADD COLUMN \`remark\` VARCHAR(500) DEFAULT NULL"
apply_fix "FAIL  column remark is missing"
doctor
expect 0 "after its fix, all good"

# --- a wrong type --------------------------------------------------------------------------------
fresh ${pfx}_type
sql -D "$db" -e "ALTER TABLE biz_outbox_event MODIFY lock_until VARCHAR(32) NULL"
doctor
expect 2 "a DATETIME stored as text is unusable"
has "... with both types" "FAIL  column lock_until: varchar(32), the model says DATETIME"
has "... with what it breaks" "impact: evtop compares it with the server's NOW(): stuck, due retries, ages and windows"
has "... and its fix" "fix:    ALTER TABLE \`biz_outbox_event\` MODIFY COLUMN \`lock_until\` DATETIME DEFAULT NULL"
apply_fix "FAIL  column lock_until"
doctor
expect 0 "after its fix, all good"
sql -D "$db" -e "ALTER TABLE biz_message_event MODIFY retry_count BIGINT NOT NULL DEFAULT 0, MODIFY next_retry_time DATETIME NOT NULL DEFAULT '2000-01-01 00:00:00'"
doctor
expect 1 "another integer type, a NOT NULL the model does not have: warnings"
has "an integer all the same" "WARN  column retry_count: bigint(20), the model says INT (an integer all the same)"
has "NOT NULL where the actions write NULL" "impact: retry now sets next_retry_time = NULL: that write would fail"

# --- a table missing: its CREATE TABLE ---------------------------------------------------------
fresh ${pfx}_table
sql -D "$db" -e "DROP TABLE biz_message_event"
doctor
expect 2 "a table missing is unusable"
has "... said so" "FAIL  table biz_message_event (the message table) does not exist in this database"
has "... while the other table is checked" "OK    27 of the model's 27 columns present"
has "... its fix is the model's DDL" "fix:    CREATE TABLE \`biz_message_event\` ("
apply_fix "FAIL  table biz_message_event"
doctor
expect 0 "after its CREATE TABLE, all good"
doctor --message-table=no_such_table --table message
expect 2 "--message-table names the table doctor checks"
has "... by its name" "FAIL  table no_such_table (the message table) does not exist in this database"

# --- the collation ---------------------------------------------------------------------------------
fresh ${pfx}_coll
sql -D "$db" -e "ALTER TABLE biz_outbox_event CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
doctor --table outbox
expect 1 "another utf8mb4 collation is a warning"
has "... named" "WARN  collation utf8mb4_general_ci: utf8mb4, but not the model's utf8mb4_0900_ai_ci nor an equivalent"
has "... with its fix" "fix:    ALTER TABLE \`biz_outbox_event\` CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
sql -D "$db" -e "ALTER TABLE biz_outbox_event CONVERT TO CHARACTER SET latin1"
doctor --table outbox
expect 2 "a collation that is not utf8mb4 is unusable"
has "... named" "FAIL  collation latin1_swedish_ci is not utf8mb4"
has "... and so are its text columns" "character set latin1, not utf8mb4"

# --- a SELECT-only account: watch, not compensate -------------------------------------------------
fresh ${pfx}_ro
sql -e "DROP USER IF EXISTS '${ro}'@'localhost'; CREATE USER '${ro}'@'localhost' IDENTIFIED BY 'ro-pw';
	GRANT SELECT ON \`$db\`.biz_outbox_event TO '${ro}'@'localhost';
	GRANT SELECT ON \`$db\`.biz_message_event TO '${ro}'@'localhost';
	GRANT SELECT ON \`$db\`.evtop_audit TO '${ro}'@'localhost'"
socket=$(sed -n 's/^socket=//p' "$cnf" | head -n 1)
cat >"$dir/ro.cnf" <<CNF
[client]
socket=$socket
user=$ro
password=ro-pw
CNF
doctor_ro() {
	"$evtop" --defaults-file="$dir/ro.cnf" -D "$db" doctor "$@" >"$dir/out" 2>"$dir/err"
	code=$?
}
doctor_ro
expect 1 "a SELECT-only account can watch: warnings"
has "watch: SELECT" "OK    watch: SELECT on biz_outbox_event"
has "compensate is refused, with the server's words" "WARN  compensate: the account ${ro}@localhost may not UPDATE the columns the actions write on biz_outbox_event: UPDATE command denied"
has "... and what that means" "impact: evtop stays read-only on this table: retry, cancel and recover are refused"
has "... with the GRANT of sql/grants.sql" "fix:    GRANT UPDATE (\`publish_status\`, \`retry_count\`, \`max_retry_count\`, \`next_retry_time\`, \`locked_by\`, \`lock_until\`, \`fail_reason\`, \`version\`, \`update_time\`) ON \`$db\`.\`biz_outbox_event\` TO '${ro}'@'localhost'"
has "the message table's columns" "fix:    GRANT UPDATE (\`event_status\`, \`retry_count\`, \`max_retry_count\`, \`next_retry_time\`, \`fail_reason\`, \`version\`, \`update_time\`) ON \`$db\`.\`biz_message_event\` TO '${ro}'@'localhost'"
has "no INSERT into evtop_audit" "WARN  audit: evtop_audit exists but the account ${ro}@localhost may not INSERT into it"
has "replica lag unreadable" "WARN  replica lag not readable"
has "... with its GRANT" "fix:    GRANT REPLICA MONITOR ON *.* TO '${ro}'@'localhost'"
has "no privilege on evtop_access_log: INFO, it is invisible" "INFO  access log: no evtop_access_log table visible to the account ${ro}@localhost (there is none, or it has no privilege on it)"
has "... how to create and grant it" "fix:    create it with sql/mariadb/audit.sql (CREATE TABLE evtop_access_log ...), then GRANT INSERT ON \`$db\`.\`evtop_access_log\` TO '${ro}'@'localhost'"
sql -e "GRANT SELECT ON \`$db\`.evtop_access_log TO '${ro}'@'localhost'"
doctor_ro
has "SELECT but no INSERT on evtop_access_log: INFO, with what it means" "INFO  access log: evtop_access_log exists but the account ${ro}@localhost may not INSERT into it"
has "... and its GRANT" "fix:    GRANT INSERT ON \`$db\`.\`evtop_access_log\` TO '${ro}'@'localhost'"
for f in "WARN  compensate: the account ${ro}@localhost may not UPDATE the columns the actions write on biz_outbox_event" \
	"WARN  compensate: the account ${ro}@localhost may not UPDATE the columns the actions write on biz_message_event" \
	"WARN  audit: evtop_audit exists" "WARN  replica lag not readable" "INFO  access log: evtop_access_log exists"; do
	apply_fix "$f"
done
doctor_ro
expect 0 "after the GRANTs doctor printed, the account may compensate"
has "... and says so" "OK    compensate: UPDATE on the action columns of biz_message_event"
has "... and may write the access log" "OK    access log: INSERT into evtop_access_log"
sql -D "$db" -e "DROP TABLE evtop_access_log"
doctor_ro
has "no evtop_access_log: INFO, how to create it" "INFO  access log: no evtop_access_log table visible to the account"
has "... the file and the GRANT" "fix:    create it with sql/mariadb/audit.sql (CREATE TABLE evtop_access_log ...), then GRANT INSERT ON"

sql -e "REVOKE SELECT ON \`$db\`.biz_message_event FROM '${ro}'@'localhost'"
doctor_ro
expect 2 "no SELECT on a table is unusable"
has "... said with the server's words" "FAIL  watch: the account ${ro}@localhost may not SELECT from biz_message_event: SELECT command denied"
has "... what it breaks" "impact: evtop cannot read the table: no dashboard, list, show or check for it"
has "... the GRANT that fixes it" "fix:    GRANT SELECT ON \`$db\`.\`biz_message_event\` TO '${ro}'@'localhost'"
sql -e "REVOKE ALL PRIVILEGES ON \`$db\`.biz_message_event FROM '${ro}'@'localhost'"
doctor_ro
expect 2 "no privilege at all on a table is unusable"
has "... the table is invisible to the account" "FAIL  table biz_message_event is not visible to this account (no privilege on it, or it does not exist): SELECT command denied"
sql -e "DROP USER '${ro}'@'localhost'"

# --- a database whose name holds a backtick: every statement doctor prints pastes and runs ------
db="${pfx}_q\`x"
qdb=$(printf '%s' "$db" | sed 's/`/``/g')
rq="evt_rq_$$"
sql -e "DROP DATABASE IF EXISTS \`$qdb\`; CREATE DATABASE \`$qdb\`" &&
	sql -D "$db" <"$src/sql/mariadb/schema.sql" && sql -D "$db" <"$src/sql/mariadb/audit.sql" &&
	sql -e "DROP USER IF EXISTS '${rq}'@'localhost'; CREATE USER '${rq}'@'localhost' IDENTIFIED BY 'rq-pw';
	GRANT SELECT ON \`$qdb\`.biz_outbox_event TO '${rq}'@'localhost';
	GRANT SELECT ON \`$qdb\`.biz_message_event TO '${rq}'@'localhost';
	GRANT SELECT ON \`$qdb\`.evtop_audit TO '${rq}'@'localhost'" ||
	not_ok "cannot set up the database named with a backtick"
sed "s/^user=.*/user=$rq/; s/^password=.*/password=rq-pw/" "$dir/ro.cnf" >"$dir/rq.cnf"
doctor_rq() {
	"$evtop" --defaults-file="$dir/rq.cnf" -D "$db" doctor "$@" >"$dir/out" 2>"$dir/err"
	code=$?
}
doctor_rq
expect 1 "a database named with a backtick: a SELECT-only account is warned"
has "... the GRANT quotes the database, the backtick doubled" "ON \`$qdb\`.\`biz_outbox_event\` TO '${rq}'@'localhost'"
for f in "WARN  compensate: the account ${rq}@localhost may not UPDATE the columns the actions write on biz_outbox_event" \
	"WARN  compensate: the account ${rq}@localhost may not UPDATE the columns the actions write on biz_message_event" \
	"WARN  audit: evtop_audit exists"; do
	apply_fix "$f"
done
doctor_rq
hasnt "after the GRANTs pasted, the account may compensate" "WARN  compensate"
hasnt "... and write the audit" "WARN  audit"
sql -e "DROP USER '${rq}'@'localhost'; DROP DATABASE \`$qdb\`"

# --- retention: the configured retention_* against the oldest row ---------------------------------
fresh ${pfx}_ret
sql -D "$db" -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
	event_source, publish_channel, event_payload, publish_status, create_time, update_time)
	SELECT seq, CONCAT('OB-RET-', seq), 'ORDER', seq, 'ORDER_CREATED', 'svc', 'MQ', '{}', 2,
	NOW() - INTERVAL seq DAY - INTERVAL 1 HOUR, NOW() FROM seq_1_to_100"
printf '[evtop]\nretention_outbox = 30d\nretention_message = 90d\n' >"$dir/ret.conf"
"$evtop" --config "$dir/ret.conf" --defaults-file="$cnf" -D "$db" doctor >"$dir/out" 2>"$dir/err"
code=$?
expect 1 "rows far past the configured retention: a warning"
# (An hour off the whole days: the row of day 30 is past the retention however long the
# insert and doctor are apart.)
has "... how many and how old" "WARN  retention 30d on biz_outbox_event: 71 rows created before it, the oldest created 100d01h ago"
has "... the run that fixes it" "fix:    evtop archive --table outbox --older-than 30d --dry-run, then schedule it (doc/archive.md)"
has "an empty table with a retention: OK" "OK    retention 90d on biz_message_event: rows past it not counted, empty"
printf '[evtop]\nretention_outbox = 12h\n' >"$dir/bad.conf"
"$evtop" --config "$dir/bad.conf" --defaults-file="$cnf" -D "$db" doctor >"$dir/out" 2>&1
code=$?
expect 2 "retention_outbox below a day: a config error"

# --- the time zone: rows written at +08:00, read at +00:00 -----------------------------------------
fresh ${pfx}_tz
sql -D "$db" -e "SET time_zone = '+08:00';
	INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
	  event_source, publish_channel, topic, event_payload, publish_status, create_time,
	  update_time)
	VALUES (1, 'O1', 'ORDER', '1', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 0, NOW(), NOW()),
	       (2, 'O2', 'ORDER', '2', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 2,
	        NOW() - INTERVAL 1 HOUR, NOW() - INTERVAL 10 SECOND);
	INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
	  event_payload, event_status, create_time, update_time)
	VALUES (1, 'M1', 'ORDER_CREATED', 'ORDER', '1', 's', '{}', 0, NOW(), NOW())"
doctor --time-zone=+00:00
expect 2 "data eight hours ahead of the session's zone is a suspected mismatch"
has "... an error naming the table and the row" "FAIL  suspected time zone mismatch: the newest row of biz_outbox_event (event_no O1, id 1, create_time"
has "... eight hours ahead" "ahead of NOW()"
has "... a zone offset" "a zone offset of about 8h00m"
has "... what it breaks" "impact: every comparison with NOW() is off by that much: processing rows look stuck"
has "... and the zone to set" "fix:    --time-zone=+08:00 (time_zone = +08:00 in the config's source)"
has "the session zone is reported" "OK    session time_zone = +00:00"
has "... with the server's system zone as a hint, not evidence" "the server's system zone is "
doctor --time-zone=+13:00
expect 2 "data five hours behind the session's zone is a suspected mismatch too (the same judgement as the writes)"
has "... behind NOW()" "is 5h00m behind NOW()"
has "... and the zone to set" "fix:    --time-zone=+08:00 (time_zone = +08:00 in the config's source)"
doctor --time-zone=+08:00
expect 0 "read in the writers' zone, all good"
has "... and consistent" "OK    time zone: the newest write in biz_outbox_event"
sql -D "$db" -e "DELETE FROM biz_outbox_event; DELETE FROM biz_message_event; SET time_zone = '+00:00';
	INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
	  event_source, publish_channel, topic, event_payload, publish_status, create_time,
	  update_time)
	VALUES (1, 'O1', 'ORDER', '1', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 0, NOW(), NOW())"
doctor --time-zone=+08:00 --table outbox
expect 2 "data eight hours behind NOW() is a mismatch too"
has "... behind" "behind NOW()"
has "... by a zone offset" "a zone offset of about 8h00m"
has "... and the zone to set" "fix:    --time-zone=+00:00"

# --- every statement bounded, nothing written ----------------------------------------------------
db=${pfx}_model
doctor --log-sql="$dir/sql.log"
expect 0 "doctor with --log-sql"
grep -E '^  /\*' "$dir/sql.log" >"$dir/stmts"
check "doctor ran statements" [ -s "$dir/stmts" ]
unbounded=$(grep -E '^  /\* evtop[^*]*\*/ SELECT' "$dir/stmts" | grep -v ' LIMIT ')
check "every SELECT has a LIMIT" [ -z "$unbounded" ]
[ -z "$unbounded" ] || echo "$unbounded" | sed 's/^/# /'
writes=$(grep -Ei '^  /\*[^*]*\*/ (UPDATE|INSERT|DELETE|ALTER|GRANT|CREATE|DROP)' "$dir/stmts")
check "no statement writes (the probes are only prepared)" [ -z "$writes" ]
check "the session's time limit is set first" grep -q "max_statement_time = 5.000" "$dir/sql.log"

# --- json ----------------------------------------------------------------------------------------
fresh ${pfx}_json
sql -D "$db" -e "ALTER TABLE biz_outbox_event DROP INDEX idx_status_lock_until"
doctor --format json
expect 1 "--format json has the same exit code"
json_sql() { sed "s/'/''/g; s/\\\\/\\\\\\\\/g" "$dir/out" | { printf "SELECT %s FROM (SELECT '" "$1"; cat; printf "' AS j) AS d"; } | sql; }
check "the json is valid" [ "$(json_sql 'JSON_VALID(j)')" = 1 ]
check "... with the exit code and status" [ "$(json_sql "CONCAT(JSON_EXTRACT(j, '\$.exit'), JSON_UNQUOTE(JSON_EXTRACT(j, '\$.status')))")" = "1WARN" ]
check "... counts by level" [ "$(json_sql "JSON_EXTRACT(j, '\$.counts.warn')")" = 1 ]
has "... and each finding with its level, check, impact and fix" '"level": "WARN"'
has "... the fix" '"fix": "ALTER TABLE `biz_outbox_event` ADD KEY `idx_status_lock_until` (`publish_status`, `lock_until`)"'

# --- a server that cannot be reached ---------------------------------------------------------------
"$evtop" --no-defaults -S /nonexistent.sock doctor >"$dir/out" 2>&1
code=$?
expect 2 "an unreachable server is unusable"
has "... said as a finding" "FAIL  cannot connect"
"$evtop" --no-defaults -S /nonexistent.sock doctor --format json >"$dir/out" 2>&1
has "... in json too" '"status": "FAIL"'

for d in ${pfx}_model ${pfx}_index ${pfx}_column ${pfx}_type ${pfx}_table ${pfx}_coll \
	${pfx}_ro ${pfx}_tz ${pfx}_json; do
	sql -e "DROP DATABASE IF EXISTS \`$d\`"
done
tap_done
