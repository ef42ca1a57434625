#!/bin/sh
# A primary and its replica (MariaDB replication) as one source, beside a plain shard: the
# dashboard reads on the replica and shows its lag (a number; a warning past lag_warning;
# unknown when replication is stopped), --primary reads the primary, and an action writes on
# the primary only (never on the read endpoint) and is seen on the replica once it catches up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
EVTOP_SRCDIR=${EVTOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$here/lib.sh"
evtop=${EVTOP:?EVTOP must name the evtop binary}
command -v jq >/dev/null || evc_die "jq not found (install jq)"

evc_init
evc_stage "start primary + replica" evc_replication || evc_die "cannot start replication"
evc_stage "start a plain shard" evc_shards 1 || evc_die "cannot start the shard"
base=$(evc_val "$EVC_ROOT/p" 'SELECT NOW()')
seed() {
	evc_seed_sql 1 120 "$base" | evc_sql "$EVC_ROOT/p" -D evtop &&
		evc_seed_sql 2 40 "$base" | evc_sql "$EVC_ROOT/s1" -D evtop && evc_repl_sync
}
evc_stage "seed" seed || evc_die "cannot seed"

dir=$EVC_ROOT/t
mkdir -p "$dir"
cfg=$dir/evtop.conf
{
	printf '[evtop]\nlag_warning = 2s\n\n'
	evc_source main p read_host=127.0.0.1 "read_port=$(evc_port r)"
	evc_source other s1
} >"$cfg"
ev() { "$evtop" "$@" --config "$cfg"; }
# src_json FILE SOURCE: that source's entry of the outbox table, compact.
src_json() {
	jq -c --arg s "$2" '.[] | select(.table == "outbox") | .sources[] | select(.source == $s) | [.ok, .read_from, .replica_lag_s, .total.pending]' "$1"
}
pending_p() { evc_figure p outbox pending; }
pending_r() { evc_figure r outbox pending; }

# --- caught up -----------------------------------------------------------------------------
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
evc_eq "dashboard exits 0" "$rc" 0
evc_eq "main reads on its replica, lag 0 s, the replica's pending" "$(src_json "$dir/dash.json" main)" \
	"[true,\"replica\",0,$(pending_r)]"
evc_eq "other (no read endpoint) reads on its primary, no lag" "$(src_json "$dir/dash.json" other)" \
	"[true,\"primary\",null,$(evc_figure s1 outbox pending)]"
evc_eq "no warning while the replica is caught up" "$(cat "$dir/dash.err")" ""
ev dashboard --table outbox >"$dir/dash.txt" 2>&1
evc_check "table format: '# source main: replica, 0s behind'" grep -q '^# source main: replica, 0s behind' "$dir/dash.txt"

# --- a replica behind: delayed replication ---------------------------------------------------
delay() {
	evc_sql "$EVC_ROOT/r" -e "STOP SLAVE; CHANGE MASTER TO MASTER_DELAY = $1; START SLAVE" &&
		evc_replica_running
}
evc_stage "delay the replica by 300 s" delay 300 || evc_die "cannot delay the replica"
evc_q p "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
	event_source, publish_channel, event_payload, publish_status, create_time)
	SELECT 1000 + seq, CONCAT('OB-NEW-', seq), 'ORDER', 'ORD-NEW', 'ORDER_CREATED',
	'order-service', 'MQ', '{}', 0, NOW() FROM seq_1_to_3"
sleep 4
evc_eq "the replica has not applied the primary's 3 new rows" "$(($(pending_p) - $(pending_r)))" 3
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
got=$(src_json "$dir/dash.json" main)
evc_eq "replica behind: dashboard exits 0" "$rc" 0
# shellcheck disable=SC2016
evc_check "replica behind: main reads the replica's (older) pending $(pending_r), lag a number >= 3: $got" \
	evc_jq -n --argjson g "$got" --argjson p "$(pending_r)" \
	'$g[0] == true and $g[1] == "replica" and ($g[2] | type) == "number" and $g[2] >= 3 and $g[3] == $p'
evc_check "... warned past lag_warning: $(cat "$dir/dash.err")" grep -q '^evtop: main: warning: the replica is [0-9]*s behind' "$dir/dash.err"
ev metrics --once >"$dir/m.prom" 2>"$dir/m.err"
lag=$(awk '/^evtop_replica_lag_seconds\{source="main"\} / { print $2 }' "$dir/m.prom")
evc_check "metrics: evtop_replica_lag_seconds of main is its lag, >= 3 ($lag)" [ "${lag:-0}" -ge 3 ]
evc_check "... other, on its primary, has no lag series" sh -c "! grep -q '^evtop_replica_lag_seconds{source=\"other\"}' '$dir/m.prom'"
evc_eq "... main's pending is the replica's" \
	"$(awk '/^evtop_events\{source="main",table="outbox",.*state="pending"\}/ { s += $2 } END { print s + 0 }' "$dir/m.prom")" "$(pending_r)"
ev dashboard --format json --primary >"$dir/dash.json" 2>"$dir/dash.err"
evc_eq "--primary: main reads its primary (the 3 new rows), no lag" "$(src_json "$dir/dash.json" main)" \
	"[true,\"primary\",null,$(pending_p)]"
ev list pending --table outbox --format json --limit 1000 >"$dir/list.json" 2>"$dir/list.err"
evc_eq "list pending reads on the replica: not the new rows yet" \
	"$(jq '[.[] | select(.event_no | startswith("OB-NEW-"))] | length' "$dir/list.json")" 0
ev list pending --table outbox --format json --limit 1000 --primary >"$dir/list.json" 2>"$dir/list.err"
evc_eq "list pending --primary: the new rows" \
	"$(jq '[.[] | select(.event_no | startswith("OB-NEW-"))] | length' "$dir/list.json")" 3

# --- the console on the replica: its lag in the status line, P reads the primary ---------------
cat >"$dir/console.keys" <<EOF
screen $dir/c-replica.txt
key P
screen $dir/c-primary.txt
key q
EOF
"$evtop" --config "$cfg" --source main --script "$dir/console.keys" --screen 220x30 >"$dir/console.out" 2>&1
rc=$?
evc_eq "the console on main ends normally: $(cat "$dir/console.out")" "$rc" 0
evc_check "the console reads the replica, its lag in the status line past lag_warning: $(head -1 "$dir/c-replica.txt")" \
	grep -q "replica lag [0-9]*s (BEHIND)" "$dir/c-replica.txt"
evc_check "... the replica's pending ($(pending_r)) on its dashboard" \
	grep -Eq "^TOTAL( \([0-9]+ groups\))? +$(pending_r) " "$dir/c-replica.txt"
evc_check "P reads the primary, said in the status line: $(head -1 "$dir/c-primary.txt")" \
	grep -q "reading the primary" "$dir/c-primary.txt"
evc_check "... the primary's pending ($(pending_p))" \
	grep -Eq "^TOTAL( \([0-9]+ groups\))? +$(pending_p) " "$dir/c-primary.txt"

# Every source at once: main's row carries its replica's lag, the status line says one is behind.
all_console() {
	printf 'screen %s\nkey q\n' "$1" >"$dir/all.keys"
	"$evtop" --config "$cfg" --script "$dir/all.keys" --screen 220x30 >"$dir/console.out" 2>&1
}
all_console "$dir/c-all.txt"
evc_check "every source at once: main's row shows its replica's lag: $(grep -E '^(main|other)' "$dir/c-all.txt" | head -2 | tr '\n' '|')" \
	grep -Eq "^main lag [0-9]+s +$(pending_r) " "$dir/c-all.txt"
evc_check "... other (no replica) has none" grep -Eq "^other +[0-9]" "$dir/c-all.txt"
evc_check "... the status line says a replica is behind: $(head -1 "$dir/c-all.txt")" \
	grep -q "1 replica behind" "$dir/c-all.txt"

# --- an action while the replica is behind: written on the primary only ----------------------
ob=$(evc_q p "SELECT event_no FROM biz_outbox_event WHERE publish_status = 3 AND deleted = 0
	AND retry_count < max_retry_count ORDER BY id LIMIT 1")
row() { evc_q "$1" "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE event_no = '$ob'"; }
writes_r() { evc_val "$EVC_ROOT/r" "SELECT SUM(variable_value) FROM information_schema.global_status WHERE variable_name IN ('Com_update', 'Com_insert', 'Com_delete', 'Com_replace')"; }
w0=$(writes_r)
ev retry "$ob" --yes --now --table outbox --operator CLUSTER-TEST >"$dir/retry.out" 2>&1
rc=$?
evc_eq "retry $ob exits 0: $(tr '\n' ' ' <"$dir/retry.out")" "$rc" 0
evc_check "... applied, and the re-read (on the primary) shows it pending, version 1" \
	grep -q "^applied .*$ob.*publish_status 0 (pending).*version 1" "$dir/retry.out"
evc_eq "... the primary's row is pending, version 1" "$(row p)" "0/1"
evc_eq "... the replica, behind, still has it failed, version 0" "$(row r)" "3/0"
evc_eq "... no INSERT, UPDATE or DELETE ran on the replica" "$(writes_r)" "$w0"
evc_eq "... the primary's evtop_audit has it, with the source" \
	"$(evc_q p "SELECT CONCAT(source, ' ', event_no, ' ', action, ' ', result) FROM evtop_audit")" \
	"main $ob retry_now applied"
ev retry "$ob" --yes --now --table outbox --operator CLUSTER-TEST >"$dir/retry.out" 2>&1
rc=$?
evc_check "retry again: looked up on the primary (pending there, failed on the replica), not applied (exit $rc): $(tr '\n' ' ' <"$dir/retry.out")" \
	[ $rc -ne 0 ]
evc_eq "... the primary's row is unchanged" "$(row p)" "0/1"

# --- replication stopped: lag unknown ------------------------------------------------------------
evc_sql "$EVC_ROOT/r" -e 'STOP SLAVE'
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
got=$(src_json "$dir/dash.json" main)
# shellcheck disable=SC2016
evc_check "replication stopped: main still read on the replica, lag unknown (null): $got (exit $rc)" \
	evc_jq -n --argjson g "$got" '$g[0] == true and $g[1] == "replica" and $g[2] == null'
evc_check "... warned: $(cat "$dir/dash.err")" grep -q '^evtop: main: warning: .*lag is unknown' "$dir/dash.err"
ev dashboard --table outbox >"$dir/dash.txt" 2>&1
evc_check "... table format: '# source main: replica, lag unknown'" grep -q '^# source main: replica, lag unknown' "$dir/dash.txt"
ev metrics --once >"$dir/m.prom" 2>"$dir/m.err"
evc_check "metrics: main's lag unknown, its series left out" sh -c "! grep -q '^evtop_replica_lag_seconds{source=\"main\"}' '$dir/m.prom'"
evc_check "... said on stderr: $(cat "$dir/m.err")" grep -q "main: replica lag unknown" "$dir/m.err"
all_console "$dir/c-all-stopped.txt"
evc_check "... every source at once: main's row says its lag is unknown" grep -Eq "^main lag \? " "$dir/c-all-stopped.txt"
# evtop archive on main waits while its replica's lag reads NULL, and goes on once it catches up.
evc_q p "INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
	event_payload, event_status, create_time, update_time) SELECT 7000 + seq, CONCAT('MSG-OLD-', seq),
	'PAY_SUCCESS', 'PAY', seq, 'pay-service', '{}', 2, NOW() - INTERVAL 40 DAY, NOW() - INTERVAL 40 DAY
	FROM seq_1_to_30; GRANT DELETE ON evtop.biz_message_event TO 'evtop'@'localhost';
	GRANT DELETE ON evtop.biz_message_event TO 'evtop'@'127.0.0.1'"
XDG_STATE_HOME=$dir/state "$evtop" archive --config "$cfg" --source main --table message \
	--older-than 30d --purge --yes --max-lag 5s --pause 0 --from-start >"$dir/ar.out" 2>"$dir/ar.err" &
arpid=$!
sleep 3
evc_check "archive: paused while the replica's lag reads NULL: $(head -c 200 "$dir/ar.err")" \
	grep -q "paused: the replica's lag reads NULL" "$dir/ar.err"
evc_eq "... nothing deleted meanwhile" "$(evc_q p "SELECT COUNT(*) FROM biz_message_event WHERE id > 7000")" 30

# --- caught up again ------------------------------------------------------------------------------
catch_up() { delay 0 && evc_repl_sync; }
evc_stage "replica catches up" catch_up || evc_die "the replica does not catch up"
for _i in $(seq 1 60); do kill -0 "$arpid" 2>/dev/null || break; sleep 1; done
kill "$arpid" 2>/dev/null
wait "$arpid"
arc=$?
evc_check "archive: went on once the replica caught up, and finished (exit $arc): $(cat "$dir/ar.out")" \
	sh -c "[ $arc -eq 0 ] && grep -q 'nothing older is left' '$dir/ar.out'"
evc_eq "... the 30 old rows deleted on the primary" "$(evc_q p "SELECT COUNT(*) FROM biz_message_event WHERE id > 7000")" 0
evc_eq "the replica now has the retried row: pending, version 1" "$(row r)" "0/1"
evc_eq "... and the audit row" "$(evc_q r "SELECT COUNT(*) FROM evtop_audit WHERE event_no = '$ob'")" 1
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
evc_eq "dashboard: main on the replica, lag 0, the primary's pending again" "$(src_json "$dir/dash.json" main)" \
	"[true,\"replica\",0,$(pending_p)]"
ev list pending --table outbox --format json --limit 1000 --source main >"$dir/list.json" 2>"$dir/list.err"
evc_eq "list pending on the replica: the retried row and the new rows" \
	"$(jq --arg ob "$ob" '[.[] | select(.event_no == $ob or (.event_no | startswith("OB-NEW-")))] | length' "$dir/list.json")" 4

evc_stage "stop" evc_stop_all
evc_done
