#!/bin/sh
# Throwaway MariaDB server for evtop's tests.
#
#   server.sh start DIR   install a data directory under DIR and start mariadbd on DIR/sock
#   server.sh stop DIR    stop the server of DIR by the pid in its pid file and wait for it
#
# DIR must be short (unix socket paths are limited to 107 bytes): use mktemp -d /tmp/evt.XXXX.
# The server never reads the system's option files (--no-defaults) and listens on no port
# unless EVTOP_TEST_PORT is set.
set -u

MARIADBD=${MARIADBD:-$(command -v mariadbd || command -v mysqld || echo /usr/sbin/mariadbd)}
INSTALL_DB=${MARIADB_INSTALL_DB:-$(command -v mariadb-install-db || command -v mysql_install_db || echo mariadb-install-db)}

die() { echo "server.sh: $*" >&2; exit 1; }

start() {
	dir=$1
	[ -x "$MARIADBD" ] || die "no mariadbd found (install mariadb-server)"
	# A temporary folder of its own: servers installed side by side in the default /tmp
	# collide on their temporary tables' names.
	mkdir -p "$dir/tmp" || die "cannot create $dir"
	if [ ! -d "$dir/data/mysql" ]; then
		"$INSTALL_DB" --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --user=root \
			--auth-root-authentication-method=normal --skip-test-db \
			>"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
	fi
	if [ -n "${EVTOP_TEST_PORT:-}" ]; then
		net="--port=$EVTOP_TEST_PORT --bind-address=127.0.0.1"
	else
		net="--skip-networking"
	fi
	# shellcheck disable=SC2086
	"$MARIADBD" --no-defaults --datadir="$dir/data" --socket="$dir/sock" \
		--pid-file="$dir/mariadbd.pid" --log-error="$dir/error.log" $net --user=root \
		--tmpdir="$dir/tmp" \
		--innodb-buffer-pool-size=128M --innodb-log-file-size=48M \
		--innodb-flush-log-at-trx-commit=2 --skip-log-bin --max-connections=200 \
		--character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
		${EVTOP_TEST_SERVER_ARGS:-} </dev/null >/dev/null 2>&1 &
	i=0
	while [ $i -lt 300 ]; do
		if [ -S "$dir/sock" ] && [ -s "$dir/mariadbd.pid" ]; then
			return 0
		fi
		if ! kill -0 $! 2>/dev/null; then
			cat "$dir/error.log" >&2
			die "mariadbd exited during start"
		fi
		sleep 0.1
		i=$((i + 1))
	done
	die "mariadbd did not open $dir/sock within 30 s"
}

stop() {
	dir=$1
	[ -s "$dir/mariadbd.pid" ] || return 0
	pid=$(cat "$dir/mariadbd.pid")
	kill -CONT "$pid" 2>/dev/null
	kill -TERM "$pid" 2>/dev/null || return 0
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 300 ]; then
			kill -KILL "$pid" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	rm -f "$dir/mariadbd.pid"
}

case "${1:-}" in
start) start "$2" ;;
stop) stop "$2" ;;
*) echo "usage: server.sh start|stop DIR" >&2; exit 2 ;;
esac
