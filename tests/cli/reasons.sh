#!/bin/sh
# An operator's --reason is one line of printable text: ESC, BEL, a newline, a tab (or any C0,
# DEL or C1 control) is refused before anything is read or written, for cancel, recover and
# retry, one event or a bulk list — fail_reason, evtop_audit and the audit file unchanged.
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
ev() { timeout 60 "$evtop" --defaults-file="$pinned" "$@" </dev/null >"$dir/out" 2>"$dir/err"; }

sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, locked_by, lock_until, fail_reason, version, create_time, update_time)
VALUES
 (1, 'OB-R1', 'ORDER', 'O1', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 5, 5,
  '2026-06-01 11:00:00', NULL, NULL, 'mq timeout', 0, '2026-06-01 11:30:00', '2026-06-01 11:00:00'),
 (2, 'OB-R2', 'ORDER', 'O2', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 1, 0, 5,
  NULL, 'pub-1', '2026-06-01 11:00:00', NULL, 0, '2026-06-01 11:30:00', '2026-06-01 11:00:00');
SQL
state() {
	sql -e "SELECT CONCAT_WS('|', id, publish_status, version, IFNULL(fail_reason, 'NULL'))
	  FROM biz_outbox_event ORDER BY id; SELECT COUNT(*) FROM evtop_audit"
}
initial=$(state)

esc=$(printf 'dup\033[31m red')
bel=$(printf 'ring\007')
nl=$(printf 'two\nlines')
tab=$(printf 'a\tb')
csi=$(printf 'c1 \302\233')
for what in esc bel nl tab csi; do
	eval "reason=\$$what"
	for cmd in "cancel OB-R1" "recover OB-R2" "retry OB-R1 --now" "cancel --list failed --table outbox"; do
		# shellcheck disable=SC2086
		ev $cmd --yes --operator T-9 --reason "$reason"
		rc=$?
		if [ $rc -eq 2 ] && grep -q '^evtop: --reason: the reason holds .*; nothing was written$' "$dir/err"; then
			ok "$cmd --reason with $what: refused, a usage error that says why"
		else
			not_ok "$cmd --reason with $what: exit $rc, $(cat "$dir/err")"
		fi
	done
done
check "... nothing written: fail_reason, the rows and evtop_audit unchanged" [ "$(state)" = "$initial" ]
check "... no audit file" [ ! -e "$audit" ]
ev cancel OB-R1 --yes --operator T-9 --reason "$esc"
check "the refusal names the character" grep -q 'the reason holds ESC (U+001B, character 4)' "$dir/err"
ev cancel OB-R1 --yes --operator T-9 --reason "$tab"
check "... a tab too" grep -q 'a tab (U+0009, character 2)' "$dir/err"

# The operator id goes into the audit as typed: a C1 control (the 8-bit CSI) is refused there
# too, as C0 always was.
ev cancel OB-R1 --yes --operator "$csi" --reason 'ok'
check "--operator with a C1 control: refused (exit $?)" grep -q '^evtop: --operator: expected an operator or ticket id' "$dir/err"
check "... nothing written" [ "$(state)" = "$initial" ]

# Printable text, CJK and emoji included, is written as typed.
ev cancel OB-R1 --yes --operator T-9 --reason '客户取消 😀 (INC-9)'
check "a printable reason is applied" [ $? -eq 0 ]
got=$(sql --default-character-set=utf8mb4 -e "SELECT fail_reason FROM biz_outbox_event WHERE id = 1")
check "... into fail_reason after the model's text" [ "$got" = '业务已关闭，取消事件发布：客户取消 😀 (INC-9)' ]
[ "$got" = '业务已关闭，取消事件发布：客户取消 😀 (INC-9)' ] || echo "# got: $got"
tap_done
