#!/bin/sh
# Hostile input on a real terminal: the real binary in tmux, every byte it writes to the pty
# recorded (pipe-pane), walking the dashboard, the failed list, an event's detail and the help,
# first over ordinary rows (tests/data/seed.sql, copied to benign_* tables), then over the
# hostile rows of tests/data/hostile.sql (the model's tables, then the VARBINARY variant).
# Compared with the ordinary run, the hostile runs must send the terminal nothing evtop does
# not send itself (tests/lib/escscan.pl): no OSC (title, hyperlink), no BEL, no C1 control, no
# device status request, no colour or attribute the ordinary screens never use, the exact
# sequences of the data never; the pane's title unchanged; the escape sequences shown as text.
set -u
evtop=${EVTOP:?}
cnf=${EVTOP_TEST_DEFAULTS_FILE:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
client=${MARIADB_CLIENT:-$(command -v mariadb || command -v mysql)}
now='2026-06-01 12:00:00'
. "$(dirname "$0")/../lib/tap.sh"
TMUX_WAIT=15
. "$(dirname "$0")/../lib/tmux.sh"

# The ordinary rows in benign_*, the hostile ones in the model's tables and the variant.
{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/seed.sql"; } | sql || exit 99
sql -e "RENAME TABLE biz_outbox_event TO benign_outbox_event, biz_message_event TO benign_message_event;
  CREATE TABLE biz_outbox_event LIKE benign_outbox_event;
  CREATE TABLE biz_message_event LIKE benign_message_event;
  INSERT INTO benign_outbox_event (id, event_no, aggregate_type, aggregate_id, event_type,
    event_source, publish_channel, topic, event_payload, publish_status, retry_count,
    next_retry_time, fail_reason, create_time)
  VALUES (999, 'OB-PLAIN', 'ORDER', 'O999', 'ORDER_CREATED', 'order-service', 'MQ', 'order.event',
    '{\"orderId\": 999, \"name\": \"plain\", \"paid\": true, \"note\": null, \"items\": [1, {}]}',
    3, 1, '2026-06-02 00:00:01', 'a plain reason', '2026-06-01 11:00:00')" || exit 99
# (OB-PLAIN heads the reversed failed list of the ordinary run, its retry time the latest: a
# payload with every JSON style.)
sql <"$src/tests/data/variant-schema.sql" || exit 99
{ echo "SET timestamp = UNIX_TIMESTAMP('$now');"; cat "$src/tests/data/hostile.sql"; } | sql >/dev/null || exit 99
sed "s|^\[evtop\]|[evtop]\ninit-command=\"SET timestamp = UNIX_TIMESTAMP('$now')\"|" "$cnf" >"$dir/pinned.cnf"

# walk NAME ARGS...: the console over those tables, every byte it writes kept in $dir/NAME.raw,
# the styled pane (capture-pane -e) of each screen in $dir/NAME.panes.
walk() {
	name=$1
	shift
	: >"$dir/$name.raw"
	: >"$dir/$name.panes"
	t kill-session -t ev 2>/dev/null
	# The pane waits for pipe-pane before evtop starts, so its first byte is recorded.
	t new-session -d -s ev -x 140 -y 40 "while [ ! -e '$dir/$name.piped' ]; do sleep 0.05; done;
		LANG=C.UTF-8 TERM=xterm-256color '$evtop' --defaults-file='$dir/pinned.cnf' $*;
		echo evtop-exit=\$?; sleep 60"
	title_before=$(t display -p -t ev '#{pane_title}')
	t pipe-pane -o -t ev "cat >>'$dir/$name.raw'"
	touch "$dir/$name.piped"
	wait_for TOTAL || { not_ok "$name: the dashboard"; return; }
	t capture-pane -e -p -t ev >>"$dir/$name.panes"
	t send-keys -t ev G Right Right Right
	sleep 0.3
	t send-keys -t ev Enter
	wait_for 'failed' || { not_ok "$name: the failed list"; return; }
	t send-keys -t ev o
	wait_for 'failed (reversed)' || { not_ok "$name: the failed list reversed"; return; }
	sleep 0.5
	t capture-pane -e -p -t ev >>"$dir/$name.panes"
	t send-keys -t ev Enter
	wait_for 'event_no' || { not_ok "$name: the event"; return; }
	sleep 0.5
	t capture-pane -e -p -t ev >>"$dir/$name.panes"
	cp "$dir/pane" "$dir/$name.event"
	t send-keys -t ev G
	sleep 0.5
	t capture-pane -e -p -t ev >>"$dir/$name.panes"
	t send-keys -t ev q q '?'
	wait_for 'help' || { not_ok "$name: the help"; return; }
	t capture-pane -e -p -t ev >>"$dir/$name.panes"
	t send-keys -t ev q q
	wait_for 'evtop-exit=' || { not_ok "$name: quits"; return; }
	grep -q 'evtop-exit=0' "$dir/pane" && ok "$name: the walk ends with exit 0" ||
		not_ok "$name: the walk ends with exit 0 ($(grep evtop-exit "$dir/pane"))"
	title_after=$(t display -p -t ev '#{pane_title}')
	[ "$title_before" = "$title_after" ] && ok "$name: the pane's title unchanged" ||
		not_ok "$name: the pane's title unchanged ('$title_before' became '$title_after')"
	t pipe-pane -t ev
}

# The colours and attributes of a pane capture, one per line.
sgr() { grep -o "$(printf '\033')\[[0-9;]*m" "$1" | sort -u; }
seqs() { perl "$src/tests/lib/escscan.pl" seqs "$1" | grep 'm$' | sort -u; }

walk benign --outbox-table benign_outbox_event --message-table benign_message_event
if why=$(perl "$src/tests/lib/escscan.pl" check "$dir/benign.raw"); then
	ok "benign: evtop itself sends nothing suspicious"
else
	not_ok "benign: evtop itself sends nothing suspicious: $why"
fi
seqs "$dir/benign.raw" >"$dir/benign.seqs"
sgr "$dir/benign.panes" >"$dir/benign.sgr"

for run in model variant; do
	if [ $run = model ]; then
		walk $run
	else
		walk $run --outbox-table hostile_outbox_event --message-table hostile_message_event
	fi
	if why=$(perl "$src/tests/lib/escscan.pl" check "$dir/$run.raw"); then
		ok "$run: no OSC, BEL, C1, status request or invalid UTF-8 reached the terminal"
	else
		not_ok "$run: no OSC, BEL, C1, status request or invalid UTF-8 reached the terminal: $why"
	fi
	extra=$(seqs "$dir/$run.raw" | comm -23 - "$dir/benign.seqs")
	[ -z "$extra" ] && ok "$run: no colour or attribute the ordinary screens do not use" ||
		not_ok "$run: colours or attributes the ordinary screens do not use: $(echo "$extra" | tr '\n' ' ')"
	extra=$(sgr "$dir/$run.panes" | comm -23 - "$dir/benign.sgr" | cat -v)
	[ -z "$extra" ] && ok "$run: capture-pane -e shows only the ordinary screens' styles" ||
		not_ok "$run: capture-pane -e shows styles the ordinary screens do not: $(echo "$extra" | tr '\n' ' ')"
	if grep -q -F "$(printf '\033[31;5m')" "$dir/$run.raw" ||
		grep -q -F "$(printf '\033]0;PWNED')" "$dir/$run.raw" ||
		grep -q -F "$(printf '\033[6n')" "$dir/$run.raw"; then
		not_ok "$run: the data's own escape sequences never reach the terminal"
	else
		ok "$run: the data's own escape sequences never reach the terminal"
	fi
done
grep -q -F '␛]0;PWNED␇' "$dir/model.event" && ok "model: the event shows ␛]0;PWNED␇ as text" ||
	not_ok "model: the event shows ␛]0;PWNED␇ as text"
grep -q -F '�' "$dir/variant.event" && ok "variant: invalid bytes shown as �" ||
	not_ok "variant: invalid bytes shown as �"

tap_done
