#!/bin/sh
# The files evtop opens itself, as a person could leave them: the audit file as a symbolic
# link (refused, the file it points at untouched), as a FIFO (refused at once: `timeout` makes a
# hang a failure), open to others (refused, saying chmod 600); --config as a FIFO, a
# group-writable config (refused, nothing read), a root-owned 0644 one (read); --log-sql
# created 0600 whatever the umask, never through a link, never a FIFO. Every refused write
# leaves the row as it was. (The owners evtop cannot create here, another user's file, are in
# tests/unit/check_files.)
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
mkdir -p "$XDG_STATE_HOME/evtop"
# A hang is a failure, not a blocked suite.
ev() { timeout 60 "$evtop" --defaults-file="$pinned" "$@"; }
mode() { stat -c %a "$1"; }

sql <<'SQL'
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, event_payload, publish_status, retry_count, max_retry_count,
  next_retry_time, fail_reason, version, create_time, update_time)
VALUES (1, 'OB-F1', 'ORDER', 'O1', 'ORDER_CREATED', 'order-service', 'MQ', '{}', 3, 5, 5,
  '2026-06-01 11:00:00', 'mq timeout', 0, '2026-06-01 11:30:00', '2026-06-01 11:00:00');
SQL
row() { sql -e "SELECT CONCAT_WS(' ', publish_status, version) FROM biz_outbox_event WHERE id = 1"; }
retry() { ev retry OB-F1 --now --yes --operator T-1 "$@" </dev/null >"$dir/out" 2>"$dir/err"; }

# --- the audit file ---------------------------------------------------------------------------
printf 'not the audit\n' >"$dir/victim"
ln -s "$dir/victim" "$audit"
retry
check "an audit file that is a symbolic link: the action is refused (exit 1)" [ $? -eq 1 ]
check "... saying why" grep -q "refused: the audit file $audit is a symbolic link, not a regular file" "$dir/err"
check "... the file it points at untouched" [ "$(cat "$dir/victim")" = "not the audit" ]
check "... the link still a link" [ -L "$audit" ]
check "... the row unchanged" [ "$(row)" = "3 0" ]

rm -f "$audit"
mkfifo "$audit"
retry
rc=$?
check "an audit file that is a FIFO: refused at once, no hang (exit 1, not timeout's 124)" [ $rc -eq 1 ]
check "... saying why" grep -q "the audit file $audit is a FIFO, not a regular file" "$dir/err"
check "... the row unchanged" [ "$(row)" = "3 0" ]
rm -f "$audit"

printf '' >"$audit"
chmod 644 "$audit"
retry
check "an audit file others may read: refused (exit 1)" [ $? -eq 1 ]
check "... saying how to fix it" grep -q "(mode 0644).*chmod 600 $audit" "$dir/err"
check "... its mode left alone" [ "$(mode "$audit")" = 644 ]
check "... the row unchanged" [ "$(row)" = "3 0" ]
chmod 600 "$audit"
retry
check "once chmod 600, the action is applied" [ $? -eq 0 ]
check "... the row written" [ "$(row)" = "0 1" ]
check "... and audited" grep -q '"result":"applied"' "$audit"

rm -f "$audit"
sql -e "UPDATE biz_outbox_event SET publish_status = 3 WHERE id = 1"
(umask 0 && retry)
check "a new audit file is 0600 whatever the umask" [ "$(mode "$audit")" = 600 ]

# --- the config file -------------------------------------------------------------------------
mkfifo "$dir/fifo.conf"
ev --config "$dir/fifo.conf" list failed --table outbox >"$dir/out" 2>"$dir/err"
rc=$?
check "--config a FIFO: a usage error at once, no hang (exit 2)" [ $rc -eq 2 ]
check "... saying why" grep -q "the config file $dir/fifo.conf is a FIFO, not a regular file" "$dir/err"

printf '[evtop]\nread_only = true\n' >"$dir/group.conf"
chmod 664 "$dir/group.conf"
ev --config "$dir/group.conf" list failed --table outbox >"$dir/out" 2>"$dir/err"
check "a group-writable config is refused (exit 2)" [ $? -eq 2 ]
check "... saying how to fix it" grep -q "may be written by its group (mode 0664).*chmod go-w $dir/group.conf" "$dir/err"
check "... nothing listed" [ ! -s "$dir/out" ]
chmod 646 "$dir/group.conf"
ev --config "$dir/group.conf" list failed --table outbox >"$dir/out" 2>"$dir/err"
check "a world-writable config is refused (exit 2)" [ $? -eq 2 ]
check "... and said so" grep -q "may be written by anyone (mode 0646)" "$dir/err"
chmod 644 "$dir/group.conf"
ev --config "$dir/group.conf" list failed --table outbox >"$dir/out" 2>"$dir/err"
if [ "$(id -u)" = 0 ]; then
	check "a root-owned 0644 config is read (as packages install them)" [ $? -eq 0 ]
else
	check "a 0644 config of the user's own is read" [ $? -eq 0 ]
fi
check "... and it is the one read (read_only refuses a write)" sh -c \
	"timeout 60 '$evtop' --defaults-file='$pinned' --config '$dir/group.conf' retry OB-F1 --yes </dev/null 2>&1 | grep -q 'refused: read-only'"
ln -s "$dir/group.conf" "$dir/link.conf"
ev --config "$dir/link.conf" list failed --table outbox >"$dir/out" 2>"$dir/err"
check "a config reached through a link is read (the file it reaches judged)" [ $? -eq 0 ]

# --- --log-sql ------------------------------------------------------------------------------------
(umask 022 && ev list failed --table outbox --log-sql "$dir/sql.log" >/dev/null 2>"$dir/err")
check "--log-sql creates its file 0600 (umask 022)" [ "$(mode "$dir/sql.log")" = 600 ]
check "... and records the statements" grep -q 'evtop:list.failed' "$dir/sql.log"
ln -s "$dir/victim" "$dir/link.log"
# A list that cannot start exits 3 (UNKNOWN, as for a server that is down); timeout's 124 is a hang.
refused() { [ "$1" -ne 0 ] && [ "$1" -ne 124 ] && [ ! -s "$dir/out" ]; }
ev list failed --table outbox --log-sql "$dir/link.log" >"$dir/out" 2>"$dir/err"
check "--log-sql through a symbolic link is refused, nothing listed" refused $?
check "... saying why" grep -q "the --log-sql file $dir/link.log is a symbolic link" "$dir/err"
check "... the file it points at untouched" [ "$(cat "$dir/victim")" = "not the audit" ]
mkfifo "$dir/fifo.log"
ev list failed --table outbox --log-sql "$dir/fifo.log" >"$dir/out" 2>"$dir/err"
check "--log-sql a FIFO: refused at once, no hang" refused $?
check "... saying why" grep -q "the --log-sql file $dir/fifo.log is a FIFO" "$dir/err"
printf 'old\n' >"$dir/open.log"
chmod 644 "$dir/open.log"
ev list failed --table outbox --log-sql "$dir/open.log" >"$dir/out" 2>"$dir/err"
check "--log-sql into a file others may read is refused" refused $?
check "... saying how to fix it" grep -q "chmod 600 $dir/open.log" "$dir/err"
check "... the file left as it was" [ "$(cat "$dir/open.log")" = old ]

tap_done
