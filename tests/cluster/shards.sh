#!/bin/sh
# Three independent MariaDB servers as shards of one evtop config: the merged dashboard equals
# the sum of the model's SQL on each shard, `evtop check` judges the merged figures, a merged
# list pages through every row of every shard exactly once and in the list's order, an action
# finds its event's shard (an event's identity includes its source), and with one shard
# stopped the others still show and the missing one is named.
set -u
here=$(cd "$(dirname "$0")" && pwd)
EVTOP_SRCDIR=${EVTOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$here/lib.sh"
evtop=${EVTOP:?EVTOP must name the evtop binary}
command -v jq >/dev/null || evc_die "jq not found (install jq)"

evc_init
evc_stage "start 3 shards" evc_shards 3 || evc_die "cannot start the shards"
base=$(evc_val "$EVC_ROOT/s1" 'SELECT NOW()')
# Shard sizes differ, so that a merge cannot pass by one shard's figures times three.
seed() {
	evc_seed_sql 1 150 "$base" | evc_sql "$EVC_ROOT/s1" -D evtop &&
		evc_seed_sql 2 230 "$base" | evc_sql "$EVC_ROOT/s2" -D evtop &&
		evc_seed_sql 3 90 "$base" | evc_sql "$EVC_ROOT/s3" -D evtop || return 1
	# One event_no on two shards: an action without --source must refuse it.
	for s in s1 s2; do
		evc_q $s "INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id,
			event_type, event_source, publish_channel, event_payload, publish_status,
			retry_count, max_retry_count, create_time)
			VALUES (9001, 'OB-TWICE', 'ORDER', 'ORD9001', 'ORDER_CREATED', 'order-service',
			'MQ', '{}', 3, 1, 5, TIMESTAMP'$base' - INTERVAL 2 MINUTE)" || return 1
	done
}
evc_stage "seed shards" seed || evc_die "cannot seed the shards"

dir=$EVC_ROOT/t
mkdir -p "$dir"
cfg=$dir/evtop.conf
{
	printf '[evtop]\npage_size = 100\n\n'
	evc_source shard1 s1
	evc_source shard2 s2
	# One shard over its unix socket.
	evc_source_socket shard3 s3
} >"$cfg"
ev() { "$evtop" "$@" --config "$cfg"; }

figures="pending processing stuck failed failed_due failed_waiting failed_noretry exhausted success cancelled created"

# --- the merged dashboard ---------------------------------------------------------------
t0=$(evc_now)
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
evc_eq "dashboard over 3 shards exits 0" "$rc" 0
evc_check "dashboard json parses" evc_jq 'type == "array"' "$dir/dash.json"
for t in outbox message; do
	got=$(jq -c --arg t "$t" '[.[] | select(.table == $t) | .sources[] | [.source, .ok, .read_from, .replica_lag_s]]' "$dir/dash.json")
	evc_eq "$t: every shard answered, read on its primary" "$got" \
		'[["shard1",true,"primary",null],["shard2",true,"primary",null],["shard3",true,"primary",null]]'
	for f in $figures; do
		want=0
		per=""
		bad=""
		for s in 1 2 3; do
			v=$(evc_figure "s$s" "$t" "$f")
			want=$((want + v))
			per="$per $v"
			got=$(jq --arg t "$t" --arg s "shard$s" --arg f "$f" \
				'.[] | select(.table == $t) | .sources[] | select(.source == $s) | .total[$f]' "$dir/dash.json")
			[ "$got" = "$v" ] || bad="$bad; shard$s's is $got, its SQL says $v"
		done
		got=$(jq --arg t "$t" --arg f "$f" '.[] | select(.table == $t) | .total[$f]' "$dir/dash.json")
		if [ "$got" = "$want" ] && [ -z "$bad" ]; then
			evc_ok "$t $f: merged $got = the sum of the model's SQL on each shard (${per# }), each shard's own right"
		else
			evc_not_ok "$t $f: merged $got, the model's SQL sums to $want (${per# })$bad"
		fi
	done
	# The groups (event types) are merged too.
	for g in ORDER_CREATED ORDER_PAID ORDER_SHIPPED; do
		want=0
		for s in 1 2 3; do
			v=$(evc_q "s$s" "$(evc_figure_sql "$t" failed) AND event_type = '$g'")
			want=$((want + v))
		done
		got=$(jq --arg t "$t" --arg g "$g" '.[] | select(.table == $t) | .groups[] | select(.group == $g) | .figures.failed' "$dir/dash.json")
		evc_eq "$t group $g: failed merged across shards" "$got" "$want"
	done
done
evc_log "dashboard and its checks: $(($(evc_now) - t0)) s"

ev dashboard --table outbox >"$dir/dash.txt" 2>&1
rc=$?
evc_eq "dashboard table format exits 0" "$rc" 0
evc_check "table format: a leading source column" grep -q '^source  *table ' "$dir/dash.txt"
rows=$(awk '$2 == "outbox" && $3 == "TOTAL" { printf "%s ", $1 }' "$dir/dash.txt")
evc_eq "table format: the merged row 'all', then each shard's TOTAL" "$rows" "all shard1 shard2 shard3 "
want=$(jq '.[] | select(.table == "outbox") | .total.pending' "$dir/dash.json")
got=$(awk '$1 == "all" && $2 == "outbox" && $3 == "TOTAL" { print $4 }' "$dir/dash.txt")
evc_eq "table format: the 'all' row has the merged pending" "$got" "$want"

# --- evtop check on the merged figures ------------------------------------------------------
failed=$(jq '[.[] | .total.failed] | add' "$dir/dash.json")
outbox_failed=$(jq '.[] | select(.table == "outbox") | .total.failed' "$dir/dash.json")
ev check --warning "failed > $((failed - 1))" >"$dir/check.out" 2>&1
rc=$?
evc_eq "check: 'failed > merged - 1' fires (exit 1): $(head -n 1 "$dir/check.out")" "$rc" 1
ev check --warning "failed > $failed" >"$dir/check.out" 2>&1
rc=$?
evc_eq "check: 'failed > merged' does not (exit 0)" "$rc" 0
ev check --critical "outbox.failed == $outbox_failed" >"$dir/check.out" 2>&1
rc=$?
evc_eq "check: outbox.failed == the merged count (exit 2)" "$rc" 2
ev check --warning 'failed > 0' >"$dir/check.out" 2>&1
rc=$?
evc_eq "check --warning 'failed > 0' fires" "$rc" 1
evc_check "check: the plugin line gives the merged failed=$failed" grep -q "failed=$failed" "$dir/check.out"

# --- merged lists, paged ----------------------------------------------------------------------
# page KIND TABLE LIMIT OUT: every page of a list into OUT (one JSON object a line); fails when
# a page breaks the interface. The number of pages is left in $pages.
page() {
	: >"$4"
	after=""
	pages=0
	while :; do
		pages=$((pages + 1))
		[ $pages -le 200 ] || { echo "# more than 200 pages" >&2; return 1; }
		if [ -n "$after" ]; then
			ev list "$1" --table "$2" --format json --limit "$3" --after "$after" >"$dir/page.json" 2>"$dir/page.err"
		else
			ev list "$1" --table "$2" --format json --limit "$3" >"$dir/page.json" 2>"$dir/page.err"
		fi
		rc=$?
		[ $rc -eq 0 ] || { echo "# page $pages: exit $rc: $(cat "$dir/page.err")" >&2; return 1; }
		n=$(jq 'length' "$dir/page.json") || return 1
		[ "$n" -le "$3" ] || { echo "# page $pages has $n rows, more than --limit $3" >&2; return 1; }
		jq -c '.[]' "$dir/page.json" >>"$4"
		after=$(sed -n "s/^-- more $2 rows: --table $2 --after //p" "$dir/page.err")
		[ -n "$after" ] || break
	done
}

# expect_rows TABLE WHERE: "shardN id" of every row of each shard, sorted.
expect_rows() {
	if [ "$1" = outbox ]; then tn=biz_outbox_event; else tn=biz_message_event; fi
	for s in 1 2 3; do
		evc_q "s$s" "SELECT id FROM $tn WHERE deleted = 0 AND $2" | sed "s/^/shard$s /"
	done | sort
}

for t in outbox message; do
	if [ "$t" = outbox ]; then st=publish_status; else st=event_status; fi
	page failed "$t" 7 "$dir/rows.$t"
	rc=$?
	evc_check "$t failed list: $pages pages of at most 7 rows, each with a cursor to the next" [ $rc -eq 0 ]
	evc_check "$t failed list: every row names its source" \
		evc_jq -s 'length > 0 and all(.[]; .source == "shard1" or .source == "shard2" or .source == "shard3")' "$dir/rows.$t"
	jq -r '"\(.source) \(.id)"' "$dir/rows.$t" | sort >"$dir/got.$t"
	expect_rows "$t" "$st = 3" >"$dir/want.$t"
	dups=$(uniq -d "$dir/got.$t" | wc -l)
	evc_eq "$t failed list: no row twice" "$dups" 0
	if cmp -s "$dir/got.$t" "$dir/want.$t"; then
		evc_ok "$t failed list: every failed row of every shard ($(wc -l <"$dir/want.$t")) exactly once"
	else
		evc_not_ok "$t failed list: rows differ from the shards' (< got, > want): $(diff "$dir/got.$t" "$dir/want.$t" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
	fi
	# The merge keeps the list's order, the status index's: next_retry_time (NULL first),
	# retry_count, id.
	evc_check "$t failed list: merged in the list's order (next_retry_time NULL first, retry_count, id)" \
		evc_jq -s '[.[] | [(if .next_retry_time == null then 0 else 1 end), (.next_retry_time // ""), (.retry_count | tonumber), (.id | tonumber)]] | . == sort' "$dir/rows.$t"
done

page pending outbox 13 "$dir/rows.pending"
rc=$?
evc_check "outbox pending list pages ($pages pages)" [ $rc -eq 0 ]
jq -r '"\(.source) \(.id)"' "$dir/rows.pending" | sort >"$dir/got.pending"
expect_rows outbox "publish_status = 0" >"$dir/want.pending"
evc_check "outbox pending list: every pending row of every shard exactly once" cmp -s "$dir/got.pending" "$dir/want.pending"
evc_check "outbox pending list: merged oldest first (create_time, id)" \
	evc_jq -s '[.[] | [.create_time, (.id | tonumber)]] | . == sort' "$dir/rows.pending"

# --- actions: the event's shard, and only there ------------------------------------------
# Shard 2's failed row 3 shares its id with rows of the other shards (ids repeat per shard).
ob=$(evc_q s2 "SELECT event_no FROM biz_outbox_event WHERE publish_status = 3 AND deleted = 0
	AND retry_count < max_retry_count AND id <= 90 ORDER BY id LIMIT 1")
id=$(evc_q s2 "SELECT id FROM biz_outbox_event WHERE event_no = '$ob'")
before1=$(evc_q s1 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE id = $id")
before3=$(evc_q s3 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE id = $id")
ev retry "$ob" --yes --now --table outbox --operator CLUSTER-TEST >"$dir/retry.out" 2>&1
rc=$?
evc_eq "retry $ob (on shard2 only) exits 0: $(tr '\n' ' ' <"$dir/retry.out")" "$rc" 0
evc_check "... and says applied" grep -q '^applied' "$dir/retry.out"
evc_eq "... shard2's row is pending, version 1" \
	"$(evc_q s2 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE id = $id")" "0/1"
evc_eq "... the row with the same id on shard1 is untouched" \
	"$(evc_q s1 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE id = $id")" "$before1"
evc_eq "... and on shard3" \
	"$(evc_q s3 "SELECT CONCAT(publish_status, '/', version) FROM biz_outbox_event WHERE id = $id")" "$before3"
evc_eq "... shard2's evtop_audit has it, with its source" \
	"$(evc_q s2 "SELECT CONCAT(source, ' ', event_no, ' ', result) FROM evtop_audit")" "shard2 $ob applied"
evc_eq "... no audit row on the other shards" \
	"$(evc_q s1 "SELECT COUNT(*) FROM evtop_audit")$(evc_q s3 "SELECT COUNT(*) FROM evtop_audit")" "00"

ev retry OB-TWICE --yes --now --table outbox --operator CLUSTER-TEST >"$dir/retry.out" 2>&1
rc=$?
evc_check "retry of an event_no on two shards without --source is refused (exit $rc): $(tr '\n' ' ' <"$dir/retry.out")" [ $rc -ne 0 ]
evc_eq "... and changes neither" \
	"$(evc_q s1 "SELECT version FROM biz_outbox_event WHERE event_no = 'OB-TWICE'")$(evc_q s2 "SELECT version FROM biz_outbox_event WHERE event_no = 'OB-TWICE'")" "00"
ev retry OB-TWICE --yes --now --table outbox --source shard1 --operator CLUSTER-TEST >"$dir/retry.out" 2>&1
rc=$?
evc_eq "retry OB-TWICE --source shard1 exits 0" "$rc" 0
evc_eq "... changes shard1's row only" \
	"$(evc_q s1 "SELECT version FROM biz_outbox_event WHERE event_no = 'OB-TWICE'")$(evc_q s2 "SELECT version FROM biz_outbox_event WHERE event_no = 'OB-TWICE'")" "10"

# --- one shard stopped ------------------------------------------------------------------------
evc_stage "stop shard2" evc_stop s2
ev dashboard --format json >"$dir/dash.json" 2>"$dir/dash.err"
rc=$?
evc_eq "shard2 down: dashboard exits 3" "$rc" 3
evc_check "... stderr names it: $(head -n 1 "$dir/dash.err")" grep -q '^evtop: shard2: no answer: ' "$dir/dash.err"
got=$(jq -c '[.[] | select(.table == "outbox") | .sources[] | [.source, .ok, (.error != null)]]' "$dir/dash.json")
evc_eq "... shard2 is marked (ok false, an error), the others answer" "$got" \
	'[["shard1",true,false],["shard2",false,true],["shard3",true,false]]'
for t in outbox message; do
	for f in pending failed stuck; do
		want=$(($(evc_figure s1 "$t" "$f") + $(evc_figure s3 "$t" "$f")))
		got=$(jq --arg t "$t" --arg f "$f" '.[] | select(.table == $t) | .total[$f]' "$dir/dash.json")
		evc_eq "... $t $f still counts shard1 and shard3" "$got" "$want"
	done
done
ev dashboard --table outbox >"$dir/dash.txt" 2>&1
evc_check "... table format: shard1's TOTAL row still shown" grep -q '^shard1  *outbox  *TOTAL  *[0-9]' "$dir/dash.txt"
evc_check "... table format: shard2's row is marked" grep -q '^# source shard2: no answer' "$dir/dash.txt"
ev list failed --table outbox --format json --limit 1000 >"$dir/list.json" 2>"$dir/list.err"
rc=$?
evc_check "... list failed still lists the other shards' rows (exit $rc)" \
	evc_jq '(length > 0) and all(.[]; .source != "shard2") and any(.[]; .source == "shard3")' "$dir/list.json"
evc_check "... and names the missing shard on stderr" grep -q 'shard2' "$dir/list.err"

evc_stage "stop" evc_stop_all
evc_done
