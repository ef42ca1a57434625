#!/bin/sh
# The console as a person sees it: the real binary on a real pty (tmux), keys sent, the pane
# captured and compared with what the database holds.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/tmux.sh"

{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } | sql || exit 99

t new-session -d -s ev -x 100 -y 30 \
	"LANG=C.UTF-8 TERM=xterm-256color '$evtop' --defaults-file='$cnf'; echo evtop-exit=\$?; sleep 30"
wait_for 'connected' && ok "the console starts and connects" || not_ok "the console starts and connects"
wait_for 'TOTAL' && ok "the dashboard shows totals" || not_ok "the dashboard shows totals"
want=$(sql -e "SELECT COUNT(*) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 0")
got=$(grep -m1 '^TOTAL' "$dir/pane" | awk '{print $2}')
[ "$got" = "$want" ] && ok "outbox pending on screen ($got) = the database ($want)" ||
	not_ok "outbox pending on screen ($got) = the database ($want)"
if grep -q "$(printf '\033')" "$dir/pane"; then not_ok "no raw ESC in the pane"; else ok "no raw ESC in the pane"; fi

# The failed list of the first group: the pane shows the rows the database lists first.
t send-keys -t ev Right Right Right Enter
wait_for 'failed · event_type=' && ok "Enter opens the list behind the cell" || not_ok "Enter opens the list behind the cell"
group=$(sed -n 's/.*failed · event_type=\([A-Z_]*\).*/\1/p' "$dir/pane" | head -n 1)
first=$(sql -e "SELECT event_no FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3 AND event_type = '$group' ORDER BY next_retry_time, retry_count, id LIMIT 1")
wait_for "$first" && ok "the first row is the database's first ($first)" || not_ok "the first row is the database's first ($first)"

# The detail of that event, then back out and quit: the terminal is given back.
t send-keys -t ev Enter
wait_for "event_no           $first" && ok "Enter opens the event" || not_ok "Enter opens the event"
t send-keys -t ev q q q
wait_for 'evtop-exit=0' && ok "q q q quits with status 0" || not_ok "q q q quits with status 0"
if pgrep -f "$evtop --defaults-file=$cnf" >/dev/null; then not_ok "no evtop left running"; else ok "no evtop left running"; fi

# Retry one failed event from the keyboard on a real pty: the database shows it pending with
# version + 1 and one audit row.
t kill-session -t ev 2>/dev/null
t new-session -d -s ev -x 230 -y 30 \
	"LANG=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME='$dir/state' '$evtop' --defaults-file='$cnf' --operator INC-TMUX; echo evtop-exit=\$?; sleep 30"
wait_for 'TOTAL' >/dev/null
t send-keys -t ev Right Right Right Enter
wait_for 'failed · event_type=' >/dev/null
group=$(sed -n 's/.*failed · event_type=\([A-Z_]*\).*/\1/p' "$dir/pane" | head -n 1)
row=$(sql -e "SELECT CONCAT(id, ' ', version) FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3 AND event_type = '$group' ORDER BY next_retry_time, retry_count, id LIMIT 1")
id=${row% *}
version=${row#* }
t send-keys -t ev r
wait_for 'Apply?' && ok "r shows the confirmation" || not_ok "r shows the confirmation"
tr -d '\n' <"$dir/pane" | grep -q "WHERE id = $id AND deleted = 0 AND version = $version AND publish_status = 3" ||
	{ echo "# id=$id version=$version"; sed 's/^/# /' "$dir/pane"; false; } &&
	ok "the confirmation shows the exact statement" || not_ok "the confirmation shows the exact statement"
t send-keys -t ev y
wait_for 'applied: retry_now' && ok "y applies it" || not_ok "y applies it"
now=$(sql -e "SELECT CONCAT(publish_status, ' ', version) FROM biz_outbox_event WHERE id = $id")
[ "$now" = "0 $((version + 1))" ] && ok "the database shows it pending with version + 1" ||
	not_ok "the database shows it pending with version + 1 ($now)"
audits=$(sql -e "SELECT COUNT(*) FROM evtop_audit WHERE event_id = $id AND action = 'retry_now' AND result = 'applied' AND operator = 'INC-TMUX'")
[ "$audits" = 1 ] && ok "one audit row" || not_ok "one audit row ($audits)"
t send-keys -t ev q q
wait_for 'evtop-exit=0' >/dev/null

# SIGTERM restores the terminal too.
t kill-session -t ev
t new-session -d -s ev -x 80 -y 24 "LANG=C.UTF-8 TERM=xterm-256color '$evtop' --defaults-file='$cnf'; echo evtop-exit=\$?; sleep 30"
wait_for 'TOTAL' >/dev/null
pkill -TERM -f "$evtop --defaults-file=$cnf"
wait_for 'evtop-exit=' && ok "SIGTERM ends the console" || not_ok "SIGTERM ends the console"

# Esc while the server does not answer (stopped: a new connection hangs until its connect
# timeout, here 20 s): the KILL QUERY is sent from a thread of its own, so the keys are still
# answered at once; the help screen opens while the KILL's connect waits.
t kill-session -t ev
srvpid=$(cat "$(dirname "$EVTOP_TEST_SOCKET")/mariadbd.pid")
t new-session -d -s ev -x 100 -y 30 "LANG=C.UTF-8 TERM=xterm-256color '$evtop' --defaults-file='$cnf' --connect-timeout=20s; echo evtop-exit=\$?; sleep 30"
wait_for 'TOTAL' >/dev/null
kill -STOP "$srvpid"
t send-keys -t ev C-r
sleep 0.5
t send-keys -t ev Escape
sleep 0.2
t send-keys -t ev '?'
wait_for 'evtop keys' && ok "Esc on a refresh the server does not answer: keys answered while the KILL connects" ||
	not_ok "Esc on a refresh the server does not answer: keys answered while the KILL connects"
kill -CONT "$srvpid"
t send-keys -t ev q q
wait_for 'evtop-exit=0' && ok "... and it quits once the server is back" || not_ok "... and it quits once the server is back"

tap_done
