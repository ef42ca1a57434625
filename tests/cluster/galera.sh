#!/bin/sh
# A three-node Galera cluster, one evtop source per node: guarded actions on the same rows
# started at the same moment on different nodes — exactly one applies (exit 0, "applied"), the
# other reports a skip (the row changed: skipped, or refused when it already reads the new
# status) or a conflict (error 1213: non-zero exit, never "applied"); the row's version goes up by
# exactly one and evtop_audit holds exactly one applied record, the winner's. A conflict is
# also forced: a trigger on evtop_audit that sleeps on one node only holds that node's
# transaction open between its UPDATE and its COMMIT while another node commits the same row.
set -u
here=$(cd "$(dirname "$0")" && pwd)
EVTOP_SRCDIR=${EVTOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$here/lib.sh"
evtop=${EVTOP:?EVTOP must name the evtop binary}
command -v jq >/dev/null || evc_die "jq not found (install jq)"
races=${EVC_RACES:-12}

evc_init
evc_stage "start 3-node galera" evc_galera || evc_die "cannot start the Galera cluster"
base=$(evc_val "$EVC_ROOT/g1" 'SELECT NOW()')
seed() { evc_seed_sql 1 80 "$base" | evc_sql "$EVC_ROOT/g1" -D evtop; }
evc_stage "seed" seed || evc_die "cannot seed"

# gq NODE SQL: SQL on a node, after the cluster's latest commit (wsrep_sync_wait).
gq() { evc_q "$1" "SET SESSION wsrep_sync_wait = 1; $2"; }

dir=$EVC_ROOT/t
mkdir -p "$dir"
cfg=$dir/evtop.conf
{
	evc_source gal1 g1
	evc_source gal2 g2
	evc_source gal3 g3
} >"$cfg"
ev() { "$evtop" "$@" --config "$cfg"; }

ev dashboard --format json --table outbox >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
evc_eq "dashboard over the three nodes exits 0" "$rc" 0
failed=$(gq g3 "$(evc_figure_sql outbox failed)")
evc_eq "each node answers with the cluster's failed count ($failed)" \
	"$(jq -c '[.[0].sources[] | [.source, .ok, .total.failed]]' "$dir/dash.json")" \
	"[[\"gal1\",true,$failed],[\"gal2\",true,$failed],[\"gal3\",true,$failed]]"

# The failed rows to race on, oldest id first.
gq g1 "SELECT event_no FROM biz_outbox_event WHERE publish_status = 3 AND deleted = 0
	ORDER BY id LIMIT $((races + 2))" >"$dir/events"
[ "$(wc -l <"$dir/events")" -eq $((races + 2)) ] || evc_die "not enough failed rows to race on"

ob=$(sed -n 1p "$dir/events")
ev retry "$ob" --yes --now --table outbox --operator CLUSTER-TEST >"$dir/out" 2>&1
rc=$?
evc_check "an event on every node's source, no --source: refused (exit $rc): $(tr '\n' ' ' <"$dir/out")" \
	[ $rc -ne 0 ]
evc_eq "... and not changed" "$(gq g2 "SELECT version FROM biz_outbox_event WHERE event_no = '$ob'")" 0

# audit EVENT_NO: its evtop_audit rows "source result", on node 3 (which neither racer used in
# the first race).
audit() { gq g3 "SELECT CONCAT(source, ' ', result) FROM evtop_audit WHERE event_no = '$1' ORDER BY id"; }

# race EVENT_NO SOURCE_A SOURCE_B: two retries of the same row, on two nodes, at once.
applied_total=0
conflicts=0
skips=0
race() {
	_ob=$1
	v0=$(gq g1 "SELECT version FROM biz_outbox_event WHERE event_no = '$_ob'")
	ev retry "$_ob" --yes --now --table outbox --source "$2" --operator RACE-A >"$dir/a.out" 2>&1 &
	pa=$!
	ev retry "$_ob" --yes --now --table outbox --source "$3" --operator RACE-B >"$dir/b.out" 2>&1 &
	pb=$!
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	judge "$_ob" "$2" "$ra" "$dir/a.out" "$3" "$rb" "$dir/b.out" "$v0"
}

# judge EVENT_NO SRC_A RC_A OUT_A SRC_B RC_B OUT_B V0: one applied, the other not, one version
# step, one applied audit record (the winner's).
judge() {
	_a=$(outcome "$3" "$4")
	_b=$(outcome "$6" "$7")
	evc_log "$1: $2 $_a (exit $3): $(tr '\n' ' ' <"$4")"
	evc_log "$1: $5 $_b (exit $6): $(tr '\n' ' ' <"$7")"
	case "$_a/$_b" in
	applied/skipped | applied/refused | applied/conflict) winner=$2 loser=$_b ;;
	skipped/applied | refused/applied | conflict/applied) winner=$5 loser=$_a ;;
	*) winner="" loser="" ;;
	esac
	if [ -n "$winner" ]; then
		evc_ok "$1: exactly one applies ($winner), the other reports $loser"
		applied_total=$((applied_total + 1))
		case $loser in conflict) conflicts=$((conflicts + 1)) ;; *) skips=$((skips + 1)) ;; esac
	else
		evc_not_ok "$1: $2 $_a (exit $3), $5 $_b (exit $6): want one applied and one skipped or conflict"
	fi
	for _n in g1 g2 g3; do
		got=$(gq $_n "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE event_no = '$1'")
		[ "$got" = "0/$(($8 + 1))" ] || { evc_not_ok "$1: on $_n status/version $got, want 0/$(($8 + 1))"; return; }
	done
	evc_ok "$1: pending, version $8 -> $(($8 + 1)) on every node"
	if [ -n "$winner" ]; then
		evc_eq "$1: one evtop_audit record, the winner's" "$(audit "$1" | tr '\n' ' ')" "$winner applied "
	else
		evc_eq "$1: one evtop_audit record" "$(audit "$1" | grep -c ' applied$')" 1
	fi
}

# outcome EXIT OUT: applied, skipped, refused (it already reads the row pending), conflict
# (1213: another node changed the row first), or what else it printed.
outcome() {
	if [ "$1" = 0 ] && grep -q '^applied ' "$2"; then
		echo applied
	elif [ "$1" != 0 ] && grep -q '^skipped ' "$2"; then
		echo skipped
	elif [ "$1" != 0 ] && grep -q '^refused .*it is pending' "$2"; then
		echo refused
	elif [ "$1" != 0 ] && grep -q '^failed .*conflict' "$2"; then
		echo conflict
	else
		echo "other"
	fi
}

t0=$(evc_now)
i=0
sed -n "2,$((races + 1))p" "$dir/events" >"$dir/race-events"
while read -r ob; do
	case $((i % 3)) in
	0) race "$ob" gal1 gal2 ;;
	1) race "$ob" gal2 gal3 ;;
	2) race "$ob" gal3 gal1 ;;
	esac
	i=$((i + 1))
done <"$dir/race-events"
echo "stage $races races: $(($(evc_now) - t0)) s"
evc_log "races: $applied_total with one winner; the loser reported a conflict $conflicts times, a skip or refusal $skips times"

# A forced conflict: on g2 a trigger holds evtop's transaction (its UPDATE done, the audit
# INSERT sleeping) while gal1 retries the same row and commits; Galera then aborts g2's
# transaction, which must be reported as a conflict, never as applied.
ob=$(sed -n "$((races + 2))p" "$dir/events")
evc_q g1 "CREATE TRIGGER evc_hold BEFORE INSERT ON evtop_audit FOR EACH ROW
	DO IF(@@wsrep_node_name = 'g2', SLEEP(3), 0)"
gq g2 "SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_name = 'evc_hold'" >/dev/null
v0=$(gq g1 "SELECT version FROM biz_outbox_event WHERE event_no = '$ob'")
ev retry "$ob" --yes --now --table outbox --source gal2 --operator HELD --log-sql "$dir/held.sql" >"$dir/b.out" 2>&1 &
pb=$!
# Until g2's UPDATE has run and its audit INSERT sleeps.
k=0
while [ $k -lt 100 ] && [ "$(evc_val "$EVC_ROOT/g2" "SELECT COUNT(*) FROM information_schema.processlist WHERE state = 'User sleep'")" != 1 ]; do
	sleep 0.05
	k=$((k + 1))
done
ev retry "$ob" --yes --now --table outbox --source gal1 --operator FIRST >"$dir/a.out" 2>&1
ra=$?
wait $pb
rb=$?
evc_q g1 "DROP TRIGGER evc_hold"
evc_check "forced conflict: gal2's transaction was held open (its audit INSERT sleeping)" [ $k -lt 100 ]
evc_eq "forced conflict: gal1 applies: $(tr '\n' ' ' <"$dir/a.out")" "$(outcome $ra "$dir/a.out")" applied
evc_eq "forced conflict: gal2, overtaken by another node, reports the conflict (exit $rb): $(tr '\n' ' ' <"$dir/b.out")" \
	"$(outcome $rb "$dir/b.out")" conflict
evc_eq "forced conflict: pending, version $v0 -> $((v0 + 1))" \
	"$(gq g3 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE event_no = '$ob'")" "0/$((v0 + 1))"
evc_eq "forced conflict: one evtop_audit record, gal1's" "$(audit "$ob" | tr '\n' ' ')" "gal1 applied "
evc_check "evtop reads its own writes on Galera: SET SESSION wsrep_sync_wait = 1 (--log-sql)" \
	grep -q 'SET SESSION wsrep_sync_wait = 1' "$dir/held.sql"

evc_stage "stop" evc_stop_all
evc_done
