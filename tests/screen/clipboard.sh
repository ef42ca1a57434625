#!/bin/sh
# The copy keys on a real pty (tmux with set-clipboard on, as doc/config.md tells users to
# set): C puts the event_no on the clipboard (tmux's buffer), J the row as JSON, C in a
# confirmation its statement; with `clipboard = off` nothing is copied and the console says
# so; a row larger than clipboard_max is refused.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/tmux.sh"

{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } | sql || exit 99
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00')\"|" "$cnf" >"$dir/pinned.cnf"
t set -g set-clipboard on
# The buffer before any copy: a marker, so "nothing copied" is seen as the marker kept.
t set-buffer "before-any-copy"

start() { # start CONFIG-LINES
	printf '%s\n' "$1" >"$dir/evtop.conf"
	t kill-session -t ev 2>/dev/null
	t new-session -d -s ev -x 200 -y 40 \
		"LANG=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME='$dir/state' '$evtop' --defaults-file='$dir/pinned.cnf' --config '$dir/evtop.conf' --operator INC-CLIP; echo evtop-exit=\$?; sleep 30"
	wait_for 'TOTAL' >/dev/null
}
buffer() { t show-buffer 2>/dev/null; }

start "clipboard = on"
# The failed list of the first group: the event_no under the cursor is the list's first.
t send-keys -t ev Right Right Right Enter
wait_settled 'failed · event_type=' >/dev/null
group=$(sed -n 's/.*failed · event_type=\([A-Z_]*\).*/\1/p' "$dir/pane" | head -n 1)
first=$(sql -e "SELECT event_no FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 3 AND event_type = '$group' ORDER BY next_retry_time, retry_count, id LIMIT 1")
t send-keys -t ev C
wait_for 'copied the event_no' && ok "C says it copied the event_no" || not_ok "C says it copied the event_no"
got=$(buffer)
[ "$got" = "$first" ] && ok "tmux's buffer holds the event_no ($first)" ||
	not_ok "tmux's buffer holds the event_no: '$got', want '$first'"

# J: the row as JSON, the list's columns, parsed back.
t send-keys -t ev J
wait_for 'copied the row as JSON' >/dev/null
buffer >"$dir/row.json"
no=$(jq -r .event_no "$dir/row.json" 2>/dev/null)
id=$(jq -r .id "$dir/row.json" 2>/dev/null)
want_id=$(sql -e "SELECT id FROM biz_outbox_event WHERE event_no = '$first'")
[ "$no" = "$first" ] && [ "$id" = "$want_id" ] && ok "J copies the row as JSON (event_no $no, id $id)" ||
	not_ok "J copies the row as JSON: $(head -c 300 "$dir/row.json")"

# The detail pane: J copies the whole row, its payload as stored.
t send-keys -t ev Enter
wait_for "event_no           $first" >/dev/null
t send-keys -t ev J
wait_for 'copied the row as JSON' >/dev/null
buffer >"$dir/event.json"
cols=$(jq -r 'keys | length' "$dir/event.json" 2>/dev/null)
payload=$(jq -c .event_payload "$dir/event.json" 2>/dev/null)
want_payload=$(sql -e "SELECT event_payload FROM biz_outbox_event WHERE event_no = '$first'" | jq -c . 2>/dev/null)
[ "${cols:-0}" -ge 20 ] && [ "$payload" = "$want_payload" ] &&
	ok "J in the detail pane copies every column ($cols), the payload as stored" ||
	not_ok "J in the detail pane: $cols columns, payload $payload, want $want_payload"

# The confirmation: C copies its statement and the confirmation stays open; then No.
t send-keys -t ev r
wait_for 'Apply?' >/dev/null
t send-keys -t ev C
wait_for 'copied the statement' >/dev/null
sqltext=$(buffer)
case "$sqltext" in
"/* evtop:action.retry_now */ UPDATE "*"WHERE id = $want_id AND deleted = 0 AND version = "*) ok "C in the confirmation copies its statement" ;;
*) not_ok "C in the confirmation copies its statement: $sqltext" ;;
esac
grep -q 'Apply?' "$dir/pane" && ok "... and the confirmation stays open" || not_ok "... and the confirmation stays open"
t send-keys -t ev n
wait_for 'not applied' && ok "any other key is still No" || not_ok "any other key is still No"
st=$(sql -e "SELECT publish_status FROM biz_outbox_event WHERE event_no = '$first'")
[ "$st" = 3 ] && ok "nothing was written" || not_ok "nothing was written (status $st)"
t send-keys -t ev q q q
wait_for 'evtop-exit=0' >/dev/null

# clipboard = off: C and J copy nothing, and say so.
t set-buffer "kept-while-off"
start "clipboard = off"
t send-keys -t ev Right Right Right Enter
wait_settled 'failed · event_type=' >/dev/null
t send-keys -t ev C
wait_for 'the clipboard is off' && ok "clipboard = off: C says nothing is copied" || not_ok "clipboard = off: C says nothing is copied"
t send-keys -t ev J
sleep 0.3
[ "$(buffer)" = "kept-while-off" ] && ok "... and tmux's buffer is unchanged" ||
	not_ok "... and tmux's buffer is unchanged: $(buffer | head -c 200)"
t send-keys -t ev q q q
wait_for 'evtop-exit=0' >/dev/null

# clipboard_max: a row larger than it is refused.
start "clipboard_max = 16"
t send-keys -t ev Right Right Right Enter
wait_settled 'failed · event_type=' >/dev/null
t send-keys -t ev J
wait_for 'more than clipboard_max (16)' && ok "a copy larger than clipboard_max is refused" || not_ok "a copy larger than clipboard_max is refused"
[ "$(buffer)" = "kept-while-off" ] && ok "... and nothing is copied" || not_ok "... and nothing is copied"
t send-keys -t ev q q q
wait_for 'evtop-exit=0' >/dev/null

tap_done
