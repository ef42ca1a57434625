# Helpers for the `shell` lines of tests/screen/fault-scripts/*.keys, which run them as
#   shell . "$EVTOP_SRCDIR/tests/screen/fault-scripts/lib.sh"; NAME ARGS
# They act on the harness's own server (its folder is "$EVTOP_TEST_DIR/..") and fail (exit 1)
# when what they should bring about did not happen, which fails the scripted run.
srv=$EVTOP_TEST_DIR/..
client=${MARIADB_CLIENT:-mariadb}

sql() { "$client" --defaults-file="$EVTOP_TEST_DEFAULTS_FILE" -N -B -e "$*"; }

# A session in the background: statements, then it sleeps holding whatever it took.
bg_session() {
	(printf '%s\nSELECT SLEEP(60);\n' "$*" |
		"$client" --defaults-file="$EVTOP_TEST_DEFAULTS_FILE" >/dev/null 2>&1 &)
	i=0
	while [ $i -lt 100 ]; do
		[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'")" -ge 1 ] &&
			return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# bg_session_tagged TAG STATEMENTS: a background session as bg_session's, that
# end_session TAG ends alone.
bg_session_tagged() {
	tag=$1
	shift
	(printf "%s\nSELECT SLEEP(60), '%s';\n" "$*" "$tag" |
		"$client" --defaults-file="$EVTOP_TEST_DEFAULTS_FILE" >/dev/null 2>&1 &)
	i=0
	while [ $i -lt 100 ]; do
		[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60), ''$tag''%'")" -ge 1 ] &&
			return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
end_session() {
	for id in $(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60), ''$1''%'"); do
		sql "KILL $id" || return 1
	done
}

# End every background session (and with it the locks it holds).
end_sessions() {
	for id in $(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'"); do
		sql "KILL $id" || return 1
	done
}

server_pid() { cat "$srv/mariadbd.pid"; }

kill_server() {
	p=$(server_pid) || return 1
	kill -9 "$p" || return 1
	while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
	rm -f "$srv/mariadbd.pid" "$srv/sock"
}

start_server() {
	sh "$EVTOP_SRCDIR/tests/harness/server.sh" start "$srv" || return 1
	# Until it answers queries, not just until its socket exists.
	i=0
	until sql "SELECT 1" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -ge 300 ] && return 1
		sleep 0.1
	done
}

# SIGSTOP takes effect asynchronously: wait until every thread of the server is stopped.
stop_server() {
	p=$(server_pid) || return 1
	kill -STOP "$p" || return 1
	i=0
	while for s in /proc/"$p"/task/*/stat; do cut -d')' -f2 "$s" | cut -c2; done | grep -qv T; do
		i=$((i + 1))
		[ $i -ge 100 ] && return 1
		sleep 0.02
	done
}
cont_server() { kill -CONT "$(server_pid)"; }

# row_is ID TABLE WANT: the outbox row's status/version is WANT (nothing was written).
row_is() {
	got=$(sql "SELECT CONCAT_WS('/', publish_status, version) FROM $2 WHERE id = $1")
	[ "$got" = "$3" ] || { echo "row $1 of $2 is $got, not $3" >&2; return 1; }
}

# Until one of evtop's guarded UPDATEs has run for 300 ms: a single-row UPDATE by primary key
# that takes so long waits for a row another session holds (INNODB_TRX does not always say
# LOCK WAIT for it), so a write is known to be in flight at the row the test chose.
wait_lock_wait() {
	i=0
	until [ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '/* evtop:action.% UPDATE %' AND TIME_MS > 300")" -ge 1 ]; do
		i=$((i + 1))
		if [ $i -ge 400 ]; then
			echo "no UPDATE of evtop waits for a row:" >&2
			sql "SELECT ID, STATE, TIME_MS, LEFT(INFO, 80) FROM information_schema.PROCESSLIST" >&2
			return 1
		fi
		sleep 0.05
	done
}

# Until a COMMIT waits for the backup lock (another session is at BACKUP STAGE BLOCK_COMMIT):
# a transaction is then known to be at its COMMIT, not yet committed.
wait_commit_blocked() {
	i=0
	until [ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'Waiting for backup lock'")" -ge 1 ]; do
		i=$((i + 1))
		[ $i -ge 400 ] && { echo "no COMMIT waits for the backup lock" >&2; return 1; }
		sleep 0.05
	done
}
