#!/bin/sh
# evtop archive against the harness's server: the usage errors and the retention guard; the dry
# run counts what reference SQL counts and writes nothing; the archive table made from the
# online table (event_no not unique there) and refused when its columns differ; a run moves
# exactly the finished rows older than the cutoff (every row afterwards in exactly one table,
# every column's checksum unchanged, no backlog row, nothing newer, no soft-deleted row moved)
# and records each batch in evtop_archive_log and the audit file; the cursor resumes; a file
# target (committed markers) and --purge; a file that cannot be written deletes nothing;
# read-only, a SELECT-only account and no terminal are refused; SIGINT stops after a batch.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"

now='2026-06-01 12:00:00'
pinned=$dir/pinned.cnf
sed "/^\[evtop\]/a init-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"" "$cnf" >"$pinned"
chmod 600 "$pinned"
XDG_STATE_HOME=$dir/state
export XDG_STATE_HOME
audit=$XDG_STATE_HOME/evtop/audit.jsonl
ev() {
	timeout 120 "$evtop" --defaults-file="$pinned" "$@" </dev/null >"$dir/out" 2>"$dir/err"
	rc=$?
}
diag() { sed 's/^/# /'; }
say_fail() { diag <"$dir/out"; diag <"$dir/err"; }
# checkv DESCRIPTION COMMAND...: check, showing evtop's output when it fails.
checkv() {
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; say_fail; fi
}

# 3,000 rows a table over the 100 days before now, statuses by id % 5 (2 success, 4 cancelled),
# every 13th row soft-deleted, a CJK payload and a NULL in every nullable column on some.
sql -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, event_headers, publish_status, retry_count,
  next_retry_time, fail_reason, remark, trace_id, version, deleted, create_time, update_time)
  SELECT seq, CONCAT('OB-AR-', seq), 'ORDER', seq, IF(seq % 3 = 0, 'ORDER_PAID', 'ORDER_CREATED'),
  'order-service', 'MQ', IF(seq % 4 = 0, NULL, 'order.event'),
  JSON_OBJECT('orderId', seq, 'note', '订单 ✓'), IF(seq % 2 = 0, NULL, '{\"k\": 1}'), seq % 5,
  seq % 3, IF(seq % 5 = 3, '$now' + INTERVAL 1 HOUR, NULL), IF(seq % 5 = 3, 'HTTP 503', NULL),
  IF(seq % 6 = 0, '备注', NULL), IF(seq % 2 = 0, CONCAT('t-', seq), NULL), 1, IF(seq % 13 = 0, 1, 0),
  '$now' - INTERVAL 100 DAY + INTERVAL seq * 48 MINUTE, '$now' - INTERVAL 1 DAY FROM seq_1_to_3000" || exit 99
sql -e "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, version, deleted, create_time, update_time)
  SELECT seq, CONCAT('MSG-AR-', seq), 'PAY_SUCCESS', 'PAY', seq, 'pay-service', '{}', seq % 5, 0,
  0, 0, '$now' - INTERVAL 100 DAY + INTERVAL seq * 48 MINUTE, '$now' FROM seq_1_to_3000" || exit 99
cutoff="'$now' - INTERVAL 30 DAY"
# Every column of both tables together, and the ids, before anything moves.
# sum_of [ARCHIVE]: the online table's rows, with ARCHIVE's beside them when given.
sum_of() { sql -e "SELECT COUNT(*), IFNULL(SUM(CRC32(CONCAT_WS('|', id, event_no, aggregate_id, event_type,
  IFNULL(topic, '-'), event_payload, IFNULL(event_headers, '-'), publish_status, retry_count,
  IFNULL(next_retry_time, '-'), IFNULL(fail_reason, '-'), IFNULL(remark, '-'), IFNULL(trace_id, '-'),
  version, deleted, create_time, update_time))), 0) FROM (SELECT * FROM biz_outbox_event
  ${1:+UNION ALL SELECT * FROM $1}) u"; }
online() { sql -e "SELECT COUNT(*) FROM biz_outbox_event $1"; }
want_moved=$(online "WHERE publish_status = 2 AND deleted = 0 AND create_time < $cutoff")

# --- usage ---------------------------------------------------------------------------------------
ev archive --older-than 30d
check "no --table: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'table=message|outbox is needed' '$dir/err'"
ev archive --table outbox
check "no --older-than: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'older-than=DUR is needed' '$dir/err'"
ev archive --table outbox --older-than 3d --yes
check "a retention below 7d without --force: refused, saying why" \
	sh -c "[ $rc -eq 2 ] && grep -q 'below 7d is refused without --force: a producer replaying an event_no' '$dir/err'"
ev archive --table outbox --older-than 30d --status failed
check "--status failed: backlog rows are never archived" sh -c "[ $rc -eq 2 ] && grep -q 'never archived' '$dir/err'"
ev archive --table outbox --older-than 30d --purge --to-file x.jsonl
check "two targets: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'one target each' '$dir/err'"
ev archive --table outbox --older-than 30d --until '2001-01-01 00:00'
check "--until in the past: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'is past' '$dir/err'"
ev archive --table outbox --older-than 30d --batch 0
check "--batch 0: usage error" [ $rc -eq 2 ]
ev archive --table outbox --older-than 30d --to "$(printf 'x\033[2Jy')" --dry-run
check "--to that is no table name: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'is not a table name' '$dir/err'"
before=$(sum_of)

# --- the dry run ---------------------------------------------------------------------------------
ev archive --table outbox --older-than 30d --dry-run
check "--dry-run without the archive table: exit 0, says to make it" \
	sh -c "[ $rc -eq 0 ] && grep -q 'create-archive-table' '$dir/err'"
check "... counts what the model's SQL counts ($want_moved)" grep -q "^archive biz_outbox_event (source default): $want_moved finished rows created before 2026-05-02 12:00:00" "$dir/out"
check "... prints the statements" sh -c "grep -q 'read       /\* evtop:archive.candidates \*/ SELECT id, create_time' '$dir/out' && grep -q 'FOR UPDATE' '$dir/out' && grep -q 'delete     /\* evtop:archive.delete \*/ DELETE FROM' '$dir/out'"
check "... the retention's risk" grep -q "retention: a producer replaying an event_no" "$dir/out"
check "... and writes nothing" test "$(sum_of)" = "$before"
ev archive --table outbox --older-than 3d --dry-run
check "--dry-run below 7d: allowed (it writes nothing), the risk said" \
	sh -c "[ $rc -eq 0 ] && grep -q 'retention: below 7 days' '$dir/out'"

ev archive --table outbox --older-than 30d --yes
check "no archive table: refused (exit 1), names --create-archive-table" \
	sh -c "[ $rc -eq 1 ] && grep -q 'no archive table biz_outbox_event_archive: make it with --create-archive-table' '$dir/err'"

# --- the archive table ---------------------------------------------------------------------------
ev archive --table outbox --create-archive-table
check "--create-archive-table: exit 0, the statements printed" \
	sh -c "[ $rc -eq 0 ] && grep -q 'CREATE TABLE \`biz_outbox_event_archive\` LIKE \`biz_outbox_event\`' '$dir/out'"
check "... its columns are the online table's" test "$(sql -e "SELECT GROUP_CONCAT(COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'biz_outbox_event_archive'")" = "$(sql -e "SELECT GROUP_CONCAT(COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE ORDER BY ORDINAL_POSITION) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'biz_outbox_event'")"
check "... event_no is not unique there; look-up indexes only" test "$(sql -e "SELECT GROUP_CONCAT(DISTINCT CONCAT(INDEX_NAME, ':', NON_UNIQUE) ORDER BY INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'biz_outbox_event_archive'")" = "idx_aggregate_type_aggregate_id:1,idx_create_time:1,idx_event_no:1,idx_trace_id:1,PRIMARY:0"
ev archive --table outbox --create-archive-table
check "... a second time: says it exists" sh -c "[ $rc -eq 0 ] && grep -q 'exists already' '$dir/out'"
sql -e "ALTER TABLE biz_outbox_event_archive MODIFY remark VARCHAR(100) DEFAULT NULL" || exit 99
ev archive --table outbox --older-than 30d --yes
check "an archive table whose columns differ: refused, naming the column" \
	sh -c "[ $rc -eq 1 ] && grep -q 'differs from the online table at column 23: remark varchar(100)' '$dir/err'"
check "... nothing moved" test "$(sum_of)" = "$before"
sql -e "ALTER TABLE biz_outbox_event_archive MODIFY remark VARCHAR(500) DEFAULT NULL COMMENT '备注'" || exit 99

# --- refusals ------------------------------------------------------------------------------------
ev archive --table outbox --older-than 30d
check "no terminal and no --yes: refused" sh -c "[ $rc -eq 1 ] && grep -q 'no terminal to confirm on' '$dir/err'"
ev archive --table outbox --older-than 30d --yes --read-only
check "--read-only: refused" sh -c "[ $rc -eq 1 ] && grep -q 'refused: read-only' '$dir/err'"
sql -e "DROP USER IF EXISTS 'evtop_ar_ro'@'localhost'; CREATE USER 'evtop_ar_ro'@'localhost' IDENTIFIED BY 'pw'; GRANT SELECT ON \`$EVTOP_TEST_DB\`.* TO 'evtop_ar_ro'@'localhost'" || exit 99
ev archive --table outbox --older-than 30d --yes -u evtop_ar_ro --password=pw
check "a SELECT-only account: refused before any batch, naming DELETE" \
	sh -c "[ $rc -eq 1 ] && grep -q 'evtop_ar_ro@localhost may not DELETE from the table' '$dir/err'"
now_sum=$(sum_of)
check "... nothing moved, nothing audited" sh -c "[ '$now_sum' = '$before' ] && [ ! -s '$audit' ]"
sql -e "DROP USER 'evtop_ar_ro'@'localhost'"

# --- a run ---------------------------------------------------------------------------------------
ev archive --table outbox --older-than 30d --yes --batch 100 --pause 0 --rate 0 --operator T-1
checkv "a run: exit 0, all moved" sh -c "[ $rc -eq 0 ] && grep -q 'archived $want_moved rows of biz_outbox_event' '$dir/out' && grep -q 'nothing older is left' '$dir/out'"
check "every row in exactly one table, every column unchanged" test "$(sum_of biz_outbox_event_archive)" = "$before"
check "... no id in both" test "$(sql -e "SELECT COUNT(*) FROM biz_outbox_event o JOIN biz_outbox_event_archive a USING (id)")" = 0
check "... the archive holds only success rows older than the cutoff, none soft-deleted" \
	test "$(sql -e "SELECT COUNT(*) FROM biz_outbox_event_archive WHERE publish_status <> 2 OR deleted <> 0 OR create_time >= $cutoff")" = 0
check "... and all of them ($want_moved)" test "$(sql -e "SELECT COUNT(*) FROM biz_outbox_event_archive")" = "$want_moved"
check "... no backlog row moved, nothing newer moved" \
	test "$(online "WHERE publish_status IN (0, 1, 3) OR create_time >= $cutoff OR deleted = 1 OR publish_status = 4")" = "$(online '')"
nb=$(sed -n 's/^archived [0-9]* rows of biz_outbox_event in \([0-9]*\) batch.*/\1/p' "$dir/out")
check "evtop_archive_log: a row a batch ($nb), at most --batch rows each, summing to what moved" \
	test "$(sql -e "SELECT CONCAT(COUNT(*), ':', SUM(row_count), ':', MIN(batch_no), ':', MAX(batch_no), ':', MAX(row_count) <= 100, ':', MIN(target), ':', MIN(operator)) FROM evtop_archive_log")" = "$nb:$want_moved:1:$nb:1:table:T-1"
# (a batch rolled back over its lock budget has its intent and a "retried" line, and is done
# again: on a slow machine there may be some)
check "the audit file: an intent and a result line a batch" \
	test "$(jq -s '[.[] | select(.action == "archive")] | [(map(select(.result == "archived")) | length), ((map(select(.result == "intent")) | length) - (map(select(.result == "retried")) | length))] | map(tostring) | join(" ")' -r "$audit")" = "$nb $nb"
check "... whose rows sum to what moved" test "$(jq -s '[.[] | select(.action == "archive" and .result == "archived") | .rows] | add' "$audit")" = "$want_moved"
check "the cursor saved" test -s "$XDG_STATE_HOME/evtop/archive/default.biz_outbox_event.cursor"
# show finds an archived event there, badged; masked as everything else.
arch_no=$(sql -e "SELECT event_no FROM biz_outbox_event_archive ORDER BY id LIMIT 1")
ev show "$arch_no"
check "show: an archived event is found in the archive, badged ARCHIVED" \
	sh -c "[ $rc -eq 0 ] && grep -q '^== outbox event  \[ARCHIVED in biz_outbox_event_archive\]' '$dir/out' && grep -q '^event_no  *$arch_no\$' '$dir/out'"
ev show "$arch_no" OB-AR-1 --format json
check "... in JSON: archived 1 there, 0 for an online one" \
	test "$(jq -c '[.[] | [.event_no, .archived]]' "$dir/out")" = "[[\"$arch_no\",1],[\"OB-AR-1\",0]]"
ev show OB-NOWHERE
check "... an event_no in neither: not found (exit 1)" sh -c "[ $rc -eq 1 ] && grep -q 'no event OB-NOWHERE' '$dir/err'"
# trail and trace: the archived part after the online one.
sql -e "UPDATE biz_outbox_event SET aggregate_id = 'TR-1', trace_id = 'trace-ar' WHERE id IN (2998, 2999, 3000)" || exit 99
sql -e "UPDATE biz_outbox_event_archive SET aggregate_id = 'TR-1', trace_id = 'trace-ar' WHERE id IN (7, 12)" || exit 99
ev trail ORDER TR-1 --table outbox
check "trail: the online events, then the archived ones, marked" \
	sh -c "[ $rc -eq 0 ] && grep -q '^# archived in biz_outbox_event_archive: 2 rows' '$dir/out' && [ \$(grep -c 'OB-AR-' '$dir/out') -eq 5 ]"
ev trace trace-ar --format json
check "trace --format json: one array, the online rows archived 0, then the archived ones 1" \
	test "$(jq -c '[.[] | .archived]' "$dir/out")" = "[0,0,0,1,1]"
ev trace trace-ar --format csv --table outbox
check "... in CSV too: an archived column, the last" sh -c "[ $rc -eq 0 ] && head -n 1 '$dir/out' | grep -q '^table,.*,archived\$' && [ \$(grep -c ',1\$' '$dir/out') -eq 2 ]"
ev list failed --table outbox --format json --limit 1
check "... other lists have no archived column" test "$(jq -c '.[0] | has("archived")' "$dir/out")" = false
ev archive --table outbox --older-than 30d --yes
check "a rerun: nothing to archive" sh -c "[ $rc -eq 0 ] && grep -q 'nothing to archive' '$dir/out'"

# --- a file, cancelled and soft-deleted rows too ------------------------------------------------
before_online=$(online '')
want_file=$(online "WHERE create_time < $cutoff AND ((publish_status IN (2, 4) AND deleted = 0) OR (publish_status IN (2, 4) AND deleted = 1))")
ev archive --table outbox --older-than 30d --yes --status success,cancelled --include-deleted --to-file "$dir/ar.jsonl" --from-start --pause 0 --rate 0
checkv "--to-file, cancelled and deleted too: exit 0 ($want_file rows)" sh -c "[ $rc -eq 0 ] && grep -q 'archived $want_file rows' '$dir/out'"
check "... the file holds them, each batch committed" \
	test "$(jq -s '[.[] | select(.row)] | length' "$dir/ar.jsonl"):$(jq -s '[.[] | select(.committed) | .rows] | add' "$dir/ar.jsonl")" = "$want_file:$want_file"
cat >"$dir/row9.jq" <<'JQ'
select(.row) | .row | select(.id == "9")
  | .event_payload == "{\"orderId\": 9, \"note\": \"订单 ✓\"}" and .topic == "order.event"
    and .event_headers == "{\"k\": 1}" and .remark == null and .publish_status == "4"
JQ
check "... as stored (CJK, NULLs)" test "$(jq -f "$dir/row9.jq" "$dir/ar.jsonl")" = true
check "... and they left the online table" test "$(online '')" = "$((before_online - want_file))"
check "... the file is private (0600)" test "$(stat -c %a "$dir/ar.jsonl")" = 600

# --- a file that cannot be written deletes nothing -----------------------------------------------
sql -e "UPDATE biz_outbox_event SET create_time = '$now' - INTERVAL 60 DAY, publish_status = 2 WHERE id BETWEEN 1990 AND 2100 AND publish_status = 0" || exit 99
n_before=$(online '')
# (an audit file of its own, small: the limit is for the archive file's rows)
( ulimit -f 4; XDG_STATE_HOME=$dir/state-small; export XDG_STATE_HOME; exec timeout 60 "$evtop" --defaults-file="$pinned" archive --table outbox --older-than 30d --yes --to-file "$dir/small.jsonl" --from-start --pause 0 </dev/null >"$dir/out" 2>"$dir/err" )
rc=$?
checkv "a file past its size limit: exit 1, said" sh -c "[ $rc -eq 1 ] && grep -q 'cannot write the archive file' '$dir/err' && grep -q 'nothing deleted' '$dir/err'"
check "... nothing deleted" test "$(online '')" = "$n_before"

# --- purge, the message table --------------------------------------------------------------------
m_want=$(sql -e "SELECT COUNT(*) FROM biz_message_event WHERE event_status = 2 AND create_time < '$now' - INTERVAL 10 DAY")
m_total=$(sql -e "SELECT COUNT(*) FROM biz_message_event")
ev archive --table message --older-than 10d --purge --yes --pause 0 --rate 0
checkv "--purge on the message table: exit 0, $m_want rows deleted" sh -c "[ $rc -eq 0 ] && grep -q 'archived $m_want rows of biz_message_event' '$dir/out'"
check "... exactly those" test "$(sql -e "SELECT COUNT(*), SUM(event_status = 2 AND create_time < '$now' - INTERVAL 10 DAY) FROM biz_message_event")" = "$((m_total - m_want))	0"
check "... no archive table made" test "$(sql -e "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'biz_message_event_archive'")" = 0
check "... recorded as purge" test "$(sql -e "SELECT COUNT(*) FROM evtop_archive_log WHERE table_name = 'biz_message_event' AND target = 'purge' AND target_name IS NULL")" -ge 1

# --- SIGINT stops after the current batch; a rerun resumes -----------------------------------------
sql -e "UPDATE biz_message_event SET event_status = 2 WHERE event_status IN (0, 4)" || exit 99
left=$(sql -e "SELECT COUNT(*) FROM biz_message_event WHERE event_status = 2 AND create_time < '$now' - INTERVAL 10 DAY")
timeout 120 "$evtop" --defaults-file="$pinned" archive --table message --older-than 10d --purge --yes --batch 10 --rate 40 --pause 0 --from-start </dev/null >"$dir/out" 2>"$dir/err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
gone=$(( left - $(sql -e "SELECT COUNT(*) FROM biz_message_event WHERE event_status = 2 AND create_time < '$now' - INTERVAL 10 DAY") ))
check "SIGINT: exit 0, stopped after a batch, part done ($gone of $left)" \
	sh -c "[ $rc -eq 0 ] && grep -q 'stopped (the rest stays; a rerun resumes)' '$dir/out' && [ $gone -gt 0 ] && [ $gone -lt $left ] && [ \$(( $gone % 10 )) -eq 0 ]" || say_fail
ev archive --table message --older-than 10d --purge --yes --pause 0 --rate 0
check "... the rerun resumes from the cursor and finishes the rest" \
	sh -c "[ $rc -eq 0 ] && grep -q 'archived $((left - gone)) rows' '$dir/out' && grep -q 'nothing older is left' '$dir/out'" || say_fail

# --- the archiving account of sql/grants.sql: enough to make the archive table and run ---------
u=evt_ar_$$
sed -n '/^-- The archiving account/,$p' "${EVTOP_SRCDIR:?}/sql/grants.sql" |
	sed "s/evtop_archive'/$u'/g; s/events\./\`$EVTOP_TEST_DB\`./g; s/change-me/ar-pass-1/" | sql
check "sql/grants.sql's archiving account is created" [ $? -eq 0 ]
sql -e "UPDATE biz_message_event SET event_status = 2" || exit 99
ev archive --table message --create-archive-table -u "$u" --password=ar-pass-1
check "... it makes the archive table" sh -c "[ $rc -eq 0 ] && grep -q 'CREATE TABLE' '$dir/out'"
ev archive --table message --older-than 10d --yes --from-start -u "$u" --password=ar-pass-1 --pause 0 --rate 0
logged=$(sql -e "SELECT COUNT(*) FROM evtop_archive_log WHERE db_user = '$u@localhost'")
checkv "... and archives into it, recorded in evtop_archive_log ($logged batches)" sh -c "[ $rc -eq 0 ] && grep -q 'nothing older is left' '$dir/out' && [ $logged -ge 1 ]"

tap_done
