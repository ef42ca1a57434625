#!/bin/sh
# Payload search: payload.PATH=VALUE, payload~TEXT and the headers terms in --filter, for list,
# the recent list, trail and trace. Every check compares evtop's rows (--format json) with a
# reference query written here over the same bounded set: the grammar's forms (nested keys,
# arrays, quoted keys, CJK, 199.00 as text, escaped quotes, a key twice, \uXXXX, LIKE's
# metacharacters taken literally, NULL headers), where the search line goes and its figures,
# the stop at --search-cap paged through to the end, payload terms with other filters, the
# usage errors, rows that are not JSON (LONGTEXT copies of the tables), two sources merged
# with a stop on one, and the logged statement (FORCE INDEX, the cap, EXPLAIN without a scan).
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
db=${EVTOP_TEST_DB:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"

now='2026-06-01 12:00:00'
pinned=$dir/pinned.cnf
sed "/^\[evtop\]/a init-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"" "$cnf" >"$pinned"
chmod 600 "$pinned"
XDG_STATE_HOME=$dir/state
export XDG_STATE_HOME
# evtop's stdout in $dir/out, its stderr in $dir/err, its status in $rc.
ev() {
	timeout 60 "$evtop" --defaults-file="$pinned" "$@" </dev/null >"$dir/out" 2>"$dir/err"
	rc=$?
}
q() { sql --default-character-set=utf8mb4 "$@"; }
diag() { sed 's/^/# /'; }

# --- the fixture -------------------------------------------------------------------------------
# 400 failed outbox rows made from their id: next_retry_time with ties (NULL in 3 of 10),
# retry_count 0..3, created over the last three hours (every 50th three days ago), payloads with
# nested objects and arrays, headers NULL every 4th.
gen_outbox() { # gen_outbox TABLE FIRST LAST: the generated failed rows FIRST..LAST into TABLE
	awk -v t="$1" -v a="$2" -v b="$3" -v q="'" 'BEGIN {
	print "INSERT INTO " t " (id, event_no, aggregate_type, aggregate_id, event_type, event_source,"
	print " publish_channel, topic, event_payload, event_headers, publish_status, retry_count,"
	print " max_retry_count, next_retry_time, fail_reason, trace_id, create_time, update_time) VALUES"
	for (n = a; n <= b; n++) {
		nrt = (n % 10 < 3) ? "NULL" : sprintf("%s2026-06-01 10:00:00%s + INTERVAL %d MINUTE", q, q, (n * 37) % 200)
		ct = (n % 50 == 0) ? sprintf("%s2026-05-29 08:00:00%s + INTERVAL %d SECOND", q, q, n) \
		                   : sprintf("%s2026-06-01 12:00:00%s - INTERVAL %d MINUTE", q, q, (n * 7) % 180)
		pl = sprintf("{\"orderId\":\"O%d\",\"seq\":%d,\"rare\":\"%s\",\"items\":[{\"skuId\":\"SKU%d\",\"qty\":%d},{\"skuId\":\"SKU%d\"}],\"customer\":{\"tier\":\"%s\",\"name\":\"c%d\"}}",
			n % 7, n, (n % 31 == 0) ? "yes" : "no", n % 9, n % 3, (n + 1) % 9, (n % 5 == 0) ? "gold" : "silver", n)
		hd = (n % 4 == 0) ? "NULL" : sprintf("%s{\"x-tenant\":\"T%d\",\"trace\":{\"span\":\"s%d\"}}%s", q, n % 3, n % 6, q)
		printf "%s(%d, %sOB-%d%s, %sORDER%s, %sA%d%s, %s%s%s, %sorder-service%s, %sMQ%s, %sorder.event%s, %s%s%s, %s, 3, %d, 5, %s, %stimeout%s, %str-%d%s, %s, %s)\n",
			(n == a ? " " : ","), n, q, n, q, q, q, q, n % 20, q, q, (n % 3 == 0) ? "ORDER_PAID" : "ORDER_CREATED", q,
			q, q, q, q, q, q, q, pl, q, hd, n % 4, nrt, q, q, q, n % 25, q, ct, ct
	}
	print ";"
}'
}
gen_outbox biz_outbox_event 1 400 | q || exit 99

# Rows made for one form each (all failed), a deleted one, and rows of the other statuses.
q <<'SQL' || exit 99
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, event_headers, publish_status, retry_count,
  next_retry_time, trace_id, create_time, deleted)
VALUES
 (401, 'OB-401', 'ORDER', 'A3', 'ORDER_CREATED', 'order-service', 'MQ',
  '{"用户":"张三","orderId":"O-CJK","note":"中文备注"}', '{"租户":"甲","x-tenant":"T9"}', 3, 0, NULL, 'tr-5', '2026-06-01 11:40:01', 0),
 (402, 'OB-402', 'ORDER', 'A3', 'ORDER_PAID', 'order-service', 'MQ', '{"amount":199.00}', NULL, 3, 1,
  '2026-06-01 10:30:00', 'tr-5', '2026-06-01 11:40:02', 0),
 (403, 'OB-403', 'ORDER', 'A3', 'ORDER_PAID', 'order-service', 'MQ', '{"amount":199}', NULL, 3, 1,
  '2026-06-01 10:30:00', NULL, '2026-06-01 11:40:03', 0),
 (404, 'OB-404', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"note":"say \\"hi\\" now"}', '{}', 3, 2,
  NULL, NULL, '2026-06-01 11:40:04', 0),
 (405, 'OB-405', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"dup":"first","dup":"second"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:05', 0),
 (406, 'OB-406', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"city":"\\u5317\\u4eac"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:06', 0),
 (407, 'OB-407', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"city":"北京"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:07', 0),
 (408, 'OB-408', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"code":"100%"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:08', 0),
 (409, 'OB-409', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"code":"1000"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:09', 0),
 (410, 'OB-410', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"code":"a_b"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:10', 0),
 (411, 'OB-411', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"code":"axb"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:11', 0),
 (412, 'OB-412', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"path":"C:\\\\temp"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:12', 0),
 (413, 'OB-413', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"a.b":"x"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:13', 0),
 (414, 'OB-414', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"a":{"b":"x"}}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:14', 0),
 (415, 'OB-415', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"greet":"HELLO world"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:15', 0),
 (416, 'OB-416', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"greet":"hello world"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:16', 0),
 (417, 'OB-417', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"we\\"ird":"q"}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:17', 0),
 (418, 'OB-418', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"note":"two words"}', '{"x.dot":"d"}', 3, 0,
  NULL, NULL, '2026-06-01 11:40:18', 0),
 (419, 'OB-419', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', CONCAT('{"long":"', REPEAT('z', 1000), '"}'), NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:19', 0),
 (420, 'OB-420', 'ORDER', 'X', 'ORDER_PAID', 'order-service', 'MQ', '{"flag":true,"none":null,"obj":{"k":1}}', NULL, 3, 0,
  NULL, NULL, '2026-06-01 11:40:20', 0),
 (431, 'OB-431', 'ORDER', 'A3', 'ORDER_PAID', 'order-service', 'MQ', '{"orderId":"O1","amount":199.00}', '{"x-tenant":"T1"}', 3, 0,
  NULL, 'tr-5', '2026-06-01 11:40:31', 1);
-- pending, processing, published and cancelled rows: in the recent list (any status), not failed.
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, event_headers, publish_status, retry_count,
  next_retry_time, locked_by, lock_until, trace_id, create_time)
SELECT 500 + seq, CONCAT('OB-', 500 + seq), 'ORDER', CONCAT('A', seq % 20), 'ORDER_CREATED',
  'order-service', 'MQ',
  CONCAT('{"orderId":"O', seq % 7, '","customer":{"tier":"', IF(seq % 5 = 0, 'gold', 'silver'), '"}}'),
  IF(seq % 2 = 0, '{"x-tenant":"T1"}', NULL),
  CASE WHEN seq <= 60 THEN 0 WHEN seq <= 100 THEN 2 WHEN seq <= 110 THEN 4 ELSE 1 END, 0,
  NULL, IF(seq > 110, 'pub-1', NULL), IF(seq > 110, '2026-06-01 11:59:00', NULL),
  CONCAT('tr-', seq % 25), '2026-06-01 12:00:00' - INTERVAL (seq * 11) % 150 MINUTE
FROM seq_1_to_115;
SQL

# The message table: 50 failed, 20 pending, 10 handled.
q <<'SQL' || exit 99
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, next_retry_time, fail_reason, trace_id, create_time)
SELECT seq, CONCAT('MS-', seq), IF(seq % 3 = 0, 'PAY_SUCCESS', 'ORDER_CREATED'), 'ORDER',
  CONCAT('A', seq % 20), 'pay-service',
  CONCAT('{"orderId":"O', seq % 7, '","用户":"', IF(seq % 5 = 0, '张三', '李四'),
         '","items":[{"skuId":"SKU', seq % 9, '"}]}'),
  CASE WHEN seq <= 50 THEN 3 WHEN seq <= 70 THEN 0 ELSE 2 END, seq % 3,
  IF(seq % 6 = 0, NULL, '2026-06-01 10:00:00' + INTERVAL (seq * 13) % 90 MINUTE), 'timeout',
  CONCAT('tr-', seq % 25), '2026-06-01 12:00:00' - INTERVAL (seq * 5) % 170 MINUTE
FROM seq_1_to_80;
SQL

OBF="FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3"
MSF="FROM biz_message_event WHERE deleted = 0 AND event_status = 3"
FORD="next_retry_time, retry_count, id"
V() { printf "JSON_VALUE(event_payload, '%s')" "$1"; }
H() { printf "JSON_VALUE(event_headers, '%s')" "$1"; }
has() { printf "INSTR(CAST(event_payload AS BINARY), CAST('%s' AS BINARY)) > 0" "$1"; }

# vs_ref DESCRIPTION TABLE BASE COND ORDER EVTOP-ARGS...: evtop's rows of TABLE (outbox or
# message), --format json, are the reference's "SELECT id BASE AND (COND) ORDER BY ORDER", in
# that order; $want_ids, when set, is the ids expected by hand ("-" none). When the arguments have
# payload terms ($nsearch unset or 1), stderr has the search line, its figures the reference's:
# N matches in M rows examined, M the bounded set's COUNT(*) (BASE alone).
want_ids=""
vs_ref() {
	d=$1 tk=$2 base=$3 cond=$4 ord=$5
	shift 5
	ev "$@" --format json
	if ! q -e "SELECT id $base AND ($cond) ORDER BY $ord" >"$dir/want"; then
		not_ok "$d: the reference query failed"
		want_ids=""
		return
	fi
	if [ $rc -ne 0 ]; then
		not_ok "$d: exit $rc"
		diag <"$dir/err"
		want_ids=""
		return
	fi
	if ! jq -r --arg t "$tk" '.[] | select(.table == $t) | .id' "$dir/out" >"$dir/got"; then
		not_ok "$d: the output is not JSON"
		head -c 600 "$dir/out" | diag
		want_ids=""
		return
	fi
	nw=$(wc -l <"$dir/want" | tr -d ' ')
	got1=$(tr '\n' ' ' <"$dir/got")
	if ! cmp -s "$dir/want" "$dir/got"; then
		not_ok "$d: not the reference's rows (want $nw; - want, + got)"
		diff -u "$dir/want" "$dir/got" | sed 1,3d | head -20 | diag
	elif [ -n "$want_ids" ] && [ "$got1" != "${want_ids#-}" ]; then
		not_ok "$d: got ids $got1, expected by hand $want_ids"
	else
		ok "$d ($nw rows)"
	fi
	want_ids=""
	[ "${nsearch:-1}" = 1 ] || return 0
	m=$(q -e "SELECT COUNT(*) $base")
	s=es
	[ "$nw" = 1 ] && s=
	if grep -Eq "^-- $tk: search .*: $nw match$s in $m rows examined\$" "$dir/err"; then
		ok "... its search line: $nw match$s in $m rows examined"
	else
		not_ok "... its search line: want '$nw match$s in $m rows examined', got:"
		grep -- "-- $tk: search" "$dir/err" | diag
	fi
}
# usage_err DESCRIPTION MESSAGE EVTOP-ARGS...: exit 2, nothing on stdout, MESSAGE on stderr.
usage_err() {
	d=$1 msg=$2
	shift 2
	ev "$@"
	if [ $rc -eq 2 ] && [ ! -s "$dir/out" ] && grep -qF -- "$msg" "$dir/err"; then
		ok "$d: exit 2, nothing listed, '$msg'"
	else
		not_ok "$d: exit $rc, want 2 and '$msg'; stdout $(wc -c <"$dir/out") bytes"
		diag <"$dir/err"
	fi
}

L="list failed --table outbox --limit 1000"
# --- the grammar, one form at a time -------------------------------------------------------------
# shellcheck disable=SC2086
{
	vs_ref "payload.orderId=O1" outbox "$OBF" "$(V '$.orderId') = 'O1'" "$FORD" $L --filter 'payload.orderId=O1'
	vs_ref "a nested key: payload.customer.tier=gold" outbox "$OBF" "$(V '$.customer.tier') = 'gold'" "$FORD" \
		$L --filter 'payload.customer.tier=gold'
	vs_ref "an array position: payload.items[0].skuId=SKU4" outbox "$OBF" "$(V '$.items[0].skuId') = 'SKU4'" "$FORD" \
		$L --filter 'payload.items[0].skuId=SKU4'
	vs_ref "... the second element: payload.items[1].skuId=SKU4" outbox "$OBF" "$(V '$.items[1].skuId') = 'SKU4'" "$FORD" \
		$L --filter 'payload.items[1].skuId=SKU4'
	vs_ref "a number as stored text: payload.seq=123" outbox "$OBF" "$(V '$.seq') = '123'" "$FORD" \
		$L --filter 'payload.seq=123'
	want_ids="401 "
	vs_ref "a CJK key and value: payload.\"用户\"=张三" outbox "$OBF" "$(V '$."用户"') = '张三'" "$FORD" \
		$L --filter 'payload."用户"=张三'
	want_ids="402 "
	vs_ref "199.00 stored: payload.amount=199.00 matches it" outbox "$OBF" "$(V '$.amount') = '199.00'" "$FORD" \
		$L --filter 'payload.amount=199.00'
	want_ids="403 "
	vs_ref "... payload.amount=199 only the row that stores 199" outbox "$OBF" "$(V '$.amount') = '199'" "$FORD" \
		$L --filter 'payload.amount=199'
	want_ids="404 "
	vs_ref "escaped quotes in a string: payload.note=\"say \\\"hi\\\" now\"" outbox "$OBF" \
		"$(V '$.note') = 'say \"hi\" now'" "$FORD" $L --filter 'payload.note="say \"hi\" now"'
	want_ids="418 "
	vs_ref "a quoted value with a space: payload.note=\"two words\"" outbox "$OBF" "$(V '$.note') = 'two words'" "$FORD" \
		$L --filter 'payload.note="two words"'
	want_ids="405 "
	vs_ref "a key twice: the first occurrence (payload.dup=first)" outbox "$OBF" "$(V '$.dup') = 'first'" "$FORD" \
		$L --filter 'payload.dup=first'
	want_ids="-"
	vs_ref "... and not the second (payload.dup=second)" outbox "$OBF" "$(V '$.dup') = 'second'" "$FORD" \
		$L --filter 'payload.dup=second'
	want_ids="406 407 "
	vs_ref "\\uXXXX escapes compare decoded: payload.city=北京" outbox "$OBF" "$(V '$.city') = '北京'" "$FORD" \
		$L --filter 'payload.city=北京'
	want_ids="413 "
	vs_ref "a quoted key with a dot: payload.\"a.b\"=x" outbox "$OBF" "$(V '$."a.b"') = 'x'" "$FORD" \
		$L --filter 'payload."a.b"=x'
	want_ids="414 "
	vs_ref "... unquoted, a path: payload.a.b=x" outbox "$OBF" "$(V '$.a.b') = 'x'" "$FORD" \
		$L --filter 'payload.a.b=x'
	want_ids="417 "
	vs_ref "a quote inside a quoted key: payload.\"we\\\"ird\"=q" outbox "$OBF" "$(V '$."we\\"ird"') = 'q'" "$FORD" \
		$L --filter 'payload."we\"ird"=q'
	want_ids="419 "
	vs_ref "a value of 1000 characters" outbox "$OBF" "$(V '$.long') = REPEAT('z', 1000)" "$FORD" \
		$L --filter "payload.long=$(printf "%01000d" 0 | tr 0 z)"
	want_ids="420 "
	vs_ref "true matches true: payload.flag=true" outbox "$OBF" "JSON_UNQUOTE(JSON_EXTRACT(event_payload, '$.flag')) = 'true'" "$FORD" $L --filter 'payload.flag=true'
	want_ids="420 "
	vs_ref "a JSON null matches null, a missing key does not: payload.none=null" outbox "$OBF" \
		"JSON_EXISTS(event_payload, '$.none') AND JSON_UNQUOTE(JSON_EXTRACT(event_payload, '$.none')) = 'null'" "$FORD" \
		$L --filter 'payload.none=null'
	want_ids="420 "
	vs_ref "an object matches its JSON text: payload.obj=\"{\\\"k\\\": 1}\"" outbox "$OBF" \
		"JSON_EXTRACT(event_payload, '$.obj') = '{\"k\": 1}'" "$FORD" $L --filter 'payload.obj="{\"k\": 1}"'
	want_ids="-"
	vs_ref "a value with quotes is a value, not SQL: payload.orderId=\"O1' OR '1'='1\"" outbox "$OBF" "$(V '$.orderId') = 'O1'' OR ''1''=''1'" "$FORD" \
		$L --filter "payload.orderId=\"O1' OR '1'='1\""
	vs_ref "an alias: event_payload.orderId=O3" outbox "$OBF" "$(V '$.orderId') = 'O3'" "$FORD" \
		$L --filter 'event_payload.orderId=O3'
	vs_ref "a value that is nowhere: payload.orderId=O77" outbox "$OBF" "$(V '$.orderId') = 'O77'" "$FORD" \
		$L --filter 'payload.orderId=O77'
	vs_ref "case matters in a value: payload.customer.tier=GOLD" outbox "$OBF" "BINARY $(V '$.customer.tier') = 'GOLD'" "$FORD" \
		$L --filter 'payload.customer.tier=GOLD'

	# payload~TEXT: a substring of the stored text, %, _ and \ literal, case-sensitive.
	vs_ref "payload~SKU8" outbox "$OBF" "$(has SKU8)" "$FORD" $L --filter 'payload~SKU8'
	want_ids="408 "
	vs_ref "payload~100% (% literal: not 1000)" outbox "$OBF" "$(has '100%')" "$FORD" $L --filter 'payload~100%'
	want_ids="410 "
	vs_ref "payload~a_b (_ literal: not axb)" outbox "$OBF" "$(has 'a_b')" "$FORD" $L --filter 'payload~a_b'
	want_ids="412 "
	vs_ref "payload~:\\\\t (two backslashes as stored)" outbox "$OBF" "$(has ':\\\\t')" "$FORD" $L --filter 'payload~:\\t'
	want_ids="406 "
	vs_ref "payload~\\u5317 (the stored escape, a backslash literal)" outbox "$OBF" "$(has '\\u5317')" "$FORD" \
		$L --filter 'payload~\u5317'
	want_ids="407 "
	vs_ref "payload~北京 (the stored text, not the decoded)" outbox "$OBF" "$(has '北京')" "$FORD" $L --filter 'payload~北京'
	want_ids="416 "
	vs_ref "payload~hello is case-sensitive" outbox "$OBF" "$(has hello)" "$FORD" $L --filter 'payload~hello'
	want_ids="415 "
	vs_ref "payload~HELLO too" outbox "$OBF" "$(has HELLO)" "$FORD" $L --filter 'payload~HELLO'
	want_ids="404 "
	vs_ref "payload~\"say \\\"hi\" (a quoted substring with a quote)" outbox "$OBF" "$(has 'say \\\"hi')" "$FORD" \
		$L --filter 'payload~"say \\\"hi"'

	# headers: paths, quoted keys, NULL headers never match.
	vs_ref "headers.\"x-tenant\"=T1" outbox "$OBF" "$(H '$."x-tenant"') = 'T1'" "$FORD" $L --filter 'headers."x-tenant"=T1'
	vs_ref "headers.trace.span=s3" outbox "$OBF" "$(H '$.trace.span') = 's3'" "$FORD" $L --filter 'headers.trace.span=s3'
	want_ids="401 "
	vs_ref "headers.\"租户\"=甲" outbox "$OBF" "$(H '$."租户"') = '甲'" "$FORD" $L --filter 'headers."租户"=甲'
	want_ids="418 "
	vs_ref "headers.\"x.dot\"=d" outbox "$OBF" "$(H '$."x.dot"') = 'd'" "$FORD" $L --filter 'headers."x.dot"=d'
	vs_ref "headers~T2 (rows with NULL headers never match)" outbox "$OBF" \
		"INSTR(CAST(event_headers AS BINARY), CAST('T2' AS BINARY)) > 0" "$FORD" $L --filter 'headers~T2'
	vs_ref "an alias: event_headers.\"x-tenant\"=T0" outbox "$OBF" "$(H '$."x-tenant"') = 'T0'" "$FORD" \
		$L --filter 'event_headers."x-tenant"=T0'

	# Several terms, all of them; with the other filters.
	vs_ref "four terms at once" outbox "$OBF" \
		"$(V '$.orderId') = 'O2' AND $(V '$.customer.tier') = 'silver' AND $(has SKU) AND $(H '$."x-tenant"') = 'T1'" "$FORD" \
		$L --filter 'payload.orderId=O2 payload.customer.tier=silver payload~SKU headers."x-tenant"=T1'
	vs_ref "event_type=ORDER_PAID with payload.customer.tier=gold" outbox \
		"$OBF AND event_type = 'ORDER_PAID'" "$(V '$.customer.tier') = 'gold'" "$FORD" \
		$L --filter 'event_type=ORDER_PAID payload.customer.tier=gold'
	vs_ref "--event-type and biz_id= with payload~SKU3" outbox \
		"$OBF AND event_type = 'ORDER_CREATED' AND aggregate_id = 'A7'" "$(has SKU3)" "$FORD" \
		$L --event-type ORDER_CREATED --filter 'biz_id=A7 payload~SKU3'
	vs_ref "reason~ and since= with payload.orderId=O4" outbox \
		"$OBF AND fail_reason LIKE '%time%' AND create_time >= '2026-06-01 11:00:00'" "$(V '$.orderId') = 'O4'" "$FORD" \
		$L --filter 'reason~time since="2026-06-01 11:00:00" payload.orderId=O4'

	# The message table.
	vs_ref "message: payload.\"用户\"=张三" message "$MSF" "$(V '$."用户"') = '张三'" "$FORD" \
		list failed --table message --limit 1000 --filter 'payload."用户"=张三'
	vs_ref "message: payload.items[0].skuId=SKU3 with event_type" message "$MSF AND event_type = 'PAY_SUCCESS'" \
		"$(V '$.items[0].skuId') = 'SKU3'" "$FORD" \
		list failed --table message --limit 1000 --filter 'event_type=PAY_SUCCESS payload.items[0].skuId=SKU3'
	vs_ref "message pending: payload.orderId=O2 (create_time, id)" message \
		"FROM biz_message_event WHERE deleted = 0 AND event_status = 0" "$(V '$.orderId') = 'O2'" "create_time, id" \
		list pending --table message --limit 1000 --filter 'payload.orderId=O2'
	vs_ref "outbox pending: payload.customer.tier=gold (create_time, id)" outbox \
		"FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 0" "$(V '$.customer.tier') = 'gold'" "create_time, id" \
		list pending --table outbox --limit 1000 --filter 'payload.customer.tier=gold'
}

# Both tables at once: each table's rows and its own search line.
ev list failed --limit 1000 --format json --filter 'payload.orderId=O5'
for tk in outbox:"$OBF" message:"$MSF"; do
	t=${tk%%:*}
	base=${tk#*:}
	jq -r --arg t "$t" '.[] | select(.table == $t) | .id' "$dir/out" >"$dir/got"
	q -e "SELECT id $base AND $(V '$.orderId') = 'O5' ORDER BY $FORD" >"$dir/want"
	nw=$(wc -l <"$dir/want" | tr -d ' ')
	m=$(q -e "SELECT COUNT(*) $base")
	cmp -s "$dir/want" "$dir/got" && grep -qx -- "-- $t: search payload.orderId=O5: $nw matches in $m rows examined" "$dir/err" &&
		ok "both tables listed: the $t rows and its own search line ($nw in $m)" ||
		{ not_ok "both tables listed: the $t rows and its own search line ($nw in $m)"; diff "$dir/want" "$dir/got" | diag; diag <"$dir/err"; }
done

# --- where the search line goes -------------------------------------------------------------------
nO1=$(q -e "SELECT COUNT(*) $OBF AND $(V '$.orderId') = 'O1'")
nall=$(q -e "SELECT COUNT(*) $OBF")
line="-- search payload.orderId=O1: $nO1 matches in $nall rows examined"
ev list failed --table outbox --limit 1000 --filter 'payload.orderId=O1'
rows=$(grep -c '^ *[0-9][0-9]*  *OB-' "$dir/out")
[ $rc -eq 0 ] && [ "$(grep -Fx -- "$line" "$dir/out" | wc -l)" -eq 1 ] && [ "$rows" = "$nO1" ] && ! grep -q -- '-- search' "$dir/err" &&
	ok "table format: the search line on stdout, once ($line)" ||
	{ not_ok "table format: the search line on stdout, once ($line; $rows rows)"; tail -3 "$dir/out" | diag; diag <"$dir/err"; }
last=$(grep -n '^ *[0-9][0-9]*  *OB-' "$dir/out" | tail -1 | cut -d: -f1)
at=$(grep -nFx -- "$line" "$dir/out" | cut -d: -f1)
check "... under the table block (line ${at:-none} after the last row's $last)" [ "${at:-0}" -gt "${last:-0}" ]
ev list failed --table outbox --limit 1000 --format csv --filter 'payload.orderId=O1'
csvrows=$(($(wc -l <"$dir/out") - 1))
[ $rc -eq 0 ] && grep -qFx -- "-- outbox: search payload.orderId=O1: $nO1 matches in $nall rows examined" "$dir/err" &&
	! grep -q -- '-- search\|-- outbox' "$dir/out" && [ "$csvrows" = "$nO1" ] &&
	ok "csv: the rows on stdout ($csvrows), the search line on stderr" ||
	{ not_ok "csv: the rows on stdout ($csvrows), the search line on stderr"; diag <"$dir/err"; }
ev list failed --table outbox --limit 1000 --format json --filter 'payload.orderId=O1'
[ $rc -eq 0 ] && grep -qFx -- "-- outbox: search payload.orderId=O1: $nO1 matches in $nall rows examined" "$dir/err" &&
	jq -e 'type == "array"' "$dir/out" >/dev/null &&
	ok "json: stdout is only the JSON array, the search line on stderr" ||
	{ not_ok "json: stdout is only the JSON array, the search line on stderr"; diag <"$dir/err"; }
ev list failed --table outbox --limit 1000 --filter 'payload.amount=199.00'
check "one match is said in the singular" grep -qFx -- "-- search payload.amount=199.00: 1 match in $nall rows examined" "$dir/out"
ev list failed --table outbox --limit 1000 --filter 'payload.note="two words" payload~two'
check "the terms are said as written, the value with a space quoted" \
	grep -qFx -- "-- search payload.note=\"two words\" payload~two: 1 match in $nall rows examined" "$dir/out"
ev list failed --table outbox --limit 5 --filter 'payload.orderId=O1'
check "a page filled before the end: 5 matches in $nall rows examined (more on the next page)" \
	grep -qFx -- "-- search payload.orderId=O1: 5 matches in $nall rows examined (more on the next page)" "$dir/out"
ev list failed --table outbox --limit 1000 --filter 'event_type=ORDER_PAID'
check "no payload terms: no search line" sh -c "[ $rc -eq 0 ] && ! grep -q -- '-- search' '$dir/out' '$dir/err'"

# --- the cap, and paging through every page -------------------------------------------------------
# page_all NAME EVTOP-ARGS...: every page (--format json) after the cursors of the "-- more"
# lines; $dir/NAME.rows the rows (ROWFMT, a jq expression), $dir/NAME.notes each page's search
# line and its number of rows; $pages the pages read.
rowfmt='.id'
pager=ev
page_all() {
	pn=$1
	shift
	: >"$dir/$pn.rows"
	: >"$dir/$pn.notes"
	after=""
	pages=0
	while :; do
		if [ -n "$after" ]; then $pager "$@" --format json --after "$after"; else $pager "$@" --format json; fi
		if [ $rc -ne 0 ]; then
			echo "page $pages: exit $rc $(cat "$dir/err")" >>"$dir/$pn.notes"
			break
		fi
		jq -r ".[] | $rowfmt" "$dir/out" >>"$dir/$pn.rows"
		printf '%s|%s\n' "$(jq length "$dir/out")" "$(grep -- '-- outbox: search' "$dir/err")" >>"$dir/$pn.notes"
		pages=$((pages + 1))
		after=$(sed -n 's/^-- more outbox rows: --table outbox --after //p' "$dir/err")
		{ [ -z "$after" ] || [ $pages -ge 200 ]; } && break
	done
}
# notes_ok NAME LIMIT CAP: every page's search line has its page's rows as N, at most CAP
# examined, at most LIMIT rows; prints the number of pages stopped at the cap.
notes_ok() {
	awk -F'|' -v lim="$2" -v cap="$3" '
	{
		n = $1
		if (!match($2, /: [0-9,]+ match(es)?(;| in)/)) { bad = bad " [no search line: " $0 "]"; next }
		said = substr($2, RSTART + 2, RLENGTH); sub(/ .*/, "", said); gsub(/,/, "", said)
		if (said + 0 != n + 0) bad = bad " [" n " rows, said " said "]"
		if (n + 0 > lim + 0) bad = bad " [" n " rows > " lim "]"
		ex = $2
		if ($2 ~ /stopped at/) { stopped++; sub(/.*stopped at /, "", ex) } else sub(/.* in /, "", ex)
		sub(/ .*/, "", ex); gsub(/,/, "", ex)
		if (ex + 0 > cap + 0) bad = bad " [" ex " examined > cap]"
	}
	END { if (bad != "") { print "bad:" bad; exit 1 } print stopped + 0 }' "$dir/$1.notes"
}

# The first page of a rare term at --search-cap 100: stopped, the line says so, and a cursor.
rare="$(V '$.rare') = 'yes'"
first100=$(q -e "SELECT COUNT(*) FROM (SELECT event_payload $OBF ORDER BY $FORD LIMIT 100) c WHERE $rare")
stopline="-- search payload.rare=yes: $first100 matches; stopped at 100 rows examined"
advice=": narrow the window, or the next page goes on"
ev list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes'
[ $rc -eq 0 ] && [ "$first100" -lt 5 ] && grep -qF -- "$stopline: narrow the window" "$dir/out" &&
	grep -q '^-- more outbox rows: --table outbox --after v2:' "$dir/out" && [ ! -s "$dir/err" ] &&
	ok "--search-cap 100: the first page stops at the cap ($first100 matches), both lines on stdout" ||
	{ not_ok "--search-cap 100: the first page stops at the cap ($first100 matches), both lines on stdout"; tail -3 "$dir/out" | diag; diag <"$dir/err"; }
# The advice as doc/cli.md gives it.
grep -qFx -- "$stopline$advice" "$dir/out" &&
	ok "... the stop line's advice as documented ('$advice')" ||
	{ not_ok "... the stop line's advice as documented ('$advice')"; grep -- '-- search' "$dir/out" | diag; }
tcur=$(sed -n 's/^-- more outbox rows: --table outbox --after //p' "$dir/out")
got=$(grep -c '^ *[0-9][0-9]*  *OB-' "$dir/out")
check "... its rows are the matches among the first 100 candidates ($got)" [ "$got" = "$first100" ]
ev list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes' --format json
jcur=$(sed -n 's/^-- more outbox rows: --table outbox --after //p' "$dir/err")
grep -qF -- "-- outbox: ${stopline#-- }: narrow the window" "$dir/err" && [ -n "$jcur" ] && [ "$jcur" = "$tcur" ] &&
	ok "... in json both lines on stderr, the same cursor" ||
	{ not_ok "... in json both lines on stderr, the same cursor ($jcur / $tcur)"; diag <"$dir/err"; }
# The cursor is the 100th candidate's: the next page starts after it.
c100=$(q -e "SELECT CONCAT('v2:', id, ':', retry_count, ':') $OBF ORDER BY $FORD LIMIT 99, 1")
case "$jcur" in
"$c100"*) ok "... the cursor is the last candidate examined ($c100...)" ;;
*) not_ok "... the cursor is the last candidate examined: want $c100..., got $jcur" ;;
esac

# paged_vs_ref DESCRIPTION NAME COND LIMIT CAP EVTOP-ARGS...: every page of the list, every
# match once and in the list's order, the pages' lines right, their number plausible.
paged_vs_ref() {
	d=$1 name=$2 cond=$3 lim=$4 cap=$5
	shift 5
	page_all "$name" "$@"
	q -e "SELECT id ${pbase:-$OBF} AND ($cond) ORDER BY ${pord:-$FORD}" >"$dir/$name.want"
	nw=$(wc -l <"$dir/$name.want" | tr -d ' ')
	cand=$(q -e "SELECT COUNT(*) ${pbase:-$OBF}")
	if cmp -s "$dir/$name.want" "$dir/$name.rows"; then
		ok "$d: every match once, in order ($nw rows, $pages pages)"
	else
		not_ok "$d: every match once, in order ($nw rows want, $(wc -l <"$dir/$name.rows") got, $pages pages; - want + got)"
		diff -u "$dir/$name.want" "$dir/$name.rows" | sed 1,3d | head -20 | diag
		grep -v '^[0-9]*|-- outbox' "$dir/$name.notes" | head -3 | diag
	fi
	# At least one page per CAP candidates and per LIMIT matches; at most one per CAP
	# candidates plus one per LIMIT matches, plus one.
	lc=$(((cand + cap - 1) / cap))
	lm=$(((nw + lim - 1) / lim))
	lo=$lc
	[ $lm -gt $lo ] && lo=$lm
	hi=$((lc + lm + 1))
	stopped=$(notes_ok "$name" "$lim" "$cap")
	st=$?
	if [ $st -eq 0 ] && [ $pages -ge $lo ] && [ $pages -le $hi ]; then
		ok "... each page's search line counts its rows, at most $cap examined; $pages pages in [$lo, $hi], $stopped stopped at the cap"
	else
		not_ok "... each page's search line counts its rows, at most $cap examined; $pages pages in [$lo, $hi]: $stopped"
		head -5 "$dir/$name.notes" | diag
	fi
}
paged_vs_ref "payload.rare=yes, cap 100, 5 a page" rare "$rare" 5 100 \
	list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes'
check "... some pages stopped at the cap ($stopped)" [ "${stopped:-0}" -ge 3 ] 2>/dev/null
paged_vs_ref "payload.orderId=O1, cap 100, 5 a page (pages fill before the cap)" dense "$(V '$.orderId') = 'O1'" 5 100 \
	list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.orderId=O1'
paged_vs_ref "payload~SKU1 headers.\"x-tenant\"=T1, cap 150, 3 a page" mixed \
	"$(has SKU1) AND $(H '$."x-tenant"') = 'T1'" 3 150 \
	list failed --table outbox --search-cap 150 --limit 3 --filter 'payload~SKU1 headers."x-tenant"=T1'
paged_vs_ref "payload.orderId=O77 (no match at all), cap 100" none "$(V '$.orderId') = 'O77'" 5 100 \
	list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.orderId=O77'
paged_vs_ref "payload.rare=yes without a cap's stop (default cap), 2 a page" rare2 "$rare" 2 100000 \
	list failed --table outbox --limit 2 --filter 'payload.rare=yes'
# The no-retry-time bucket (every candidate's next_retry_time NULL, the cursors' too).
pbase="$OBF AND retry_count < max_retry_count AND next_retry_time IS NULL"
pord="retry_count, id"
nnull=$(q -e "SELECT COUNT(*) $pbase")
check "the no-retry-time bucket holds more than the cap ($nnull)" [ "$nnull" -gt 100 ]
paged_vs_ref "failed-noretry, payload.customer.tier=gold, cap 100, 4 a page" noretry "$(V '$.customer.tier') = 'gold'" 4 100 \
	list failed-noretry --table outbox --search-cap 100 --limit 4 --filter 'payload.customer.tier=gold'
paged_vs_ref "failed-noretry, payload.rare=yes, cap 100, 3 a page" noretry2 "$rare" 3 100 \
	list failed-noretry --table outbox --search-cap 100 --limit 3 --filter 'payload.rare=yes'
pbase=""
pord=""
printf '[evtop]\nsearch_cap = 100\n' >"$dir/cap.conf"
ev --config "$dir/cap.conf" list failed --table outbox --limit 5 --filter 'payload.rare=yes'
check "the config's search_cap = 100 stops as --search-cap 100 does" grep -qF -- "$stopline: narrow the window" "$dir/out"

# --- the recent list: any status, newest first, the window or since/until --------------------
RB="FROM biz_outbox_event WHERE deleted = 0"
RORD="create_time DESC, id DESC"
nsearch=0
vs_ref "recent (default 1h): every status created in the window, newest first" outbox \
	"$RB AND create_time >= '2026-06-01 11:00:00'" "1" "$RORD" list recent --table outbox --limit 1000
nsearch=1
vs_ref "recent --window 30m with payload.orderId=O1" outbox "$RB AND create_time >= '2026-06-01 11:30:00'" \
	"$(V '$.orderId') = 'O1'" "$RORD" list recent --table outbox --window 30m --limit 1000 --filter 'payload.orderId=O1'
vs_ref "recent --window 2h with payload.customer.tier=gold" outbox "$RB AND create_time >= '2026-06-01 10:00:00'" \
	"$(V '$.customer.tier') = 'gold'" "$RORD" list recent --table outbox --window 2h --limit 1000 --filter 'payload.customer.tier=gold'
vs_ref "recent: since/until replace the window (--window 30m ignored)" outbox \
	"$RB AND create_time >= '2026-05-29 00:00:00' AND create_time < '2026-06-01 10:30:00'" \
	"$(V '$.orderId') = 'O0'" "$RORD" \
	list recent --table outbox --window 30m --limit 1000 --filter 'since="2026-05-29 00:00:00" until="2026-06-01 10:30:00" payload.orderId=O0'
old=$(jq -r '[.[] | select(.create_time < "2026-06-01 11:30:00")] | length' "$dir/out")
check "... and rows older than the window are listed ($old)" [ "${old:-0}" -gt 0 ]
vs_ref "recent message, since= with payload.\"用户\"=李四" message \
	"FROM biz_message_event WHERE deleted = 0 AND create_time >= '2026-06-01 10:15:00'" "$(V '$."用户"') = '李四'" "$RORD" \
	list recent --table message --limit 1000 --filter 'since="2026-06-01 10:15" payload."用户"=李四'
recentb="$RB AND create_time >= '2026-06-01 09:00:00'"
q -e "SELECT id $recentb AND $(V '$.orderId') = 'O2' ORDER BY $RORD" >"$dir/recent.want"
page_all recent list recent --table outbox --window 3h --search-cap 100 --limit 15 --filter 'payload.orderId=O2'
stopped=$(notes_ok recent 15 100)
st=$?
cmp -s "$dir/recent.want" "$dir/recent.rows" && [ $st -eq 0 ] &&
	ok "recent --window 3h, cap 100, paged: every match once, newest first ($(wc -l <"$dir/recent.want") rows, $pages pages, $stopped stopped)" ||
	{ not_ok "recent --window 3h, cap 100, paged: every match once, newest first ($pages pages, $stopped)"; diff "$dir/recent.want" "$dir/recent.rows" | head | diag; }

# --- trail and trace -------------------------------------------------------------------------------
TORD="create_time, id"
vs_ref "trail ORDER A3 --table outbox with payload.items[0].skuId=SKU3" outbox \
	"FROM biz_outbox_event WHERE deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = 'A3'" \
	"$(V '$.items[0].skuId') = 'SKU3'" "$TORD" trail ORDER A3 --table outbox --filter 'payload.items[0].skuId=SKU3'
want_ids="402 "
vs_ref "trail ORDER A3 with payload.amount=199.00 (the deleted row not listed)" outbox \
	"FROM biz_outbox_event WHERE deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = 'A3'" \
	"$(V '$.amount') = '199.00'" "$TORD" trail ORDER A3 --table outbox --filter 'payload.amount=199.00'
for t in outbox message; do
	if [ $t = outbox ]; then tb=biz_outbox_event; else tb=biz_message_event; fi
	vs_ref "trail ORDER A5, both tables: the $t rows with payload~SKU5" $t \
		"FROM $tb WHERE deleted = 0 AND $([ $t = outbox ] && echo aggregate_type || echo biz_type) = 'ORDER' AND $([ $t = outbox ] && echo aggregate_id || echo biz_id) = 'A5'" \
		"$(has SKU5)" "$TORD" trail ORDER A5 --filter 'payload~SKU5'
	vs_ref "trace tr-5, both tables: the $t rows with payload.orderId=O5" $t \
		"FROM $tb WHERE deleted = 0 AND trace_id = 'tr-5'" "$(V '$.orderId') = 'O5'" "$TORD" trace tr-5 --filter 'payload.orderId=O5'
done
want_ids="401 "
vs_ref "trace tr-5 --table outbox with headers.\"x-tenant\"=T9" outbox \
	"FROM biz_outbox_event WHERE deleted = 0 AND trace_id = 'tr-5'" "$(H '$."x-tenant"') = 'T9'" "$TORD" \
	trace tr-5 --table outbox --filter 'headers."x-tenant"=T9'

q -e "SELECT id FROM biz_outbox_event WHERE deleted = 0 AND aggregate_type = 'ORDER' AND aggregate_id = 'A3'
  AND $(has SKU) ORDER BY $TORD" >"$dir/trail.want"
page_all trail trail ORDER A3 --table outbox --search-cap 100 --limit 2 --filter 'payload~SKU'
stopped=$(notes_ok trail 2 100)
st=$?
cmp -s "$dir/trail.want" "$dir/trail.rows" && [ $st -eq 0 ] && [ "$pages" -ge 2 ] &&
	ok "trail ORDER A3 with payload~SKU, 2 a page: every match once, in creation order ($(wc -l <"$dir/trail.want") rows, $pages pages)" ||
	{ not_ok "trail ORDER A3 with payload~SKU, 2 a page ($pages pages, $stopped)"; diff "$dir/trail.want" "$dir/trail.rows" | head | diag; }

# --- usage errors: exit 2, nothing listed ----------------------------------------------------------
usage_err "payload=x (no path)" "a path is needed" $L --filter 'payload=x'
usage_err "payload.a~x ('~' takes the whole text)" "'~' searches the whole stored text" $L --filter 'payload.a~x'
usage_err "payload.=x" "an empty key in a path" $L --filter 'payload.=x'
usage_err "payload.a[x]=1" "an array position is [N]" $L --filter 'payload.a[x]=1'
usage_err "payload.a[]=1" "an array position is [N]" $L --filter 'payload.a[]=1'
usage_err "payload.\"a=1 (an unterminated quote in the key)" "unterminated quote" $L --filter 'payload."a=1'
usage_err "payload.a=\"x (an unterminated quote in the value)" "unterminated quote" $L --filter 'payload.a="x'
usage_err "payload.\"\"=1 (an empty quoted key)" "an empty key in a path" $L --filter 'payload.""=1'
usage_err "payload.a]=1" "a path is keys after '.'" $L --filter 'payload.a]=1'
usage_err "payload.a= (an empty value)" "empty value" $L --filter 'payload.a='
usage_err "five payload terms" "at most 4 payload terms" $L --filter 'payload.a=1 payload.b=2 payload.c=3 payload.d=4 payload~e'
usage_err "a value of 1001 characters" "a value of at most 1000 characters" $L --filter "payload.long=$(printf "%01001d" 0 | tr 0 z)"
usage_err "--search-cap 99" "--search-cap: expected 100..10000000" $L --search-cap 99 --filter 'payload.a=1'
usage_err "--search-cap 10000001" "--search-cap: expected 100..10000000" $L --search-cap 10000001 --filter 'payload.a=1'
usage_err "headers on the message table" "the message table has no event_headers column" \
	list failed --table message --filter 'headers."x-tenant"=T1'
usage_err "headers~ on the message table" "the message table has no event_headers column" \
	list failed --table message --filter 'headers~T1'
usage_err "headers on the message table in trace" "the message table has no event_headers column" \
	trace tr-5 --table message --filter 'headers."x-tenant"=T1'
usage_err "trail with a bad path" "an array position is [N]" trail ORDER A3 --filter 'payload.items[a]=1'

# --- rows that are not JSON: the LONGTEXT copies of the tables ------------------------------------
sed -e 's/biz_message_event/bad_message_event/g; s/biz_outbox_event/bad_outbox_event/g' \
	-e 's/ JSON / LONGTEXT /g' "$src/sql/mariadb/schema.sql" | q || exit 99
nck=$(q -e "SELECT COUNT(*) FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'bad%'")
check "the copies have no json_valid check ($nck constraints)" [ "$nck" = 0 ]
q <<'SQL' || exit 99
INSERT INTO bad_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, event_headers, publish_status, retry_count,
  next_retry_time, trace_id, create_time)
VALUES
 (1, 'B-1', 'ORDER', 'A1', 'E', 's', 'MQ', '{"orderId":"O1"}', '{"x-tenant":"T1"}', 3, 0, NULL, 'tb', '2026-06-01 11:50:01'),
 (2, 'B-2', 'ORDER', 'A1', 'E', 's', 'MQ', '{"orderId":"O1"', '{"x-tenant":"T1"', 3, 0, NULL, 'tb', '2026-06-01 11:50:02'),
 (3, 'B-3', 'ORDER', 'A1', 'E', 's', 'MQ', 'orderId O1', 'x-tenant T1', 3, 0, NULL, 'tb', '2026-06-01 11:50:03'),
 (4, 'B-4', 'ORDER', 'A1', 'E', 's', 'MQ', '{"orderId":"O1",}', '', 3, 1, '2026-06-01 10:00:00', 'tb', '2026-06-01 11:50:04'),
 (5, 'B-5', 'ORDER', 'A1', 'E', 's', 'MQ', '', NULL, 3, 1, '2026-06-01 10:00:00', 'tb', '2026-06-01 11:50:05'),
 (6, 'B-6', 'ORDER', 'A1', 'E', 's', 'MQ', '{"orderId":"O1","x":[1,2}', '{"x-tenant":T1}', 3, 2, NULL, 'tb', '2026-06-01 11:50:06'),
 (7, 'B-7', 'ORDER', 'A1', 'E', 's', 'MQ', '{"orderId":"O1","n":1}', '{"x-tenant":"T1"}', 3, 2, '2026-06-01 11:00:00', 'tb', '2026-06-01 11:50:07'),
 (8, 'B-8', 'ORDER', 'A1', 'E', 's', 'MQ', '["orderId","O1"]', '[]', 3, 0, NULL, 'tb', '2026-06-01 11:50:08'),
 (9, 'B-9', 'ORDER', 'A1', 'E', 's', 'MQ', '"O1"', 'null', 3, 0, NULL, 'tb', '2026-06-01 11:50:09');
INSERT INTO bad_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, next_retry_time, trace_id, create_time)
VALUES
 (1, 'BM-1', 'E', 'ORDER', 'A1', 's', '{"orderId":"O1"}', 3, 0, NULL, 'tb', '2026-06-01 11:50:01'),
 (2, 'BM-2', 'E', 'ORDER', 'A1', 's', '{orderId: "O1"}', 3, 0, NULL, 'tb', '2026-06-01 11:50:02'),
 (3, 'BM-3', 'E', 'ORDER', 'A1', 's', '{"orderId":"O1"} trailing', 3, 0, NULL, 'tb', '2026-06-01 11:50:03'),
 (4, 'BM-4', 'E', 'ORDER', 'A1', 's', '{"orderId":"O1","用户":"张三"}', 3, 1, '2026-06-01 10:00:00', 'tb', '2026-06-01 11:50:04');
SQL
nbad=$(q -e "SELECT COUNT(*) FROM bad_outbox_event WHERE NOT JSON_VALID(event_payload)")
check "the copy holds rows that are not JSON ($nbad)" [ "$nbad" -ge 5 ]
BOB="FROM bad_outbox_event WHERE deleted = 0 AND publish_status = 3"
BMS="FROM bad_message_event WHERE deleted = 0 AND event_status = 3"
BT="--outbox-table bad_outbox_event --message-table bad_message_event"
# shellcheck disable=SC2086
{
	want_ids="1 7 "
	vs_ref "not JSON: payload.orderId=O1 only on the valid rows, exit 0" outbox "$BOB" \
		"JSON_VALID(event_payload) AND $(V '$.orderId') = 'O1'" "$FORD" list failed --table outbox $BT --filter 'payload.orderId=O1'
	want_ids="1 7 "
	vs_ref "not JSON: headers.\"x-tenant\"=T1 only on the valid rows" outbox "$BOB" \
		"JSON_VALID(event_headers) AND $(H '$."x-tenant"') = 'T1'" "$FORD" list failed --table outbox $BT --filter 'headers."x-tenant"=T1'
	want_ids="7 "
	vs_ref "not JSON: two path terms" outbox "$BOB" \
		"JSON_VALID(event_payload) AND $(V '$.orderId') = 'O1' AND $(V '$.n') = '1'" "$FORD" \
		list failed --table outbox $BT --filter 'payload.orderId=O1 payload.n=1'
	vs_ref "not JSON: payload~O1 is a substring of the stored text, valid or not" outbox "$BOB" "$(has O1)" "$FORD" \
		list failed --table outbox $BT --filter 'payload~O1'
	want_ids="8 "
	vs_ref "a payload that is an array: payload[1]=O1" outbox "$BOB" \
		"JSON_VALID(event_payload) AND $(V '$[1]') = 'O1'" "$FORD" list failed --table outbox $BT --filter 'payload[1]=O1'
	want_ids="1 4 "
	vs_ref "not JSON, the message copy: payload.orderId=O1" message "$BMS" \
		"JSON_VALID(event_payload) AND $(V '$.orderId') = 'O1'" "$FORD" list failed --table message $BT --filter 'payload.orderId=O1'
	for t in outbox message; do
		vs_ref "not JSON, trace tb: the $t rows with payload.orderId=O1" $t "FROM bad_${t}_event WHERE deleted = 0 AND trace_id = 'tb'" \
			"JSON_VALID(event_payload) AND $(V '$.orderId') = 'O1'" "$TORD" trace tb $BT --filter 'payload.orderId=O1'
	done
	vs_ref "not JSON, recent: payload.orderId=O1" outbox "FROM bad_outbox_event WHERE deleted = 0 AND create_time >= '2026-06-01 11:00:00'" \
		"JSON_VALID(event_payload) AND $(V '$.orderId') = 'O1'" "$RORD" list recent --table outbox $BT --filter 'payload.orderId=O1'
}

# --- the statement: FORCE INDEX, the cap, and no scan of the real tables ---------------------------
# explain_ok DESCRIPTION TABLE LOG: the last list statement logged, FORCE INDEX and LIMIT CAP in
# it, EXPLAIN'd: TABLE appears and never with type ALL.
explain_ok() {
	d=$1 tb=$2 log=$3 cap=$4
	stmt=$(grep '^  /\* evtop:list\.' "$log" | tail -1 | sed 's/^  //; s/;$//')
	if [ -z "$stmt" ]; then
		not_ok "$d: no list statement in the log"
		return
	fi
	case "$stmt" in
	*"FORCE INDEX"*"LIMIT $cap)"*) ok "$d: the statement has FORCE INDEX and LIMIT $cap (the cap)" ;;
	*) not_ok "$d: the statement has FORCE INDEX and LIMIT $cap (the cap)"; echo "$stmt" | diag ;;
	esac
	if ! q -e "EXPLAIN $stmt" >"$dir/explain" 2>"$dir/explain.err"; then
		not_ok "$d: EXPLAIN failed"
		diag <"$dir/explain.err"
		return
	fi
	seen=$(awk -F'\t' -v t="$tb" '$3 == t' "$dir/explain" | wc -l)
	all=$(awk -F'\t' -v t="$tb" '$3 == t && $4 == "ALL"' "$dir/explain" | wc -l)
	if [ "$seen" -ge 1 ] && [ "$all" -eq 0 ]; then
		ok "... EXPLAIN: $tb read $seen times, never type ALL ($(awk -F'\t' -v t="$tb" '$3 == t {printf "%s/%s ", $4, $6}' "$dir/explain"))"
	else
		not_ok "... EXPLAIN: $tb read $seen times, $all of them type ALL"
		diag <"$dir/explain"
	fi
}
rm -f "$dir/sql1.log" "$dir/sql2.log" "$dir/sql3.log" "$dir/sql4.log" "$dir/sql5.log"
ev list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes headers~T' --log-sql="$dir/sql1.log"
explain_ok "failed outbox, cap 100" biz_outbox_event "$dir/sql1.log" 100
ev list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes' --after "$jcur" --log-sql="$dir/sql5.log"
explain_ok "failed outbox, its next page (the cursor's seek)" biz_outbox_event "$dir/sql5.log" 100
ev list failed --table message --filter 'payload."用户"=张三' --log-sql="$dir/sql2.log"
explain_ok "failed message, the default cap" biz_message_event "$dir/sql2.log" 100000
ev list recent --table outbox --search-cap 200 --filter 'since="2026-05-29" payload~SKU' --log-sql="$dir/sql3.log"
explain_ok "recent outbox with since=, cap 200" biz_outbox_event "$dir/sql3.log" 200
ev trail ORDER A3 --table outbox --search-cap 300 --filter 'payload.orderId=O3' --log-sql="$dir/sql4.log"
explain_ok "trail outbox, cap 300" biz_outbox_event "$dir/sql4.log" 300

# --- two sources: the harness's database and a second one on the same server ----------------------
db2="${db}_s2"
q -e "DROP DATABASE IF EXISTS \`$db2\`; CREATE DATABASE \`$db2\`" || exit 99
trap 'q -e "DROP DATABASE IF EXISTS \`$db2\`" 2>/dev/null' EXIT
cat "$src"/sql/mariadb/schema.sql "$src"/sql/mariadb/audit.sql | q "$db2" || exit 99
# The second source: 300 failed rows, ids of their own, interleaved with the first's in the
# list's order; its rare term denser at the end.
gen_outbox biz_outbox_event 1001 1300 | q "$db2" || exit 99
q "$db2" -e "UPDATE biz_outbox_event SET event_payload = JSON_SET(event_payload, '$.rare', 'yes') WHERE id % 13 = 0 AND id > 1250" || exit 99
for s in a b; do
	if [ $s = a ]; then sd=$db; else sd=$db2; fi
	cat >"$dir/$s.cnf" <<EOF
[client]
socket=${EVTOP_TEST_SOCKET:?}
user=${EVTOP_TEST_USER:-root}
password=${EVTOP_TEST_PASSWORD:-}
database=$sd

[evtop]
init-command="SET timestamp = UNIX_TIMESTAMP('$now')"
EOF
	chmod 600 "$dir/$s.cnf"
done
printf '[source a]\ndefaults_file = %s/a.cnf\n[source b]\ndefaults_file = %s/b.cnf\n' "$dir" "$dir" >"$dir/two.conf"
evs() {
	timeout 60 "$evtop" --config "$dir/two.conf" "$@" </dev/null >"$dir/out" 2>"$dir/err"
	rc=$?
}
# The reference: both databases' matches in the list's order (ids never collide).
two_ref() { # two_ref COND: "source id" of every match of both sources, in the list's order
	q -e "SELECT s, id FROM (
	  SELECT 'a' AS s, id, next_retry_time, retry_count FROM \`$db\`.biz_outbox_event
	    WHERE deleted = 0 AND publish_status = 3 AND ($1)
	  UNION ALL
	  SELECT 'b', id, next_retry_time, retry_count FROM \`$db2\`.biz_outbox_event
	    WHERE deleted = 0 AND publish_status = 3 AND ($1)) u
	  ORDER BY next_retry_time, retry_count, id" | tr '\t' ' '
}
two_count() {
	echo $(($(q -e "SELECT COUNT(*) $OBF") + $(q "$db2" -e "SELECT COUNT(*) $OBF")))
}
evs list failed --table outbox --limit 1000 --format json --filter 'payload.orderId=O6'
jq -r '.[] | "\(.source) \(.id)"' "$dir/out" >"$dir/got" 2>/dev/null
two_ref "$(V '$.orderId') = 'O6'" >"$dir/want"
nw=$(wc -l <"$dir/want" | tr -d ' ')
m2=$(two_count)
[ $rc -eq 0 ] && cmp -s "$dir/want" "$dir/got" && [ "$(cut -d' ' -f1 "$dir/got" | sort -u | tr '\n' ' ')" = "a b " ] &&
	ok "two sources: payload.orderId=O6 merged, each row with its source, in order ($nw rows)" ||
	{ not_ok "two sources: payload.orderId=O6 merged, each row with its source, in order (exit $rc)"; diff "$dir/want" "$dir/got" | head | diag; head -3 "$dir/err" | diag; }
check "... the search line sums both sources' figures ($nw matches in $m2 rows examined)" \
	grep -qFx -- "-- outbox: search payload.orderId=O6: $nw matches in $m2 rows examined" "$dir/err"
# The stop on one source: b has more candidates than the cap; paged through to the end.
rowfmt='"\(.source) \(.id)"'
# The first page of payload.rare=yes at cap 100, 10 a page: the source whose 100th candidate comes first
# stops there, and the other has matches past that stop among its own 100 candidates — they
# must wait for the next page.
tup="next_retry_time IS NOT NULL, IFNULL(next_retry_time, '1000-01-01'), retry_count, id"
stop_of() { q ${1:+"$1"} -e "SELECT CONCAT_WS(',', next_retry_time IS NOT NULL, QUOTE(IFNULL(next_retry_time, '1000-01-01')), retry_count, id) $OBF ORDER BY $FORD LIMIT 99, 1"; }
sa=$(stop_of)
sb=$(stop_of "$db2")
if [ "$(q -e "SELECT ($sa) < ($sb)")" = 1 ]; then S=$sa other=$db2 os=b; else S=$sb other=$db os=a; fi
past=$(q -e "SELECT COUNT(*) FROM (SELECT next_retry_time, retry_count, id, event_payload FROM \`$other\`.biz_outbox_event
  WHERE deleted = 0 AND publish_status = 3 ORDER BY $FORD LIMIT 100) c WHERE $rare AND ($tup) > ($S)")
evs list failed --table outbox --search-cap 100 --limit 10 --format json --filter 'payload.rare=yes'
jq -r '.[] | "\(.source) \(.id)"' "$dir/out" >"$dir/got" 2>/dev/null
two_ref "$rare AND ($tup) <= ($S)" >"$dir/want"
[ "$past" -ge 1 ] && [ "$(wc -l <"$dir/want")" -lt 10 ] && cmp -s "$dir/want" "$dir/got" &&
	ok "two sources, a stop on one: the first page ends at that stop, source $os's $past matches past it held back ($(wc -l <"$dir/got") rows)" ||
	{ not_ok "two sources, a stop on one: the first page ends at that stop (source $os has $past matches past it; - want + got)"; diff "$dir/want" "$dir/got" | diag; }
cand_a=$(q -e "SELECT COUNT(*) $OBF")
cand_b=$(q "$db2" -e "SELECT COUNT(*) $OBF")
cand_max=$cand_a
[ "$cand_b" -gt "$cand_max" ] && cand_max=$cand_b
pager=evs
# NAME|FILTER|COND|LIMIT|CAP|pages stopped at least
for spec in "rare|payload.rare=yes|$(V '$.rare') = 'yes'|5|100|3" \
	"rare10|payload.rare=yes|$(V '$.rare') = 'yes'|10|100|3" \
	"sku|payload.items[0].skuId=SKU4|$(V '$.items[0].skuId') = 'SKU4'|12|100|0" \
	"o3|payload.orderId=O3 payload~SKU|$(V '$.orderId') = 'O3' AND $(has SKU)|4|250|0"; do
	IFS='|' read -r name filt cond lim cap minstop <<SPEC
$spec
SPEC
	page_all "two-$name" list failed --table outbox --search-cap "$cap" --limit "$lim" --filter "$filt"
	two_ref "$cond" >"$dir/two-$name.want"
	nw=$(wc -l <"$dir/two-$name.want" | tr -d ' ')
	if cmp -s "$dir/two-$name.want" "$dir/two-$name.rows"; then
		ok "two sources, $filt, cap $cap, $lim a page: every match of both once, in order ($nw rows, $pages pages)"
	else
		not_ok "two sources, $filt, cap $cap, $lim a page: every match of both once, in order ($nw want, $(wc -l <"$dir/two-$name.rows") got, $pages pages; - want + got)"
		diff -u "$dir/two-$name.want" "$dir/two-$name.rows" | sed 1,3d | head -20 | diag
		grep -v '^[0-9]*|-- outbox' "$dir/two-$name.notes" | head -3 | diag
	fi
	stopped=$(notes_ok "two-$name" "$lim" $((cap * 2)))
	st=$?
	# Each source examines at most its cap a page: at least one page per cap candidates of
	# the larger source, and one per LIMIT matches.
	lo=$(((cand_max + cap - 1) / cap))
	lm=$(((nw + lim - 1) / lim))
	[ $lm -gt $lo ] && lo=$lm
	hi=$(((cand_a + cap - 1) / cap + (cand_b + cap - 1) / cap + lm + 1))
	[ $st -eq 0 ] && [ "$pages" -ge "$lo" ] && [ "$pages" -le "$hi" ] && [ "$stopped" -ge "$minstop" ] &&
		ok "... each page's line counts its rows, at most 2 x $cap examined; $pages pages in [$lo, $hi], $stopped stopped at a cap" ||
		{ not_ok "... each page's line counts its rows; $pages pages in [$lo, $hi], stopped: $stopped (want >= $minstop)"; head -5 "$dir/two-$name.notes" | diag; }
done
pager=ev
evs list failed --table outbox --search-cap 100 --limit 5 --filter 'payload.rare=yes'
check "two sources, table format: the stop said, its cursor a cursor per source" \
	sh -c "[ $rc -eq 0 ] && grep -q -- '^-- search payload.rare=yes: .* matches; stopped at 200 rows examined' '$dir/out' && grep -q '^-- more outbox rows: --table outbox --after m1' '$dir/out'"
evs list failed --table message --filter 'headers."x-tenant"=T1'
[ $rc -eq 2 ] && [ ! -s "$dir/out" ] && grep -qF "the message table has no event_headers column" "$dir/err" &&
	ok "two sources: headers on the message table refused, exit 2, nothing listed" ||
	{ not_ok "two sources: headers on the message table refused (exit $rc)"; diag <"$dir/err"; }

q -e "DROP DATABASE IF EXISTS \`$db2\`"
check "the second database dropped" [ "$(q -e "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$db2'")" = 0 ]
trap - EXIT

# The statement time limit stops a search as any list read: the table held by another session,
# the search's statement is ended by the server at --statement-timeout, said, exit 3.
q -e "LOCK TABLES biz_outbox_event WRITE; SELECT SLEEP(6)" >/dev/null 2>&1 &
holder=$!
# Until the holder has the lock (it sleeps inside it).
i=0
while [ $i -lt 50 ] && [ "$(q -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(6)'")" != 1 ]; do
	sleep 0.2
	i=$((i + 1))
done
ev list failed --table outbox --statement-timeout 500ms --filter 'payload.rare=yes'
kill $holder 2>/dev/null
wait $holder 2>/dev/null
[ $rc -eq 3 ] && [ ! -s "$dir/out" ] && grep -q "list.failed stopped by the server's statement time limit (500 ms)" "$dir/err" &&
	ok "the statement time limit stops a search: said, exit 3, nothing listed" ||
	{ not_ok "the statement time limit stops a search (exit $rc)"; diag <"$dir/err"; }
tap_done
