#!/bin/sh
# Signals give the terminal back: the real console in a tmux pane started from a shell, a
# signal sent at different moments (just started, idle on the dashboard, in a prompt, in the
# detail pane, while a query waits on a lock), then the pane must be the shell's again: evtop
# gone with the status the signal implies, the alternate screen left, the cursor shown, the
# keypad out of application mode, and the line discipline sane (stty: icanon echo). SIGINT,
# SIGTERM and SIGHUP end the console normally; SIGPIPE is ignored (the console goes on and
# quits with q); a crash (SIGSEGV, SIGABRT; also a fault in a worker thread) restores the
# terminal and then dies of the signal.
# A SIGKILL, which nothing can catch, shows that the checks do notice a terminal left raw.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
command -v tmux >/dev/null || {
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then echo "tmux missing"; exit 99; fi
	echo "tmux missing: skipping"; exit 77
}
sock="evtop-signals-$$"
t() { tmux -L "$sock" "$@"; }
trap 't kill-server 2>/dev/null' EXIT
. "$(dirname "$0")/../lib/tap.sh"
wait_for() { # wait_for TEXT [TENTHS]: until the pane shows TEXT
	i=0
	while [ $i -lt "${2:-150}" ]; do
		t capture-pane -p -t sig >"$dir/pane" 2>/dev/null
		grep -q -F -- "$1" "$dir/pane" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "# pane after waiting for '$1':"
	sed 's/^/# /' "$dir/pane"
	return 1
}

{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } | sql || exit 99

# One shell for the whole test; each case starts evtop from it, as a person would.
t new-session -d -s sig -x 100 -y 30 "env PS1='$ ' sh"
shell_pid=$(t display -p -t sig '#{pane_pid}')
k=0

# start: evtop from the pane's shell; its pid in $pid.
start() {
	k=$((k + 1))
	t send-keys -t sig "clear; LANG=C.UTF-8 TERM=xterm-256color '$evtop' --defaults-file='$cnf'; echo \"case$k-exit=\$?\"" Enter
	pid=""
	i=0
	while [ -z "$pid" ] && [ $i -lt 100 ]; do
		pid=$(pgrep -P "$shell_pid" -x evtop 2>/dev/null | head -n 1)
		sleep 0.05
		i=$((i + 1))
	done
}

# sane NAME WANT_EXIT...: evtop has ended with one of WANT_EXIT and the pane is the shell's,
# sane.
sane() {
	name=$1
	shift
	want=$*
	if ! wait_for "case$k-exit=" 100; then
		not_ok "$name: evtop ends"
		kill -KILL "$pid" 2>/dev/null
		return
	fi
	got=$(sed -n "s/.*case$k-exit=\([0-9]*\).*/\1/p" "$dir/pane" | tail -n 1)
	case " $want " in
	*" $got "*) ok "$name: evtop ends with status $got" ;;
	*) not_ok "$name: evtop ends with status $want (got $got)" ;;
	esac
	flags=$(t display -p -t sig '#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{keypad_flag}')
	[ "$flags" = "0 1 0 0" ] && ok "$name: alternate screen left, cursor shown, keypad reset" ||
		not_ok "$name: alternate screen left, cursor shown, keypad reset (alternate cursor keypad-cursor keypad: $flags)"
	t send-keys -t sig "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '; echo stty-done$k" Enter
	wait_for "stty-done$k" 50 >/dev/null
	modes=$(grep -v 'stty -a' "$dir/pane" | grep -o -e '-\{0,1\}icanon -\{0,1\}echo' | tail -n 1)
	[ "$modes" = "icanon echo" ] && ok "$name: the line discipline is sane (icanon echo)" ||
		not_ok "$name: the line discipline is sane (got '$modes')"
	t send-keys -t sig "stty sane; tput sgr0; clear" Enter
	sleep 0.3
}

# The moments.
for sig in INT TERM HUP; do
	case $sig in INT) num=2 ;; TERM) num=15 ;; HUP) num=1 ;; esac
	start
	sleep 0.05
	kill -"$sig" "$pid"
	# Before the console has set its handlers (still connecting), the signal's default
	# action ends it: the terminal was never touched.
	sane "SIG$sig at once after the start" 0 $((128 + num))

	start
	wait_for TOTAL >/dev/null
	kill -"$sig" "$pid"
	sane "SIG$sig on the dashboard" 0

	start
	wait_for TOTAL >/dev/null
	t send-keys -t sig Right Right Right Enter
	wait_for 'failed ·' >/dev/null
	t send-keys -t sig /
	wait_for 'filter' >/dev/null
	kill -"$sig" "$pid"
	sane "SIG$sig in a prompt" 0
done

start
wait_for TOTAL >/dev/null
t send-keys -t sig Right Right Right Enter
wait_for 'failed ·' >/dev/null
t send-keys -t sig Enter
wait_for 'event_no' >/dev/null
kill -TERM "$pid"
sane "SIGTERM in the detail pane" 0

# While a query waits on a lock another session holds (the refresh in flight).
(printf 'LOCK TABLES biz_outbox_event WRITE;\nSELECT SLEEP(60);\n' | "$client" --defaults-file="$cnf" >/dev/null 2>&1 &)
start
wait_for 'loading' >/dev/null
kill -INT "$pid"
sane "SIGINT while a query waits on a lock" 0
for id in $(sql -e "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(60)%'"); do
	sql -e "KILL $id"
done

# SIGPIPE is ignored: the console goes on, answers keys, and q gives the terminal back.
start
wait_for TOTAL >/dev/null
kill -PIPE "$pid"
sleep 0.3
if kill -0 "$pid" 2>/dev/null; then ok "SIGPIPE: the console goes on"; else not_ok "SIGPIPE: the console goes on"; fi
t send-keys -t sig '?'
wait_for 'help' >/dev/null && ok "SIGPIPE: the console still answers keys" ||
	not_ok "SIGPIPE: the console still answers keys"
t send-keys -t sig q q
sane "q after SIGPIPE" 0

# A crash: the terminal comes back, then evtop dies of the signal (128 + its number).
start
wait_for TOTAL >/dev/null
kill -SEGV "$pid"
sane "SIGSEGV (a crash)" 139
start
wait_for TOTAL >/dev/null
t send-keys -t sig Right Right Right Enter
wait_for 'failed ·' >/dev/null
kill -ABRT "$pid"
sane "SIGABRT (an assertion) in a list" 134

# A crash in a worker thread (a fault in the database code): the kernel delivers it to that
# thread; had the thread blocked it, the process would die without the handler. tgkill(2)
# through perl's syscall, by the system call's number on this architecture.
case $(uname -m) in
x86_64) nr=234 ;;
aarch64) nr=131 ;;
*) nr="" ;;
esac
if [ -n "$nr" ]; then
	start
	wait_for TOTAL >/dev/null
	tid=$(ls "/proc/$pid/task" | grep -v -x "$pid" | head -n 1)
	if perl -e 'exit(syscall($ARGV[0] + 0, $ARGV[1] + 0, $ARGV[2] + 0, 11) == 0 ? 0 : 1)' "$nr" "$pid" "$tid"; then
		sane "SIGSEGV in a worker thread" 139
	else
		not_ok "SIGSEGV in a worker thread: tgkill failed"
		kill -KILL "$pid"
	fi
else
	echo "# $(uname -m): no tgkill number known, the worker-thread crash is not tried"
fi

# Nothing catches SIGKILL: the checks above must see the terminal left in curses' state.
start
wait_for TOTAL >/dev/null
kill -KILL "$pid"
wait_for "case$k-exit=137" 50 >/dev/null
flags=$(t display -p -t sig '#{alternate_on} #{cursor_flag}')
[ "$flags" = "1 0" ] && ok "SIGKILL leaves the terminal raw (so the checks can tell)" ||
	not_ok "SIGKILL leaves the terminal raw (so the checks can tell): $flags"
t send-keys -t sig "stty sane; tput rmcup; tput cnorm; clear" Enter

tap_done
