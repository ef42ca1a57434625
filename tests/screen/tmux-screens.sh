#!/bin/sh
# The console's screens on a real pty (tmux), where the terminal keeps what curses does not
# know about: a resize (160x45 to 80x24, to 1x1 and back) repaints every cell, so the pane
# equals the same screen redrawn from scratch (C-l). Then, as a person sees them: at 80x24
# the dashboard's columns scroll to DRAIN; at 160x45 a list shows a long event_no whole.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/tmux.sh"
# same_after_redraw NAME: the pane as it is equals the pane after C-l (a full repaint). An
# unbound key's message marks each draw as done: Y before the C-l, Z after it. The status
# line's clock ticks on its own (the data's age): a second that passed between the two
# captures is not a difference, so the pair is taken again (three times at most), and then
# the first line's digits are not compared.
same_after_redraw() {
	try=0
	while :; do
		t send-keys -t ev Z
		wait_settled 'Z: no action here' >/dev/null
		cp "$dir/pane" "$dir/$1.before"
		t send-keys -t ev Y
		wait_for 'Y: no action here' >/dev/null
		t send-keys -t ev C-l Z
		wait_settled 'Z: no action here' >/dev/null
		cp "$dir/pane" "$dir/$1.redrawn"
		cmp -s "$dir/$1.before" "$dir/$1.redrawn" && break
		try=$((try + 1))
		tail -n +2 "$dir/$1.before" >"$dir/$1.before.rest"
		tail -n +2 "$dir/$1.redrawn" >"$dir/$1.redrawn.rest"
		[ $try -lt 3 ] && cmp -s "$dir/$1.before.rest" "$dir/$1.redrawn.rest" || break
	done
	# Still the clock on a slow machine (every pair took over a second): the first line is
	# compared with its digits masked, the rest exactly.
	sed -E '1s/[0-9]+/#/g' "$dir/$1.before" >"$dir/$1.before.masked"
	sed -E '1s/[0-9]+/#/g' "$dir/$1.redrawn" >"$dir/$1.redrawn.masked"
	if cmp -s "$dir/$1.before.masked" "$dir/$1.redrawn.masked"; then
		ok "$1: the pane is the whole screen, as a full redraw paints it"
	else
		not_ok "$1: the pane is the whole screen, as a full redraw paints it"
		diff "$dir/$1.redrawn" "$dir/$1.before" | sed 's/^/# /'
	fi
}

{ echo "SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00');"; cat "$src/tests/data/seed.sql"; } | sql || exit 99
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('2026-06-01 12:00:00')\"|" "$cnf" >"$dir/pinned.cnf"

# Paused, nothing on screen changes but what the keys change.
t new-session -d -s ev -x 160 -y 45 \
	"LANG=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME='$dir/state' '$evtop' --defaults-file='$dir/pinned.cnf'; echo evtop-exit=\$?; sleep 30"
wait_for 'TOTAL' >/dev/null
t send-keys -t ev p
wait_for 'PAUSED' >/dev/null
same_after_redraw 160x45
t resize-window -t ev -x 80 -y 24
same_after_redraw 160x45-to-80x24
t resize-window -t ev -x 1 -y 1
i=0
while [ $i -lt 100 ] && [ "$(t capture-pane -p -t ev)" != "…" ]; do
	sleep 0.1
	i=$((i + 1))
done
t resize-window -t ev -x 80 -y 24
same_after_redraw 1x1-to-80x24
head -n 1 "$dir/1x1-to-80x24.before" | grep -q '^evtop · \(connected\|paused\)' &&
	ok "back from 1x1, the status line starts at its first column" ||
	not_ok "back from 1x1, the status line starts at its first column"

# At 80x24, l goes past EXHST to DRAIN: the columns scroll, the group column stays (DRAIN is
# — with the server's clock pinned: no rates without time passing).
t send-keys -t ev l l l l l l l l l
wait_for 'OLDEST  DRAIN »' >/dev/null &&
	grep -q '^event_type  *« STUCK' "$dir/pane" &&
	grep -q '^ORDER_CREATED .* — ' "$dir/pane" &&
	ok "80x24: l reaches DRAIN, the group column in place, « and » in the header" ||
	not_ok "80x24: l reaches DRAIN, the group column in place, « and » in the header"

# At 160x45, the pending list shows the longest event_no of the page whole.
t resize-window -t ev -x 160 -y 45
t send-keys -t ev h h h h h h h h h g Enter
wait_for 'pending · event_type=ORDER_CREATED' >/dev/null
long=$(sql -e "SELECT event_no FROM biz_outbox_event WHERE deleted = 0 AND publish_status = 0 AND event_type = 'ORDER_CREATED' ORDER BY CHAR_LENGTH(event_no) DESC, id LIMIT 1")
[ ${#long} -gt 24 ] && wait_for "  $long " >/dev/null &&
	ok "160x45: the event_no $long (${#long} characters) is whole" ||
	not_ok "160x45: the event_no $long (${#long} characters) is whole"

t send-keys -t ev q q
wait_for 'evtop-exit=0' && ok "q quits with status 0" || not_ok "q quits with status 0"
tap_done
