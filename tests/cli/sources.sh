#!/bin/sh
# Several sources in one config: three databases of the harness's server play three shards
# (a fourth source names a server that is not there). The merged dashboard against the sum of
# the model's counts on each, a merged list paged through to the end (every row once, in
# order), show naming the source, actions finding their source (and refusing an event_no two
# sources hold), check over the merged figures, doctor per source, and the console switching
# sources. The multi-server versions (replicas, Galera) are in tests/cluster.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"

# Three shards: the seed in each, then each made different (rows deleted, rows renumbered so
# some event_nos are one shard's own).
for s in sa sb sc; do
	sql -e "DROP DATABASE IF EXISTS $s; CREATE DATABASE $s" || exit 99
	cat "$src"/sql/mariadb/schema.sql "$src"/sql/mariadb/audit.sql | sql "$s" || exit 99
	{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } |
		sql "$s" || exit 99
done
sql sb -e "DELETE FROM biz_outbox_event WHERE id % 3 = 0; DELETE FROM biz_message_event WHERE id % 4 = 0" || exit 99
sql sc -e "UPDATE biz_outbox_event SET event_no = CONCAT('C-', event_no) WHERE id % 2 = 0" || exit 99

# Each shard's option file: the harness's server, its own database, the clock pinned to the
# seed's "now" for evtop's sessions.
for s in sa sb sc; do
	cat >"$dir/$s.cnf" <<EOF
[client]
socket=${EVTOP_TEST_SOCKET:?}
user=${EVTOP_TEST_USER:-root}
password=${EVTOP_TEST_PASSWORD:-}
database=$s

[evtop]
init-command="SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00')"
EOF
	chmod 600 "$dir/$s.cnf"
done
conf="$dir/sources.conf"
cat >"$conf" <<EOF
[evtop]
operator = INC-SRC
[source sa]
defaults_file = $dir/sa.cnf
[source sb]
defaults_file = $dir/sb.cnf
[source sc]
defaults_file = $dir/sc.cnf
EOF
ev() { XDG_STATE_HOME="$dir/state" "$evtop" --config "$conf" "$@"; }

# --- the merged dashboard -------------------------------------------------------------------
ev dashboard --format json --table outbox >"$dir/d.json" 2>"$dir/d.err"
check "dashboard over three sources exits 0" [ $? -eq 0 ]
for st in 0:pending 1:processing 3:failed; do
	code=${st%%:*}
	name=${st#*:}
	want=0
	for s in sa sb sc; do
		c=$(sql "$s" -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = $code")
		want=$((want + c))
	done
	got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['total']['$name'])" "$dir/d.json")
	check "merged $name ($got) = the sum of the three sources' counts ($want)" [ "$got" = "$want" ]
done
per=$(python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))[0]
print(' '.join('%s:%s:%s' % (s['source'], s['ok'], s['total']['failed']) for s in t['sources']))" "$dir/d.json")
want_per=""
for s in sa sb sc; do
	c=$(sql "$s" -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3")
	want_per="$want_per${want_per:+ }$s:True:$c"
done
check "each source's own total is listed ($per)" [ "$per" = "$want_per" ]
ev dashboard --table outbox >"$dir/d.txt" 2>&1
check "the table format has a source column: merged rows 'all', each source's TOTAL" \
	sh -c "grep -q '^source ' '$dir/d.txt' && grep -q '^all  *outbox  *TOTAL' '$dir/d.txt' && grep -q '^sb  *outbox  *TOTAL' '$dir/d.txt'"

# --- a source that does not answer ------------------------------------------------------------
{
	cat "$conf"
	printf '[source sd]\nsocket = %s/no/such.sock\nuser = nobody\n' "$dir"
} >"$dir/down.conf"
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/down.conf" dashboard --table outbox --format json >"$dir/dd.json" 2>"$dir/dd.err"
rc=$?
check "a source down: exit 3 ($rc)" [ $rc -eq 3 ]
check "a source down: named on stderr" grep -q "sd: no answer" "$dir/dd.err"
res=$(python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))[0]
d={s['source']: s for s in t['sources']}
print(d['sd']['ok'], d['sa']['ok'], t['total']['failed'], 'failed' in t['total']['lower_bound'])" "$dir/dd.json")
want_failed=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['total']['failed'])" "$dir/d.json")
check "the others still counted, the merged figures lower bounds ($res)" [ "$res" = "False True $want_failed True" ]

# --- the merged list, paged ---------------------------------------------------------------------
after=""
pages=0
: >"$dir/rows"
while :; do
	if [ -n "$after" ]; then
		ev list failed --table outbox --format json --limit 7 --after "$after" >"$dir/p.json" 2>"$dir/p.err"
	else
		ev list failed --table outbox --format json --limit 7 >"$dir/p.json" 2>"$dir/p.err"
	fi
	python3 -c "
import json,sys
for r in json.load(open(sys.argv[1])): print(r['source'], r['id'], r['retry_count'], r['next_retry_time'] or '')" "$dir/p.json" >>"$dir/rows"
	pages=$((pages + 1))
	after=$(sed -n 's/^-- more outbox rows: --table outbox --after //p' "$dir/p.err")
	[ -z "$after" ] || [ $pages -gt 100 ] && break
done
for s in sa sb sc; do
	sql "$s" -e "SELECT '$s', id FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3"
done | tr '\t' ' ' | sort >"$dir/want"
cut -d' ' -f1,2 "$dir/rows" | sort >"$dir/got"
check "the merged list pages through every failed row of every source once ($(wc -l <"$dir/got") rows, $pages pages)" cmp -s "$dir/want" "$dir/got"
# The list's order: next_retry_time (NULL first), retry_count, then id, whatever the source.
python3 - "$dir/rows" <<'PY' && ok "the merged rows are in the list's order across pages" || not_ok "the merged rows are in the list's order across pages"
import sys
rows = [(l + ' ').split(' ', 3) for l in open(sys.argv[1]).read().splitlines()]
keys = [((r[3].strip() != ''), r[3].strip(), int(r[2]), int(r[1])) for r in rows]
sys.exit(0 if keys == sorted(keys) else 1)
PY
ev list failed --table outbox --after 'v1:3:~' >"$dir/o" 2>&1
check "a one-source cursor is refused with several sources" grep -q "bad cursor" "$dir/o"
ev list failed --table outbox --after 'm1,zz=-' >"$dir/o" 2>&1
check "a cursor naming an unknown source is refused" grep -q "not one of the sources" "$dir/o"

# --- show and the event's identity ----------------------------------------------------------------
ev show C-OB-0132 >"$dir/s.txt" 2>&1
check "show finds an event on the one source that has it, and names it" grep -q "== outbox event on source sc" "$dir/s.txt"
ev show OB-0135 --format json >"$dir/s.json" 2>&1
got=$(python3 -c "import json,sys; print(' '.join(sorted(r['source'] for r in json.load(open(sys.argv[1])) if r['table'] == 'outbox')))" "$dir/s.json")
check "show lists the event of each source that has it ($got)" [ "$got" = "sa sc" ]

# --- actions: the source that holds the event --------------------------------------------------------
ev retry OB-0135 --table outbox --now --yes >"$dir/a.out" 2>&1
rc=$?
check "an event_no on two sources is refused without --source (exit $rc)" sh -c "[ $rc -ne 0 ] && grep -q 'is on source sa and on source sc' '$dir/a.out'"
before=$(sql sc -e "SELECT CONCAT(publish_status, ' ', version) FROM biz_outbox_event WHERE id = 136")
ev retry C-OB-0136 --table outbox --now --yes --include-protected >"$dir/a.out" 2>&1
rc=$?
after_row=$(sql sc -e "SELECT CONCAT(publish_status, ' ', version) FROM biz_outbox_event WHERE id = 136")
check "the retry of sc's own event applies there (exit $rc; $before -> $after_row)" \
	sh -c "[ $rc -eq 0 ] && [ '$after_row' = '0 $((${before#* } + 1))' ]"
check "it says which source it acted on" grep -q "source sc holds the event" "$dir/a.out"
aud=$(sql sc -e "SELECT CONCAT(source, ' ', action, ' ', result) FROM evtop_audit WHERE event_id = 136")
check "the audit row names the source ($aud)" [ "$aud" = "sc retry_now applied" ]
check "the audit file names the source" grep -q '"source":"sc".*"event_no":"C-OB-0136"' "$dir/state/evtop/audit.jsonl"
other=$(sql sa -e "SELECT COUNT(*) FROM evtop_audit")
check "no other source was written ($other audit rows on sa)" [ "$other" = 0 ]
ev retry --list failed --table outbox --dry-run >"$dir/a.out" 2>&1
check "a bulk action asks for one source" grep -q "one source at a time" "$dir/a.out"

# --- check and doctor ---------------------------------------------------------------------------
total_failed=0
for s in sa sb sc; do
	c=$(sql "$s" -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3")
	total_failed=$((total_failed + c))
done
ev check --table outbox --critical "failed >= $total_failed" >"$dir/c.out" 2>&1
rc=$?
check "check compares the merged figure (failed >= $total_failed is critical: exit $rc)" [ $rc -eq 2 ]
ev check --table outbox --critical "failed > $total_failed" >"$dir/c.out" 2>&1
rc=$?
check "and failed > $total_failed is not (exit $rc)" [ $rc -eq 0 ]
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/down.conf" check --table outbox --critical "failed > 1" >"$dir/c.out" 2>&1
rc=$?
check "with a source down, a threshold the others already cross is still critical (exit $rc)" \
	sh -c "[ $rc -eq 2 ] && grep -q 'no answer from sd' '$dir/c.out'"
ev doctor --format json >"$dir/doc.json" 2>&1
got=$(python3 -c "import json,sys; print(' '.join(r['source'] + ':' + r['endpoint'] for r in json.load(open(sys.argv[1]))))" "$dir/doc.json")
check "doctor reports on each source ($got)" [ "$got" = "sa:primary sb:primary sc:primary" ]
ev --source sa,sb dashboard --table outbox --format json >"$dir/two.json" 2>&1
got=$(python3 -c "import json,sys; print(' '.join(s['source'] for s in json.load(open(sys.argv[1]))[0]['sources']))" "$dir/two.json")
check "--source a,b narrows to those ($got)" [ "$got" = "sa sb" ]
ev -h 127.0.0.1 dashboard >"$dir/o" 2>&1
check "-h with several sources is refused: it names one server" grep -q "name one with --source" "$dir/o"

# --- the console: one source at a time, switching ---------------------------------------------------
cat >"$dir/console.keys" <<EOF
screen $dir/all.txt
key S
screen $dir/first.txt
key S
screen $dir/second.txt
type :source sc
key Enter
screen $dir/third.txt
type :source nope
key Enter
screen $dir/unknown.txt
key S
screen $dir/all-again.txt
key Down
key d
screen $dir/drill.txt
key q
EOF
XDG_STATE_HOME="$dir/state" "$evtop" --config "$conf" --script "$dir/console.keys" --screen 140x24 >"$dir/console.out" 2>&1
rc=$?
check "the scripted console over three sources ends normally (exit $rc)" [ $rc -eq 0 ]
shot() { cat "$dir/$1.txt" 2>/dev/null; }
pending() { sql "$1" -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 0"; }
rows=$(shot all | sed -n '/outbox (/,/^TOTAL/p' | awk '$1 ~ /^s[abc]$/ {print $1 "=" $2}' | sort | tr '\n' ' ')
want="sa=$(pending sa) sb=$(pending sb) sc=$(pending sc) "
shot all | grep -q "all 3 sources" && [ "$rows" = "$want" ] &&
	ok "the console opens on every source at once, a row each ($rows)" ||
	not_ok "the console opens on every source at once, a row each ($rows; want $want): $(shot all | head -6)"
total=$(($(pending sa) + $(pending sb) + $(pending sc)))
shot all | grep -q "^TOTAL  *$total " && ok "its TOTAL is the sum ($total)" || not_ok "its TOTAL is the sum ($total): $(shot all | grep '^TOTAL')"
shot first | grep -q "source sa \[1/3\]" && ok "S goes to the first source" || not_ok "S goes to the first source: $(shot first | head -1)"
shot second | grep -q "source sb \[2/3\]" && ok "S again to the next" || not_ok "S again to the next: $(shot second | head -1)"
shot second | grep -Eq "^TOTAL( \([0-9]+ groups\))? +$(pending sb) " && ok "its dashboard shows that source's figures" ||
	not_ok "its dashboard shows that source's figures: $(shot second | grep TOTAL)"
shot third | grep -q "source sc \[3/3\]" && ok ":source NAME switches to it" || not_ok ":source NAME switches to it"
shot unknown | grep -q "no source 'nope'" && ok ":source with an unknown name says so" || not_ok ":source with an unknown name says so"
shot all-again | grep -q "all 3 sources" && ok "S after the last source is every source again" || not_ok "S after the last source is every source again"
second_row=$(shot all-again | sed -n '/outbox (/,/^TOTAL/p' | awk '$1 ~ /^s[abc]$/ {print $1}' | sed -n 2p)
shot drill | grep -q "source $second_row \[" && ok "d on a source's row opens its dashboard ($second_row)" ||
	not_ok "d on a source's row opens its dashboard ($second_row): $(shot drill | head -1)"

# A source down: the others still shown, the missing one marked.
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/down.conf" --script "$dir/console.keys" --screen 140x24 >"$dir/console.out" 2>&1
shot all | grep -q "3 of 4 sources answer" && shot all | grep -q "sd: no answer" &&
	shot all | grep -q "^sd  *?  *?" && shot all | grep -q "^TOTAL  *≥$total " &&
	ok "with a source down the console marks it, shows the rest, the total a lower bound" ||
	not_ok "with a source down the console marks it, shows the rest, the total a lower bound: $(shot all)"

# --- the console's merged list: every source's failed rows, a cursor per source ------------------
# Seven rows a page: the merged list is walked to its end with PgDn (the first goes to the
# page's last row, the second turns the page), every page's rows collected from the screen.
{
	cat "$conf"
	printf '[evtop]\npage_size = 7\n'
} >"$dir/paged.conf"
{
	printf 'key End\nkey Right\nkey Right\nkey Right\nkey Enter\nscreen %s/mpage-0.txt\n' "$dir"
	for i in $(seq 1 14); do
		printf 'key PgDn\nkey PgDn\nscreen %s/mpage-%d.txt\n' "$dir" "$i"
	done
	echo "key q"
	echo "key q"
} >"$dir/merged.keys"
rm -f "$dir"/mpage-*.txt
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/paged.conf" --script "$dir/merged.keys" --screen 140x24 >"$dir/console.out" 2>&1
rc=$?
check "the scripted walk through the merged list ends normally (exit $rc)" [ $rc -eq 0 ]
grep -q "outbox (biz_outbox_event) · failed · every source (3) · [0-9][0-9]* rows · page 1" "$dir/mpage-0.txt" &&
	grep -q "^  SOURCE  *EVENT_NO" "$dir/mpage-0.txt" &&
	ok "Enter on the TOTAL row's FAIL cell opens the merged list, a SOURCE column first" ||
	not_ok "Enter on the TOTAL row's FAIL cell opens the merged list, a SOURCE column first: $(head -4 "$dir/mpage-0.txt")"
# Each page once (the last is shot again when PgDn finds no more), its rows in screen order.
: >"$dir/mrows"
seen=""
for i in $(seq 0 14); do
	f="$dir/mpage-$i.txt"
	[ -f "$f" ] || continue
	pg=$(sed -n '2s/.* · page \([0-9]*\).*/\1/p' "$f")
	case " $seen " in *" $pg "*) continue ;; esac
	seen="$seen $pg"
	awk '$1 ~ /^s[abc]$/ {print $1, $2, ($5 == "-" ? "-" : $5 "T" $6)}' "$f" >>"$dir/mrows"
done
for s in sa sb sc; do
	sql "$s" -e "SELECT '$s', event_no FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3"
done | tr '\t' ' ' | sort >"$dir/mwant"
cut -d' ' -f1,2 "$dir/mrows" | sort >"$dir/mgot"
nrows=$(wc -l <"$dir/mgot")
[ "$nrows" -gt 14 ] && cmp -s "$dir/mwant" "$dir/mgot" &&
	ok "the console's merged list pages through every source's failed rows once ($nrows rows on pages$seen)" ||
	not_ok "the console's merged list pages through every source's failed rows once ($nrows rows on pages$seen): $(diff "$dir/mwant" "$dir/mgot" | head -5)"
# Its title counts them: the sum of every source's count.
titled=$(sed -n '2s/.* · every source (3) · \([0-9]*\) rows · .*/\1/p' "$dir/mpage-0.txt")
check "the merged list's title counts every source's rows ($titled, $(wc -l <"$dir/mwant") in the sources)" [ "$titled" = "$(wc -l <"$dir/mwant" | tr -d ' ')" ]
# In the list's order across the sources and the pages: no retry time first, then by time.
python3 - "$dir/mrows" <<'PY' && ok "its rows are in the list's order (NEXT_RETRY, NULL first)" || not_ok "its rows are in the list's order (NEXT_RETRY, NULL first)"
import sys
days = [l.split()[2] for l in open(sys.argv[1]).read().splitlines()]
keys = [(d != '-', d) for d in days]
sys.exit(0 if keys == sorted(keys) else 1)
PY

# An action on a merged row goes to that row's source (its primary), and only there.
row() { sql "$1" -e "SELECT CONCAT(publish_status, ' ', version) FROM biz_outbox_event WHERE event_no = 'OB-0142'"; }
before_sa=$(row sa)
before_sb=$(row sb)
cat >"$dir/act.keys" <<KEYS
key End
key Right
key Right
key Right
key Enter
key /
type event_no=OB-0142
key Enter
screen $dir/act-list.txt
key Down
key r
screen $dir/act-confirm.txt
key y
screen $dir/act-done.txt
key Home
key Enter
screen $dir/act-detail.txt
key q
key q
key q
KEYS
XDG_STATE_HOME="$dir/state" "$evtop" --config "$conf" --script "$dir/act.keys" --screen 140x24 >"$dir/console.out" 2>&1
got=$(awk '$1 ~ /^s[abc]$/ {print $1 ":" $2}' "$dir/act-list.txt" | tr '\n' ' ')
check "a filter narrows the merged list: the event_no on each source that has it ($got)" [ "$got" = "sa:OB-0142 sb:OB-0142 " ]
check "the confirmation names the row's source" grep -q "retry_now OB-0142 on outbox (biz_outbox_event) of source sb?" "$dir/act-confirm.txt"
after_sa=$(row sa)
after_sb=$(row sb)
check "the retry applied on sb's row ($before_sb -> $after_sb), and sa's is untouched ($before_sa -> $after_sa)" \
	[ "$after_sb" = "0 $((${before_sb#* } + 1))" -a "$after_sa" = "$before_sa" ]
check "the console says it applied" grep -q "applied: retry_now OB-0142" "$dir/act-done.txt"
aud=$(sql sb -e "SELECT CONCAT(source, ' ', action, ' ', result) FROM evtop_audit WHERE event_no = 'OB-0142'")
check "sb's audit row names its source ($aud)" [ "$aud" = "sb retry_now applied" ]
aud=$(sql sa -e "SELECT COUNT(*) FROM evtop_audit WHERE event_no = 'OB-0142'")
check "sa has no audit row of it ($aud)" [ "$aud" = 0 ]
check "a merged row's detail names its source" grep -q "outbox event OB-0142 on source sa" "$dir/act-detail.txt"

# A source's row: its own list; a source down: the others' rows, the missing one named.
cat >"$dir/down.keys" <<KEYS
key End
key Right
key Right
key Right
key Enter
screen $dir/down-merged.txt
key q
key Home
key Enter
screen $dir/down-one.txt
key q
KEYS
# :show on every source: an event_no two sources hold, one only sc has, one none has.
for shot in OB-0135:show-both C-OB-0136:show-one NOPE-1:show-none; do
	printf 'type :show %s\nkey Enter\nscreen %s/%s.txt\nkey q\n' "${shot%%:*}" "$dir" "${shot#*:}"
done >>"$dir/down.keys"
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/down.conf" --script "$dir/down.keys" --screen 140x24 >"$dir/console.out" 2>&1
grep -q "⚠ sd: no answer" "$dir/down-merged.txt" && grep -q "^  sa  *OB-" "$dir/down-merged.txt" &&
	ok "a source down: the merged list names it and shows the others' rows" ||
	not_ok "a source down: the merged list names it and shows the others' rows: $(head -5 "$dir/down-merged.txt")"
# The others' rows fit one page: no next page offered for the one that did not answer.
check "... and offers no next page for it" sh -c "! grep -q 'more: PgDn' '$dir/down-merged.txt'"
grep -q "outbox (biz_outbox_event) · failed · source s[abc] · [0-9][0-9]* rows · by next_retry_time ↑ · page 1" "$dir/down-one.txt" && ! grep -q "SOURCE" "$dir/down-one.txt" &&
	ok "Enter on a source's row opens that source's list" ||
	not_ok "Enter on a source's row opens that source's list: $(head -3 "$dir/down-one.txt")"
grep -q "outbox event OB-0135 on source sa" "$dir/show-both.txt" && grep -q "OB-0135 is on source sa and also on sc" "$dir/show-both.txt" &&
	ok ":show with every source looks on each: the first that has it, the others named" ||
	not_ok ":show with every source looks on each: the first that has it, the others named: $(head -2 "$dir/show-both.txt"; tail -2 "$dir/show-both.txt")"
grep -q "outbox event C-OB-0136 on source sc" "$dir/show-one.txt" && grep -q "found on sc; no answer from sd" "$dir/show-one.txt" &&
	ok ":show finds sc's own event, and says sd did not answer" ||
	not_ok ":show finds sc's own event, and says sd did not answer: $(head -2 "$dir/show-one.txt"; tail -2 "$dir/show-one.txt")"
check ":show of an event no source has says so" grep -q "no event NOPE-1 in either table of any source that answered — sd:" "$dir/show-none.txt"

# A source whose config names one table: the other is not watched there (no row, no note).
sed 's|^defaults_file = \(.*\)/sb.cnf$|defaults_file = \1/sb.cnf\ntables = outbox|' "$conf" >"$dir/tables.conf"
printf 'screen %s/t-all.txt\nkey Tab\nkey End\nkey Right\nkey Right\nkey Right\nkey Enter\nscreen %s/t-merged.txt\nkey q\nkey q\n' "$dir" "$dir" >"$dir/tables.keys"
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/tables.conf" --script "$dir/tables.keys" --screen 140x30 >"$dir/console.out" 2>&1
ob=$(sed -n '/outbox (/,/^TOTAL/p' "$dir/t-all.txt" | awk '$1 ~ /^s[abc]$/ {print $1}' | sort | tr '\n' ' ')
msg=$(sed -n '/message (/,/^TOTAL/p' "$dir/t-all.txt" | awk '$1 ~ /^s[abc]$/ {print $1}' | sort | tr '\n' ' ')
[ "$ob" = "sa sb sc " ] && [ "$msg" = "sa sc " ] && ! grep -q "sb: no such table" "$dir/t-all.txt" &&
	ok "tables = outbox: sb has an outbox row, no message row, and no note ($ob/ $msg)" ||
	not_ok "tables = outbox: sb has an outbox row, no message row, and no note ($ob/ $msg): $(cat "$dir/t-all.txt")"
got=$(awk '$1 ~ /^s[abc]$/ {print $1}' "$dir/t-merged.txt" | sort -u | tr '\n' ' ')
grep -q "message (biz_message_event) · failed · every source (3)" "$dir/t-merged.txt" && [ "$got" = "sa sc " ] && ! grep -q "⚠" "$dir/t-merged.txt" &&
	ok "... and the merged message list reads only the sources that have it ($got)" ||
	not_ok "... and the merged message list reads only the sources that have it ($got): $(head -5 "$dir/t-merged.txt")"

# The breakdown of the merged list sums each source's; Enter on a group opens the merged list
# of that group.
printf 'key End\nkey Right\nkey Right\nkey Right\nkey Enter\nkey b\nscreen %s/g-all.txt\nkey Enter\nscreen %s/g-list.txt\nkey q\nkey q\nkey q\n' "$dir" "$dir" >"$dir/group.keys"
XDG_STATE_HOME="$dir/state" "$evtop" --config "$conf" --script "$dir/group.keys" --screen 140x40 >"$dir/console.out" 2>&1
want=0
for s in sa sb sc; do
	c=$(sql "$s" -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3 AND fail_reason = 'timeout'")
	want=$((want + c))
done
got=$(awk '$NF == "timeout" && NF == 4 {print $1}' "$dir/g-all.txt")
grep -q "failed by fail_reason · every source (3)" "$dir/g-all.txt" && [ "$got" = "$want" ] &&
	ok "b on the merged list: each reason's count summed over the sources (timeout $got)" ||
	not_ok "b on the merged list: each reason's count summed over the sources (timeout $got, want $want): $(head -8 "$dir/g-all.txt")"
top=$(sed -n '4p' "$dir/g-all.txt" | awk '{print $NF}')
rows=$(awk '$1 ~ /^s[abc]$/' "$dir/g-list.txt" | wc -l)
top_count=$(sed -n '4p' "$dir/g-all.txt" | awk '{print $1}')
grep -q "failed · every source (3) · fail_reason~\"$top\"" "$dir/g-list.txt" && [ "$rows" -ge "$top_count" ] &&
	ok "Enter on its first group opens the merged list of it ($top: $rows rows)" ||
	not_ok "Enter on its first group opens the merged list of it ($top: $rows rows, want >= $top_count): $(head -3 "$dir/g-list.txt")"

# --unmask over three sources: each source's evtop_access_log records the events read from it.
ev list failed --table outbox --format json --limit 6 --unmask="INC-SRC merged" >"$dir/u.json" 2>"$dir/u.err"
check "list --unmask over three sources exits 0" [ $? -eq 0 ]
for s in sa sb sc; do
	want=$(jq -r --arg s "$s" '[.[] | select(.source == $s) | .event_no] | sort | join(",")' "$dir/u.json")
	got=$(sql "$s" -e "SELECT IFNULL(GROUP_CONCAT(event_no ORDER BY event_no SEPARATOR ','), '') FROM evtop_access_log WHERE reason = 'INC-SRC merged' AND source = '$s' AND shown_count = (SELECT COUNT(*) FROM evtop_access_log WHERE reason = 'INC-SRC merged')")
	check "... $s's access log holds the events read from $s ($want)" test "$got" = "$want"
done

# archive over two sources whose outboxes are named differently: each run reads and names its
# own source's table (the second once took the first's name).
sql -e "DROP DATABASE IF EXISTS sd; CREATE DATABASE sd" || exit 99
cat "$src"/sql/mariadb/schema.sql "$src"/sql/mariadb/audit.sql | sql sd || exit 99
{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } | sql sd || exit 99
sql sd -e "RENAME TABLE biz_outbox_event TO stock_outbox_event" || exit 99
sed 's/^database=sa$/database=sd/' "$dir/sa.cnf" >"$dir/sd.cnf" && chmod 600 "$dir/sd.cnf" || exit 99
cat >"$dir/two.conf" <<EOF
[source sa]
defaults_file = $dir/sa.cnf
[source sd]
defaults_file = $dir/sd.cnf
outbox_table = stock_outbox_event
EOF
XDG_STATE_HOME="$dir/state" "$evtop" --config "$dir/two.conf" archive --table outbox --older-than 30d --dry-run </dev/null >"$dir/a2.out" 2>"$dir/a2.err"
check "archive --dry-run over two sources exits 0" [ $? -eq 0 ]
check "... names sa's table for sa" grep -q "^archive biz_outbox_event (source sa): " "$dir/a2.out"
check "... and sd's own table for sd" grep -q "^archive stock_outbox_event (source sd): " "$dir/a2.out"

tap_done
