# evtop's tmux tests: the real binary on a real pty. Each test sources it after tap.sh:
#   . "$(dirname "$0")/../lib/tmux.sh"
# It needs tmux (a hard error under CI or EVTOP_REQUIRE_DB=1, a skip otherwise), runs a tmux
# server of its own (t CMD...), stopped on exit, and keeps a session of its own open so the
# server stays up between the console's sessions (killing the only session ends the server,
# and a new-session racing that exit fails). The console's session is "ev".
command -v tmux >/dev/null || {
	if [ "${CI:-}" = true ] || [ "${EVTOP_REQUIRE_DB:-}" = 1 ]; then echo "tmux missing"; exit 99; fi
	echo "tmux missing: skipping"; exit 77
}
dir=${dir:-${EVTOP_TEST_DIR:?}}
sock="evtop-test-$$"
t() { tmux -L "$sock" "$@"; }
trap 't kill-server 2>/dev/null' EXIT
t new-session -d -s keep 'sleep 3600' || exit 99
# wait_for TEXT: until the pane shows TEXT (a fixed string), TMUX_WAIT seconds at most (10);
# the pane is left in $dir/pane, and shown when TEXT never came.
wait_for() {
	i=0
	while [ $i -lt $((${TMUX_WAIT:-10} * 10)) ]; do
		t capture-pane -p -t ev >"$dir/pane" 2>/dev/null
		grep -q -F -- "$1" "$dir/pane" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "# pane after waiting for '$1':"
	sed 's/^/# /' "$dir/pane"
	return 1
}
# wait_settled TEXT: wait_for TEXT, then until two captures 0.2 s apart are the same (a
# redraw is written in pieces: the marker's line may be on the pty before the lines after
# it), TMUX_WAIT seconds at most; the settled pane is left in $dir/pane.
wait_settled() {
	wait_for "$1" || return 1
	i=0
	while [ $i -lt $((${TMUX_WAIT:-10} * 5)) ]; do
		sleep 0.2
		t capture-pane -p -t ev >"$dir/pane.next" 2>/dev/null
		if cmp -s "$dir/pane" "$dir/pane.next"; then
			grep -q -F -- "$1" "$dir/pane" && return 0
		fi
		mv "$dir/pane.next" "$dir/pane"
		i=$((i + 1))
	done
	echo "# the pane did not settle after '$1':"
	sed 's/^/# /' "$dir/pane"
	return 1
}
