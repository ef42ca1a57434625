# shellcheck shell=sh
# evtop's multi-server tests: throwaway MariaDB servers on this machine (sourced, POSIX sh).
#
#   evc_init                 a short temporary root (/tmp/evc.XXXX), a template data directory,
#                            and the cleanup trap; every server started below is stopped by it
#   evc_shards N             N independent servers $EVC_ROOT/s1 .. sN, each with the schema of
#                            sql/mariadb in the database `evtop`
#   evc_replication          a primary $EVC_ROOT/p and its replica $EVC_ROOT/r (read_only=1),
#                            the schema created on the primary and replicated
#   evc_galera               a three-node Galera cluster $EVC_ROOT/g1 .. g3, the schema on all
#   evc_stop NAME            stop one server (its data directory stays); evc_stop_all: all
#   evc_stage NAME CMD...    run CMD and print "stage NAME: N s"
#   evc_port NAME, evc_sql DIR ARGS..., evc_q NAME SQL, evc_val DIR SQL
#                            a server's port; the client as root on its socket
#   evc_seed_sql, evc_figure_sql, evc_figure, evc_source, evc_source_socket
#                            test data, the model's SQL for a dashboard figure, evtop config
#   evc_ok, evc_not_ok, evc_check, evc_eq, evc_jq, evc_done
#                            "ok N - ..." / "not ok N - ..." and the final "N passed, M failed"
#
# Every server listens on 127.0.0.1 on a port found free ($EVC_PORT_<name>, e.g. EVC_PORT_s1)
# and on the unix socket DIR/sock. Each has the account evtop@'127.0.0.1' / evtop@localhost
# (no password): SELECT, INSERT, UPDATE on evtop.*, and REPLICA MONITOR; it cannot write
# on a read_only server. root@localhost (no password, socket only) is the administrator.
# Servers are started by tests/harness/server.sh, with --no-defaults.
#
# Needs: mariadbd, mariadb-install-db, the mariadb client, ss, and for evc_galera galera-4
# (/usr/lib/galera/libgalera_smm.so), rsync and mariadb-server's wsrep_sst_rsync.

EVC_SRCDIR=${EVTOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EVC_SERVER_SH="$EVC_SRCDIR/tests/harness/server.sh"
EVC_CLIENT=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql || echo mariadb)}
EVC_GALERA_LIB=${EVC_GALERA_LIB:-/usr/lib/galera/libgalera_smm.so}
EVC_ROOT=""
EVC_WATCHDOG=""

evc_log() { echo "# $*"; }
evc_die() {
	echo "cluster: setup failed: $*" >&2
	exit 99
}

evc_now() { date +%s; }

# evc_stage NAME CMD...: run CMD, print how long it took; CMD's status is returned.
evc_stage() {
	_st_name=$1
	shift
	_st_t0=$(evc_now)
	"$@"
	_st_rc=$?
	echo "stage $_st_name: $(($(evc_now) - _st_t0)) s"
	return $_st_rc
}

# A random number in 0 .. $1-1.
evc_random() {
	_ra_r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo $((_ra_r % $1))
}

# evc_ports COUNT: the first of COUNT consecutive ports, all free on this machine, below the
# kernel's ephemeral range (which outgoing connections use) and away from the usual ones.
evc_ports() {
	_po_count=$1
	_po_tries=0
	while [ $_po_tries -lt 200 ]; do
		_po_tries=$((_po_tries + 1))
		_po_base=$((20000 + $(evc_random 1000) * 12))
		_po_busy=no
		_po_p=$_po_base
		while [ $_po_p -lt $((_po_base + _po_count)) ]; do
			# Also the ports handed out in this run but not yet listening.
			case " $EVC_PORTS_TAKEN " in *" $_po_p "*) _po_busy=yes ;; esac
			if ss -Htan "( sport = :$_po_p or dport = :$_po_p )" 2>/dev/null | grep -q .; then
				_po_busy=yes
			fi
			[ $_po_busy = yes ] && break
			_po_p=$((_po_p + 1))
		done
		if [ $_po_busy = no ]; then
			_po_p=$_po_base
			while [ $_po_p -lt $((_po_base + _po_count)) ]; do
				EVC_PORTS_TAKEN="$EVC_PORTS_TAKEN $_po_p"
				_po_p=$((_po_p + 1))
			done
			echo "$_po_base"
			return 0
		fi
	done
	evc_die "no $_po_count free consecutive ports found on 127.0.0.1"
}
EVC_PORTS_TAKEN=""

# evc_port NAME: server NAME's SQL port.
evc_port() {
	eval "echo \"\${EVC_PORT_$1:-}\""
}

# evc_sql DIR [CLIENT ARGS...]: the mariadb client as root on DIR's socket.
evc_sql() {
	_sq_dir=$1
	shift
	"$EVC_CLIENT" --no-defaults -S "$_sq_dir/sock" -u root -N -B "$@"
}

# evc_val DIR SQL: one value.
evc_val() {
	evc_sql "$1" -e "$2" 2>/dev/null | head -n 1
}

# evc_q NAME SQL: SQL on server NAME in the database evtop (rows tab-separated, no header).
evc_q() {
	evc_sql "$EVC_ROOT/$1" -D evtop -e "$2"
}

# evc_init: the temporary root, the cleanup trap and a watchdog, the template data directory.
evc_init() {
	command -v ss >/dev/null || evc_die "ss not found (install iproute2)"
	[ -x "$EVC_CLIENT" ] || command -v "$EVC_CLIENT" >/dev/null || evc_die "no mariadb client"
	EVC_ROOT=$(mktemp -d /tmp/evc.XXXX) || evc_die "mktemp failed"
	: >"$EVC_ROOT/servers"
	trap 'evc_cleanup' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	# Stop the servers even if this shell is killed without running its trap.
	(
		trap '' INT HUP
		while kill -0 $$ 2>/dev/null; do sleep 1; done
		evc_stop_listed
		rm -rf "$EVC_ROOT"
	) </dev/null >/dev/null 2>&1 &
	EVC_WATCHDOG=$!
	# An empty option file: evtop's sources read it instead of ~/.my.cnf and /etc/mysql.
	: >"$EVC_ROOT/empty.cnf"
	evc_stage "install template datadir" evc_template || evc_die "cannot install a data directory"
}

evc_template() {
	_installer=${MARIADB_INSTALL_DB:-$(command -v mariadb-install-db || command -v mysql_install_db || echo mariadb-install-db)}
	mkdir -p "$EVC_ROOT/template/tmp" || return 1
	"$_installer" --no-defaults --datadir="$EVC_ROOT/template/data" \
		--tmpdir="$EVC_ROOT/template/tmp" --user=root \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$EVC_ROOT/template/install.log" 2>&1 || {
		cat "$EVC_ROOT/template/install.log" >&2
		return 1
	}
}

evc_cleanup() {
	evc_stop_listed
	[ -n "$EVC_WATCHDOG" ] && kill "$EVC_WATCHDOG" 2>/dev/null
	[ -n "$EVC_ROOT" ] && [ -z "${EVC_KEEP:-}" ] && rm -rf "$EVC_ROOT"
	return 0
}

evc_stop_listed() {
	[ -f "$EVC_ROOT/servers" ] || return 0
	# In parallel: a Galera node takes seconds to leave its cluster.
	_sl_waits=""
	while read -r _sl_d; do
		[ -n "$_sl_d" ] || continue
		evc_stop_dir "$_sl_d" &
		_sl_waits="$_sl_waits $!"
	done <"$EVC_ROOT/servers"
	# shellcheck disable=SC2086
	[ -n "$_sl_waits" ] && wait $_sl_waits
	return 0
}

# evc_pids DIR: the server processes of DIR, by their command line (a server still waiting
# to join a cluster has written no pid file yet).
evc_pids() {
	# The [t]: the pattern does not match grep's own command line.
	grep -l -a -e "--socke[t]=$1/sock" /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p'
	return 0
}

# evc_stop_dir DIR: stop DIR's server (by its pid file, else by its command line) and wait
# until it is gone, killing it after 30 s.
evc_stop_dir() {
	if [ -s "$1/mariadbd.pid" ]; then
		sh "$EVC_SERVER_SH" stop "$1"
		return 0
	fi
	_sd_pids=$(evc_pids "$1")
	[ -z "$_sd_pids" ] && return 0
	# shellcheck disable=SC2086
	kill -TERM $_sd_pids 2>/dev/null
	_sd_i=0
	while [ -n "$(evc_pids "$1")" ]; do
		_sd_i=$((_sd_i + 1))
		if [ $_sd_i -ge 300 ]; then
			# shellcheck disable=SC2086
			kill -KILL $_sd_pids 2>/dev/null
			sleep 0.5
			break
		fi
		sleep 0.1
	done
}

# evc_start NAME ARGS...: start server NAME (directory $EVC_ROOT/NAME) from a copy of the
# template (unless it has a data directory), on a free port (EVC_PORT_NAME), with ARGS.
evc_start() {
	_sa_name=$1
	shift
	_sa_dir=$EVC_ROOT/$_sa_name
	_sa_port=$(evc_port "$_sa_name")
	if [ -z "$_sa_port" ]; then
		_sa_port=$(evc_ports 1) || return 1
		eval "EVC_PORT_$_sa_name=$_sa_port"
	fi
	mkdir -p "$_sa_dir" || return 1
	[ -d "$_sa_dir/data" ] || cp -a "$EVC_ROOT/template/data" "$_sa_dir/data" || return 1
	grep -qx "$_sa_dir" "$EVC_ROOT/servers" || echo "$_sa_dir" >>"$EVC_ROOT/servers"
	EVTOP_TEST_PORT=$_sa_port EVTOP_TEST_SERVER_ARGS="--innodb-buffer-pool-size=64M $*" \
		sh "$EVC_SERVER_SH" start "$_sa_dir" || {
		tail -n 30 "$_sa_dir/error.log" >&2
		return 1
	}
	evc_wait_sql "$_sa_dir" || return 1
}

# evc_wait_sql DIR: until the server answers a query (at most 60 s).
evc_wait_sql() {
	_ws_i=0
	while [ $_ws_i -lt 600 ]; do
		evc_sql "$1" -e 'SELECT 1' >/dev/null 2>&1 && return 0
		sleep 0.1
		_ws_i=$((_ws_i + 1))
	done
	echo "cluster: $1 does not answer" >&2
	tail -n 30 "$1/error.log" >&2
	return 1
}

# evc_stop NAME: stop server NAME and wait until it is gone (its data directory stays).
evc_stop() {
	evc_stop_dir "$EVC_ROOT/$1"
}

evc_stop_all() {
	evc_stop_listed
	: >"$EVC_ROOT/servers"
}

# The evtop account and the schema, run on one server (a primary replicates them).
evc_account_sql() {
	cat <<'SQL'
CREATE USER IF NOT EXISTS 'evtop'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'evtop'@'localhost';
GRANT SELECT, INSERT, UPDATE ON evtop.* TO 'evtop'@'127.0.0.1';
GRANT SELECT, INSERT, UPDATE ON evtop.* TO 'evtop'@'localhost';
GRANT REPLICA MONITOR ON *.* TO 'evtop'@'127.0.0.1';
GRANT REPLICA MONITOR ON *.* TO 'evtop'@'localhost';
SQL
}

# evc_schema NAME: the database `evtop` with the tables of sql/mariadb, and the account.
evc_schema() {
	_sc_dir=$EVC_ROOT/$1
	evc_sql "$_sc_dir" -e 'CREATE DATABASE evtop' || return 1
	for _sc_f in schema.sql audit.sql; do
		evc_sql "$_sc_dir" -D evtop <"$EVC_SRCDIR/sql/mariadb/$_sc_f" || return 1
	done
	evc_account_sql | evc_sql "$_sc_dir" || return 1
}

# evc_shards N: N independent servers s1 .. sN with the schema.
evc_shards() {
	_sh_i=1
	while [ "$_sh_i" -le "$1" ]; do
		evc_start "s$_sh_i" && evc_schema "s$_sh_i" || return 1
		_sh_i=$((_sh_i + 1))
	done
}

# evc_replication: primary p (binary log, GTID) and replica r (read_only=1) replicating it.
evc_replication() {
	evc_start p --server-id=1 --log-bin=binlog --binlog-format=ROW || return 1
	evc_sql "$EVC_ROOT/p" -e "CREATE USER 'repl'@'127.0.0.1'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'" || return 1
	evc_schema p || return 1
	evc_start r --server-id=2 --read-only=1 --skip-slave-start || return 1
	evc_sql "$EVC_ROOT/r" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$(evc_port p),
		MASTER_USER='repl', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos,
		MASTER_CONNECT_RETRY=1; START SLAVE" || return 1
	evc_replica_running || return 1
	evc_repl_sync || return 1
	# Every table of the primary's schema (the event tables and sql/*/audit.sql's).
	_rp_tables="SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'evtop'"
	[ "$(evc_val "$EVC_ROOT/r" "$_rp_tables")" = "$(evc_val "$EVC_ROOT/p" "$_rp_tables")" ] ||
		{ echo "cluster: the schema did not reach the replica" >&2; return 1; }
}

# evc_slave_field NAME FIELD: one field of SHOW SLAVE STATUS on server NAME.
evc_slave_field() {
	"$EVC_CLIENT" --no-defaults -S "$EVC_ROOT/$1/sock" -u root -E -e 'SHOW SLAVE STATUS' 2>/dev/null |
		sed -n "s/^ *$2: //p" | head -n 1
}

# Until the replica's IO and SQL threads both run (at most 30 s).
evc_replica_running() {
	_rr_i=0
	while [ $_rr_i -lt 300 ]; do
		if [ "$(evc_slave_field r Slave_SQL_Running)" = Yes ] &&
			[ "$(evc_slave_field r Slave_IO_Running)" = Yes ]; then
			return 0
		fi
		sleep 0.1
		_rr_i=$((_rr_i + 1))
	done
	echo "cluster: replication does not run:" >&2
	"$EVC_CLIENT" --no-defaults -S "$EVC_ROOT/r/sock" -u root -E -e 'SHOW SLAVE STATUS' >&2
	return 1
}

# evc_repl_sync: wait until the replica has applied everything the primary has logged.
evc_repl_sync() {
	_rs_pos=$(evc_val "$EVC_ROOT/p" 'SELECT @@gtid_binlog_pos')
	_rs_got=$(evc_val "$EVC_ROOT/r" "SELECT MASTER_GTID_WAIT('$_rs_pos', 30)")
	[ "$_rs_got" = 0 ] || {
		echo "cluster: the replica did not reach $_rs_pos (MASTER_GTID_WAIT: $_rs_got)" >&2
		return 1
	}
}

# evc_galera: three nodes g1 .. g3; each node N has a block of four ports: EVC_PORT_gN for
# SQL, then the group communication port (base_port), the incremental state transfer's and the
# full state transfer's. The first node founds the cluster and gets the schema; the others join
# it one after the other and receive everything by an rsync state transfer (wsrep_sst_rsync,
# from the mariadb-server package).
evc_galera() {
	[ -r "$EVC_GALERA_LIB" ] || { echo "cluster: no $EVC_GALERA_LIB (install galera-4)" >&2; return 1; }
	command -v rsync >/dev/null || { echo "cluster: no rsync (install rsync)" >&2; return 1; }
	command -v wsrep_sst_rsync >/dev/null ||
		{ echo "cluster: no wsrep_sst_rsync (install mariadb-server)" >&2; return 1; }
	for _ga_n in 1 2 3; do
		_ga_b=$(evc_ports 4) || return 1
		eval "EVC_PORT_g$_ga_n=$_ga_b"
	done
	# shellcheck disable=SC2046
	evc_start g1 $(evc_galera_args 1) --wsrep-new-cluster || return 1
	evc_wsrep_ready g1 1 || return 1
	evc_schema g1 || return 1
	# The joiner's rsync daemon, started as root, writes as the user nobody (rsync's default for
	# a daemon run by root): the joiner's data directory is nobody's, and the way to it open.
	chmod 711 "$EVC_ROOT" || return 1
	for _ga_n in 2 3; do
		mkdir -p "$EVC_ROOT/g$_ga_n" && cp -a "$EVC_ROOT/template/data" "$EVC_ROOT/g$_ga_n/data" &&
			chown -R nobody "$EVC_ROOT/g$_ga_n/data" || return 1
		# shellcheck disable=SC2046
		evc_start "g$_ga_n" $(evc_galera_args "$_ga_n") || return 1
		evc_wsrep_ready "g$_ga_n" "$_ga_n" || return 1
	done
	for _ga_n in 1 2 3; do
		evc_wsrep_ready "g$_ga_n" 3 || return 1
	done
}

# evc_galera_args N: node N's server options.
evc_galera_args() {
	_gx_sql=$(evc_port "g$1")
	_gx_g=$((_gx_sql + 1))
	_gx_addr="gcomm://127.0.0.1:$(($(evc_port g1) + 1)),127.0.0.1:$(($(evc_port g2) + 1)),127.0.0.1:$(($(evc_port g3) + 1))"
	echo "--wsrep-on=ON --wsrep-provider=$EVC_GALERA_LIB --wsrep-cluster-name=evtop" \
		"--wsrep-cluster-address=$_gx_addr --wsrep-node-name=g$1" \
		"--wsrep-node-address=127.0.0.1:$_gx_g --wsrep-node-incoming-address=127.0.0.1:$_gx_sql" \
		"--wsrep-provider-options=base_port=$_gx_g;gmcast.listen_addr=tcp://127.0.0.1:$_gx_g;ist.recv_addr=127.0.0.1:$((_gx_g + 1));gcache.size=32M" \
		"--wsrep-sst-method=rsync --wsrep-sst-receive-address=127.0.0.1:$((_gx_g + 2))" \
		"--binlog-format=ROW --innodb-autoinc-lock-mode=2 --default-storage-engine=InnoDB"
}

# evc_wsrep_ready NAME SIZE: until node NAME is ready in a primary component of SIZE nodes
# (at most 60 s).
evc_wsrep_ready() {
	_wr_i=0
	while [ $_wr_i -lt 600 ]; do
		_wr_st=$(evc_sql "$EVC_ROOT/$1" -e "SELECT
			(SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'wsrep_ready'),
			(SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'wsrep_cluster_size'),
			(SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'wsrep_local_state_comment')" 2>/dev/null)
		case "$_wr_st" in
		"ON	$2	Synced") return 0 ;;
		esac
		sleep 0.1
		_wr_i=$((_wr_i + 1))
	done
	echo "cluster: galera node $1 not ready in a cluster of $2 (ready, size, state: $_wr_st)" >&2
	tail -n 40 "$EVC_ROOT/$1/error.log" >&2
	return 1
}

# --- the tests' side ----------------------------------------------------------------------

EVC_N=0
EVC_FAILS=0
evc_ok() {
	EVC_N=$((EVC_N + 1))
	echo "ok $EVC_N - $1"
}
evc_not_ok() {
	EVC_N=$((EVC_N + 1))
	EVC_FAILS=$((EVC_FAILS + 1))
	echo "not ok $EVC_N - $1"
}
# evc_check DESCRIPTION CMD...: ok when CMD succeeds.
evc_check() {
	_ck_d=$1
	shift
	if "$@"; then evc_ok "$_ck_d"; else evc_not_ok "$_ck_d"; fi
}
# evc_eq DESCRIPTION GOT WANT
evc_eq() {
	if [ "$2" = "$3" ]; then evc_ok "$1"; else evc_not_ok "$1: got '$2', want '$3'"; fi
}
# evc_jq ARGS...: jq -e, quiet: true when the filter's last output is neither false nor null.
evc_jq() {
	jq -e "$@" >/dev/null
}
# evc_done: the summary line and the exit status.
evc_done() {
	echo "$((EVC_N - EVC_FAILS)) passed, $EVC_FAILS failed"
	[ $EVC_FAILS -eq 0 ]
}

# evc_source NAME SERVER [KEY=VALUE...]: a [source NAME] section for server SERVER over TCP
# as the evtop account, isolated from the option files of this machine.
evc_source() {
	_so_name=$1
	_so_port=$(evc_port "$2")
	shift 2
	printf '[source %s]\ndefaults_file = %s\nhost = 127.0.0.1\nport = %s\nuser = evtop\ndatabase = evtop\n' \
		"$_so_name" "$EVC_ROOT/empty.cnf" "$_so_port"
	for _so_kv in "$@"; do
		printf '%s = %s\n' "${_so_kv%%=*}" "${_so_kv#*=}"
	done
	echo
}

# evc_seed_sql SHARD N BASE: SQL inserting N rows into each table: every status, deleted rows,
# failed rows due, waiting, without a retry time and exhausted, processing rows past their
# lock (stuck) and not, rows inside and outside the dashboard's 1 h window. Times are BASE
# (the servers' NOW() when seeding) minus whole minutes, the same on every shard, so that lists
# merged across shards meet ties. ids 1 .. N repeat on every shard (an event's identity
# includes its source); event_no is unique across shards: OB-SHARD-NNNNN, MS-SHARD-NNNNN.
evc_seed_sql() {
	cat <<SQL
INSERT INTO biz_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
  event_source, publish_channel, topic, event_payload, publish_status, retry_count,
  max_retry_count, next_retry_time, locked_by, lock_until, deleted, create_time, update_time)
SELECT seq, CONCAT('OB-$1-', LPAD(seq, 5, '0')), 'ORDER', CONCAT('ORD', seq),
  ELT(1 + seq % 3, 'ORDER_CREATED', 'ORDER_PAID', 'ORDER_SHIPPED'), 'order-service', 'MQ',
  'orders', '{}', st,
  IF(st = 3, IF(seq % 7 = 0, 5, seq % 4), 0), 5,
  IF(st = 3, CASE seq % 3 WHEN 0 THEN TIMESTAMP'$3' - INTERVAL seq % 20 MINUTE
                          WHEN 1 THEN TIMESTAMP'$3' + INTERVAL 1 HOUR END, NULL),
  IF(st = 1, 'publisher-1', NULL),
  IF(st = 1, IF(seq % 2 = 0, TIMESTAMP'$3' - INTERVAL 5 MINUTE, TIMESTAMP'$3' + INTERVAL 2 HOUR), NULL),
  IF(seq % 13 = 0, 1, 0),
  IF(seq % 4 = 0, TIMESTAMP'$3' - INTERVAL 3 DAY, TIMESTAMP'$3' - INTERVAL seq % 40 MINUTE),
  TIMESTAMP'$3' - INTERVAL seq % 9 MINUTE
FROM (SELECT seq, (seq * 7 + $1) % 5 AS st FROM seq_1_to_$2) AS x;
INSERT INTO biz_message_event (id, event_no, event_type, biz_type, biz_id, event_source,
  event_payload, event_status, retry_count, max_retry_count, next_retry_time, last_handle_time,
  deleted, create_time, update_time)
SELECT seq, CONCAT('MS-$1-', LPAD(seq, 5, '0')),
  ELT(1 + seq % 3, 'ORDER_CREATED', 'ORDER_PAID', 'ORDER_SHIPPED'), 'ORDER', CONCAT('ORD', seq),
  'order-service', '{}', st,
  IF(st = 3, IF(seq % 7 = 0, 3, seq % 3), 0), 3,
  IF(st = 3, CASE seq % 3 WHEN 0 THEN TIMESTAMP'$3' - INTERVAL seq % 20 MINUTE
                          WHEN 1 THEN TIMESTAMP'$3' + INTERVAL 1 HOUR END, NULL),
  IF(st = 1, IF(seq % 2 = 0, TIMESTAMP'$3' - INTERVAL 30 MINUTE, TIMESTAMP'$3' - INTERVAL 1 MINUTE), NULL),
  IF(seq % 13 = 0, 1, 0),
  IF(seq % 4 = 0, TIMESTAMP'$3' - INTERVAL 3 DAY, TIMESTAMP'$3' - INTERVAL seq % 40 MINUTE),
  TIMESTAMP'$3' - INTERVAL seq % 9 MINUTE
FROM (SELECT seq, (seq * 3 + $1) % 5 AS st FROM seq_1_to_$2) AS x;
SQL
}

# evc_source_socket NAME SERVER [KEY=VALUE...]: the same over SERVER's unix socket.
evc_source_socket() {
	_ss_name=$1
	_ss_dir=$EVC_ROOT/$2
	shift 2
	printf '[source %s]\ndefaults_file = %s\nsocket = %s\nuser = evtop\ndatabase = evtop\n' \
		"$_ss_name" "$EVC_ROOT/empty.cnf" "$_ss_dir/sock"
	for _ss_kv in "$@"; do
		printf '%s = %s\n' "${_ss_kv%%=*}" "${_ss_kv#*=}"
	done
	echo
}

# evc_figure_sql TABLE FIGURE: the model's SQL for one dashboard figure (a COUNT(*) over the
# rows with deleted = 0), TABLE outbox or message; the window is 1 h of create_time, the
# message table's stuck threshold 10 min.
evc_figure_sql() {
	if [ "$1" = outbox ]; then
		_fs_t=biz_outbox_event _fs_s=publish_status _fs_stuck='lock_until <= NOW()'
	else
		_fs_t=biz_message_event _fs_s=event_status
		_fs_stuck='last_handle_time <= NOW() - INTERVAL 600 SECOND'
	fi
	_fs_left='retry_count < max_retry_count'
	case $2 in
	pending) _fs_w="$_fs_s = 0" ;;
	processing) _fs_w="$_fs_s = 1" ;;
	stuck) _fs_w="$_fs_s = 1 AND $_fs_stuck" ;;
	failed) _fs_w="$_fs_s = 3" ;;
	failed_due) _fs_w="$_fs_s = 3 AND $_fs_left AND next_retry_time <= NOW()" ;;
	failed_waiting) _fs_w="$_fs_s = 3 AND $_fs_left AND next_retry_time > NOW()" ;;
	failed_noretry) _fs_w="$_fs_s = 3 AND $_fs_left AND next_retry_time IS NULL" ;;
	exhausted) _fs_w="$_fs_s = 3 AND retry_count >= max_retry_count" ;;
	success) _fs_w="$_fs_s = 2 AND create_time >= NOW() - INTERVAL 3600 SECOND" ;;
	cancelled) _fs_w="$_fs_s = 4 AND create_time >= NOW() - INTERVAL 3600 SECOND" ;;
	created) _fs_w="create_time >= NOW() - INTERVAL 3600 SECOND" ;;
	*) return 1 ;;
	esac
	echo "SELECT COUNT(*) FROM $_fs_t WHERE deleted = 0 AND $_fs_w"
}

# evc_figure SERVER TABLE FIGURE: that figure on one server.
evc_figure() {
	evc_q "$1" "$(evc_figure_sql "$2" "$3")"
}
