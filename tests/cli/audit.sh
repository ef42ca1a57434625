#!/bin/sh
# evtop audit: two operators (--operator A, --operator B) retry, schedule, cancel and recover
# with the sub-commands, at several pinned clocks (ties at the millisecond too); then
# `evtop audit --format json` equals evtop_audit read with the mariadb client (same rows, same
# order, same values), filter by filter; paging with --after gives every row once; the capped
# filters say what they examined; csv and its stable header; hostile text (escapes, CJK, 1000
# characters, NULLs, an id of 2^64-1) escaped; two sources merged newest first; the missing
# table, the missing grant and a server that is not there said, and nothing changed.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"

XDG_STATE_HOME=$dir/state
export XDG_STATE_HOME
# evtop's sessions at a pinned NOW() (its [evtop] group).
at() {
	sed "/^\[evtop\]/a init-command=\"SET timestamp = UNIX_TIMESTAMP('$1')\"" "$cnf" >"$dir/at.cnf"
	chmod 600 "$dir/at.cnf"
}
ev() { "$evtop" --defaults-file="$dir/at.cnf" "$@"; }
at '2026-06-01 12:00:00'

sql <<'SQL' || exit 99
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
VALUES
 (1, 'OB-1', 'ORDER', 'O1', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 5, 5,
  '2026-06-01 11:00:00', NULL, NULL, 'mq timeout', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (2, 'OB-2', 'ORDER', 'O2', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 1, 5,
  NULL, NULL, NULL, 'x', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (3, 'OB-3', 'ORDER', 'O3', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 1, 5,
  NULL, NULL, NULL, 'x', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00'),
 (4, 'OB-STUCK', 'ORDER', 'O4', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 1, 0, 5,
  NULL, 'publisher-01', '2026-06-01 11:58:00', NULL, 3, '2026-06-01 10:00:00', '2026-06-01 11:56:00'),
 (5, 'OB-PEND', 'ORDER', 'O5', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 0, 0, 5,
  NULL, NULL, NULL, NULL, 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00');
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time,
  last_handle_time, version, create_time, update_time)
VALUES
 (1, 'MS-1', 'ORDER_CREATED', 'ORDER', 'O9', 'order-service', '{}', 3, 1, 3, NULL,
  '2026-06-01 11:00:00', 0, '2026-06-01 10:00:00', '2026-06-01 11:00:00');
-- The newest rows minutes old at the pinned clocks: no time zone mismatch suspected.
UPDATE biz_outbox_event SET create_time = '2026-06-01 11:50:00' WHERE id = 5;
UPDATE biz_message_event SET create_time = '2026-06-01 11:50:00';
SQL

# The two operators' series. Two writes at 12:00:00 (one millisecond: a tie), then a minute
# apart; OB-1 retried by A then cancelled by B.
y() { ev "$@" --yes </dev/null >>"$dir/actions.out" 2>&1; }
y retry OB-1 --now --operator A --reason 'MQ is back'
y retry MS-1 --now --operator B --reason 'consumer fixed'
at '2026-06-01 12:01:00'
y cancel OB-PEND --operator A --reason 'order closed'
at '2026-06-01 12:02:00'
y retry OB-2 --operator B --reason 'scheduled'
y cancel OB-3 --operator A --reason 'duplicate'
at '2026-06-01 12:03:00'
y recover OB-STUCK --operator B --reason 'publisher-01 died'
y cancel OB-1 --operator B --reason 'gave up'
check "the series wrote 7 audit rows" [ "$(sql -e 'SELECT COUNT(*) FROM evtop_audit')" = 7 ]

# Hostile rows, as another tool or a damaged row might hold them: escapes, CJK, a 1000-character
# reason, NULLs where the table allows them, the largest id (last: no id after it).
sql <<'SQL' || exit 99
INSERT INTO evtop_audit (id, audit_time, source, os_user, sudo_user, ssh_connection, operator,
  db_user, table_name, event_id, event_no, action, before_status, before_retry_count,
  before_max_retry_count, before_next_retry_time, before_version, after_status, reason, result)
VALUES
 (100, '2026-06-01 11:30:00.500', 'default', CONCAT('ev', CHAR(27), '[2Jil'), NULL, NULL,
  '运维-甲', 'x@%', 'biz_outbox_event', 2, 'OB-2', 'cancel', 3, 1, 5, NULL, 0, NULL,
  CONCAT('tab', CHAR(9), 'nl', CHAR(10), 'bel', CHAR(7), ' "q" \\ 中文'), 'skipped'),
 (18446744073709551615, '2026-06-01 11:30:00.500', 'default', 'ops', NULL, NULL, NULL,
  'x@%', 'biz_message_event', 18446744073709551615, 'MS-BIG', 'retry_now', 3, 0, 1, NULL, 7,
  0, REPEAT('长', 1000), 'applied');
SQL

cols="id, audit_time, source, os_user, sudo_user, ssh_connection, operator, db_user, table_name, event_id, event_no, action, before_status, before_retry_count, before_max_retry_count, before_next_retry_time, before_version, after_status, reason, result"
# The table read with the mariadb client as JSON: ids as strings (as evtop writes them).
reference() { # reference WHERE... -> $dir/ref.json
	sql -r -e "SET SESSION group_concat_max_len = 100000000; SELECT IFNULL(JSON_ARRAYAGG(JSON_OBJECT(
	  'id', CAST(id AS CHAR), 'audit_time', audit_time, 'source', source, 'os_user', os_user,
	  'sudo_user', sudo_user, 'ssh_connection', ssh_connection, 'operator', operator,
	  'db_user', db_user, 'table_name', table_name, 'event_id', CAST(event_id AS CHAR),
	  'event_no', event_no, 'action', action, 'before_status', before_status,
	  'before_retry_count', before_retry_count, 'before_max_retry_count', before_max_retry_count,
	  'before_next_retry_time', before_next_retry_time, 'before_version', before_version,
	  'after_status', after_status, 'reason', reason, 'result', result)
	  ORDER BY audit_time DESC, id DESC), '[]') FROM evtop_audit WHERE ${1:-TRUE}" >"$dir/ref.json"
}
# The same rows, the same order, the same values, the same keys in the same order.
same() { # same EVTOP_JSON
	python3 - "$1" "$dir/ref.json" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
def norm(r):
    r = dict(r)
    t = r.get("before_next_retry_time")
    if t is not None:
        r["before_next_retry_time"] = t[:19]
    return r
if [list(r.keys()) for r in got] != [list(r.keys()) for r in want] or \
   [norm(r) for r in got] != [norm(r) for r in want]:
    print("got:  %s\nwant: %s" % (json.dumps(got, ensure_ascii=False)[:3000],
                                   json.dumps(want, ensure_ascii=False)[:3000]), file=sys.stderr)
    sys.exit(1)
PY
}

ev audit --format json --limit 1000 >"$dir/all.json" 2>"$dir/all.err"
check "audit --format json exits 0" [ $? -eq 0 ]
reference
check "... equals the table read with the mariadb client" same "$dir/all.json"
check "... newest first, the ties (12:03, 12:00) by id descending" sh -c "python3 -c \"
import json; r = json.load(open('$dir/all.json'))
assert [x['event_no'] for x in r][:2] == ['OB-1', 'OB-STUCK'], r
assert [x['operator'] for x in r][5:7] == ['B', 'A'] and [x['audit_time'] for x in r][5:7] == ['2026-06-01 12:00:00.000'] * 2, r
\""
check "... keeps control characters, CJK and 1000 characters (escaped in JSON)" sh -c "python3 -c \"
import json; r = {x['id']: x for x in json.load(open('$dir/all.json'))}
assert r['100']['reason'] == 'tab\\tnl\\nbel\\x07 \\\"q\\\" \\\\\\\\ 中文', repr(r['100']['reason'])
assert r['100']['os_user'] == 'ev\\x1b[2Jil' and r['100']['operator'] == '运维-甲'
assert r['18446744073709551615']['reason'] == '长' * 1000 and r['18446744073709551615']['operator'] is None
assert r['18446744073709551615']['event_id'] == '18446744073709551615'
\""
check "... no raw control byte in the JSON" sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$dir/all.json' || [ \"\$(LC_ALL=C tr -d '\\n' <'$dir/all.json' | LC_ALL=C grep -c '[[:cntrl:]]')\" = 0 ]"

# Each filter against the same WHERE in the mariadb client.
filt() { # filt DESCRIPTION WHERE OPTIONS...
	d=$1 w=$2
	shift 2
	ev audit --format json --limit 1000 "$@" >"$dir/f.json" 2>"$dir/f.err"
	rc=$?
	reference "$w"
	check "$d: exits 0 ($rc) and equals the client's rows" sh -c "[ $rc -eq 0 ] && [ \"\$(python3 -c \"import json; print(len(json.load(open('$dir/ref.json'))))\")\" -gt 0 ]"
	check "$d: ... same rows, order and values" same "$dir/f.json"
}
filt "--operator A" "operator = 'A'" --operator A
filt "--operator B --action cancel" "operator = 'B' AND action = 'cancel'" --operator B --action cancel
filt "--event-no OB-1" "event_no = 'OB-1'" --event-no OB-1
filt "--table message" "table_name = 'biz_message_event'" --table message
filt "--result skipped" "result = 'skipped'" --result skipped
filt "--since/--until" "audit_time >= '2026-06-01 12:01:00' AND audit_time < '2026-06-01 12:03:00'" --since '2026-06-01 12:01' --until '2026-06-01 12:03'
filt "--event-no with --operator" "event_no = 'OB-1' AND operator = 'B'" --event-no OB-1 --operator B
filt "a CJK operator" "operator = '运维-甲'" --operator '运维-甲'

# Paging with --after: every row once, in order.
page_through() { # page_through OPTIONS... -> $dir/paged.json
	after=
	echo '[]' >"$dir/paged.json"
	pages=0
	while :; do
		pages=$((pages + 1))
		[ $pages -gt 50 ] && break
		if [ -n "$after" ]; then
			ev audit --format json "$@" --after "$after" >"$dir/p.json" 2>"$dir/p.err"
		else
			ev audit --format json "$@" >"$dir/p.json" 2>"$dir/p.err"
		fi
		python3 -c "import json,sys; a=json.load(open('$dir/paged.json')); a+=json.load(open('$dir/p.json')); json.dump(a, open('$dir/paged.json','w'), ensure_ascii=False)"
		after=$(sed -n 's/^-- more audit rows: --after //p' "$dir/p.err")
		[ -n "$after" ] || break
	done
}
page_through --limit 2
reference
check "paging 2 rows at a time with --after: 5 pages ($pages)" [ $pages -eq 5 ]
check "... the rows are the table's" same "$dir/paged.json"
ev audit --format json --limit 1 >/dev/null 2>"$dir/p.err"
check "... a cursor keeps the milliseconds" grep -q '^-- more audit rows: --after v1:7:2026-06-01T12:03:00\.000$' "$dir/p.err"
ev audit --after 'v1:x:nonsense' >/dev/null 2>"$dir/err"
check "a bad cursor exits 2" [ $? -eq 2 ]

# The capped filters over more rows than the cap: 300 older rows of operator F.
# (The largest id is taken: the filler rows get explicit ids below it.)
sql -e "INSERT INTO evtop_audit (id, audit_time, source, os_user, db_user, table_name, event_id, event_no, action, before_status, before_retry_count, before_max_retry_count, before_version, after_status, result) SELECT 1000 + seq, TIMESTAMP'2026-06-01 09:00:00' + INTERVAL seq SECOND, 'default', 'ops', 'x@%', 'biz_outbox_event', seq, CONCAT('F-', seq), 'retry_schedule', 3, 0, 5, 0, 3, 'applied' FROM seq_1_to_300" || exit 99
ev audit --operator A --search-cap 100 --limit 50 >"$dir/cap.out" 2>"$dir/cap.err"
check "a capped filter over more rows than the cap: exits 0" [ $? -eq 0 ]
check "... says it stopped at the cap, as the lists' search does" grep -q '^-- 3 matches; stopped at 100 rows examined: narrow the window, or the next page goes on$' "$dir/cap.out"
check "... and gives the next page's cursor" grep -q '^-- more audit rows: --after v1:' "$dir/cap.out"
page_through --operator A --search-cap 100 --limit 50
reference "operator = 'A'"
check "... paged to the end: the same rows as the client's" same "$dir/paged.json"
ev audit --format json --event-no F-7 >"$dir/f.json" 2>"$dir/f.err"
check "an indexed filter examines nothing to say" [ ! -s "$dir/f.err" ]

# csv: a stable header (doc/cli.md), a line per row, no raw control byte.
ev audit --format csv --limit 1000 --since '2026-06-01 11:00' >"$dir/a.csv" 2>"$dir/err"
check "audit --format csv exits 0" [ $? -eq 0 ]
check "... its header is the table's columns" [ "$(head -n 1 "$dir/a.csv")" = "$(echo "$cols" | sed 's/, /,/g')" ]
check "... a line per row" [ "$(python3 -c "import csv; print(sum(1 for _ in csv.reader(open('$dir/a.csv'))) - 1)")" = 9 ]
check "... no raw control byte" sh -c "! LC_ALL=C tr -d '\n' <'$dir/a.csv' | LC_ALL=C grep -q '[[:cntrl:]]'"

# The table format: the statuses named, hostile text sanitised.
ev audit --since '2026-06-01 11:00' >"$dir/t.out" 2>&1
check "the table format names the statuses" grep -q '3 failed → 0 pending' "$dir/t.out"
check "... and a write not applied" grep -q '3 failed → not applied' "$dir/t.out"
check "... writes no raw escape" sh -c "! LC_ALL=C grep -q \"\$(printf '\\033')\" '$dir/t.out'"

# Usage errors.
ev audit --event-type X >/dev/null 2>"$dir/err"
check "a list filter the audit has not exits 2" [ $? -eq 2 ]
ev audit --since yesterday >/dev/null 2>"$dir/err"
check "a bad time exits 2" [ $? -eq 2 ]

# Several sources: two databases, each its own evtop_audit, merged newest first.
for s in aua aub; do
	sql -e "DROP DATABASE IF EXISTS $s; CREATE DATABASE $s" || exit 99
	sql "$s" <"$src/sql/mariadb/audit.sql" || exit 99
	cat >"$dir/$s.cnf" <<EOF
[client]
socket=${EVTOP_TEST_SOCKET:?}
user=${EVTOP_TEST_USER:-root}
password=${EVTOP_TEST_PASSWORD:-}
database=$s
EOF
	chmod 600 "$dir/$s.cnf"
done
sql aua -e "INSERT INTO evtop_audit (id, audit_time, source, os_user, db_user, table_name, event_id, event_no, action, before_status, before_retry_count, before_max_retry_count, before_version, after_status, operator, result) SELECT seq, TIMESTAMP'2026-06-01 10:00:00' + INTERVAL (seq * 2) SECOND, 'aua', 'ops', 'x@%', 'biz_outbox_event', seq, CONCAT('A-', seq), 'cancel', 3, 0, 5, 0, 4, IF(seq % 2, 'A', 'B'), 'applied' FROM seq_1_to_9" || exit 99
sql aub -e "INSERT INTO evtop_audit (id, audit_time, source, os_user, db_user, table_name, event_id, event_no, action, before_status, before_retry_count, before_max_retry_count, before_version, after_status, operator, result) SELECT 100 + seq, TIMESTAMP'2026-06-01 10:00:00' + INTERVAL (seq * 3) SECOND, 'aub', 'ops', 'x@%', 'biz_outbox_event', seq, CONCAT('B-', seq), 'retry_now', 3, 0, 5, 0, 0, IF(seq % 2, 'A', 'B'), 'applied' FROM seq_1_to_7" || exit 99
cat >"$dir/two.conf" <<EOF
[source aua]
defaults_file = $dir/aua.cnf
[source aub]
defaults_file = $dir/aub.cnf
EOF
evm() { "$evtop" --config "$dir/two.conf" "$@"; }
merged_ref() { # merged_ref WHERE -> the event_nos newest first, with their source
	sql -e "SELECT GROUP_CONCAT(CONCAT(s, ':', event_no) ORDER BY audit_time DESC, id DESC) FROM (SELECT 'aua' s, a.* FROM aua.evtop_audit a UNION ALL SELECT 'aub', b.* FROM aub.evtop_audit b) t WHERE ${1:-TRUE}"
}
nos() { python3 -c "import json,sys; print(','.join(r['read_from'] + ':' + r['event_no'] for r in json.load(open(sys.argv[1]))))" "$1"; }
evm audit --format json --limit 100 >"$dir/m.json" 2>"$dir/m.err"
check "two sources: exits 0" [ $? -eq 0 ]
check "... merged newest first, each row naming the source it was read from" [ "$(nos "$dir/m.json")" = "$(merged_ref)" ]
check "... read_from first, then the table's columns" [ "$(python3 -c "import json; print(', '.join(json.load(open('$dir/m.json'))[0].keys()))")" = "read_from, $cols" ]
after=
: >"$dir/mp.txt"
pages=0
while [ $pages -lt 20 ]; do
	pages=$((pages + 1))
	if [ -n "$after" ]; then evm audit --format json --limit 4 --operator A --after "$after"; else evm audit --format json --limit 4 --operator A; fi >"$dir/p.json" 2>"$dir/p.err"
	got=$(nos "$dir/p.json")
	[ -n "$got" ] && printf "%s," "$got" >>"$dir/mp.txt"
	after=$(sed -n 's/^-- more audit rows: --after //p' "$dir/p.err")
	[ -n "$after" ] || break
done
check "... paged with --after (a cursor per source) and filtered: every row once, in order" [ "$(sed 's/,$//' "$dir/mp.txt")" = "$(merged_ref "operator = 'A'")" ]

# The missing table: said, exit 3, nothing changed.
before=$(sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event" | tr '\n' ' ')
sql -e "RENAME TABLE evtop_audit TO evtop_audit_away" || exit 99
ev audit >"$dir/out" 2>"$dir/err"
rc=$?
check "no evtop_audit table: exits 3 ($rc)" [ $rc -eq 3 ]
check "... says so and which file creates it" grep -qxF 'evtop: no evtop_audit table in this database: sql/mariadb/audit.sql creates it' "$dir/err"
check "... prints no rows" [ ! -s "$dir/out" ]
sql -e "RENAME TABLE evtop_audit_away TO evtop_audit" || exit 99

# The missing grant: SELECT on the event tables only.
db=${EVTOP_TEST_DB:?}
sql -e "DROP USER IF EXISTS 'evtop_aw'@'localhost'; CREATE USER 'evtop_aw'@'localhost' IDENTIFIED BY 'pw'; GRANT SELECT ON \`$db\`.biz_outbox_event TO 'evtop_aw'@'localhost'; GRANT SELECT ON \`$db\`.biz_message_event TO 'evtop_aw'@'localhost'" || exit 99
ev audit -u evtop_aw --password=pw >"$dir/out" 2>"$dir/err"
rc=$?
check "no SELECT on evtop_audit: exits 3 ($rc)" [ $rc -eq 3 ]
check "... names the missing grant" grep -q "^evtop: no SELECT on evtop_audit for evtop_aw@localhost: GRANT SELECT ON evtop_audit (optional for watching, sql/grants.sql; doc/privileges.md); nothing changed$" "$dir/err"
check "... prints no rows" [ ! -s "$dir/out" ]
sql -e "DROP USER 'evtop_aw'@'localhost'"

# A server that is not there.
"$evtop" audit --no-defaults -S "$dir/no-such.sock" -u nobody >"$dir/out" 2>"$dir/err"
rc=$?
check "no server: exits 3 ($rc)" [ $rc -eq 3 ]
check "... and says it cannot connect" grep -qi 'connect' "$dir/err"
check "nothing changed in the event tables" [ "$(sql -e "CHECKSUM TABLE biz_outbox_event, biz_message_event" | tr '\n' ' ')" = "$before" ]

tap_done
