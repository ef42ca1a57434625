#!/bin/sh
# scripts/demo, driven as a person would and left as it should be: it starts its own MariaDB
# and simulator, opens the console (here a scripted run, through EVTOP_DEMO_ARGS) on rows
# that change, and when the console quits — or, with --no-console, when it gets SIGTERM —
# no mariadbd, evtop-sim or temporary directory of its own is left behind.
# (The harness's server is not used: the demo starts its own.)
set -u
evtop=${EVTOP:?}
dir=${EVTOP_TEST_DIR:?}
src=${EVTOP_SRCDIR:?}
build=$(cd "$(dirname "$evtop")" && pwd)
. "$(dirname "$0")/../lib/tap.sh"
command -v timeout >/dev/null || { echo "no timeout(1)"; exit 77; }

# The demo's world directory, from its first line, and whether anything of it survives.
world_of() { sed -n 's/^demo: starting MariaDB in \(\/tmp\/evd\.[A-Za-z0-9]*\).*/\1/p' "$1" | head -n 1; }
leftovers() { # leftovers DIR: processes or files of that world still there
	[ -n "$1" ] || return 1
	[ -e "$1" ] && return 0
	ps -eo args | grep -F "$1" | grep -v grep | grep -q .
}

# --- with the console ---------------------------------------------------------------------
cat >"$dir/console.script" <<EOF
screen $dir/first.txt
clock +3s
shell sleep 3
clock +3s
screen $dir/second.txt
key Tab
screen $dir/message.txt
key q
EOF
EVTOP_DEMO_BUILD=$build EVTOP_DEMO_ARGS="--script $dir/console.script --screen 100x30" \
	timeout 180 sh "$src/scripts/demo" >"$dir/demo.out" 2>&1
rc=$?
cat "$dir/demo.out"
check "scripts/demo with a console script exits 0" [ $rc -eq 0 ]
world=$(world_of "$dir/demo.out")
check "it said where its world is" [ -n "$world" ]
check "the console showed the outbox dashboard" grep -q 'outbox (biz_outbox_event)' "$dir/first.txt"
for t in ORDER_CREATED PAY_SUCCESS STOCK_DEDUCTED; do
	check "a row for $t" grep -q "^$t " "$dir/first.txt"
done
check "the message table's dashboard too" grep -q 'message (biz_message_event)' "$dir/message.txt"
# The rows change: the simulator is running under the console (the first line is the clock).
sed 1d "$dir/first.txt" >"$dir/first.rows"
sed 1d "$dir/second.txt" >"$dir/second.rows"
check "the rows changed between two refreshes" sh -c '! cmp -s "$1" "$2"' _ "$dir/first.rows" "$dir/second.rows"
check "the simulator's summary was printed at the end" grep -q '^outbox ' "$dir/demo.out"
check "no mariadbd, evtop-sim or directory of the demo left" eval '! leftovers "$world"'

# --- the world alone, stopped by SIGTERM ----------------------------------------------------
EVTOP_DEMO_BUILD=$build timeout 180 sh "$src/scripts/demo" --no-console >"$dir/world.out" 2>&1 &
demo=$!
i=0
while ! grep -q 'world is running' "$dir/world.out" && [ $i -lt 600 ] && kill -0 $demo 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
world=$(world_of "$dir/world.out")
check "--no-console says the world is running" grep -q 'world is running' "$dir/world.out"
cmd=$(sed -n 's/^  \(.*evtop --defaults-file=[^ ]*\) dashboard$/\1/p' "$dir/world.out")
check "--no-console prints how to connect" [ -n "$cmd" ]
# shellcheck disable=SC2086
$cmd dashboard --format json >"$dir/dash.json" 2>&1
check "the printed command connects: evtop dashboard" grep -q '"table":"outbox"' "$dir/dash.json"
# shellcheck disable=SC2086
$cmd list stuck --table outbox >"$dir/stuck.out" 2>&1
check "the history's stuck publisher shows in evtop list stuck" grep -q 'publisher-02' "$dir/stuck.out"
kill -TERM $demo
wait $demo
rc=$?
cat "$dir/world.out"
check "SIGTERM ends --no-console (status 143)" [ $rc -eq 143 ]
check "nothing of the --no-console world left" eval '! leftovers "$world"'

# --- the world alone, its output piped into a reader that is gone, then Ctrl-C -------------
# As `scripts/demo --no-console | tee log` and Ctrl-C: the reader has exited when the demo gets
# SIGINT, so every line its cleanup writes hits a closed pipe. Its MariaDB must still stop.
# A background job of this (non-interactive) shell ignores SIGINT: the demo gets the default
# back, as under a terminal, and its pid is written first (exec keeps it).
cat >"$dir/with-sigint" <<'EOF'
echo $$ >"$1"
shift
if env --default-signal=INT true 2>/dev/null; then
	exec env --default-signal=INT "$@"
fi
exec perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "exec: $!\n"' "$@"
EOF
rm -f "$dir/demo.pid" "$dir/piped.out" "$dir/pipe"
mkfifo "$dir/pipe"
EVTOP_DEMO_BUILD=$build sh "$dir/with-sigint" "$dir/demo.pid" sh "$src/scripts/demo" --no-console \
	>"$dir/pipe" 2>"$dir/piped.err" &
# The reader: this shell, until the world runs; the loop's end closes the pipe's only reader.
while IFS= read -r line; do
	printf '%s\n' "$line" >>"$dir/piped.out"
	case $line in *"world is running"*) break ;; esac
done <"$dir/pipe"
pid=$(cat "$dir/demo.pid" 2>/dev/null)
world=$(world_of "$dir/piped.out")
check "the piped demo said where its world is, then its reader closed the pipe" sh -c '[ -n "$1" ] && [ -n "$2" ] && grep -q "world is running" "$3"' _ "$world" "$pid" "$dir/piped.out"
check "... its MariaDB is running" sh -c 'pgrep -f -- "--datadir=$1/data" >/dev/null' _ "$world"
kill -INT "$pid" 2>/dev/null
i=0
while [ $i -lt 600 ] && { kill -0 "$pid" 2>/dev/null || pgrep -f -- "--datadir=$world/data" >/dev/null; }; do
	sleep 0.1
	i=$((i + 1))
done
check "SIGINT with the reader gone: no mariadbd of the demo left (within 60 s)" eval '! pgrep -f -- "--datadir=$world/data" >/dev/null'
check "... no evtop-sim or directory of it either" eval '! leftovers "$world"'
cat "$dir/piped.out" "$dir/piped.err"
# What a failed run left must not outlive the test.
if [ -n "$world" ] && [ -d "$world" ]; then
	[ -s "$world/mariadbd.pid" ] && kill -KILL "$(cat "$world/mariadbd.pid")" 2>/dev/null
	pkill -KILL -f -- "--defaults-file=$world/my.cnf" 2>/dev/null
	rm -rf "$world"
fi

tap_done
