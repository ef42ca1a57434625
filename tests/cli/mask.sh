#!/bin/sh
# Masking in the sub-commands: personal data in payloads, headers, biz_id, fail_reason and
# remark never reaches list, show, trail or trace output in the clear, in any format; the
# stored text is unchanged; --unmask=REASON shows it after the local audit file records who,
# why and which events; a source with mask = off shows it; [mask] changes the rules; a payload
# search still finds rows by a masked field and shows them masked.
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
# evtop's stdout in $dir/out, its stderr in $dir/err, its status in $rc.
ev() {
	timeout 60 "$evtop" --defaults-file="$pinned" "$@" </dev/null >"$dir/out" 2>"$dir/err"
	rc=$?
}
diag() { sed 's/^/# /'; }

# The clear values, each of a rule's kind: a mobile number under a key rule and as a number,
# a resident ID number (valid), a bank card (Luhn), an e-mail, a password, in nested objects
# and arrays, a CJK value around a number in fail_reason and remark, a number in biz_id.
phone=13812345678
idno=11010519491231002X
card=6222021234567894
email=alice.wang@example.com
secret=s3cr3t-pass
phone2=13987654321
# OB-M2's payload is not JSON: the outbox's payload a text column here (as other schemas have).
sql -e "ALTER TABLE biz_outbox_event MODIFY event_payload LONGTEXT NOT NULL" || exit 99
sql --default-character-set=utf8mb4 <<SQL || exit 99
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, event_headers, publish_status, retry_count,
  max_retry_count, next_retry_time, fail_reason, remark, trace_id, version, create_time,
  update_time)
VALUES
 (1, 'OB-M1', 'ORDER', 'A1', 'ORDER_CREATED', 'order-service', 'MQ',
  '{"orderId": "202605130000000001", "buyer": {"phone": "$phone", "idCard": "$idno",
    "cards": [{"cardNo": "$card"}]}, "contact": "mail $email please", "password": "$secret",
    "mobile": $phone2, "amount": 199.00}',
  '{"x-tenant": "T1", "token": "tok-abcdef123456"}', 3, 1, 5, '2026-06-01 11:00:00',
  '下游超时，联系 $phone2 处理', 'remark for $email', 'trace-m', 0, '2026-06-01 11:30:00',
  '2026-06-01 11:30:00'),
 (2, 'OB-M2', 'ORDER', '$phone', 'ORDER_CREATED', 'order-service', 'MQ', 'not json: $phone',
  NULL, 3, 1, 5, '2026-06-01 11:01:00', NULL, NULL, 'trace-m', 0, '2026-06-01 11:31:00',
  '2026-06-01 11:31:00');
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time, fail_reason,
  trace_id, version, create_time, update_time)
VALUES
 (1, 'MSG-M1', 'PAY_SUCCESS', 'PAY', 'P1', 'pay-service',
  '{"payNo": "PN1", "email": "$email", "idNo": "$idno"}', 3, 1, 5, '2026-06-01 11:00:00',
  'card $card declined', 'trace-m', 0, '2026-06-01 11:30:00', '2026-06-01 11:30:00');
SQL
stored=$(sql -e "SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', event_payload, IFNULL(event_headers, ''),
  aggregate_id, IFNULL(fail_reason, ''), IFNULL(remark, '')) ORDER BY id)) FROM biz_outbox_event")

# clear FILE: which of the clear values FILE holds ("" when none).
clear() {
	for v in "$phone" "$idno" "$card" "$email" "$secret" "$phone2" tok-abcdef123456; do
		grep -qF -- "$v" "$1" && printf '%s ' "$v"
	done
}
no_clear() { # no_clear WHAT: the last output holds no clear value
	c=$(clear "$dir/out")
	if [ $rc -eq 0 ] && [ -z "$c" ]; then
		ok "$1: exit 0, no value in the clear"
	else
		not_ok "$1: exit $rc, in the clear: $c"
		head -c 2000 "$dir/out" | diag
		diag <"$dir/err"
	fi
}

for fmt in table json csv; do
	ev list failed --table outbox --format $fmt
	no_clear "list failed --format $fmt"
	ev show OB-M1 --table outbox --format $fmt
	no_clear "show OB-M1 --format $fmt"
done
ev list failed
no_clear "list failed, both tables (table format)"
ev trace trace-m --format json
no_clear "trace (both tables, json)"
ev trail ORDER A1 --format json
no_clear "trail ORDER A1 (json)"
ev show MSG-M1 --format json
no_clear "show MSG-M1 (the message table: email, idNo and a card in fail_reason)"

# What the masked output looks like: the rules' styles, the kept parts, valid JSON.
ev show OB-M1 --format json
jq -e . "$dir/out" >/dev/null 2>&1
check "show --format json stays valid JSON" [ $? -eq 0 ]
p=$(jq -r '.[0].event_payload' "$dir/out" 2>/dev/null)
check "... the phone under its key: 138****5678" test "$(printf '%s' "$p" | jq -r .buyer.phone)" = "138****5678"
check "... the ID number: its first 3 and last 4 kept" test "$(printf '%s' "$p" | jq -r .buyer.idCard)" = "110***********002X"
check "... a card inside an array" test "$(printf '%s' "$p" | jq -r '.buyer.cards[0].cardNo')" = "622*********7894"
check "... the password hidden whole" test "$(printf '%s' "$p" | jq -r .password)" = "******"
check "... a mobile stored as a number is a masked string" \
	test "$(printf '%s' "$p" | jq -r '.mobile | type + " " + .')" = "string 139****4321"
check "... an e-mail inside a text: its first character and domain" \
	test "$(printf '%s' "$p" | jq -r .contact)" = "mail a***@example.com please"
check "... the 18-digit orderId (an identifier) stays" \
	test "$(printf '%s' "$p" | jq -r .orderId)" = "202605130000000001"
check "... the amount stays as stored (199.00)" grep -qF '"amount": 199.00' "$dir/out"
check "... the header's token hidden" \
	test "$(jq -r '.[0].event_headers' "$dir/out" | jq -r .token)" = "******"
check "... fail_reason: the number masked, the Chinese kept" \
	test "$(jq -r '.[0].fail_reason' "$dir/out")" = "下游超时，联系 139****4321 处理"
check "... remark: the e-mail masked" test "$(jq -r '.[0].remark' "$dir/out")" = "remark for a***@example.com"
ev show OB-M2 --format json
check "a payload that is not JSON: masked as text" \
	test "$(jq -r '.[0].event_payload' "$dir/out")" = "not json: 138****5678"
check "... and the aggregate_id that is a phone number" \
	test "$(jq -r '.[0].aggregate_id' "$dir/out")" = "138****5678"
check "nothing stored changed" test "$(sql -e "SELECT MD5(GROUP_CONCAT(CONCAT_WS('|', event_payload,
  IFNULL(event_headers, ''), aggregate_id, IFNULL(fail_reason, ''), IFNULL(remark, ''))
  ORDER BY id)) FROM biz_outbox_event")" = "$stored"
check "masked output writes no audit line" [ ! -s "$audit" ]

# A payload search compares the stored value: it finds the row by a masked field, shows it masked.
ev list failed --table outbox --format json --filter "payload.buyer.phone=$phone"
check "a search by the clear phone finds OB-M1" test "$(jq -r '[.[].event_no] | join(",")' "$dir/out")" = "OB-M1"
no_clear "... and shows it masked"

# --unmask=REASON: the clear values, the audit line first.
ev show OB-M1 --format json --unmask="INC-42 call the buyer back" --operator T-7
check "show --unmask: exit 0, the phone in the clear" sh -c "[ $rc -eq 0 ] && grep -qF '$phone' '$dir/out'"
check "... the stored payload as is" grep -qF "\"password\": \"$secret\"" "$dir/out"
line=$(tail -n 1 "$audit" 2>/dev/null)
check "... an audit line: action unmask, the reason, the event, result shown" \
	sh -c "printf '%s' '$line' | jq -e '.action == \"unmask\" and .reason == \"INC-42 call the buyer back\" and .event_no == \"OB-M1\" and .events == [\"OB-M1\"] and .result == \"shown\" and .table == \"biz_outbox_event\" and .operator == \"T-7\"' >/dev/null"
ev list failed --table outbox --unmask="INC-42 the list"
check "list --unmask: exit 0, in the clear" sh -c "[ $rc -eq 0 ] && grep -qF '$phone2' '$dir/out'"
check "... its audit line names both events" \
	sh -c "tail -n 1 '$audit' | jq -e '.events == [\"OB-M1\", \"OB-M2\"] and .count == 2' >/dev/null"

# evtop_access_log (sql/mariadb/audit.sql, loaded by the harness): a row per event shown.
acc() { sql -N -e "SELECT CONCAT_WS('|', event_no, action, shown_count, reason, table_name,
  IFNULL(operator, '-'), os_user <> '', db_user = CURRENT_USER()) FROM evtop_access_log ${1:-} ORDER BY id"; }
check "the access log: show's event, then the list's two, with reason and operator" \
	test "$(acc | tr '\n' ' ')" = "OB-M1|unmask|1|INC-42 call the buyer back|biz_outbox_event|T-7|1|1 OB-M1|unmask|2|INC-42 the list|biz_outbox_event|-|1|1 OB-M2|unmask|2|INC-42 the list|biz_outbox_event|-|1|1 "
check "... with no note on stderr" sh -c "! grep -q 'local audit file only' '$dir/err'"
ev show MSG-M1 --table message --unmask="INC-43 'quoted' reason" --read-only
check "--read-only: --unmask still shows (exit 0)" sh -c "[ $rc -eq 0 ] && grep -qF '$idno' '$dir/out'"
check "... recorded in the local file only, said" sh -c "grep -q 'local audit file only (read-only' '$dir/err' && tail -n 1 '$audit' | jq -e '.event_no == \"MSG-M1\"' >/dev/null"
check "... no access-log row" test "$(acc "WHERE event_no = 'MSG-M1'")" = ""
sql -e "DROP USER IF EXISTS 'evtop_pii_ro'@'localhost'; CREATE USER 'evtop_pii_ro'@'localhost' IDENTIFIED BY 'pw'; GRANT SELECT ON \`$EVTOP_TEST_DB\`.* TO 'evtop_pii_ro'@'localhost'" || exit 99
ev show MSG-M1 --table message --unmask="INC-44 watch account" -u evtop_pii_ro --password=pw
check "a SELECT-only account: --unmask still shows (exit 0)" sh -c "[ $rc -eq 0 ] && grep -qF '$idno' '$dir/out'"
check "... audited locally" sh -c "tail -n 1 '$audit' | jq -e '.event_no == \"MSG-M1\" and .reason == \"INC-44 watch account\"' >/dev/null"
check "... the note says the account may not INSERT into evtop_access_log" \
	grep -q 'local audit file only: the account evtop_pii_ro@localhost may not INSERT into evtop_access_log' "$dir/err"
check "... no access-log row" test "$(acc "WHERE event_no = 'MSG-M1'")" = ""
sql -e "GRANT INSERT ON \`$EVTOP_TEST_DB\`.evtop_access_log TO 'evtop_pii_ro'@'localhost'" || exit 99
ev show MSG-M1 --table message --unmask="INC-45 with the grant" -u evtop_pii_ro --password=pw
check "the watch account with INSERT on evtop_access_log (sql/grants.sql): its row, db_user its own" \
	test "$(sql -N -e "SELECT CONCAT_WS('|', event_no, reason, db_user) FROM evtop_access_log WHERE event_no = 'MSG-M1'")" = "MSG-M1|INC-45 with the grant|evtop_pii_ro@localhost"
sql -e "DROP USER 'evtop_pii_ro'@'localhost'"
sql -e "RENAME TABLE evtop_access_log TO kept_access_log" || exit 99
ev show OB-M2 --unmask="INC-46 no table"
check "no evtop_access_log table: --unmask shows, silently (the local file is the record)" \
	sh -c "[ $rc -eq 0 ] && grep -qF '$phone' '$dir/out' && [ ! -s '$dir/err' ] && tail -n 1 '$audit' | jq -e '.event_no == \"OB-M2\"' >/dev/null"
sql -e "RENAME TABLE kept_access_log TO evtop_access_log" || exit 99
lines=$(wc -l <"$audit")
ev list failed --table outbox --unmask="$(printf 'bad\033[2Jreason')"
check "--unmask with an escape in the reason: usage error (exit 2)" [ $rc -eq 2 ]
check "... nothing printed, nothing audited" sh -c "[ ! -s '$dir/out' ] && [ $(wc -l <"$audit") -eq $lines ]"
ev list failed --table outbox --unmask=
check "--unmask with no reason: usage error" sh -c "[ $rc -eq 2 ] && grep -q 'give the reason' '$dir/err'"
# An audit file that cannot be written: nothing shown.
mv "$audit" "$audit.kept"
ln -s /dev/null "$audit"
ev show OB-M1 --unmask="INC-42"
check "an unwritable audit file: --unmask refused (exit 1)" [ $rc -eq 1 ]
check "... and nothing in the clear" sh -c "! grep -qF '$phone' '$dir/out'"
check "... said on stderr" grep -q 'unmask refused' "$dir/err"
rm -f "$audit"
mv "$audit.kept" "$audit"

# A source with mask = off; [mask] rules of one's own.
cat >"$dir/off.conf" <<EOF
[source plain]
defaults_file = $pinned
mask = off
EOF
lines=$(wc -l <"$audit")
ev --config "$dir/off.conf" show OB-M1 --format json
check "mask = off: the clear values" sh -c "[ $rc -eq 0 ] && grep -qF '$phone' '$dir/out'"
check "... and no audit line" [ "$(wc -l <"$audit")" -eq "$lines" ]
cat >"$dir/rules.conf" <<EOF
[mask]
keys = password:all
identifiers = *id
patterns = none
[source rules]
defaults_file = $pinned
EOF
ev --config "$dir/rules.conf" show OB-M1 --format json
p=$(jq -r '.[0].event_payload' "$dir/out" 2>/dev/null)
check "[mask] keys = password:all, patterns = none: the password hidden" \
	test "$(printf '%s' "$p" | jq -r .password)" = "******"
check "... the phone no longer masked" test "$(printf '%s' "$p" | jq -r .buyer.phone)" = "$phone"
printf '[mask]\npatterns = phone\n' >"$dir/bad.conf"
ev --config "$dir/bad.conf" list failed
check "a bad [mask] pattern: a config error naming the line" \
	sh -c "[ $rc -ne 0 ] && grep -q 'bad.conf:2: patterns: unknown pattern' '$dir/err'"

tap_done
