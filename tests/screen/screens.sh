#!/bin/sh
# Screen tests: the real console, driven by scripts of keys and commands, rendering into a
# virtual terminal (no tty), against the test database with the server's clock pinned.
# Each script's `screen NAME` dumps are compared exactly with tests/screen/expected/NAME.
# EVTOP_SCREEN_UPDATE=1 writes the expected files anew (review them with git diff).
set -u
evtop=${EVTOP:?}
src=${EVTOP_SRCDIR:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
now='2026-06-01 12:00:00'
fails=0
n=0

{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/seed.sql"; } | "$client" --defaults-file="$cnf" ||
	{ echo "cannot load the seed"; exit 99; }
# A soft-deleted event with a 1 MB payload: lists and counts never see it, :show does.
"$client" --defaults-file="$cnf" -e "INSERT INTO biz_outbox_event (id, event_no, aggregate_type,
  aggregate_id, event_type, event_source, publish_channel, event_payload, publish_status, deleted,
  create_time, update_time) VALUES (900, 'OB-1MB', 'ORDER', '900', 'ORDER_CREATED', 'order-service',
  'MQ', JSON_OBJECT('items', (SELECT JSON_ARRAYAGG(JSON_OBJECT('sku', CONCAT('SKU-', seq), 'qty', seq,
  'price', 199.00, 'name', '订单商品')) FROM seq_1_to_14000)), 2, 1, '2026-05-01 00:00:00',
  '2026-05-01 00:00:00')" || { echo "cannot insert the 1 MB payload"; exit 99; }
# 6,000 failed outbox rows in tables of their own (tests/screen/scripts/mirror-write):
# the mirror then reads the failed range every fifth refresh only.
"$client" --defaults-file="$cnf" -e "CREATE TABLE many_outbox_event LIKE biz_outbox_event;
  CREATE TABLE many_message_event LIKE biz_message_event; INSERT INTO many_outbox_event (id,
  event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload,
  publish_status, retry_count, fail_reason, version, next_retry_time, create_time, update_time)
  SELECT seq, CONCAT('OB-MANY-', seq), 'ORDER', seq, IF(seq % 3 = 0, 'ORDER_PAID', 'ORDER_CREATED'),
  'order-service', 'MQ', '{}', IF(seq <= 6000, 3, 0), IF(seq <= 6000, 1, 0), IF(seq <= 6000,
  'HTTP 503', NULL), 0, IF(seq <= 6000, '2026-06-01 13:00:00', NULL), '$now' - INTERVAL 6010 -
  seq SECOND, '$now' - INTERVAL 6010 - seq SECOND FROM seq_1_to_6010" || { echo "cannot make the many_ tables"; exit 99; }
# 290 failed outbox rows with payloads (tests/screen/scripts/search.keys): a needle in every
# 97th, and the message table with one row, for a payload search stopped at its cap.
"$client" --defaults-file="$cnf" -e "CREATE TABLE search_outbox_event LIKE biz_outbox_event;
  CREATE TABLE search_message_event LIKE biz_message_event; INSERT INTO search_outbox_event (id,
  event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload,
  event_headers, publish_status, retry_count, fail_reason, version, next_retry_time, create_time,
  update_time) SELECT seq, CONCAT('OB-S-', seq), 'ORDER', seq, 'ORDER_CREATED', 'order-service',
  'MQ', JSON_OBJECT('orderId', IF(seq % 97 = 0, 'NEEDLE-7', CONCAT('O-', seq)), 'buyer',
  JSON_OBJECT('用户', IF(seq = 5, '张三', '李四'))), IF(seq = 5, '{\"x-tenant\":\"T1\"}', NULL), 3, 1,
  'HTTP 503', 0, '$now' + INTERVAL seq SECOND, '$now' - INTERVAL 1 DAY, '$now' - INTERVAL 1 DAY
  FROM seq_1_to_290" || { echo "cannot make the search_ tables"; exit 99; }
# Personal data (tests/screen/scripts/mask.keys, mask-off.keys): a failed outbox row whose
# payload, headers, aggregate_id and fail_reason hold a phone, an ID number, a card, an e-mail.
"$client" --defaults-file="$cnf" --default-character-set=utf8mb4 -e "CREATE TABLE pii_outbox_event LIKE biz_outbox_event;
  CREATE TABLE pii_message_event LIKE biz_message_event; INSERT INTO pii_outbox_event (id,
  event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload,
  event_headers, publish_status, retry_count, fail_reason, version, next_retry_time, create_time,
  update_time) VALUES (1, 'OB-PII-1', 'ORDER', '13812345678', 'ORDER_CREATED', 'order-service',
  'MQ', '{\"orderId\": \"202605130000000001\", \"buyer\": {\"name\": \"张三\", \"phone\": \"13812345678\",
  \"idCard\": \"11010519491231002X\"}, \"payCard\": \"6222021234567894\", \"note\": \"mail alice@example.com\",
  \"amount\": 199.00}', '{\"token\": \"tok-abcdef123456\"}', 3, 1, '联系 13987654321 失败', 0,
  '$now' + INTERVAL 1 MINUTE, '$now' - INTERVAL 2 MINUTE, '$now' - INTERVAL 2 MINUTE)" ||
	{ echo "cannot make the pii_ tables"; exit 99; }
# A copy of the seed in tables of their own (tests/screen/scripts/sort-follow.keys): the
# script changes their figures between refreshes.
"$client" --defaults-file="$cnf" -e "CREATE TABLE sort_outbox_event LIKE biz_outbox_event;
  CREATE TABLE sort_message_event LIKE biz_message_event;
  INSERT INTO sort_outbox_event SELECT * FROM biz_outbox_event;
  INSERT INTO sort_message_event SELECT * FROM biz_message_event" ||
	{ echo "cannot make the sort_ tables"; exit 99; }
# Two sources in tables of their own (tests/screen/scripts/count.keys): small has 11 failed
# outbox rows (5 ORDER_PAID; a twelfth is deleted) and 3 pending; big 7 failed and 100,001
# pending, more than a list's count reads.
"$client" --defaults-file="$cnf" -e "CREATE TABLE count_a_outbox_event LIKE biz_outbox_event;
  CREATE TABLE count_a_message_event LIKE biz_message_event;
  CREATE TABLE count_b_outbox_event LIKE biz_outbox_event;
  CREATE TABLE count_b_message_event LIKE biz_message_event;
  INSERT INTO count_a_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload, publish_status, retry_count, deleted, next_retry_time, create_time, update_time) SELECT seq, CONCAT('CA-', seq), 'ORDER', seq, IF(seq <= 5, 'ORDER_PAID', 'ORDER_CREATED'), 'test', 'MQ', '{}', IF(seq <= 12, 3, 0), 1, seq = 12, '2026-06-01 11:00:00', '2026-06-01 11:59:00' - INTERVAL seq SECOND, '2026-06-01 11:59:00' FROM seq_1_to_15;
  INSERT INTO count_b_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload, publish_status, retry_count, next_retry_time, create_time, update_time) SELECT seq, CONCAT('CB-', seq), 'ORDER', seq, IF(seq <= 4, 'ORDER_PAID', 'ORDER_CREATED'), 'test', 'MQ', '{}', IF(seq <= 7, 3, 0), 1, '2026-06-01 11:00:00', '2026-06-01 11:59:00' - INTERVAL seq SECOND, '2026-06-01 11:59:00' FROM seq_1_to_100008" ||
	{ echo "cannot make the count_ tables"; exit 99; }
# Publisher instances in tables of their own (tests/screen/scripts/instances.keys), at the
# pinned clock and the default lease (2m): publisher-01 claimed 30 s ago (3 locks) and holds a
# stuck one of an hour ago; publisher-02 died 15 minutes ago holding 4; publisher-03 claimed 5 s
# ago; publisher-04 only finished its events (no lock left: not seen). The message table's
# processing rows by event_source.
"$client" --defaults-file="$cnf" -e "CREATE TABLE inst_outbox_event LIKE biz_outbox_event;
  CREATE TABLE inst_message_event LIKE biz_message_event; INSERT INTO inst_outbox_event (id,
  event_no, aggregate_type, aggregate_id, event_type, event_source, publish_channel, event_payload,
  publish_status, locked_by, lock_until, last_publish_time, published_time, create_time,
  update_time) SELECT seq, CONCAT('OB-INST-', seq), 'ORDER', seq, 'ORDER_CREATED', 'order-service',
  'MQ', '{}', IF(seq > 9, 2, 1), ELT(LEAST(seq, 10), 'publisher-01', 'publisher-01',
  'publisher-01', 'publisher-01', 'publisher-02', 'publisher-02', 'publisher-02', 'publisher-02',
  'publisher-03', NULL), IF(seq > 9, NULL, '$now' - INTERVAL ELT(seq, 30, 30, 30, 3600, 900, 900,
  900, 900, 5) SECOND + INTERVAL 2 MINUTE), '$now' - INTERVAL ELT(LEAST(seq, 10), 30, 30, 30,
  3600, 900, 900, 900, 900, 5, 60) SECOND, IF(seq > 9, '$now' - INTERVAL 59 SECOND, NULL), '$now'
  - INTERVAL IF(seq > 9, 2, 120) MINUTE, '$now' - INTERVAL 1 MINUTE FROM seq_1_to_12;
  INSERT INTO inst_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, last_handle_time, create_time, update_time) VALUES
  (1, 'MSG-INST-1', 'ORDER_CREATED', 'ORDER', 'O1', 'order-service', '{}', 1, '$now' - INTERVAL
  20 MINUTE, '$now' - INTERVAL 1 HOUR, '$now' - INTERVAL 20 MINUTE), (2, 'MSG-INST-2',
  'ORDER_CREATED', 'ORDER', 'O2', 'order-service', '{}', 1, '$now' - INTERVAL 1 MINUTE, '$now' -
  INTERVAL 1 HOUR, '$now' - INTERVAL 1 MINUTE), (3, 'MSG-INST-3', 'PAY_SUCCESS', 'PAYMENT', 'P1',
  'pay-service', '{}', 1, '$now' - INTERVAL 30 SECOND, '$now' - INTERVAL 2 MINUTE, '$now' -
  INTERVAL 30 SECOND)" || { echo "cannot make the inst_ tables"; exit 99; }
# Another copy (tests/screen/scripts/chart.keys): its backlog grows between refreshes.
"$client" --defaults-file="$cnf" -e "CREATE TABLE chart_outbox_event LIKE biz_outbox_event;
  CREATE TABLE chart_message_event LIKE biz_message_event;
  INSERT INTO chart_outbox_event SELECT * FROM biz_outbox_event;
  INSERT INTO chart_message_event SELECT * FROM biz_message_event" ||
	{ echo "cannot make the chart_ tables"; exit 99; }
# The account of zh-select-only.keys: SELECT only, on the whole database.
"$client" --defaults-file="$cnf" -e "CREATE USER IF NOT EXISTS 'evtop_select'@'localhost'
  IDENTIFIED BY 'select-pw'; GRANT SELECT ON \`${EVTOP_TEST_DB:?}\`.* TO 'evtop_select'@'localhost'" ||
	{ echo "cannot make the SELECT-only account"; exit 99; }
# evtop's sessions read [evtop]: pin NOW() there, re-applied on every reconnect.
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"|" "$cnf" >"$dir/pinned.cnf"

run() { # run SCRIPT SIZE [ARGS]
	script=$1
	size=$2
	extra=${3:-}
	name=$(basename "$script" .keys)
	mkdir -p "$dir/out/$name"
	# The script's `screen X` lines write into the run's own folder.
	sed "s|^\(!\{0,1\}\)screen \(.*\)|\1screen $dir/out/$name/\2|" "$script" >"$dir/$name.keys"
	# "# lang: zh_CN.UTF-8" runs the script in the Chinese interface; "# ambiguous: 2" says
	# its config draws East Asian Ambiguous characters two cells wide (ambiguous_width = 2).
	lang=$(sed -n 's/^# lang: *//p' "$script" | head -n 1)
	lang=${lang:-C.UTF-8}
	amb=$(sed -n 's/^# ambiguous: *//p' "$script" | head -n 1)
	[ "$lang" = C.UTF-8 ] || zh_ready
	(cd "$dir" && LANG=$lang LC_ALL=$lang TERM=xterm-256color XDG_STATE_HOME="$dir/state" \
		"$evtop" --defaults-file="$dir/pinned.cnf" --script "$dir/$name.keys" --screen "$size" $extra \
		</dev/null >"$dir/$name.stdout" 2>"$dir/$name.stderr")
	rc=$?
	n=$((n + 1))
	[ -n "${EVTOP_SCREEN_KEEP:-}" ] && cp -r "$dir/out/$name" "$EVTOP_SCREEN_KEEP/" 2>/dev/null
	if [ $rc -ne 0 ]; then
		fails=$((fails + 1))
		echo "not ok $n - $name: evtop exited $rc: $(cat "$dir/$name.stderr")"
		return
	fi
	echo "ok $n - $name runs"
	for shot in "$dir/out/$name"/*; do
		[ -f "$shot" ] || continue
		want="$src/tests/screen/expected/$name.$(basename "$shot")"
		# The socket lives in a temporary folder: name it the same in every run.
		# and how a dead server's connection error reads depends on the moment it is seen.
		# The audit file's path and its local-clock times differ per run too, and so do
		# information_schema's estimates of a table's rows and size in the header.
		sed -i -e "s|${EVTOP_TEST_SOCKET:-/nonexistent}|<socket>|g" -e "s|$dir|<dir>|g" \
			-e 's/[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9:.]*Z/<local time>/g' \
			-e 's/^\(cannot connect to\|connection lost\).*/<connection error>/' \
			-e 's/^\(无法连接到 \|连接断开：\).*/\1<connection error>/' \
			-e 's/~[0-9][0-9.]*[kM]\{0,1\}\( rows\|…\)/~N\1/g' \
			-e 's/\(rows, \)[0-9][0-9.]*\( [KMGT]\{0,1\}B\{0,1\}\)\{0,1\}/\1N/g' \
			-e 's/约 [0-9][0-9.]*[kM]\{0,1\} 行/约 N 行/g' \
			-e 's/\(行，\)[0-9][0-9.]*\( [KMGT]\{0,1\}B\{0,1\}\)\{0,1\}/\1N/g' "$shot"
		n=$((n + 1))
		if [ "${EVTOP_SCREEN_UPDATE:-}" = 1 ]; then
			cp "$shot" "$want"
			echo "ok $n - $name/$(basename "$shot") (written)"
		elif [ ! -f "$want" ]; then
			fails=$((fails + 1))
			echo "not ok $n - $name/$(basename "$shot"): no expected file $want"
			cat "$shot"
		elif cmp -s "$shot" "$want"; then
			echo "ok $n - $name/$(basename "$shot")"
		else
			fails=$((fails + 1))
			echo "not ok $n - $name/$(basename "$shot") differs:"
			diff -u "$want" "$shot"
		fi
		if [ "$lang" != C.UTF-8 ]; then
			# The width the screen was taken at: the script's size, or its last resize.
			cols=$(awk -v want="$(basename "$shot")" -v cols="${size%%x*}" '
				$1 ~ /^!?resize$/ { cols = $2 }
				$1 ~ /^!?screen$/ && $2 == want { print cols; exit }' "$script")
			zh_judge "$name/$(basename "$shot")" "$shot" "${cols:-${size%%x*}}" "${amb:-1}"
		fi
	done
}

# The Chinese interface: the catalogue and the locale once (tests/lib/zh.sh), and every screen
# of a zh_CN script judged twice more: it fits the width in cells (Ambiguous characters as
# wide as the script's terminal draws them, and no character cut), and it has no English word
# left outside identifiers, SQL, values from the database and key names (tests/lib/english.pl;
# the words allowed are the schema's, the seed's, the key and action names, and
# tests/screen/zh-allow).
zh_done=
zh_ready() {
	[ -n "$zh_done" ] && return 0
	. "$src/tests/lib/zh.sh"
	zh_setup "$dir/zh"
	{
		# The schema's words (names of tables, columns, indexes) and the seed's values (the
		# words inside its quoted literals only: its comments are English).
		grep -v '^[[:space:]]*--' "$src/sql/mariadb/schema.sql" "$src/sql/mariadb/audit.sql" |
			sed 's/COMMENT .*//' | grep -o '[A-Za-z][A-Za-z]*'
		grep -o "'[^']*'" "$src/tests/data/seed.sql" | grep -o '[A-Za-z][A-Za-z]*'
		sed -n 's/^[[:space:]]*X([A-Z_]*, "\([^"]*\)".*/\1/p' "$src/src/ui/keys.h" | tr -- '-' '\n'
		# The lists' names (as `evtop list KIND` and the titles name them).
		sed -n 's/^[[:space:]]*X([A-Z_]*, "\([^"]*\)".*/\1/p' "$src/src/core/query.h" | tr -- '-' '\n'
		sed -n 's/.*{\(EV_CTX_[A-Z_]*, \)\{0,1\}"\([^"]*\)",.*/\2/p' "$src/src/ui/keys.c"
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$src/tests/screen/zh-allow"
	} | sort -u >"$dir/zh/allow"
	zh_done=1
}
zh_judge() { # zh_judge NAME SHOT COLUMNS AMBIGUOUS
	n=$((n + 1))
	if out=$(perl "$src/tests/lib/cells.pl" "$3" "$4" "$2"); then
		echo "ok $n - $1 fits $3 cells (ambiguous as $4)"
	else
		fails=$((fails + 1))
		echo "not ok $n - $1 does not fit $3 cells (ambiguous as $4):"
		echo "$out"
	fi
	n=$((n + 1))
	if out=$(perl "$src/tests/lib/english.pl" "$dir/zh/allow" "$2"); then
		echo "ok $n - $1 has no English words"
	else
		fails=$((fails + 1))
		echo "not ok $n - $1 has English words left:"
		echo "$out"
	fi
}

# Configs a script names with "# args: --config NAME.conf", beside the runs (a run of some
# scripts only, as valgrind-screens.sh makes, may have none).
for conf in "$src"/tests/screen/scripts/*.conf; do
	[ ! -f "$conf" ] || cp "$conf" "$dir"/ || exit 99
done
# Every script in name order, then those tests/screen/scripts/order names, in its order (they
# change what later scripts see).
order=$src/tests/screen/scripts/order
last=$( [ -f "$order" ] && sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$order" | awk '{print $1}')
scripts=
for s in "$src"/tests/screen/scripts/*.keys; do
	case " $(echo $last) " in *" $(basename "$s" .keys) "*) continue ;; esac
	scripts="$scripts $s"
done
for name in $last; do
	[ -f "$src/tests/screen/scripts/$name.keys" ] && scripts="$scripts $src/tests/screen/scripts/$name.keys"
done
for s in $scripts; do
	# EVTOP_SCREEN_ONLY=NAME runs one script (and those it needs before it: none, by design).
	[ -n "${EVTOP_SCREEN_ONLY:-}" ] && [ "$(basename "$s" .keys)" != "$EVTOP_SCREEN_ONLY" ] && continue
	size=$(sed -n 's/^# size: *//p' "$s" | head -n 1)
	if grep -q '^shell.*mariadbd\.pid' "$s" && [ ! -f "$dir/../mariadbd.pid" ]; then
		echo "# $(basename "$s"): skipped (it stops the server; this one is not the harness's)"
		continue
	fi
	args=$(sed -n 's/^# args: *//p' "$s" | head -n 1)
	run "$s" "${size:-80x24}" "$args"
done

echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
