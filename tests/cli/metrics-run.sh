#!/bin/sh
# `evtop metrics` start to end, short enough for `make check-valgrind` (which runs every evtop
# here under valgrind: an error or a leak is exit 1): --once on the hostile rows (in the
# model's tables, and in the VARBINARY variant that holds invalid UTF-8), then a
# server with basic auth over a few refreshes and scrapes, a row changed between them, and a
# clean stop on SIGTERM (exit 0).
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
XDG_CONFIG_HOME=$dir/config
export XDG_CONFIG_HOME
for t in curl python3 mkpasswd promtool; do
	command -v $t >/dev/null 2>&1 && continue
	[ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ] && { echo "no $t" >&2; exit 99; }
	exit 77
done

sql <"$src/tests/data/variant-schema.sql" || { echo "cannot load the variant schema"; exit 99; }
{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/hostile.sql"; } |
	sql >/dev/null || { echo "cannot load tests/data/hostile.sql"; exit 99; }
for tables in model variant; do
	vt=""
	[ $tables = variant ] && vt="--outbox-table hostile_outbox_event --message-table hostile_message_event"
	# shellcheck disable=SC2086
	"$evtop" --defaults-file="$cnf" $vt metrics --once >"$dir/once.prom" 2>"$dir/once.err"
	rc=$?
	check "$tables tables: --once exits 0 ($rc)" [ $rc = 0 ]
	check "$tables tables: --once wrote the backlog" grep -q '^evtop_events{source="default",table="outbox"' "$dir/once.prom"
	check "$tables tables: every line is a sample or a comment" sh -c "! grep -qv '^evtop_\|^# HELP evtop_\|^# TYPE evtop_' '$dir/once.prom'"
	promtool check metrics <"$dir/once.prom" >"$dir/lint" 2>&1
	rc=$?
	[ -s "$dir/lint" ] && rc="$rc: $(head -3 "$dir/lint")"
	check "$tables tables: promtool check metrics is clean ($rc)" [ "$rc" = 0 ]
done
check "invalid UTF-8 in an event_type became U+FFFD" grep -q "$(printf '\357\277\275')" "$dir/once.prom"

printf 'prom:%s\n' "$(mkpasswd -m yescrypt pw)" >"$dir/users"
chmod 600 "$dir/users"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$evtop" --defaults-file="$cnf" metrics --listen "127.0.0.1:$port" --interval 1s \
	--basic-auth-file "$dir/users" --textfile "$dir/evtop.prom" 2>"$dir/m.err" &
pid=$!
got=0
i=0
while [ $i -lt 300 ] && [ $got -lt 3 ]; do
	sleep 0.5
	i=$((i + 1))
	if curl -sf -u prom:pw "http://127.0.0.1:$port/metrics" >"$dir/s.prom" 2>/dev/null &&
		grep -q '^evtop_up{source="default"} 1' "$dir/s.prom"; then
		got=$((got + 1))
		[ $got = 1 ] && sql -e "UPDATE biz_outbox_event SET publish_status = 2 WHERE publish_status = 0 LIMIT 3"
		sleep 1
	fi
done
check "three scrapes served ($got)" [ $got = 3 ]
code=$(curl -s -o /dev/null -w '%{http_code}' -u prom:no "http://127.0.0.1:$port/metrics")
check "a wrong password is refused ($code)" [ "$code" = 401 ]
check "the textfile is written beside" grep -q '^evtop_up' "$dir/evtop.prom"
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM: a clean stop, exit 0 ($rc)" [ $rc = 0 ]
[ $rc = 0 ] || cat "$dir/m.err"
tap_done
