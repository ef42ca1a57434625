#!/bin/sh
# `evtop metrics` with real parts: a real Prometheus (Debian's) scrapes it every second and its
# HTTP API answers what the model document's counting SQL counts on the same data (the world
# paused); promtool checks a scrape; node_exporter's textfile collector reads --textfile, which
# a kill never leaves half-written; a second server killed under the exporter (evtop_up 0, the
# figures dropped, back when it is); hostile event_types escaped; 10,000 event_types folded at
# the cap; basic auth with a crypt(3) hash, TLS, usage errors, SIGTERM.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
XDG_CONFIG_HOME=$dir/config
export XDG_CONFIG_HOME

required() { # required TOOL...: a missing one is a skip here, a failure in CI
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 && continue
		if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then
			echo "metrics.sh: $t is missing (scripts/test installs it)" >&2
			exit 99
		fi
		echo "metrics.sh: $t is missing: skipping" >&2
		exit 77
	done
}
required prometheus promtool prometheus-node-exporter curl python3 mkpasswd openssl

pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	[ -d "$dir/s2" ] && sh "$src/tests/harness/server.sh" stop "$dir/s2" >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# wait_for SECONDS COMMAND...: until the command succeeds.
wait_for() {
	w=$1
	shift
	i=0
	while [ $i -lt $((w * 5)) ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
scrape() { curl -sf "http://127.0.0.1:$1/metrics"; }
# The value of one series (exact name and labels) in a scrape file.
series() { awk -v s="$2" 'index($0, s " ") == 1 { print substr($0, length(s) + 2) }' "$1"; }

# --- the data: every state of both tables, a soft-deleted row, a finished one, hostile and CJK
# event_types ---------------------------------------------------------------------------------
sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  max_retry_count, next_retry_time, locked_by, lock_until, create_time, deleted)
VALUES
 (1, 'O1', 'ORDER', '1', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 0, 0, 5, NULL, NULL, NULL, NOW() - INTERVAL 20 MINUTE, 0),
 (2, 'O2', 'ORDER', '2', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 0, 0, 5, NULL, NULL, NULL, NOW() - INTERVAL 5 MINUTE, 0),
 (3, 'O3', 'ORDER', '3', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 1, 0, 5, NULL, 'p-1', NOW() + INTERVAL 5 MINUTE, NOW() - INTERVAL 1 MINUTE, 0),
 (4, 'O4', 'ORDER', '4', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 1, 0, 5, NULL, 'p-2', NOW() - INTERVAL 5 MINUTE, NOW() - INTERVAL 9 MINUTE, 0),
 (5, 'O5', 'ORDER', '5', 'PAY_SUCCESS', 's', 'MQ', 'pay', '{}', 3, 1, 5, NOW() - INTERVAL 1 MINUTE, NULL, NULL, NOW() - INTERVAL 9 MINUTE, 0),
 (6, 'O6', 'ORDER', '6', 'PAY_SUCCESS', 's', 'MQ', 'pay', '{}', 3, 1, 5, NOW() + INTERVAL 1 HOUR, NULL, NULL, NOW() - INTERVAL 9 MINUTE, 0),
 (7, 'O7', 'ORDER', '7', 'PAY_SUCCESS', 's', 'MQ', 'pay', '{}', 3, 1, 5, NULL, NULL, NULL, NOW() - INTERVAL 9 MINUTE, 0),
 (8, 'O8', 'ORDER', '8', 'PAY_SUCCESS', 's', 'MQ', 'pay', '{}', 3, 5, 5, NOW() - INTERVAL 1 MINUTE, NULL, NULL, NOW() - INTERVAL 9 MINUTE, 0),
 (9, 'O9', 'ORDER', '9', 'a"b\\c\nd', 's', 'MQ', 'x"\\', '{}', 0, 0, 5, NULL, NULL, NULL, NOW() - INTERVAL 3 MINUTE, 0),
 (10, 'O10', 'ORDER', '10', '订单创建', 's', 'MQ', '订单', '{}', 3, 9, 5, NULL, NULL, NULL, NOW() - INTERVAL 3 MINUTE, 0),
 (11, 'O11', 'ORDER', '11', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 0, 0, 5, NULL, NULL, NULL, NOW() - INTERVAL 2 MINUTE, 1),
 (12, 'O12', 'ORDER', '12', 'ORDER_CREATED', 's', 'MQ', 'order', '{}', 2, 0, 5, NULL, NULL, NULL, NOW() - INTERVAL 2 MINUTE, 0);
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time, last_handle_time,
  create_time)
VALUES
 (1, 'M1', 'ORDER_CREATED', 'ORDER', '1', 's', '{}', 0, 0, 3, NULL, NULL, NOW() - INTERVAL 1 MINUTE),
 (2, 'M2', 'ORDER_CREATED', 'ORDER', '2', 's', '{}', 1, 0, 3, NULL, NOW() - INTERVAL 30 MINUTE, NOW() - INTERVAL 40 MINUTE),
 (3, 'M3', 'ORDER_CREATED', 'ORDER', '3', 's', '{}', 1, 0, 3, NULL, NOW(), NOW() - INTERVAL 1 MINUTE),
 (4, 'M4', 'STOCK_DEDUCTED', 'ORDER', '4', 's', '{}', 3, 3, 3, NULL, NULL, NOW() - INTERVAL 1 MINUTE),
 (5, 'M5', 'STOCK_DEDUCTED', 'ORDER', '5', 's', '{}', 3, 0, 3, NOW() - INTERVAL 1 MINUTE, NULL, NOW() - INTERVAL 1 MINUTE);
SQL

# What the model document's SQL counts (deleted = 0), per table and state.
model_count() { # model_count TABLE STATE
	case $1 in
	outbox) t=biz_outbox_event st=publish_status stuck="lock_until <= NOW()" ;;
	message) t=biz_message_event st=event_status stuck="last_handle_time <= NOW() - INTERVAL 600 SECOND" ;;
	esac
	case $2 in
	pending) w="$st = 0" ;;
	processing) w="$st = 1 AND NOT COALESCE($stuck, FALSE)" ;;
	stuck) w="$st = 1 AND $stuck" ;;
	failed_due) w="$st = 3 AND retry_count < max_retry_count AND next_retry_time <= NOW()" ;;
	failed_waiting) w="$st = 3 AND retry_count < max_retry_count AND next_retry_time > NOW()" ;;
	failed_no_retry_time) w="$st = 3 AND retry_count < max_retry_count AND next_retry_time IS NULL" ;;
	exhausted) w="$st = 3 AND retry_count >= max_retry_count" ;;
	backlog) w="$st IN (0, 1, 3)" ;;
	esac
	sql -e "SELECT COUNT(*) FROM $t WHERE $w AND deleted = 0"
}

# --- one exposition: promtool, escaping -----------------------------------------------------
"$evtop" --defaults-file="$cnf" metrics --once >"$dir/once.prom" 2>"$dir/once.err"
check "metrics --once exits 0" [ $? -eq 0 ]
promtool check metrics <"$dir/once.prom" >"$dir/lint" 2>&1
rc=$?
[ -s "$dir/lint" ] && rc="$rc, $(cat "$dir/lint")"
check "promtool check metrics: no error, no lint warning ($rc)" [ "$rc" = 0 ]
check "a hostile event_type is escaped (quote, backslash, newline)" \
	grep -qF 'event_type="a\"b\\c\nd",state="pending"} 1' "$dir/once.prom"
check "a CJK event_type is kept as it is" grep -qF 'event_type="订单创建",state="exhausted"} 1' "$dir/once.prom"
check "the outbox by topic, a hostile topic escaped" grep -qF 'evtop_outbox_topic_events{source="default",topic="x\"\\",state="pending"} 1' "$dir/once.prom"
lines=$(grep -cv '^evtop_\|^# HELP evtop_\|^# TYPE evtop_' "$dir/once.prom")
check "every line is a sample or a comment of evtop's ($lines others)" [ "$lines" -eq 0 ]
sum=$(awk '/^evtop_events\{/ { s += $NF } END { print s }' "$dir/once.prom")
want=$(($(model_count outbox backlog) + $(model_count message backlog)))
check "the states partition the backlog: sum(evtop_events) $sum = $want" [ "$sum" = "$want" ]
check "the soft-deleted and the finished rows are not counted" \
	[ "$(series "$dir/once.prom" 'evtop_events{source="default",table="outbox",event_type="ORDER_CREATED",state="pending"}')" = 2 ]
check "a stuck outbox event (lock_until passed)" \
	[ "$(series "$dir/once.prom" 'evtop_events{source="default",table="outbox",event_type="ORDER_CREATED",state="stuck"}')" = 1 ]
check "a stuck message event (handled 30 minutes ago)" \
	[ "$(series "$dir/once.prom" 'evtop_events{source="default",table="message",event_type="ORDER_CREATED",state="stuck"}')" = 1 ]
check "evtop_up 1" [ "$(series "$dir/once.prom" 'evtop_up{source="default"}')" = 1 ]
check "the build is named" grep -q '^evtop_build_info{version="[0-9.]*"} 1$' "$dir/once.prom"

# --- the account of sql/grants.sql: SELECT only -------------------------------------------------
db=${EVTOP_TEST_DB:?}
u=evt_mx_$$
sed -n '/^-- The Prometheus exporter/,/^-- The archiving account/p' "$src/sql/grants.sql" |
	sed "s/evtop_metrics/$u/g; s/events\./\`$db\`./g; s/change-me/mx-pass-1/" | sql
check "sql/grants.sql's exporter account is created" [ $? -eq 0 ]
cat >"$dir/mx.cnf" <<EOF
[client]
socket=${EVTOP_TEST_SOCKET:?}
user=$u
password=mx-pass-1
database=$db
EOF
chmod 600 "$dir/mx.cnf"
"$evtop" --defaults-file="$dir/mx.cnf" metrics --once >"$dir/mx.prom" 2>"$dir/mx.err"
rc=$?
check "with SELECT only: --once exits 0 ($rc: $(head -c 300 "$dir/mx.err"))" [ $rc = 0 ]
check "... and serves the same figures as root" \
	[ "$(grep '^evtop_events{' "$dir/mx.prom")" = "$(grep '^evtop_events{' "$dir/once.prom")" ]
sql -e "DROP USER '$u'@'localhost'"

# --- a real Prometheus scrapes it --------------------------------------------------------------
mp=$(free_port)
"$evtop" --defaults-file="$cnf" metrics --listen "127.0.0.1:$mp" --interval 1s 2>"$dir/m.err" &
mpid=$!
pids="$pids $mpid"
wait_for 20 scrape "$mp"
check "metrics --listen serves /metrics" [ $? -eq 0 ]
check "it says where it listens" grep -q "listening on http://127.0.0.1:$mp/metrics" "$dir/m.err"
check "/ is a page linking /metrics" sh -c "curl -sf http://127.0.0.1:$mp/ | grep -q 'href=\"/metrics\"'"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mp/other")
check "anything else is 404 ($code)" [ "$code" = 404 ]
ctype=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$mp/metrics")
check "the text format's content type ($ctype)" [ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ]

pp=$(free_port)
mkdir -p "$dir/prom"
cat >"$dir/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: evtop
    static_configs:
      - targets: ['127.0.0.1:$mp']
EOF
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
	--web.listen-address="127.0.0.1:$pp" --log.level=warn >"$dir/prom/log" 2>&1 &
ppid=$!
pids="$pids $ppid"
# promql EXPR: the value of a one-series result ("" when empty).
promql() {
	curl -sf "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
has_up() { [ "$(promql 'evtop_up{job="evtop"}')" = 1 ]; }
wait_for 60 has_up
check "Prometheus scraped evtop (evtop_up 1 through its API)" [ $? -eq 0 ]
for t in outbox message; do
	for s in pending processing stuck failed_due failed_waiting failed_no_retry_time exhausted; do
		got=$(promql "sum(evtop_events{table=\"$t\",state=\"$s\"})")
		want=$(model_count "$t" "$s")
		check "Prometheus: $t $s = $got, the model's SQL counts $want" [ "$got" = "$want" ]
	done
	got=$(promql "sum(evtop_events{table=\"$t\"})")
	want=$(model_count "$t" backlog)
	check "Prometheus: sum(evtop_events{table=$t}) = the backlog ($got, $want)" [ "$got" = "$want" ]
done
# The age as of the sample: Prometheus's answer carries its time; the exporter read it at
# its last refresh before then (at most an interval and a refresh's duration earlier, longer on
# a loaded machine), so it is the SQL's age at that time or a little less, never more.
sample=$(curl -sf "http://127.0.0.1:$pp/api/v1/query" --data-urlencode 'query=max(evtop_oldest_pending_age_seconds{table="outbox"})' |
	python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print("%s %s" % (r[0]["value"][1], r[0]["value"][0]) if r else "-99 0")')
age=${sample% *}
at=${sample#* }
want=$(sql -e "SELECT ROUND($at) - UNIX_TIMESTAMP(MIN(create_time)) FROM biz_outbox_event WHERE publish_status = 0 AND deleted = 0")
check "Prometheus: the oldest pending outbox event's age ($age s, SQL $want s at the sample's time)" \
	python3 -c "import sys; d = $want - float('$age'); sys.exit(not (-2 <= d <= 30))"
hostile=$(curl -sf "http://127.0.0.1:$pp/api/v1/label/event_type/values" |
	python3 -c 'import json,sys; print(sum(v == "a\"b\\c\nd" for v in json.load(sys.stdin)["data"]))')
check "Prometheus read the hostile event_type back as it is stored" [ "$hostile" = 1 ]

# Rows finish: the finished counter grows by what left the backlog, created counts new rows
# once settled (mirror_settle is 30 s; a row created 40 s ago counts at the next interval).
before=$(promql 'sum(evtop_events_finished_total{table="outbox"})')
sql -e "UPDATE biz_outbox_event SET publish_status = 2 WHERE id IN (1, 2)"
fin() { [ "$(promql 'sum(evtop_events_finished_total{table="outbox"})')" = "$((before + 2))" ]; }
wait_for 20 fin
check "two outbox events sent: evtop_events_finished_total +2 (from $before)" [ $? -eq 0 ]
rate=$(promql 'sum(evtop_events{table="outbox",state="pending"})')
check "... and 2 fewer pending ($rate)" [ "$rate" = "$(model_count outbox pending)" ]

kill -TERM "$mpid"
wait "$mpid"
rc=$?
check "SIGTERM stops it cleanly (exit $rc)" [ "$rc" = 0 ]
check "... and says so" grep -q "stopping (SIGTERM)" "$dir/m.err"
kill "$ppid" 2>/dev/null
wait "$ppid" 2>/dev/null
pids=""

# --- the textfile collector ------------------------------------------------------------------
mkdir -p "$dir/tf"
"$evtop" --defaults-file="$cnf" metrics --textfile "$dir/tf/evtop.prom" --once 2>"$dir/tf.err"
check "--textfile --once exits 0" [ $? -eq 0 ]
mode=$(stat -c %a "$dir/tf/evtop.prom")
check "the textfile is 0644 for the collector's user ($mode)" [ "$mode" = 644 ]
check "no temporary file left beside it" [ "$(ls -A "$dir/tf")" = evtop.prom ]
np=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$np" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$dir/tf" >"$dir/ne.log" 2>&1 &
npid=$!
pids="$pids $npid"
ne_has() { curl -sf "http://127.0.0.1:$np/metrics" | grep -q '^evtop_up{source="default"} 1'; }
wait_for 20 ne_has
check "node_exporter's textfile collector serves evtop's series" [ $? -eq 0 ]
curl -sf "http://127.0.0.1:$np/metrics" >"$dir/ne.prom"
check "... without a parse error" grep -q '^node_textfile_scrape_error 0' "$dir/ne.prom"
grep -q '^node_textfile_scrape_error 0' "$dir/ne.prom" || tail -5 "$dir/ne.log"
# Killed while it writes, over and over: the file is always whole.
"$evtop" --defaults-file="$cnf" metrics --textfile "$dir/tf/evtop.prom" --interval 1s 2>/dev/null &
tpid=$!
whole=0
for i in 1 2 3 4 5 6 7 8; do
	sleep 0.$((i * 13 % 10))
	tail -n 1 "$dir/tf/evtop.prom" | grep -q '^evtop_scrape_duration_seconds ' && whole=$((whole + 1))
done
kill -KILL "$tpid"
wait "$tpid" 2>/dev/null
check "the textfile was whole every time it was read ($whole of 8)" [ "$whole" = 8 ]
check "a killed writer leaves no *.prom but the file" [ "$(ls "$dir/tf" | grep -c '\.prom$')" = 1 ]
check "node_exporter still reads it whole" ne_has
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
pids=""

# --- 10,000 event_types: folded at the cap -----------------------------------------------------
sql -e "CREATE DATABASE evt_metrics_many"
sql -D evt_metrics_many <"$src/sql/mariadb/schema.sql"
sql -D evt_metrics_many -e "INSERT INTO biz_message_event (id, event_no, event_type, biz_type,
  biz_id, event_source, event_payload, event_status, retry_count, max_retry_count, create_time)
  SELECT seq, CONCAT('M', seq), CONCAT('TYPE_', seq), 'ORDER', seq, 's', '{}', 0, 0, 3,
  NOW() - INTERVAL 1 HOUR FROM seq_1_to_10000"
"$evtop" --defaults-file="$cnf" -D evt_metrics_many metrics --once >"$dir/many.prom" 2>/dev/null
labels=$(grep -c '^evtop_events{source="default",table="message",event_type="[^"]*",state="pending"}' "$dir/many.prom")
check "10,000 event_types: 200 named and __other__ ($labels series a state)" [ "$labels" = 201 ]
check "... __other__ holds the 9,800 folded" \
	[ "$(series "$dir/many.prom" 'evtop_events{source="default",table="message",event_type="__other__",state="pending"}')" = 9800 ]
check "... and the fold is counted" \
	[ "$(series "$dir/many.prom" 'evtop_label_values_folded{source="default",table="message",label="event_type"}')" = 9800 ]
printf 'metrics_label_cap = 10\n' >"$dir/cap.conf"
"$evtop" --defaults-file="$cnf" -D evt_metrics_many --config "$dir/cap.conf" metrics --once >"$dir/cap.prom" 2>/dev/null
labels=$(grep -c '^evtop_events{source="default",table="message",event_type="[^"]*",state="pending"}' "$dir/cap.prom")
check "metrics_label_cap = 10: 11 series a state ($labels)" [ "$labels" = 11 ]
sql -e "DROP DATABASE evt_metrics_many"

# --- several sources, a clock suspect -------------------------------------------------------------
# Two databases of the harness's server as two sources, and a third that is not there: each
# with its source label, the missing one evtop_up 0; the second written 8 hours ahead of the
# session's zone: its clock-dependent series are left out and evtop_clock_suspect says why.
for s in sa sb; do
	sql -e "DROP DATABASE IF EXISTS evt_m_$s; CREATE DATABASE evt_m_$s" && sql -D "evt_m_$s" <"$src/sql/mariadb/schema.sql"
	cat >"$dir/$s.cnf" <<EOF
[client]
socket=${EVTOP_TEST_SOCKET:?}
user=${EVTOP_TEST_USER:-root}
password=${EVTOP_TEST_PASSWORD:-}
database=evt_m_$s
EOF
	chmod 600 "$dir/$s.cnf"
done
sql -D evt_m_sa -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id,
  event_type, event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  max_retry_count, locked_by, lock_until, create_time)
  VALUES (1, 'A1', 'ORDER', '1', 'ORDER_CREATED', 's', 'MQ', 't', '{}', 0, 0, 5, NULL, NULL, NOW() - INTERVAL 1 MINUTE)"
sql -D evt_m_sb -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id,
  event_type, event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  max_retry_count, locked_by, lock_until, create_time, update_time)
  SELECT seq, CONCAT('B', seq), 'ORDER', seq, 'ORDER_CREATED', 's', 'MQ', 't', '{}', seq % 2, 0, 5,
  IF(seq % 2, 'p-1', NULL), IF(seq % 2, NOW() + INTERVAL 8 HOUR, NULL), NOW() + INTERVAL 8 HOUR,
  NOW() + INTERVAL 8 HOUR FROM seq_1_to_20"
cat >"$dir/sources.conf" <<EOF
[source sa]
defaults_file = $dir/sa.cnf
[source sb]
defaults_file = $dir/sb.cnf
[source gone]
socket = /nonexistent.sock
EOF
"$evtop" --config "$dir/sources.conf" --connect-timeout 1s metrics --once >"$dir/src.prom" 2>"$dir/src.err"
rc=$?
check "three sources, one gone: --once exits 3 ($rc)" [ $rc = 3 ]
check "each source has its label: sa up" [ "$(series "$dir/src.prom" 'evtop_up{source="sa"}')" = 1 ]
check "... sb up" [ "$(series "$dir/src.prom" 'evtop_up{source="sb"}')" = 1 ]
check "... gone: evtop_up 0" [ "$(series "$dir/src.prom" 'evtop_up{source="gone"}')" = 0 ]
check "... said on stderr by name" grep -q "gone: down:" "$dir/src.err"
check "sa's figures under its label" \
	[ "$(series "$dir/src.prom" 'evtop_events{source="sa",table="outbox",event_type="ORDER_CREATED",state="pending"}')" = 1 ]
check "sb's clock is suspect" [ "$(series "$dir/src.prom" 'evtop_clock_suspect{source="sb",table="outbox"}')" = 1 ]
check "... sa's is not" [ "$(series "$dir/src.prom" 'evtop_clock_suspect{source="sa",table="outbox"}')" = 0 ]
bad=$(grep -c 'source="sb",table="outbox".*state="stuck"\|evtop_oldest_pending_age_seconds{source="sb",table="outbox"\|evtop_drain_seconds{source="sb",table="outbox"' "$dir/src.prom")
check "sb: no stuck, no ages, no drain while suspect ($bad)" [ "$bad" = 0 ]
check "sb: processing counts every processing row then (10)" \
	[ "$(series "$dir/src.prom" 'evtop_events{source="sb",table="outbox",event_type="ORDER_CREATED",state="processing"}')" = 10 ]
promtool check metrics <"$dir/src.prom" >"$dir/lint" 2>&1
check "promtool: several sources clean" [ $? -eq 0 ]
sql -e "DROP DATABASE evt_m_sa; DROP DATABASE evt_m_sb"

# --- a server killed under the exporter --------------------------------------------------------
sh "$src/tests/harness/server.sh" start "$dir/s2" >/dev/null 2>&1
s2() { "$client" --no-defaults -S "$dir/s2/sock" -uroot "$@"; }
s2 -e "CREATE DATABASE ev" && s2 ev <"$src/sql/mariadb/schema.sql"
s2 ev -e "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id,
  event_source, event_payload, event_status, retry_count, max_retry_count, create_time)
  VALUES (1, 'M1', 'T', 'ORDER', '1', 's', '{}', 0, 0, 3, NOW())"
printf '[client]\nsocket=%s\nuser=root\ndatabase=ev\n' "$dir/s2/sock" >"$dir/s2.cnf"
kp=$(free_port)
"$evtop" --defaults-file="$dir/s2.cnf" --connect-timeout 1s metrics --listen "127.0.0.1:$kp" \
	--interval 1s 2>"$dir/k.err" &
kpid=$!
pids="$pids $kpid"
k_up() { scrape "$kp" | grep -q '^evtop_up{source="default"} 1'; }
k_down() { scrape "$kp" >"$dir/k.prom" && grep -q '^evtop_up{source="default"} 0' "$dir/k.prom"; }
wait_for 20 k_up
check "the second server's figures are served" [ $? -eq 0 ]
sh "$src/tests/harness/server.sh" stop "$dir/s2" >/dev/null 2>&1
wait_for 30 k_down
check "its server killed: evtop_up 0" [ $? -eq 0 ]
check "... and its figures are dropped, not served as current" sh -c "! grep -q '^evtop_events{' '$dir/k.prom'"
check "... said on stderr" grep -q "default: down:" "$dir/k.err"
sh "$src/tests/harness/server.sh" start "$dir/s2" >/dev/null 2>&1
wait_for 30 k_up
check "the server back: evtop_up 1 again" [ $? -eq 0 ]
check "... with its figures" sh -c "curl -sf http://127.0.0.1:$kp/metrics | grep -q '^evtop_events{source=\"default\",table=\"message\",event_type=\"T\",state=\"pending\"} 1'"
kill "$kpid"
wait "$kpid" 2>/dev/null
pids=""

# --- basic auth, TLS ---------------------------------------------------------------------------
hash=$(mkpasswd -m yescrypt 'S3cret-pass')
printf '# evtop metrics users\nprom:%s\n' "$hash" >"$dir/users"
chmod 600 "$dir/users"
ap=$(free_port)
"$evtop" --defaults-file="$cnf" metrics --listen "127.0.0.1:$ap" --basic-auth-file "$dir/users" 2>"$dir/a.err" &
apid=$!
pids="$pids $apid"
wait_for 20 curl -s -o /dev/null "http://127.0.0.1:$ap/"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ap/metrics")
check "basic auth: no credentials, 401 ($code)" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -u prom:wrong "http://127.0.0.1:$ap/metrics")
check "basic auth: a wrong password, 401 ($code)" [ "$code" = 401 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -u other:S3cret-pass "http://127.0.0.1:$ap/metrics")
check "basic auth: another user, 401 ($code)" [ "$code" = 401 ]
code=$(curl -s -o "$dir/a.prom" -w '%{http_code}' -u prom:S3cret-pass "http://127.0.0.1:$ap/metrics")
grep -q '^evtop_up' "$dir/a.prom" || code="$code without figures"
check "basic auth: the right password, 200 ($code)" [ "$code" = 200 ]
kill "$apid"
wait "$apid" 2>/dev/null
pids=""

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/cert.pem" -days 1 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 >/dev/null 2>&1
tp=$(free_port)
"$evtop" --defaults-file="$cnf" metrics --listen "127.0.0.1:$tp" --tls-cert "$dir/cert.pem" \
	--tls-key "$dir/key.pem" 2>"$dir/t.err" &
tpid=$!
pids="$pids $tpid"
tls_ok() { curl -sf --cacert "$dir/cert.pem" "https://127.0.0.1:$tp/metrics" | grep -q '^evtop_up'; }
wait_for 20 tls_ok
check "TLS: /metrics over https with the given certificate" [ $? -eq 0 ]
check "... says https" grep -q "listening on https://127.0.0.1:$tp/metrics" "$dir/t.err"
kill "$tpid"
wait "$tpid" 2>/dev/null
pids=""

# --- usage errors: exit 2, nothing served ------------------------------------------------------
usage() { # usage DESCRIPTION PATTERN ARGS...
	d=$1
	p=$2
	shift 2
	# A usage error exits at once; should one be missed, the exporter must not serve forever.
	timeout 30 "$evtop" --defaults-file="$cnf" metrics "$@" >"$dir/u.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$p" "$dir/u.out"; then ok "$d"; else not_ok "$d: exit $rc: $(cat "$dir/u.out")"; fi
}
usage "a bad --listen" "expected ADDR:PORT" --listen nowhere:port
usage "an IPv6 address without brackets" "expected ADDR:PORT" --listen ::1:9787
printf 'prom:plaintext\n' >"$dir/bad-users"
chmod 600 "$dir/bad-users"
usage "a password in the clear in the basic-auth file" "crypt(3) hash" --listen "127.0.0.1:$(free_port)" --basic-auth-file "$dir/bad-users"
usage "--tls-cert without --tls-key" "go together" --listen "127.0.0.1:$(free_port)" --tls-cert "$dir/cert.pem"
usage "--once with --listen" "does not go with --listen" --once --listen "127.0.0.1:9"
usage "a bad --interval" "interval" --interval 0s --once
# The port is held by a listener that chose it itself (port 0), so no other test can take it
# between the choice and the bind.
: >"$dir/held.port"
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(20)" >"$dir/held.port" &
hp=$!
wait_for 10 test -s "$dir/held.port"
bp=$(cat "$dir/held.port")
usage "a port in use" "cannot listen" --listen "127.0.0.1:$bp"
kill $hp 2>/dev/null
wait $hp 2>/dev/null

# A server that cannot be reached: --once writes evtop_up 0 and exits 3.
"$evtop" --no-defaults -S /nonexistent.sock --connect-timeout 1s metrics --once >"$dir/down.prom" 2>"$dir/down.err"
rc=$?
check "no server: --once exits 3 ($rc)" [ $rc = 3 ]
check "... with evtop_up 0 and no figure" sh -c "grep -q '^evtop_up{source=\"default\"} 0' '$dir/down.prom' && ! grep -q '^evtop_events{' '$dir/down.prom'"

tap_done
